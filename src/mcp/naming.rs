//! How MCP tools are named and described for the model: `mcp__<server>__<tool>` with every
//! character outside `[A-Za-z0-9_-]` replaced by `_`, cut to 64 characters with a stable hash
//! suffix, servers that sanitise alike told apart from the config alone, remaining collisions
//! resolved by a numbered suffix in a fixed order; and input schemas normalised to what
//! OpenAI-compatible APIs accept.

use std::collections::HashSet;

use serde_json::{Value, json};

/// The longest function name OpenAI-compatible APIs accept.
pub const MAX_NAME: usize = 64;

/// Replaces every character outside `[A-Za-z0-9_-]` by `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The server part of every configured server's tool names, in config order: sanitised; when
/// servers sanitise alike (`a.b`, `a_b`), one whose name needed no sanitising keeps it and the
/// others are numbered in order (`a_b_2`, skipping names other servers have). Computed from the
/// whole config, so a server's tool names never depend on which others are connected.
pub fn server_prefixes<'a>(servers: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let names: Vec<&str> = servers.into_iter().collect();
    let mut used: HashSet<String> = names.iter().map(|n| sanitize(n)).collect();
    let mut given: HashSet<String> = names
        .iter()
        .filter(|n| sanitize(n) == **n)
        .map(|n| n.to_string())
        .collect();
    names
        .iter()
        .map(|name| {
            let base = sanitize(name);
            if base == *name || given.insert(base.clone()) {
                return base;
            }
            (2..)
                .map(|n| format!("{base}_{n}"))
                .find(|candidate| used.insert(candidate.clone()))
                .unwrap_or(base)
        })
        .collect()
}

/// The name a tool gets before collisions are resolved: `mcp__<prefix>__<tool>` sanitised (the
/// prefix from [`server_prefixes`]), and when too long cut to fit with `_` and 8 hex digits of
/// a hash of the full, unsanitised name (stable across runs).
pub fn exposed_name(prefix: &str, tool: &str) -> String {
    let full = format!("mcp__{prefix}__{tool}");
    let name = sanitize(&full);
    if name.len() <= MAX_NAME {
        return name;
    }
    let suffix = format!("_{:08x}", fnv1a(full.as_bytes()));
    format!("{}{suffix}", &name[..MAX_NAME - suffix.len()])
}

/// 32-bit FNV-1a: tiny, and stable across Rust versions (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Unique names for `(prefix, tool)` pairs given in a fixed order (config order, then each
/// server's tool list order): the first of equal names keeps it, later ones get `_2`, `_3`...
/// (within 64 characters). Every name some tool has on its own is reserved first, so a suffix
/// never takes a real tool's name.
pub fn assign_names<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let bases: Vec<String> = tools
        .into_iter()
        .map(|(prefix, tool)| exposed_name(prefix, tool))
        .collect();
    let mut used: HashSet<String> = bases.iter().cloned().collect();
    let mut given = HashSet::new();
    bases
        .into_iter()
        .map(|base| {
            if given.insert(base.clone()) {
                return base;
            }
            (2..)
                .map(|n| {
                    let suffix = format!("_{n}");
                    let keep = base.len().min(MAX_NAME - suffix.len());
                    format!("{}{suffix}", &base[..keep])
                })
                .find(|candidate| used.insert(candidate.clone()))
                .unwrap_or(base)
        })
        .collect()
}

/// An input schema as OpenAI-compatible APIs want it: an object schema with `properties`, and
/// no `$schema` (server-everything sends draft-07's, which some APIs reject).
pub fn normalize_schema(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Object(map) if map.get("type").is_none_or(|t| t == "object") => map.clone(),
        _ => return json!({ "type": "object", "properties": {} }),
    };
    schema.remove("$schema");
    schema.insert("type".into(), json!("object"));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sanitizes_every_foreign_character() {
        assert_eq!(exposed_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(exposed_name("my.srv", "a/b c-d"), "mcp__my_srv__a_b_c-d");
        assert_eq!(exposed_name("s", "héllo"), "mcp__s__h_llo");
    }

    #[test]
    fn cuts_long_names_with_a_stable_hash() {
        let tool = "t".repeat(100);
        let name = exposed_name("server", &tool);
        assert_eq!(name.len(), MAX_NAME);
        assert_eq!(name, exposed_name("server", &tool));
        assert!(name.starts_with("mcp__server__ttt"));
        let other = exposed_name("server", &format!("{tool}x"));
        assert_ne!(name, other);
        assert_eq!(name[..55], other[..55]);
        assert!(name[56..].chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn resolves_collisions_in_order_without_taking_real_names() {
        let long = "x".repeat(80);
        let tools = [
            ("s", "a.b"),
            ("s", "a/b"),
            ("s", "a_b_2"),
            ("s", "a b"),
            ("s", long.as_str()),
            ("s", long.as_str()), // the same tool twice: still unique
        ];
        let names = assign_names(tools);
        assert_eq!(
            names[..4],
            [
                "mcp__s__a_b",
                "mcp__s__a_b_3",
                "mcp__s__a_b_2",
                "mcp__s__a_b_4"
            ]
        );
        assert_ne!(names[4], names[5]);
        assert!(names[5].len() <= MAX_NAME);
    }

    #[test]
    fn servers_that_sanitise_alike_get_distinct_prefixes() {
        assert_eq!(
            server_prefixes(["a.b", "a_b", "a_b_2", "a b", "c"]),
            ["a_b_3", "a_b", "a_b_2", "a_b_4", "c"]
        );
    }

    #[test]
    fn normalizes_schemas() {
        assert_eq!(
            normalize_schema(
                &json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}},"required":["a"]})
            ),
            json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})
        );
        assert_eq!(
            normalize_schema(&json!({"type":"object"})),
            json!({"type":"object","properties":{}})
        );
        assert_eq!(
            normalize_schema(&Value::Null),
            json!({"type":"object","properties":{}})
        );
        assert_eq!(
            normalize_schema(&json!({"type":"string"})),
            json!({"type":"object","properties":{}})
        );
    }
}
