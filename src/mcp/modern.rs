//! The stateless 2026-07-28 revision ("modern" era) beside the `initialize` handshake ("legacy"):
//! which era a server speaks ([`Era`], found by probing with `server/discover`), the `_meta`
//! every modern request carries, the standard HTTP headers mirrored from the body (`Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*` from a tool's `x-mcp-header` annotations, with the Base64 sentinel
//! for unsafe values), the validation that drops a tool whose `x-mcp-header` is invalid, and the
//! modern error codes. The client (`client.rs`) uses these; the transports only send headers.

use serde_json::{Map, Value, json};

use super::handler::{HandlerSupport, client_capabilities};

/// The modern revision Ling speaks.
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";
/// The HTTP status and the JSON-RPC code of a header that does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// The server needs a client capability the request did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The server does not speak the requested version; `data.supported` lists what it does.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Resource not found in 2025-11-25 and earlier (2026-07-28 uses -32602; both are accepted).
pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;

/// The `_meta` keys of a modern request.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Which protocol generation a server speaks; decided once per server (the manager keeps it
/// across reconnects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// `initialize`, then requests in the negotiated version.
    Legacy,
    /// No handshake: every request carries this version in `_meta`.
    Modern(String),
}

/// True for the codes only a modern server sends: they identify its era even in an error.
pub fn is_modern_error(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// The per-request `_meta` of a modern request: version, capabilities and client identity.
pub fn request_meta(version: &str, support: HandlerSupport) -> Value {
    json!({
        META_VERSION: version,
        META_CAPABILITIES: client_capabilities(support),
        META_CLIENT_INFO: { "name": "ling", "version": env!("CARGO_PKG_VERSION") },
    })
}

/// Merges `meta` into `params._meta` (keeping keys already there, such as `progressToken`).
pub fn add_meta(params: &mut Option<Value>, meta: &Value) {
    let params = params.get_or_insert_with(|| json!({}));
    let Some(object) = params.as_object_mut() else {
        return;
    };
    let entry = object.entry("_meta").or_insert_with(|| json!({}));
    if let (Some(target), Some(source)) = (entry.as_object_mut(), meta.as_object()) {
        for (key, value) in source {
            target.insert(key.clone(), value.clone());
        }
    }
}

/// What a `server/discover` result says, as [`super::types::ServerInfo`] fields.
pub struct Discovered {
    pub supported: Vec<String>,
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

impl Discovered {
    pub fn from_result(result: &Value) -> Self {
        let text = |v: &Value| v.as_str().map(str::to_string);
        // In `_meta` as the schema has it; at the top level as some servers send it.
        let info = match &result["_meta"][META_SERVER_INFO] {
            Value::Null => &result["serverInfo"],
            info => info,
        };
        Self {
            supported: strings(&result["supportedVersions"]),
            name: text(&info["name"]).unwrap_or_default(),
            version: text(&info["version"]).unwrap_or_default(),
            title: text(&info["title"]),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: text(&result["instructions"]),
        }
    }
}

/// A JSON array of strings (anything else left out).
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The standard headers of one modern HTTP request: `Mcp-Method`, and `Mcp-Name` (from
/// `params.name` or `params.uri`) for the methods that name something, plus the `Mcp-Param-*`
/// headers of `params.arguments` at the annotated `paths`.
pub fn standard_headers(
    method: &str,
    params: Option<&Value>,
    paths: &[HeaderPath],
) -> Vec<(String, String)> {
    let mut headers = vec![("Mcp-Method".to_string(), header_value(method))];
    let named = matches!(method, "tools/call" | "resources/read" | "prompts/get");
    if named {
        let source = params.and_then(|p| p.get("name").or_else(|| p.get("uri")));
        if let Some(name) = source.and_then(Value::as_str) {
            headers.push(("Mcp-Name".to_string(), header_value(name)));
        }
    }
    let arguments = params.and_then(|p| p.get("arguments"));
    for path in paths {
        let mut value = arguments;
        for key in &path.keys {
            value = value.and_then(|v| v.get(key));
        }
        let text = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            _ => continue,
        };
        headers.push((format!("Mcp-Param-{}", path.name), header_value(&text)));
    }
    headers
}

/// A header value as the revision encodes it: plain when it is visible ASCII (and inner spaces)
/// with no leading or trailing whitespace and not itself shaped like the sentinel, else
/// `=?base64?…?=` of its UTF-8. A tab is encoded too (HTTP allows it, but the conformance
/// suite, like many proxies, does not).
pub fn header_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b == b' ' || (0x21..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

/// Standard Base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One `x-mcp-header` annotation: where in the arguments its value is, and the header's name
/// part (`Mcp-Param-{name}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPath {
    pub keys: Vec<String>,
    pub name: String,
}

/// Why a tool's `x-mcp-header` annotations make it unusable (the tool is dropped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("an x-mcp-header is not reachable through \"properties\" alone")]
    Unreachable,
    #[error("x-mcp-header {0:?} is used twice")]
    Twice(String),
    #[error("the x-mcp-header of {at} is not a string")]
    NotAString { at: String },
    #[error("x-mcp-header {name:?} (of {at}) is not an HTTP token")]
    NotAToken { name: String, at: String },
    #[error("x-mcp-header {name:?} is on {at}, which is not a string, integer or boolean")]
    NotPrimitive { name: String, at: String },
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, or why the tool must be dropped:
/// an empty or non-token name, a duplicate (case-insensitively), a type other than string,
/// integer or boolean, or an annotation not reachable through `properties` alone.
pub fn header_paths(schema: &Value) -> Result<Vec<HeaderPath>, HeaderError> {
    let mut found = Vec::new();
    collect_reachable(schema, &mut Vec::new(), &mut found)?;
    let reachable = found.len();
    if count_annotations(schema) != reachable {
        return Err(HeaderError::Unreachable);
    }
    let mut seen = std::collections::HashSet::new();
    for path in &found {
        if !seen.insert(path.name.to_ascii_lowercase()) {
            return Err(HeaderError::Twice(path.name.clone()));
        }
    }
    Ok(found)
}

fn collect_reachable(
    schema: &Value,
    keys: &mut Vec<String>,
    found: &mut Vec<HeaderPath>,
) -> Result<(), HeaderError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        keys.push(key.clone());
        if let Some(name) = property.get("x-mcp-header") {
            found.push(checked_annotation(name, property, keys)?);
        }
        collect_reachable(property, keys, found)?;
        keys.pop();
    }
    Ok(())
}

