//! MCP transports behind one trait: stdio child processes, Streamable HTTP, and the legacy
//! HTTP+SSE transport. A transport moves [`Message`]s; the client on top matches responses to
//! requests, so transports know nothing of ids or methods beyond what their wire needs.

pub mod stdio;

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::jsonrpc::Message;
use super::log::ServerLog;
use crate::config::mcp::{ServerConfig, TransportConfig};

/// What a transport delivers to the client.
#[derive(Debug)]
pub enum TransportEvent {
    Message(Message),
    /// The connection is gone for good (child exited, session lost). `reason` says why, with the
    /// tail of a stdio server's stderr when there is one.
    Closed {
        reason: String,
    },
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    #[error("{0}")]
    Closed(String),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Http(String),
}

#[async_trait]
pub trait Transport: Send + Sync {
    /// Sends one message. For HTTP, replies to a request arrive later as [`TransportEvent`]s.
    async fn send(&self, message: Message) -> Result<(), TransportError>;
    /// Called once the protocol version is negotiated (HTTP sends it as a header).
    fn set_protocol_version(&self, _version: &str) {}
    /// Shuts the connection down (stdio: close stdin, wait, SIGTERM, SIGKILL; HTTP: DELETE).
    async fn close(&self);
}

/// A started transport: the sending half and the stream of what arrives.
pub struct Connection {
    pub transport: std::sync::Arc<dyn Transport>,
    pub events: mpsc::Receiver<TransportEvent>,
}

/// Connects to one configured server with the transport its config names. For HTTP and SSE the
/// startup timeout bounds the connection attempts.
pub async fn connect(
    config: &ServerConfig,
    log: Arc<ServerLog>,
) -> Result<Connection, TransportError> {
    match &config.transport {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => stdio::spawn(command, args, env, cwd, log).await,
        TransportConfig::Http { url, headers } => {
            connect_http(url, headers, config.startup_timeout).await
        }
        TransportConfig::Sse { url, headers } => {
            connect_sse(url, headers, config.startup_timeout).await
        }
    }
}

// The HTTP transports live in `http.rs` and `sse.rs` (built separately); these two stand in for
// `http::connect` and `sse::connect` until those files are part of this branch.
async fn connect_http(
    _url: &str,
    _headers: &[(String, String)],
    _timeout: std::time::Duration,
) -> Result<Connection, TransportError> {
    Err(TransportError::Http(
        "HTTP transport not built into this branch".into(),
    ))
}

async fn connect_sse(
    _url: &str,
    _headers: &[(String, String)],
    _timeout: std::time::Duration,
) -> Result<Connection, TransportError> {
    Err(TransportError::Http(
        "HTTP transport not built into this branch".into(),
    ))
}
