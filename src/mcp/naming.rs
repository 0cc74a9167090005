//! How MCP tools are named and described for the model: `mcp__<server>__<tool>` with every
//! character outside `[A-Za-z0-9_-]` replaced by `_`, cut to 64 characters with a stable hash
//! suffix, collisions resolved by a numbered suffix in a fixed order; and input schemas
//! normalised to what OpenAI-compatible APIs accept.

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

/// The name a tool gets before collisions are resolved: sanitised, and when too long cut to
/// fit with `_` and 8 hex digits of a hash of the full, unsanitised name (stable across runs).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{server}__{tool}");
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

/// Hands out unique names: the first tool keeps its name, a later one that would collide gets
/// `_2`, `_3`... (still within 64 characters). Feed tools in a fixed order for stable names.
#[derive(Debug, Default)]
pub struct Namer {
    used: HashSet<String>,
}

impl Namer {
    pub fn assign(&mut self, server: &str, tool: &str) -> String {
        let base = exposed_name(server, tool);
        if self.used.insert(base.clone()) {
            return base;
        }
        for n in 2.. {
            let suffix = format!("_{n}");
            let keep = base.len().min(MAX_NAME - suffix.len());
            let candidate = format!("{}{suffix}", &base[..keep]);
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
        base
    }
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
    fn resolves_collisions_in_order() {
        let mut namer = Namer::default();
        assert_eq!(namer.assign("s", "a.b"), "mcp__s__a_b");
        assert_eq!(namer.assign("s", "a/b"), "mcp__s__a_b_2");
        assert_eq!(namer.assign("s", "a b"), "mcp__s__a_b_3");
        let long = "x".repeat(80);
        let first = namer.assign("s", &long);
        let second = namer.assign("s", &long); // the same tool twice: still unique
        assert_ne!(first, second);
        assert!(second.len() <= MAX_NAME);
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
