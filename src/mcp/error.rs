//! The errors of the MCP host. Each message says which server and what happened, so the user (or
//! the model, for a failed call) knows what to change.

use super::jsonrpc::ErrorObject;
use super::transport::TransportError;

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("MCP server {server:?}: {method} timed out after {}s", .after.as_secs_f64())]
    Timeout {
        server: String,
        method: String,
        after: std::time::Duration,
    },
    #[error("interrupted by the user")]
    Cancelled,
    /// The connection is gone (the server exited, the session was lost); carries its stderr tail.
    #[error("MCP server {server:?} is disconnected: {reason}")]
    Closed { server: String, reason: String },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server {server:?} returned error {}: {}", .error.code, .error.message)]
    Rpc {
        server: String,
        error: Box<ErrorObject>,
    },
    /// The server broke the protocol (bad result shape, unsupported version...).
    #[error("MCP server {server:?}: {message}")]
    Protocol { server: String, message: String },
    /// `resources/read` of a URI the server does not have (`-32602` or `-32002`).
    #[error("MCP server {server:?} has no resource {uri}: {message}")]
    ResourceNotFound {
        server: String,
        uri: String,
        message: String,
    },
    /// A reply over the transport's size limit; `message` names the limit.
    #[error("MCP server {server:?}: {message}")]
    TooLarge { server: String, message: String },
    #[error("MCP server {server:?}: {source}")]
    Transport {
        server: String,
        source: TransportError,
    },
    #[error("no MCP server named {0:?} is configured")]
    UnknownServer(String),
    #[error("no MCP tool named {0:?}; the tools offered are listed in the tool definitions")]
    UnknownTool(String),
    #[error("MCP server {server:?} is not connected: {reason}")]
    NotConnected { server: String, reason: String },
}
