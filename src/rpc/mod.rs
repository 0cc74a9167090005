//! JSON-RPC 2.0 over a byte stream, one message per line, for the protocols in which Ling is the
//! one being driven: `ling acp` (the Agent Client Protocol, whose agent also asks its client
//! things) and `ling mcp serve`. A reader task parses each line and hands requests and
//! notifications to the front end ([`Incoming`]), and delivers the replies to the requests Ling
//! sent ([`Peer::request`]); a writer task puts every outgoing message on the stream in the
//! order it was sent, flushed at once. Nothing else may write to that stream. The message types
//! are the MCP host's ([`crate::mcp::jsonrpc`]), which are plain JSON-RPC.

mod pending;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::jsonrpc::ParseError;
pub use crate::mcp::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message,
    PARSE_ERROR, RequestId,
};
use crate::mcp::transport::lines::{Line, LineReader, Skipped};
use crate::pending::Waited;
use pending::Pending;

/// The longest message read (64 MiB: a prompt may embed whole files); a longer line is refused
/// with an error reply and skipped without being held in memory.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// A request or notification from the other side.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

/// A JSON-RPC error, to answer a request with or as the other side's answer to one of Ling's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("unknown method {method:?}"))
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn object(self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.message,
            data: self.data,
        }
    }
}

/// Why a request Ling sent got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    /// The other side answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("no answer to {method} within {} ms", .after.as_millis())]
    Timeout { method: String, after: Duration },
    #[error("the connection closed before {0} was answered")]
    Closed(String),
    /// The caller's cancel fired first (the request was withdrawn with `cancel_method`).
    #[error("{0} was cancelled")]
    Cancelled(String),
}

/// Sends messages to the other side; cheap to clone, usable from any task and from sync code.
#[derive(Clone)]
pub struct Peer {
    out: mpsc::UnboundedSender<String>,
    pending: Arc<Pending>,
}

impl Peer {
    /// Sends a notification. Lost silently once the connection is gone (nobody would read it).
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&Message::notification(method, Some(params)));
    }

    /// Answers the request `id`.
    pub fn respond(&self, id: RequestId, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => Message::Response { id, result },
            Err(error) => Message::Error {
                id: Some(id),
                error: error.object(),
            },
        };
        self.send(&message);
    }

    /// Sends a request and waits for its answer, at most `timeout` (`None`: as long as it takes,
    /// for a question a person answers), or until `cancel` fires; then, when `cancel_method`
    /// names one, the other side is told with that notification (`{"requestId": id}`).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        cancel: Option<(&CancellationToken, &str)>,
    ) -> Result<Value, RequestError> {
        let (id, reply) = self
            .pending
            .register()
            .ok_or_else(|| RequestError::Closed(method.to_string()))?;
        self.send(&Message::request(
            RequestId::Number(id),
            method,
            Some(params),
        ));
        let token = cancel.map(|(token, _)| token);
        match self.pending.wait(id, reply, timeout, token).await {
            Waited::Answer(Ok(result)) => Ok(result),
            Waited::Answer(Err(error)) => Err(RequestError::Rpc(error)),
            Waited::Closed => Err(RequestError::Closed(method.to_string())),
            Waited::TimedOut(after) => Err(RequestError::Timeout {
                method: method.to_string(),
                after,
            }),
            Waited::Cancelled => {
                if let Some((_, notification)) = cancel {
                    self.notify(notification, serde_json::json!({ "requestId": id }));
                }
                Err(RequestError::Cancelled(method.to_string()))
            }
        }
    }

    fn send(&self, message: &Message) {
        let _ = self.out.send(message.to_line());
    }
}

/// What [`connect`] starts: the [`Peer`] to send with, the other side's requests and
/// notifications as they come (the channel closes when the input ends), and the writer, which
/// ends once every [`Peer`] is dropped and everything sent is written.
pub struct Connection {
    pub peer: Peer,
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    pub writer: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// The next request or notification; `None` once the input ends or `shutdown` fires.
    pub async fn next(&mut self, shutdown: &CancellationToken) -> Option<Incoming> {
        tokio::select! {
            incoming = self.incoming.recv() => incoming,
            () = shutdown.cancelled() => None,
        }
    }

