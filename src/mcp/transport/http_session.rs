//! The state one Streamable HTTP connection shares between its transport (`http.rs`) and the
//! tasks reading its replies (`http_reply.rs`): the `Mcp-Session-Id` and `MCP-Protocol-Version`
//! headers, the OAuth token, the messages kept to replay when the session expires, and the
//! requests whose response has not come on any stream yet. It also makes the two plain
//! exchanges both sides need: one POST, and the GET of an SSE stream.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::http_common::{self, ACCEPT_BOTH, ACCEPT_SSE, Failure};
use super::{TransportError, TransportEvent};
use crate::mcp::auth::OAuth;
use crate::mcp::jsonrpc::{Message, RequestId};

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";

/// What the transport and its reader tasks share.
pub(crate) struct Shared {
    pub(crate) client: reqwest::Client,
    pub(crate) url: Url,
    headers: HeaderMap,
    pub(crate) timeout: Duration,
    pub(crate) events: mpsc::Sender<TransportEvent>,
    pub(crate) cancel: CancellationToken,
    state: Mutex<State>,
    /// Held while re-initializing, so concurrent requests that all saw the expired session
    /// re-initialize once between them.
    pub(crate) reinit: tokio::sync::Mutex<()>,
    pub(crate) auth: Option<Arc<OAuth>>,
}

#[derive(Default)]
struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
    /// Kept to replay when the session expires.
    initialize: Option<Message>,
    initialized: Option<Message>,
    /// Requests sent whose response has not arrived on any stream yet.
    awaiting: HashSet<RequestId>,
    closed: bool,
}

/// The messages that started an expired session, to send again.
pub(crate) struct Replay {
    pub(crate) initialize: Option<Message>,
    pub(crate) initialized: Option<Message>,
}

