//! JSON Schemas of the three configuration files (`settings.json`, `hooks.json`, `mcp.json`),
//! generated from their raw types by `schemars`: doc comments become descriptions, and the
//! strings the loaders accept become enums. `scripts/gen-schemas.sh` writes them to
//! `docs/schemas/`, and a test fails when the checked-in files differ from what this generates.
//!
//! A schema flags what Ling would ignore with a warning (an unknown key, a Claude Code hook field
//! Ling does not implement) as not allowed, so an editor shows the same mistakes Ling warns about.
//! `null` is not offered for optional keys: leave the key out instead.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

use super::hooks::HOOKS_FILE;
use super::hooks::schema::HooksFile;
use super::mcp::{MCP_FILE, RawMcpFile};
use super::settings_raw::{RawSettings, SETTINGS_FILE};

/// One configuration file's schema and the name it is published under in `docs/schemas/`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSchema {
    /// The configuration file it describes, e.g. `settings.json`.
    pub config_file: &'static str,
    /// `settings.schema.json` for `settings.json`.
    pub schema_file: String,
    pub schema: Value,
}

impl FileSchema {
    /// The schema as it is written to its file: pretty-printed, with a final newline.
    pub fn text(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The schemas of `settings.json`, `hooks.json` and `mcp.json`, in that order.
pub fn file_schemas() -> Vec<FileSchema> {
    vec![
        file_schema::<RawSettings>(
            SETTINGS_FILE,
            "Ling settings: .ling/settings.json (of a trusted project) and ~/.ling/settings.json. \
             A project's keys override the user's; flags and environment variables override both.",
        ),
        file_schema::<HooksFile>(
            HOOKS_FILE,
            "Ling hooks: .ling/hooks.json (of a trusted project) and ~/.ling/hooks.json; both \
             apply. The contract is Claude Code's, with Ling's tool names in matchers.",
        ),
        file_schema::<RawMcpFile>(
            MCP_FILE,
            "Ling MCP servers: ~/.ling/mcp.json, .ling/mcp.json (of a trusted project) and each \
             --mcp-config file; a later file wins on a name clash. Claude Desktop's format.",
        ),
    ]
}

fn file_schema<T: JsonSchema>(config_file: &'static str, description: &str) -> FileSchema {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut generated: Schema = generator.into_root_schema_for::<T>();
    let mut generated = std::mem::take(generated.ensure_object());
    // `$schema`, `title` and `description` first, for whoever opens the file.
    let mut root = Map::new();
    for key in ["$schema", "$id"] {
        if let Some(value) = generated.shift_remove(key) {
            root.insert(key.into(), value);
        }
    }
    root.insert("title".into(), format!("Ling {config_file}").into());
    root.insert("description".into(), description.into());
    generated.shift_remove("title");
    generated.shift_remove("description");
    root.extend(generated);
    let mut schema = Value::Object(root);
    for_each_subschema(&mut schema, &mut |object| {
        simplify_types(object);
        unwrap_description(object);
    });
    FileSchema {
        config_file,
        schema_file: config_file.replace(".json", ".schema.json"),
        schema,
    }
}

/// `"type": ["string", "null"]` → `"type": "string"`, a `null` in an `enum`, a `{"type": "null"}` branch of an
/// `anyOf`/`oneOf` and a `"default": null` dropped: an optional value is one that is left out. And no `format` on a
/// number: `uint32`, `uint64`... are not formats JSON Schema defines (the `minimum` says it).
pub(crate) fn simplify_types(object: &mut Map<String, Value>) {
    if object.get("default").is_some_and(Value::is_null) {
        object.shift_remove("default");
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let kept = match <[Value; 1]>::try_from(kept) {
            Ok([single]) => single,
            Err(kept) => Value::Array(kept),
        };
        object.insert("type".into(), kept);
    }
    if let Some(Value::Array(names)) = object.get_mut("enum") {
        names.retain(|name| !name.is_null());
    }
    if matches!(
        object.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    ) {
        object.shift_remove("format");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get_mut(key) {
            branches.retain(|branch| branch.get("type").is_none_or(|t| t != "null"));
            if let [single] = branches.as_slice() {
                let single = single.clone();
                object.shift_remove(key);
                if let Value::Object(fields) = single {
                    for (k, v) in fields {
                        object.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
}

/// A doc comment's line breaks inside a paragraph become spaces: an editor wraps the text itself.
fn unwrap_description(object: &mut Map<String, Value>) {
    if let Some(Value::String(text)) = object.get_mut("description") {
        let paragraphs: Vec<String> = text
            .split("\n\n")
            .map(|p| p.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
            .collect();
        *text = paragraphs.join("\n\n");
    }
}

/// Calls `f` on `schema` and on every schema inside it (properties, items, branches,
/// definitions), never on a property map itself, so a property named `title` or `format` is
/// left alone.
pub(crate) fn for_each_subschema(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(object) = schema else {
        return;
    };
    f(object);
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            for sub in map.values_mut() {
                for_each_subschema(sub, f);
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    ] {
        if let Some(sub) = object.get_mut(key) {
            for_each_subschema(sub, f);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = object.get_mut(key) {
            for sub in subs {
                for_each_subschema(sub, f);
            }
        }
    }
}
