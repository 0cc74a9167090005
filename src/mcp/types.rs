//! The MCP data the host reads: what `initialize` answers, tool definitions, tool results and
//! progress. A server's tool definition is a [`ToolDef`], named apart from the builtin tools'
//! trait (`tools::Tool`) that the agent's adapter implements for it; the parts the host only
//! passes on (schemas, `annotations`, `execution`) stay JSON values.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version Ling offers first.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// Every version Ling speaks, newest first. A server answering another one is disconnected.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What the server said in its `initialize` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerInfo {
    pub protocol_version: String,
    /// `serverInfo.name` (not unique across servers).
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub capabilities: Value,
    pub instructions: Option<String>,
}

impl ServerInfo {
    pub(crate) fn from_result(result: &Value) -> Self {
        let info = &result["serverInfo"];
        let text = |v: &Value| v.as_str().map(str::to_string);
        Self {
            protocol_version: text(&result["protocolVersion"]).unwrap_or_default(),
            name: text(&info["name"]).unwrap_or_default(),
            version: text(&info["version"]).unwrap_or_default(),
            title: text(&info["title"]),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: text(&result["instructions"]),
        }
    }
}

/// One tool of `tools/list`, as the server defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
}

impl ToolDef {
    /// `annotations.readOnlyHint` (false when missing; a hint from the server, not a guarantee).
    pub fn read_only(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `execution.taskSupport == "required"`: the tool only works as a task, which Ling does
    /// not implement, so it is hidden.
    pub fn requires_task(&self) -> bool {
        self.execution
            .as_ref()
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
            == Some("required")
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default)]
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

/// One `notifications/progress` for a call in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Receives the progress of one call.
pub type ProgressCallback = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;
