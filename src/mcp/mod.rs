//! The MCP host of `docs/mcp.md`: JSON-RPC, transports, one client per server, and the manager
//! that starts them all, names their tools for the model and renders their results; and the
//! protocol's own content: elicitation forms, prompts as commands, sampling requests. It knows
//! nothing of the agent or the model (the agent answers sampling through a [`ClientHandler`]).

pub mod auth;
pub mod client;
pub mod commands;
pub mod elicitation;
pub mod error;
pub mod handler;
pub mod jsonrpc;
pub mod log;
pub mod manager;
pub mod modern;
pub mod naming;
mod peer;
pub mod prompts;
pub mod redact;
pub mod render;
pub mod sampling;
pub mod transport;
pub mod types;

pub use client::{ClientOptions, McpClient};
pub use elicitation::{ElicitAnswer, ElicitRequest, Form, FormError, FormField};
pub use error::McpError;
pub use handler::{ClientHandler, HandlerSupport};
pub use log::ServerLog;
pub use manager::{Applied, ManagerOptions, McpManager, McpToolInfo, ServerState, ServerStatus};
pub use render::RenderedResult;
pub use sampling::{SAMPLING_REFUSED, SamplingRequest, SamplingResult};
pub use types::{CallToolResult, Progress, ProgressCallback, ServerInfo, ToolDef};
