//! `mcp.json` exactly as written: the `mcpServers` map in file order, each entry's fields
//! (camelCase, the format Claude Desktop and Claude Code made common), and the names of those
//! fields and of the `type`s an entry may have, which the loader checks and warns against.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::oauth::RawOAuth;

/// `mcp.json` as written. Keys other than `mcpServers` and `$schema` are ignored with a warning
/// (and kept by edits).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawMcpFile {
    /// Where this file's JSON Schema is, for editors; Ling does not read it.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// The servers, by name. Their tools reach the model as `mcp__<server>__<tool>`.
    #[serde(default)]
    pub mcp_servers: RawServers,
}

/// The servers in file order (the order `ling mcp list` shows them in).
#[derive(Debug, Default)]
pub struct RawServers(pub Vec<(String, RawServer)>);

impl JsonSchema for RawServers {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Servers".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": generator.subschema_for::<RawServer>(),
            // What `validate_server_name` refuses: `__` separates server and tool in tool names.
            "propertyNames": {"minLength": 1, "not": {"pattern": "__"}},
        })
    }
}

impl<'de> Deserialize<'de> for RawServers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = RawServers;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object mapping server names to server entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawServers, A::Error> {
                let mut servers = Vec::new();
                while let Some((name, server)) = map.next_entry::<String, RawServer>()? {
                    servers.push((name, server));
                }
                Ok(RawServers(servers))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// One server entry as written: a stdio server (`command`) or an HTTP one (`url`). `${VAR}` and
/// `${VAR:-default}` expand in `command`, `args`, `env`, `cwd`, `url` and `headers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    deny_unknown_fields,
    rename = "Server",
    extend(
        "anyOf" = [{"required": ["command"]}, {"required": ["url"]}],
        "allOf" = [
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "stdio"}}},
                "then": {"required": ["command"]}
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"enum": HTTP_TYPES}}},
                "then": {"required": ["url"]}
            }
        ]
    )
)]
pub struct RawServer {
    /// The transport: `stdio` (the default when `command` is set), `http` (Streamable HTTP, the
    /// default when only `url` is set; also spelled `streamable-http`, `streamableHttp`) or
    /// `sse` (the 2024-11-05 HTTP+SSE transport).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = SERVER_TYPES))]
    pub kind: Option<String>,
    /// stdio: the program to start. A relative path with a `/` in it is relative to the project
    /// root; a bare name is looked up in `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: the program's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// stdio: environment variables for the server, over Ling's own (which lack the API key
    /// variable unless `shareApiKeyWithTools` is set; this may pass it explicitly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// stdio: the working folder, relative to the project root. Default: the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// http, sse: the server's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// http, sse: headers sent with every request, e.g. `{"Authorization": "Bearer ${TOKEN}"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// stdio: run the server in the shell sandbox, `workspace-write` or `read-only` (its
    /// network as settings `sandbox.network`). Default: not sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["off", "workspace-write", "read-only"]))]
    pub sandbox: Option<String>,
    /// Keep the entry but do not start the server. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// How long the server may take to start and answer `initialize`, in milliseconds.
    /// Default 30000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// How long one tool call may take, in milliseconds. Default 600000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_ms: Option<u64>,
    /// Offer only these tools (the server's own names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// Do not offer these tools (the server's own names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_tools: Option<Vec<String>>,
    /// http: how Ling logs in to the server with OAuth (`ling mcp login NAME`). Without it Ling
    /// registers itself with the server's authorization server when that allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<RawOAuth>,
}

/// The `type` values an entry may have; every one but `stdio` needs a `url`.
pub(super) const SERVER_TYPES: [&str; 5] =
    ["stdio", "http", "streamable-http", "streamableHttp", "sse"];
const HTTP_TYPES: [&str; 4] = ["http", "streamable-http", "streamableHttp", "sse"];

/// The JSON names of [`RawServer`]'s fields; any other key in an entry gets a warning. Checked
/// against the struct by a test.
pub(super) const SERVER_FIELDS: &[&str] = &[
    "type",
    "sandbox",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "disabled",
    "startupTimeoutMs",
    "toolTimeoutMs",
    "includeTools",
    "excludeTools",
    "oauth",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_fields_name_every_raw_server_field() {
        let full = RawServer {
            kind: Some(String::new()),
            command: Some(String::new()),
            args: Some(vec![]),
            env: Some(BTreeMap::new()),
            cwd: Some(String::new()),
            url: Some(String::new()),
            headers: Some(BTreeMap::new()),
            sandbox: Some(String::new()),
            disabled: Some(false),
            startup_timeout_ms: Some(0),
            tool_timeout_ms: Some(0),
            include_tools: Some(vec![]),
            exclude_tools: Some(vec![]),
            oauth: Some(RawOAuth::default()),
        };
        let value = serde_json::to_value(full).unwrap();
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = SERVER_FIELDS.to_vec();
        expected.sort_unstable();
        assert_eq!(keys, expected);
    }
}
