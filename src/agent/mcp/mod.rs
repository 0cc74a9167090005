//! The agent's side of MCP: the servers' tools as [`crate::tools::Tool`]s (`tool.rs`), the
//! resource tools (`resources.rs`), `@server:uri` mentions in a prompt (`mentions.rs`), and the
//! [`McpHost`] that answers the servers' sampling requests with the agent's model and their
//! elicitation requests with the user's answers (`host.rs`), and tool search, which offers many
//! servers' tools by name behind `search_tools` (`search.rs`), and servers changed while the
//! session runs (`reload.rs`). The protocol itself (forms,
//! prompts, sampling requests) is `crate::mcp`'s.

mod host;
pub mod mentions;
pub mod reload;
mod resources;
mod search;
mod tool;

pub use host::{HostPolicy, McpAsker, McpHost, chat_messages};
pub use resources::{ListMcpResources, ReadMcpResource};
pub use search::{SEARCH_TOOLS, SearchTools, ToolSearch};
pub use tool::McpTool;