fn checked_annotation(
    name: &Value,
    property: &Value,
    keys: &[String],
) -> Result<HeaderPath, HeaderError> {
    let at = keys.join(".");
    let Some(name) = name.as_str() else {
        return Err(HeaderError::NotAString { at });
    };
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(tchar) {
        return Err(HeaderError::NotAToken {
            name: name.to_string(),
            at,
        });
    }
    let primitive = matches!(
        property.get("type").and_then(Value::as_str),
        Some("string" | "integer" | "boolean")
    );
    if !primitive {
        return Err(HeaderError::NotPrimitive {
            name: name.to_string(),
            at,
        });
    }
    Ok(HeaderPath {
        keys: keys.to_vec(),
        name: name.to_string(),
    })
}

/// Every `x-mcp-header` key anywhere in the schema.
fn count_annotations(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("x-mcp-header"))
                + map.values().map(count_annotations).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

/// The `inputResponses` answer to one `input_required` result: each input request's key with the
/// handler's result; `requestState` echoed exactly when there was one.
pub fn retry_params(
    original: Option<&Value>,
    responses: Map<String, Value>,
    request_state: Option<&Value>,
) -> Value {
    let mut params = original.cloned().unwrap_or_else(|| json!({}));
    if let Some(object) = params.as_object_mut() {
        object.insert("inputResponses".into(), Value::Object(responses));
        match request_state {
            Some(state) => object.insert("requestState".into(), state.clone()),
            None => object.remove("requestState"),
        };
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_follow_the_encoding_table_of_the_revision() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(header_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(header_value("in side"), "in side");
        assert_eq!(header_value(""), "");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn standard_headers_mirror_method_name_and_annotated_arguments() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}},
            "query":{"type":"string"}}});
        let paths = header_paths(&schema).unwrap();
        let params = json!({"name":"execute_sql","arguments":{"region":"us-west1","opts":{"dry":true},"query":"q"}});
        let headers = standard_headers("tools/call", Some(&params), &paths);
        let expected: Vec<(String, String)> = [
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "execute_sql"),
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Dry", "true"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(headers, expected);
        let read = standard_headers("resources/read", Some(&json!({"uri":"file:///a b"})), &[]);
        assert_eq!(read[1], ("Mcp-Name".to_string(), "file:///a b".to_string()));
        assert_eq!(standard_headers("tools/list", None, &[]).len(), 1);
    }

    #[test]
    fn invalid_x_mcp_headers_reject_the_tool() {
        let bad = [
            json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}),
        ];
        for schema in bad {
            assert!(header_paths(&schema).is_err(), "{schema}");
        }
        assert_eq!(header_paths(&json!({"type":"object"})).unwrap(), vec![]);
    }

    #[test]
    fn meta_is_merged_and_retries_echo_the_state() {
        let mut params = Some(json!({"name":"t","_meta":{"progressToken":3}}));
        add_meta(
            &mut params,
            &request_meta("2026-07-28", HandlerSupport::default()),
        );
        let meta = &params.as_ref().unwrap()["_meta"];
        assert_eq!(meta["progressToken"], 3);
        assert_eq!(meta[META_VERSION], "2026-07-28");
        assert_eq!(meta[META_CLIENT_INFO]["name"], "ling");
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action":"decline"}));
        let retry = retry_params(params.as_ref(), responses, Some(&json!("opaque")));
        assert_eq!(retry["requestState"], "opaque");
        assert_eq!(retry["inputResponses"]["k"]["action"], "decline");
        let again = retry_params(Some(&retry), Map::new(), None);
        assert!(again.get("requestState").is_none());
    }
}