impl Shared {
    pub(crate) fn new(
        client: reqwest::Client,
        url: Url,
        headers: HeaderMap,
        timeout: Duration,
        events: mpsc::Sender<TransportEvent>,
        auth: Option<Arc<OAuth>>,
    ) -> Self {
        Self {
            client,
            url,
            headers,
            timeout,
            events,
            cancel: CancellationToken::new(),
            state: Mutex::new(State::default()),
            reinit: tokio::sync::Mutex::new(()),
            auth,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; keep going with it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn is_awaiting(&self, id: &RequestId) -> bool {
        self.lock().awaiting.contains(id)
    }

    /// Notes a message about to be sent: a request awaits its response (an `initialize` is
    /// kept to replay), `notifications/initialized` is kept too, and a cancelled request is
    /// awaited no more. The id of a request; refused once the connection is closed.
    pub(crate) fn note_sent(&self, message: &Message) -> Result<Option<RequestId>, TransportError> {
        let mut state = self.lock();
        if state.closed {
            return Err(TransportError::Closed(format!(
                "the connection to the MCP server at {} is closed",
                http_common::shown(&self.url)
            )));
        }
        Ok(match message {
            Message::Request { id, method, .. } => {
                if method == "initialize" {
                    state.initialize = Some(message.clone());
                }
                state.awaiting.insert(id.clone());
                Some(id.clone())
            }
            Message::Notification { method, .. } if method == "notifications/initialized" => {
                state.initialized = Some(message.clone());
                None
            }
            Message::Notification { method, params } if method == "notifications/cancelled" => {
                // A cancelled request gets no response: stop waiting (and resuming) for it.
                let cancelled = params.as_ref().and_then(|p| p.get("requestId")).cloned();
                if let Some(id) = cancelled.and_then(|v| serde_json::from_value(v).ok()) {
                    state.awaiting.remove(&id);
                }
                None
            }
            _ => None,
        })
    }

    /// Delivers a message from the server, marking its request answered.
    pub(crate) async fn deliver(&self, message: Message) {
        if let Message::Response { id, .. } | Message::Error { id: Some(id), .. } = &message {
            self.lock().awaiting.remove(id);
        }
        let _ = self.events.send(TransportEvent::Message(message)).await;
    }

    /// Answers `id` with an error unless its response already came.
    pub(crate) fn fail(&self, id: &RequestId, reason: String) {
        if self.lock().awaiting.remove(id) {
            http_common::fail_request(&self.events, id.clone(), reason);
        }
    }

    pub(crate) fn set_protocol_version(&self, version: &str) {
        self.lock().protocol_version = Some(version.to_string());
    }

    /// Forgets the `expired` session id and returns what started that session, to replay; `None`
    /// when another request re-initialized already (the id is no longer `expired`).
    pub(crate) fn expire(&self, expired: Option<String>) -> Option<Replay> {
        let mut state = self.lock();
        if state.session_id != expired {
            return None;
        }
        state.session_id = None;
        Some(Replay {
            initialize: state.initialize.clone(),
            initialized: state.initialized.clone(),
        })
    }

    /// Marks the connection closed (nothing more is sent); the session id to end, if any.
    pub(crate) fn close(&self) -> Option<String> {
        let mut state = self.lock();
        state.closed = true;
        state.session_id.clone()
    }

    /// The session and version headers plus the configured ones, for any request but
    /// `initialize` (which starts a session, so it carries neither).
    pub(crate) fn session_headers(&self, with_session: bool) -> (HeaderMap, Option<String>) {
        let mut headers = self.headers.clone();
        let state = self.lock();
        let session = if with_session {
            state.session_id.clone()
        } else {
            None
        };
        if let Some(value) = session.as_deref().and_then(|s| s.parse().ok()) {
            headers.insert(SESSION_HEADER, value);
        }
        if with_session
            && let Some(value) = state
                .protocol_version
                .as_deref()
                .and_then(|v| v.parse().ok())
        {
            headers.insert(VERSION_HEADER, value);
        }
        (headers, session)
    }

    /// Adds the OAuth access token, if there is one; returns it.
    pub(crate) async fn authorize(&self, headers: &mut HeaderMap) -> Option<String> {
        let token = self.auth.as_ref()?.bearer().await?;
        let value = format!("Bearer {token}").parse().ok()?;
        headers.insert(AUTHORIZATION, value);
        Some(token)
    }

    /// A GET of the endpoint for an SSE stream, resuming after `last_event_id` when given.
    pub(crate) async fn get_stream(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, Failure> {
        let (mut headers, _) = self.session_headers(true);
        self.authorize(&mut headers).await;
        let mut request = self
            .client
            .get(self.url.clone())
            .headers(headers)
            .header(ACCEPT, ACCEPT_SSE);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = http_common::exchange(request, &self.url, self.timeout).await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(http_common::status_failure(response, self.timeout).await)
        }
    }

    /// Runs `task` until it ends or the transport closes.
    pub(crate) fn spawn(self: &Arc<Self>, task: impl Future<Output = ()> + Send + 'static) {
        let cancel = self.cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = cancel.cancelled() => {}
                () = task => {}
            }
        });
    }

    /// One POST with `extra` headers (a modern request's standard headers); returns the
    /// response, the session id and the access token it carried.
    pub(crate) async fn post_once(
        &self,
        message: &Message,
        extra: &[(String, String)],
    ) -> Result<(reqwest::Response, Option<String>, Option<String>), Failure> {
        let is_initialize =
            matches!(message, Message::Request { method, .. } if method == "initialize");
        let (mut headers, session) = self.session_headers(!is_initialize);
        for (name, value) in extra {
            // Names and values are built header-safe (modern.rs); one that is not is left out.
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        let token = self.authorize(&mut headers).await;
        let request = self
            .client
            .post(self.url.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(message.to_line());
        let response = http_common::exchange(request, &self.url, self.timeout).await?;
        if is_initialize && response.status().is_success() {
            let id = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            self.lock().session_id = id;
        }
        Ok((response, session, token))
    }
}
