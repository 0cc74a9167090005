//! The MCP host of `docs/mcp.md`: JSON-RPC, transports, one client per server, and the manager
//! that starts them all, names their tools for the model and renders their results. It knows
//! nothing of the agent or the model.

pub mod client;
pub mod commands;
pub mod error;
pub mod handler;
pub mod jsonrpc;
pub mod log;
pub mod manager;
pub mod naming;
mod peer;
pub mod redact;
pub mod render;
pub mod transport;
pub mod types;

pub use client::{ClientOptions, McpClient};
pub use error::McpError;
pub use handler::{ClientHandler, HandlerSupport};
pub use log::ServerLog;
pub use manager::{ManagerOptions, McpManager, McpToolInfo, ServerState, ServerStatus};
pub use render::RenderedResult;
pub use types::{CallToolResult, Progress, ProgressCallback, ServerInfo, Tool};
