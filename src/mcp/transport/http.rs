//! The Streamable HTTP transport (MCP 2025-03-26 and later): every message is a POST to one
//! endpoint; a request's reply is one JSON body or an SSE stream that may carry server requests
//! and notifications before the response. This file owns the session: the `Mcp-Session-Id` and
//! `MCP-Protocol-Version` headers, re-initializing once when the session expires, the optional
//! standalone GET stream and the DELETE on close. Reading reply bodies, and resuming a stream cut
//! before its response, is in `http_reply.rs`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use reqwest::{StatusCode, Url};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::http_common::{self, ACCEPT_BOTH, ACCEPT_SSE, Failure};
use super::http_reply;
use super::{Connection, Transport, TransportError, TransportEvent};
use crate::mcp::auth::OAuth;
use crate::mcp::auth::refused::{self, Answer};
use crate::mcp::jsonrpc::{Message, RequestId};

/// How long a prompt shutdown ([`super::Shutdown::Prompt`]) waits for the session's DELETE.
const PROMPT_DELETE_LIMIT: std::time::Duration = std::time::Duration::from_millis(100);

pub use super::http_common::{HTTP_ERROR_CODE, is_transport_failure};

pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
/// How long `notifications/initialized` waits for the standalone GET stream to be accepted.
const GET_STREAM_WAIT: Duration = Duration::from_secs(2);

