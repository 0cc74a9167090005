//! The Streamable HTTP transport (MCP 2025-03-26 and later): every message is a POST to one
//! endpoint; a request's reply is one JSON body or an SSE stream that may carry server requests
//! and notifications before the response. This file sends: it re-initializes once when the
//! session expires, opens the optional standalone GET stream and ends the session with a DELETE
//! on close. The session's state (its headers, what awaits a response) is in `http_session.rs`;
//! reading reply bodies, and resuming a stream cut before its response, in `http_reply.rs`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;
use tokio::sync::{mpsc, oneshot};

use super::http_common::{self, Failure};
use super::http_reply;
use super::http_session::{Replay, Shared};
use super::{Connection, Transport, TransportError, TransportEvent};
use crate::mcp::auth::OAuth;
use crate::mcp::auth::refused::{self, Answer};
use crate::mcp::jsonrpc::Message;

/// How long a prompt shutdown ([`super::Shutdown::Prompt`]) waits for the session's DELETE.
const PROMPT_DELETE_LIMIT: std::time::Duration = std::time::Duration::from_millis(100);

pub use super::http_common::{HTTP_ERROR_CODE, is_transport_failure};

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
    let shared = Arc::new(Shared::new(client, url, headers, timeout, events, auth));
    Ok(Connection {
        transport: Arc::new(HttpTransport { shared }),
        events: receiver,
    })
}

pub struct HttpTransport {
    shared: Arc<Shared>,
}

/// Why replaying a session's start failed, when it expired.
#[derive(Debug, thiserror::Error)]
enum ReinitError {
    #[error("no initialize request to replay")]
    NothingToReplay,
    /// An exchange failed; its description.
    #[error("{0}")]
    Exchange(String),
    #[error("initialize failed: {0}")]
    Refused(String),
    #[error("the server sent no initialize response")]
    NoResponse,
    #[error("no initialize response in time")]
    TooLate,
}

impl HttpTransport {
    /// POSTs one message and checks the status. On an expired session (404, or a 400 whose body
    /// names the session, as server-everything answers) it re-initializes once and sends again.
    async fn post(
        &self,
        message: &Message,
        extra: &[(String, String)],
    ) -> Result<reqwest::Response, Failure> {
        let shared = &self.shared;
        let mut may_reinit = true;
        let mut auth_tries = 0;
        loop {
            let (response, session, sent) = shared.post_once(message, extra).await?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let auth = shared.auth.as_deref();
            let response =
                match refused::answer(auth, response, sent.as_deref(), &mut auth_tries).await {
                    Answer::Retry => continue,
                    Answer::Failed(e) => return Err(Failure::Other(e.to_string())),
                    Answer::Unanswered(response) => response,
                };
            let failure = http_common::status_failure(response, shared.timeout).await;
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
                    shared.url,
                    failure.describe(&shared.url)
                );
                // Spawned: `send()` may run on the loop that drains `events`.
                let events = shared.events.clone();
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

    /// Replays the remembered `initialize` and `notifications/initialized` without the expired
    /// session id. The replayed initialize's response is swallowed: the client already has one.
    async fn reinitialize(&self, expired: Option<String>) -> Result<(), ReinitError> {
        let shared = &self.shared;
        let _guard = shared.reinit.lock().await;
        // `None`: another request re-initialized while this one waited for the lock.
        let Some(Replay {
            initialize,
            initialized,
        }) = shared.expire(expired)
        else {
            return Ok(());
        };
        let Some(initialize) = initialize else {
            return Err(ReinitError::NothingToReplay);
        };
        let Message::Request { id, .. } = &initialize else {
            return Err(ReinitError::NothingToReplay);
        };
        let response = self.replay(&initialize).await?;
        let (answer, answered) = oneshot::channel();
        let reader = http_reply::Reader::swallowing(id.clone(), answer);
        shared.spawn(http_reply::read(Arc::clone(shared), response, reader));
        match tokio::time::timeout(shared.timeout, answered).await {
            Ok(Ok(Message::Response { .. })) => {}
            Ok(Ok(Message::Error { error, .. })) => {
                return Err(ReinitError::Refused(error.message));
            }
            Ok(_) => return Err(ReinitError::NoResponse),
            Err(_) => return Err(ReinitError::TooLate),
        }
        if let Some(initialized) = initialized {
            self.replay(&initialized).await?;
            self.open_get_stream().await;
        }
        Ok(())
    }

    /// Sends `message` again, in the session that replaces the expired one.
    async fn replay(&self, message: &Message) -> Result<reqwest::Response, ReinitError> {
        let shared = &self.shared;
        let (response, _, _) = shared
            .post_once(message, &[])
            .await
            .map_err(|f| ReinitError::Exchange(f.describe(&shared.url)))?;
        if !response.status().is_success() {
            let failure = http_common::status_failure(response, shared.timeout).await;
            return Err(ReinitError::Exchange(failure.describe(&shared.url)));
        }
        Ok(response)
    }

    /// Opens the optional standalone GET stream on which a server sends messages outside any
    /// request. Servers that do not offer it answer 405 (or 400/404); then it is simply not used.
    /// Waits (briefly) until the server accepted the stream: SDK servers drop requests they send
    /// while no stream is open, and the conformance elicitation scenario sends its
    /// `elicitation/create` there right after the client's first `tools/call`.
    async fn open_get_stream(&self) {
        let (opened, accepted) = oneshot::channel();
        let shared = Arc::clone(&self.shared);
        self.shared.spawn(async move {
            let response = shared.get_stream(None).await;
            let _ = opened.send(());
            if let Ok(response) = response
                && http_common::is_event_stream(&response)
            {
                http_reply::read(Arc::clone(&shared), response, http_reply::Reader::stream()).await;
            }
        });
        let _ = tokio::time::timeout(self.shared.timeout.min(GET_STREAM_WAIT), accepted).await;
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
        let request_id = shared.note_sent(&message)?;
        match self.post(&message, &headers).await {
            Ok(response) => {
                let reader = match &request_id {
                    Some(id) => http_reply::Reader::answering(id.clone()),
                    None => http_reply::Reader::stream(),
                };
                shared.spawn(http_reply::read(Arc::clone(shared), response, reader));
                if matches!(&message, Message::Notification { method, .. } if method == "notifications/initialized")
                {
                    self.open_get_stream().await;
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
        self.shared.set_protocol_version(version);
    }

    /// Ends the session with a DELETE (405 means the server does not allow that, which is fine)
    /// and stops every stream.
    async fn close(&self, how: super::Shutdown) {
        let shared = &self.shared;
        if shared.close().is_some() {
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
