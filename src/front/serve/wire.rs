//! What `ling mcp serve` says over MCP, as types: the answers to `initialize` and
//! `server/discover`, the tool definitions of `tools/list`, the results of `tools/call`, the
//! progress notification and the elicitation that asks the user. Serialised with serde, in the
//! protocol's camelCase names.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `capabilities`: tools only, a list that never changes while Ling runs.
#[derive(Debug, Serialize)]
pub struct Capabilities {
    pub tools: ToolsCapability,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    pub list_changed: bool,
}

impl Capabilities {
    pub fn tools() -> Self {
        Self {
            tools: ToolsCapability {
                list_changed: false,
            },
        }
    }
}

/// `serverInfo`.
#[derive(Debug, Serialize)]
pub struct ServerInfo {
    pub name: &'static str,
    pub title: &'static str,
    pub version: &'static str,
}

impl ServerInfo {
    pub fn ling() -> Self {
        Self {
            name: "ling",
            title: "Ling",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// The answer to `initialize` (2025-11-25 and older).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult<'a> {
    pub protocol_version: &'a str,
    pub capabilities: Capabilities,
    pub server_info: ServerInfo,
    pub instructions: &'a str,
}

/// What `initialize` tells of the client.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    #[serde(default)]
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: ClientCapabilities,
}

#[derive(Debug, Default, Deserialize)]
pub struct ClientCapabilities {
    pub elicitation: Option<Map<String, Value>>,
}

impl InitializeParams {
    /// Whether the client takes form elicitation: `elicitation: {}` (forms, by the older
    /// revisions' meaning) or one naming `form`.
    pub fn forms(&self) -> bool {
        self.capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.contains_key("form") || !e.contains_key("url"))
    }
}

/// The answer to `server/discover` (2026-07-28).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult<'a> {
    pub supported_versions: [&'a str; 1],
    pub capabilities: Capabilities,
    pub instructions: &'a str,
    #[serde(rename = "_meta")]
    pub meta: Map<String, Value>,
    pub result_type: &'static str,
}

/// The answer to `tools/list`; `ttl_ms` and `cache_scope` for the 2026-07-28 revision.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsList {
    pub tools: Vec<ToolDef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<&'static str>,
}

/// One tool as `tools/list` offers it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    pub title: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    pub title: String,
    pub read_only_hint: bool,
    pub destructive_hint: bool,
    pub idempotent_hint: bool,
    pub open_world_hint: bool,
}

/// The result of `tools/call`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    pub content: Vec<TextContent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<AgentOutcome>,
    pub is_error: bool,
    /// `complete` in the 2026-07-28 revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<&'static str>,
}

impl CallResult {
    pub fn text(text: String, is_error: bool) -> Self {
        Self {
            content: vec![TextContent::new(text)],
            structured_content: None,
            is_error,
            result_type: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct TextContent {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
}

impl TextContent {
    pub fn new(text: String) -> Self {
        Self { kind: "text", text }
    }
}

/// `--agent`'s structured result.
#[derive(Debug, Serialize)]
pub struct AgentOutcome {
    pub session_id: String,
    pub result: String,
    pub num_turns: u32,
}

/// `notifications/progress`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams<'a> {
    pub progress_token: &'a Value,
    pub progress: u64,
    pub message: &'a str,
}

/// `elicitation/create` for a permission question: one field, `decision`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRequest {
    pub message: String,
    pub requested_schema: DecisionSchema,
}

#[derive(Debug, Serialize)]
pub struct DecisionSchema {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub properties: DecisionProperties,
    pub required: [&'static str; 1],
}

#[derive(Debug, Serialize)]
pub struct DecisionProperties {
    pub decision: DecisionField,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionField {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub title: &'static str,
    #[serde(rename = "enum")]
    pub choices: [&'static str; 3],
    pub enum_names: [String; 3],
}

impl DecisionRequest {
    /// The question `message`, with "always" naming `session_rule`.
    pub fn new(message: String, session_rule: &str) -> Self {
        Self {
            message,
            requested_schema: DecisionSchema {
                kind: "object",
                properties: DecisionProperties {
                    decision: DecisionField {
                        kind: "string",
                        title: "Allow it?",
                        choices: ["once", "always", "no"],
                        enum_names: [
                            "Allow once".into(),
                            format!("Always allow {session_rule} in this session"),
                            "No".into(),
                        ],
                    },
                },
                required: ["decision"],
            },
        }
    }
}

/// `Value` of a typed answer (the shapes above always serialise).
pub fn value<T: Serialize>(answer: &T) -> Value {
    serde_json::to_value(answer).unwrap_or_default()
}
