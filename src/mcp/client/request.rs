//! One request of the client on the wire: its id from the pending table, the progress token, a
//! modern request's headers, the send and then the wait both bounded by the request's timeout
//! and the caller's cancel, `notifications/cancelled` for a request given up (its late reply is
//! ignored), and listings followed through every page. The `input_required` rounds around a
//! request are `era.rs`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Call, Inner, McpClient, era};
use crate::mcp::error::McpError;
use crate::mcp::jsonrpc::{Message, RequestId};
use crate::mcp::modern::Era;
use crate::mcp::peer::Outcome;
use crate::mcp::transport::TransportError;
use crate::mcp::transport::http::is_transport_failure;
use crate::mcp::types::ProgressCallback;

/// More pages than this in one listing means a server that never stops paginating.
const MAX_PAGES: usize = 10_000;
/// How long a failed write waits for the transport to say why the connection closed.
const CLOSE_REPORT_WAIT: Duration = Duration::from_secs(3);

impl McpClient {
    pub(super) async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, McpError> {
        Ok(self.list_all_with_ttl(method, key).await?.0)
    }

    /// Every page of a listing, and the `ttlMs` of the first page (modern servers).
    pub(super) async fn list_all_with_ttl(
        &self,
        method: &str,
        key: &str,
    ) -> Result<(Vec<Value>, Option<u64>), McpError> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = std::collections::HashSet::new();
        let mut ttl = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page = self.request(method, params).await?;
            if cursor.is_none() {
                ttl = page.get("ttlMs").and_then(Value::as_u64);
            }
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(list)) => items.extend(list),
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(self.protocol_error(format!("{method}: \"{key}\" is not a list")));
                }
            }
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok((items, ttl)),
                Some(next) => {
                    if !seen.insert(next.to_string()) {
                        return Err(self.protocol_error(format!(
                            "{method}: the server repeated the cursor {next}; stopped paginating"
                        )));
                    }
                    cursor = Some(next.clone());
                }
            }
        }
        Err(self.protocol_error(format!("{method}: more than {MAX_PAGES} pages")))
    }

    /// One request as the caller sees it: for a modern server, an `input_required` result is
    /// answered ([`era`]) and the request sent again until it completes.
    pub(super) async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        call: Call<'_>,
    ) -> Result<Value, McpError> {
        let mut params = params;
        let mut version_retried = false;
        for _ in 0..era::MAX_INPUT_ROUNDS {
            let result = match self
                .request_once(method, params.clone(), call.clone())
                .await
            {
                // A modern server that rejects the version it listed in discovery: once more.
                Err(e) if !version_retried && self.rejects_our_version(&e) => {
                    version_retried = true;
                    continue;
                }
                other => other?,
            };
            match self.next_round(method, params.as_ref(), result).await? {
                era::Round::Complete(result) => return Ok(result),
                era::Round::Retry(next) => params = Some(next),
            }
        }
        Err(self.protocol_error(format!(
            "{method}: the server asked for input {} times in a row; gave up",
            era::MAX_INPUT_ROUNDS
        )))
    }

    pub(super) async fn request_once(
        &self,
        method: &str,
        params: Option<Value>,
        call: Call<'_>,
    ) -> Result<Value, McpError> {
        let inner = &self.inner;
        let (id, reply) = inner
            .pending
            .register()
            .map_err(|closed| McpError::Closed {
                server: self.server().to_string(),
                reason: closed.reason,
            })?;
        let mut guard = InFlight {
            inner,
            id,
            token: None,
            reason: None,
        };
        let mut params = params;
        if let Some(progress) = call.progress {
            guard.route_progress(&mut params, progress);
        }
        let version = call.version.clone().or_else(|| self.modern_version());
        let headers = match &version {
            Some(version) => self.modern_headers(version, method, &mut params),
            None => Vec::new(),
        };
        let message = Message::request(RequestId::Number(id), method, params);
        let timeout = call.timeout.unwrap_or(inner.options.request_timeout);
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || McpError::Timeout {
            server: self.server().to_string(),
            method: method.to_string(),
            after: timeout,
        };
        let cancelled = async {
            match call.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        // The write is bounded too: a server that stops reading its stdin blocks it. Giving up
        // on an unsent request needs no notice to the server (the guard just forgets the id).
        let sent = tokio::select! {
            sent = inner.transport.send_with_headers(message, headers) => sent,
            () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
            () = &mut cancelled => return Err(McpError::Cancelled),
        };
        if let Err(source) = sent {
            return Err(self.send_failed(source).await);
        }
        let outcome = tokio::select! {
            outcome = reply => outcome,
            () = tokio::time::sleep_until(deadline) => {
                if !call.no_cancel_notice {
                    guard.abandon(format!("timed out after {}s", timeout.as_secs_f64())).await;
                }
                return Err(timed_out());
            }
            () = &mut cancelled => {
                guard.abandon("interrupted by the user".to_string()).await;
                return Err(McpError::Cancelled);
            }
        };
        self.answer(outcome)
    }

    /// A write usually fails because the server just exited: the error says why it did (exit
    /// status and stderr) rather than the broken pipe, once the transport knows.
    async fn send_failed(&self, source: TransportError) -> McpError {
        let server = self.server().to_string();
        match tokio::time::timeout(CLOSE_REPORT_WAIT, self.closed()).await {
            Ok(reason) => McpError::Closed { server, reason },
            Err(_) => McpError::Transport { server, source },
        }
    }

    /// The result of a request from what ended its wait (`Err`: the connection closed).
    fn answer(
        &self,
        outcome: Result<Outcome, oneshot::error::RecvError>,
    ) -> Result<Value, McpError> {
        let server = self.server().to_string();
        match outcome {
            Ok(Outcome::Result(value)) => Ok(value),
            // The HTTP transports answer a failed exchange (connection refused, HTTP 500) this
            // way; it is not the server's answer.
            Ok(Outcome::Error(error)) if is_transport_failure(&error) => Err(McpError::Transport {
                server,
                source: TransportError::Http(error.message),
            }),
            Ok(Outcome::Error(error)) => Err(McpError::Rpc {
                server,
                error: Box::new(error),
            }),
            Ok(Outcome::TooLarge(message)) => Err(McpError::TooLarge { server, message }),
            Err(_) => Err(McpError::Closed {
                server,
                reason: self
                    .inner
                    .pending
                    .closed_reason()
                    .unwrap_or_else(|| "the connection ended".into()),
            }),
        }
    }
}

