//! What the manager reports: each server's state and status, and each tool as the model sees
//! it.

use serde_json::Value;

use crate::mcp::types::ServerInfo;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Connected,
    /// Why, with the last lines of its stderr when it had any.
    Failed(String),
    /// An HTTP server that wants an OAuth login first; says the command to run.
    NeedsAuth(String),
    Disabled,
}

impl ServerState {
    /// The `status` of the json outputs and its `error`: a server still starting when the run
    /// needed it counts as failed.
    pub fn report(&self) -> (&'static str, Option<&str>) {
        match self {
            Self::Connected => ("connected", None),
            Self::Disabled => ("disabled", None),
            Self::Failed(why) => ("failed", Some(why)),
            Self::NeedsAuth(how) => ("needs-auth", Some(how)),
            Self::Starting => ("failed", Some("still starting")),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: &'static str,
    pub state: ServerState,
    /// Tools offered to the model (after filters).
    pub tools: usize,
    pub server_info: Option<ServerInfo>,
}

/// One tool as the model sees it, and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// `mcp__<server>__<tool>`, sanitised and unique.
    pub exposed_name: String,
    pub server: String,
    pub original_name: String,
    /// Prefixed `[MCP:<server>] `.
    pub description: String,
    /// Normalised for OpenAI-compatible APIs.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
    pub annotations: Option<Value>,
}