/// Opens a Streamable HTTP connection to `url`. No request is made until the first `send()`.
/// `timeout` bounds each exchange until the status and headers arrive, not a reply stream.
pub async fn connect(
    url: &str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<Connection, TransportError> {
    connect_with_auth(url, headers, timeout, None).await
}

/// [`connect`], with OAuth: `auth`'s token goes with every request, and a refused one is
/// answered as [`refused::answer`] decides.
pub async fn connect_with_auth(
    url: &str,
    headers: &[(String, String)],
    timeout: Duration,
    auth: Option<Arc<OAuth>>,
) -> Result<Connection, TransportError> {
    let url = http_common::parse_url(url)?;
    let headers = http_common::header_map(headers)?;
    let client = http_common::client(timeout)?;
    let (events, receiver) = mpsc::channel(256);
    let shared = Arc::new(Shared {
        client,
        url,
        headers,
        timeout,
        events,
        cancel: CancellationToken::new(),
        state: Mutex::new(State::default()),
        reinit: tokio::sync::Mutex::new(()),
        auth,
    });
    Ok(Connection {
        transport: Arc::new(HttpTransport { shared }),
        events: receiver,
    })
}

pub struct HttpTransport {
    shared: Arc<Shared>,
}

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
    reinit: tokio::sync::Mutex<()>,
    auth: Option<Arc<OAuth>>,
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

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; keep going with it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn is_awaiting(&self, id: &RequestId) -> bool {
        self.lock().awaiting.contains(id)
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
    async fn authorize(&self, headers: &mut HeaderMap) -> Option<String> {
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

    /// POSTs one message and checks the status. On an expired session (404, or a 400 whose body
    /// names the session, as server-everything answers) it re-initializes once and sends again.
    async fn post(
        self: &Arc<Self>,
        message: &Message,
        extra: &[(String, String)],
    ) -> Result<reqwest::Response, Failure> {
        let mut may_reinit = true;
        let mut auth_tries = 0;
        loop {
            let (response, session, sent) = self.post_once(message, extra).await?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let auth = self.auth.as_deref();
            let response =
                match refused::answer(auth, response, sent.as_deref(), &mut auth_tries).await {
                    Answer::Retry => continue,
                    Answer::Failed(e) => return Err(Failure::Other(e.to_string())),
                    Answer::Unanswered(response) => response,
                };
            let failure = http_common::status_failure(response, self.timeout).await;
            let expired = match &failure {
                Failure::Status { status, body } => {
                    *status == StatusCode::NOT_FOUND
                        || (*status == StatusCode::BAD_REQUEST
                            && body.to_ascii_lowercase().contains("session"))
                }
                Failure::Rpc { .. } | Failure::Other(_) => false,
            };
            if !(expired && may_reinit && session.is_some()) {
                return Err(failure);
            }
            may_reinit = false;
            if let Err(reason) = self.reinitialize(session).await {
                let reason = format!(
                    "the session with the MCP server at {} expired ({}) and re-initializing \
                     failed: {reason}",
                    self.url,
                    failure.describe(&self.url)
                );
                // Spawned: `send()` may run on the loop that drains `events`.
                let events = self.events.clone();
                let closed = TransportEvent::Closed {
                    reason: reason.clone(),
                };
                tokio::spawn(async move {
                    let _ = events.send(closed).await;
                });
                return Err(Failure::Other(reason));
            }
        }
    }

    /// One POST with `extra` headers (a modern request's standard headers); returns the
    /// response, the session id and the access token it carried.
    async fn post_once(
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

    /// Replays the remembered `initialize` and `notifications/initialized` without the expired
    /// session id. The replayed initialize's response is swallowed: the client already has one.
    async fn reinitialize(self: &Arc<Self>, expired: Option<String>) -> Result<(), String> {
        let _guard = self.reinit.lock().await;
        let (initialize, initialized) = {
            let mut state = self.lock();
            if state.session_id != expired {
                // Another request re-initialized while this one waited for the lock.
                return Ok(());
            }
            state.session_id = None;
            (state.initialize.clone(), state.initialized.clone())
        };
        let Some(initialize) = initialize else {
            return Err("no initialize request to replay".into());
        };
        let Message::Request { id, .. } = &initialize else {
            return Err("no initialize request to replay".into());
        };
        let (response, _, _) = self
            .post_once(&initialize, &[])
            .await
            .map_err(|f| f.describe(&self.url))?;
        if !response.status().is_success() {
            return Err(http_common::status_failure(response, self.timeout)
                .await
                .describe(&self.url));
        }
        let (answer, answered) = oneshot::channel();
        let reader = http_reply::Reader::swallowing(id.clone(), answer);
        self.spawn(http_reply::read(Arc::clone(self), response, reader));
        match tokio::time::timeout(self.timeout, answered).await {
            Ok(Ok(Message::Response { .. })) => {}
            Ok(Ok(Message::Error { error, .. })) => {
                return Err(format!("initialize failed: {}", error.message));
            }
            Ok(_) => return Err("the server sent no initialize response".into()),
            Err(_) => return Err("no initialize response in time".into()),
        }
        if let Some(initialized) = initialized {
            let (response, _, _) = self
                .post_once(&initialized, &[])
                .await
                .map_err(|f| f.describe(&self.url))?;
            if !response.status().is_success() {
                return Err(http_common::status_failure(response, self.timeout)
                    .await
                    .describe(&self.url));
            }
            self.open_get_stream().await;
        }
        Ok(())
    }

    /// Opens the optional standalone GET stream on which a server sends messages outside any
    /// request. Servers that do not offer it answer 405 (or 400/404); then it is simply not used.
    /// Waits (briefly) until the server accepted the stream: SDK servers drop requests they send
    /// while no stream is open, and the conformance elicitation scenario sends its
    /// `elicitation/create` there right after the client's first `tools/call`.
    async fn open_get_stream(self: &Arc<Self>) {
        let (opened, accepted) = oneshot::channel();
        let shared = Arc::clone(self);
        self.spawn(async move {
            let response = shared.get_stream(None).await;
            let _ = opened.send(());
            if let Ok(response) = response
                && http_common::is_event_stream(&response)
            {
                http_reply::read(Arc::clone(&shared), response, http_reply::Reader::stream()).await;
            }
        });
        let _ = tokio::time::timeout(self.timeout.min(GET_STREAM_WAIT), accepted).await;
    }
}

#[async_trait]
impl Transport for HttpTransport {
    /// Returns once the server accepted the POST; its reply is read in the background. When the
    /// exchange fails, a request is answered with a JSON-RPC error (code
    /// [`HTTP_ERROR_CODE`]) so the caller's pending request fails at once; a
    /// notification or a response gets the error returned.
    async fn send(&self, message: Message) -> Result<(), TransportError> {
        self.send_with_headers(message, Vec::new()).await
    }

    fn mirrors_headers(&self) -> bool {
        true
    }

    async fn send_with_headers(
        &self,
        message: Message,
        headers: Vec<(String, String)>,
    ) -> Result<(), TransportError> {
        let shared = &self.shared;
        let request_id = {
            let mut state = shared.lock();
            if state.closed {
                return Err(TransportError::Closed(format!(
                    "the connection to the MCP server at {} is closed",
                    http_common::shown(&shared.url)
                )));
            }
            match &message {
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
            }
        };
        match shared.post(&message, &headers).await {
            Ok(response) => {
                let reader = match &request_id {
                    Some(id) => http_reply::Reader::answering(id.clone()),
                    None => http_reply::Reader::stream(),
                };
                shared.spawn(http_reply::read(Arc::clone(shared), response, reader));
                if matches!(&message, Message::Notification { method, .. } if method == "notifications/initialized")
                {
                    shared.open_get_stream().await;
                }
                Ok(())
            }
            Err(failure) => match request_id {
                // A modern server's error in a 4xx body is its answer to the request.
                Some(id) if matches!(failure, Failure::Rpc { .. }) => {
                    if let Failure::Rpc { error, .. } = failure {
                        let answer = Message::Error {
                            id: Some(id),
                            error,
                        };
                        let shared = Arc::clone(shared);
                        tokio::spawn(async move { shared.deliver(answer).await });
                    }
                    Ok(())
                }
                Some(id) => {
                    shared.fail(&id, failure.describe(&shared.url));
                    Ok(())
                }
                None => Err(TransportError::Http(failure.describe(&shared.url))),
            },
        }
    }

    fn set_protocol_version(&self, version: &str) {
        self.shared.lock().protocol_version = Some(version.to_string());
    }

    /// Ends the session with a DELETE (405 means the server does not allow that, which is fine)
    /// and stops every stream.
    async fn close(&self, how: super::Shutdown) {
        let shared = &self.shared;
        let session = {
            let mut state = shared.lock();
            state.closed = true;
            state.session_id.clone()
        };
        if session.is_some() {
            let (mut headers, _) = shared.session_headers(true);
            shared.authorize(&mut headers).await;
            let request = shared.client.delete(shared.url.clone()).headers(headers);
            let timeout = match how {
                super::Shutdown::Graceful => shared.timeout,
                super::Shutdown::Prompt => PROMPT_DELETE_LIMIT.min(shared.timeout),
            };
            let _ = http_common::exchange(request, &shared.url, timeout).await;
        }
        shared.cancel.cancel();
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // Reader tasks hold the shared state; without this a dropped transport's open GET
        // stream would live on.
        self.shared.cancel.cancel();
    }
}