/// A request in flight. Dropped before its reply (timeout, cancel, or the caller gave up), it
/// forgets the id, so a late reply is ignored, and tells the server `notifications/cancelled`.
struct InFlight<'a> {
    inner: &'a Arc<Inner>,
    id: i64,
    token: Option<Value>,
    /// Set when the server should be told why the request was abandoned.
    reason: Option<String>,
}

impl InFlight<'_> {
    /// Sends the server's progress for this request to `progress`: its id as the
    /// `progressToken` in `params._meta`.
    fn route_progress(&mut self, params: &mut Option<Value>, progress: ProgressCallback) {
        let token = Value::from(self.id);
        let object = params.get_or_insert_with(|| json!({}));
        if let Some(object) = object.as_object_mut() {
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            meta["progressToken"] = token.clone();
            self.inner.progress.insert(&token, progress);
            self.token = Some(token);
        }
    }

    /// Gives the request up now and tells the server, waiting (briefly) until the notice is
    /// written, so a shutdown right after cannot overtake it.
    async fn abandon(self, reason: String) {
        if !self.inner.pending.forget(self.id) {
            return;
        }
        // 2026-07-28 over HTTP has no client notifications: the request just stops.
        let modern = matches!(self.inner.era.read().as_deref(), Ok(Era::Modern(_)));
        if modern && self.inner.transport.mirrors_headers() {
            return;
        }
        let notice = Message::notification(
            "notifications/cancelled",
            Some(json!({ "requestId": self.id, "reason": reason })),
        );
        let _ = tokio::time::timeout(CANCEL_NOTICE_LIMIT, self.inner.transport.send(notice)).await;
    }
}

/// How long [`InFlight::abandon`] waits for the cancel notice to be written.
const CANCEL_NOTICE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            self.inner.progress.remove(token);
        }
        let abandoned = self.inner.pending.forget(self.id);
        let Some(reason) = self.reason.take().filter(|_| abandoned) else {
            return;
        };
        let transport = self.inner.transport.clone();
        let notice = Message::notification(
            "notifications/cancelled",
            Some(json!({ "requestId": self.id, "reason": reason })),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = transport.send(notice).await;
            });
        }
    }
}
