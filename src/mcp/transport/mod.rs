//! MCP transports behind one trait: stdio child processes, Streamable HTTP, and the legacy
//! HTTP+SSE transport. A transport moves [`Message`]s; the client on top matches responses to
//! requests, so transports know nothing of ids or methods beyond what their wire needs.

pub mod stdio;
mod stdio_output;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::jsonrpc::Message;
use super::log::ServerLog;
use crate::config::mcp::{ServerConfig, TransportConfig};
use crate::process::ChildEnv;

/// What a transport delivers to the client.
#[derive(Debug)]
pub enum TransportEvent {
    Message(Message),
    /// The connection is gone for good (child exited, session lost). `reason` says why, with the
    /// tail of a stdio server's stderr when there is one.
    Closed {
        reason: String,
    },
    /// A message over the transport's size limit was dropped. `id` is the id it carried when it
    /// could be read cheaply; `message` gives its size and names the limit ("17.0 MiB, over the
    /// 16 MiB limit of one stdio message").
    Oversized {
        id: Option<super::jsonrpc::RequestId>,
        message: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The connection is gone; says why (with a stdio server's stderr tail when there is one).
    #[error("{0}")]
    Closed(String),
    /// A stdio server's program could not be started.
    #[error("cannot start `{command}` in {}: {source}", .cwd.display())]
    Spawn {
        command: String,
        cwd: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The child started without the pipes Ling asked for.
    #[error("`{0}`: pipes missing")]
    Pipes(String),
    /// Writing to a stdio server failed (it usually just exited).
    #[error("cannot write to the server: {source}{}", stderr_note(.stderr_tail))]
    Write {
        #[source]
        source: std::io::Error,
        /// The last lines of the server's stderr.
        stderr_tail: Option<String>,
    },
    #[error("{0}")]
    Http(String),
    /// The server's entry asks for a sandbox that cannot be had here.
    #[error("{0}; remove \"sandbox\" from the server's entry to start it without one")]
    Sandbox(String),
    /// A file the server runs is not the one trusted (or seen when the session started).
    #[error("{0}")]
    CodeChanged(String),
}

/// The stderr tail as error reports append it (see [`ServerLog::with_tail`]).
fn stderr_note(tail: &Option<String>) -> String {
    tail.as_ref()
        .map(|tail| format!("\nlast lines of its stderr:\n{tail}"))
        .unwrap_or_default()
}

#[async_trait]
pub trait Transport: Send + Sync {
    /// Sends one message. For HTTP, replies to a request arrive later as [`TransportEvent`]s.
    async fn send(&self, message: Message) -> Result<(), TransportError>;
    /// Sends one message with extra HTTP headers (a 2026-07-28 request's `Mcp-Method`,
    /// `Mcp-Name` and `Mcp-Param-*`); transports without headers just send it.
    async fn send_with_headers(
        &self,
        message: Message,
        _headers: Vec<(String, String)>,
    ) -> Result<(), TransportError> {
        self.send(message).await
    }
    /// True when [`Transport::send_with_headers`] sends the headers (HTTP), so tools with an
    /// invalid `x-mcp-header` must be dropped.
    fn mirrors_headers(&self) -> bool {
        false
    }
    /// Called once the protocol version is known (HTTP sends it as a header): the negotiated
    /// one, or the modern one before the `server/discover` probe.
    fn set_protocol_version(&self, _version: &str) {}
    /// Shuts the connection down (stdio: close stdin, wait, SIGTERM, SIGKILL; HTTP: DELETE),
    /// as `how` says.
    async fn close(&self, how: Shutdown);
}

/// How a connection is shut down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// The server is asked first and given a short grace (stdio: stdin closed, 100 ms, then
    /// SIGTERM, then SIGKILL; HTTP: the session's DELETE within the request timeout).
    Graceful,
    /// The run is over and its answer written (`-p`, `ling mcp list`): nobody waits for a
    /// polite exit. stdio: stdin closed and SIGTERM at once, SIGKILL after 50 ms; HTTP: the
    /// DELETE within 100 ms.
    Prompt,
}

/// A started transport: the sending half and the stream of what arrives.
pub struct Connection {
    pub transport: std::sync::Arc<dyn Transport>,
    pub events: mpsc::Receiver<TransportEvent>,
}

pub mod http;
mod http_common;
mod http_reply;
mod http_session;
pub(crate) mod lines;
mod sdk;
pub mod sse;

/// Connects to one configured server with the transport its config names. For HTTP and SSE the
/// startup timeout bounds the connection attempts. A stdio server starts with `child_env`; a
/// Streamable HTTP server uses `auth` for OAuth.
pub async fn connect(
    config: &ServerConfig,
    log: Arc<ServerLog>,
    child_env: &ChildEnv,
    auth: Option<Arc<super::auth::OAuth>>,
    program: Option<&Arc<dyn crate::program::ProgramChannel>>,
) -> Result<Connection, TransportError> {
    match &config.transport {
        TransportConfig::Sdk => match program {
            Some(program) => Ok(sdk::connect(&config.name, program.clone())),
            None => Err(TransportError::Closed(
                "an in-process server needs the program that defines it".into(),
            )),
        },
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if let Some(code) = &config.code {
                code.verify()
                    .map_err(|e| TransportError::CodeChanged(e.to_string()))?;
            }
            let sandbox = match config.sandbox {
                Some(mode) => child_env
                    .server_policy(mode)
                    .map_err(|e| TransportError::Sandbox(e.to_string()))?,
                None => None,
            };
            let start = stdio::Start {
                command,
                args,
                env,
                cwd,
                code: config.code.as_deref(),
            };
            stdio::spawn(&start, log, child_env, sandbox.as_ref()).await
        }
        TransportConfig::Http { url, headers } => {
            http::connect_with_auth(url, headers, config.startup_timeout, auth).await
        }
        TransportConfig::Sse { url, headers } => {
            sse::connect(url, headers, config.startup_timeout).await
        }
    }
}