    /// Waits, at most 2 s, for everything sent to be written. Every other [`Peer`] of the
    /// connection must be dropped first (the writer ends with the last one).
    pub async fn close(self) {
        drop(self.peer);
        let _ = tokio::time::timeout(Duration::from_secs(2), self.writer).await;
    }
}

/// Waits, at most `limit`, for the request handlers still running to finish.
pub async fn finish_tasks(tasks: &mut tokio::task::JoinSet<()>, limit: Duration) {
    let _ = tokio::time::timeout(limit, async { while tasks.join_next().await.is_some() {} }).await;
}

/// Starts reading `input` and writing `output` on the current runtime.
pub fn connect(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Connection {
    let (out_tx, out_rx) = mpsc::unbounded_channel::<String>();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let pending = Arc::new(Pending::default());
    let peer = Peer {
        out: out_tx,
        pending: pending.clone(),
    };
    let writer = tokio::spawn(write_loop(output, out_rx));
    tokio::spawn(read_loop(input, in_tx, peer.clone(), pending));
    Connection {
        peer,
        incoming: in_rx,
        writer,
    }
}

/// Ling's own stdin and stdout, the channel of a server Ling is (`ling acp`, `ling mcp serve`).
/// Only protocol messages go to this stdout: the front ends write nothing else there, and their
/// children's stdout is always a pipe of their own.
#[allow(
    clippy::disallowed_methods,
    reason = "the protocol's channel: JSON-RPC lines only, never text for a terminal"
)]
pub fn stdio() -> (tokio::io::Stdin, tokio::io::Stdout) {
    (tokio::io::stdin(), tokio::io::stdout())
}

async fn write_loop(
    mut output: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        // Whatever else is queued goes out in the same write.
        while let Ok(more) = lines.try_recv() {
            line.push_str(&more);
            line.push('\n');
        }
        if output.write_all(line.as_bytes()).await.is_err() || output.flush().await.is_err() {
            tracing::debug!("rpc: the output closed; nothing more is sent");
            return;
        }
    }
}

async fn read_loop(
    input: impl AsyncRead + Unpin,
    incoming: mpsc::UnboundedSender<Incoming>,
    peer: Peer,
    pending: Arc<Pending>,
) {
    let mut reader = LineReader::with_limit(BufReader::new(input), MAX_MESSAGE_BYTES);
    loop {
        let line = match reader.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                tracing::debug!("rpc: reading the input failed: {e}");
                break;
            }
        };
        let text = match line {
            Line::Text(bytes) => bytes,
            Line::TooLong(skipped) => {
                let message = format!(
                    "message of {} bytes is over the {} MiB limit of one message",
                    skipped.len,
                    MAX_MESSAGE_BYTES >> 20
                );
                match skipped.kind() {
                    Skipped::Reply(id) => {
                        pending.fail(&id, RpcError::new(INVALID_REQUEST, message));
                    }
                    _ => peer.send(&Message::error(None, INVALID_REQUEST, message)),
                }
                continue;
            }
        };
        let text = String::from_utf8_lossy(&text);
        if text.trim().is_empty() {
            continue;
        }
        match Message::parse(&text) {
            Ok(Message::Request { id, method, params }) => {
                let params = params.unwrap_or(Value::Null);
                let _ = incoming.send(Incoming::Request { id, method, params });
            }
            Ok(Message::Notification { method, params }) => {
                let params = params.unwrap_or(Value::Null);
                let _ = incoming.send(Incoming::Notification { method, params });
            }
            Ok(Message::Response { id, result }) => pending.complete(&id, Ok(result)),
            Ok(Message::Error {
                id: Some(id),
                error,
            }) => pending.complete(
                &id,
                Err(RpcError {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                }),
            ),
            Ok(Message::Error { id: None, error }) => {
                tracing::debug!("rpc: the other side reported: {}", error.message);
            }
            Err(reason) => {
                let code = match reason {
                    ParseError::NotJson(_) => PARSE_ERROR,
                    _ => INVALID_REQUEST,
                };
                peer.send(&Message::error(None, code, reason.to_string()));
            }
        }
    }
    pending.close_all();
}

#[cfg(test)]
mod tests;
