//! What the program driving Ling (the Claude Agent SDK, over `--input-format stream-json`)
//! supplies in-process: hook callbacks (`hooks` of `query()`), MCP servers living in the
//! program (`createSdkMcpServer`) and sub-agent definitions (`agents`). The hooks and the MCP
//! client reach the program through [`ProgramChannel`], which the front end implements over its
//! control channel (Claude Code's `hook_callback` and `mcp_message` requests); they know nothing
//! of the wire.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

/// Sends one control request to the program and waits for its answer (the `response` of a
/// success, or the error it gave).
#[async_trait]
pub trait ProgramChannel: Send + Sync {
    async fn request(&self, request: Value) -> Result<Value, String>;
}

/// What the program gave at `initialize`, for the run to honour.
#[derive(Clone, Default)]
pub struct Program {
    /// How to reach the program; `None` outside stream-json.
    pub channel: Option<Arc<dyn ProgramChannel>>,
    /// `hooks`: by event, matchers with the ids of their callbacks.
    pub hooks: Option<Map<String, Value>>,
    /// `sdkMcpServers`: the names of the program's in-process MCP servers.
    pub mcp_servers: Vec<String>,
    /// `agents` (or `--agents JSON`): sub-agent definitions by name (`description`, `prompt`,
    /// `tools`, `model`).
    pub agents: Option<Map<String, Value>>,
    /// `agent` (`--agent NAME`): the session runs as this agent.
    pub agent: Option<String>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("channel", &self.channel.is_some())
            .field("hooks", &self.hooks)
            .field("mcp_servers", &self.mcp_servers)
            .field("agents", &self.agents)
            .field("agent", &self.agent)
            .finish()
    }
}
