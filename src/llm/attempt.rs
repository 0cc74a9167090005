//! One attempt at a model request, for any wire API: sends it, bounds every wait (the first byte
//! with the response headers, then the idle time between chunks), feeds the body through the SSE
//! decoder and the API's parser, and says how it failed ([`Failure`]) so that the client can
//! decide whether to retry. Cancelling is dropping the future: nothing is spawned, so dropping
//! closes the connection and leaves nothing behind.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use tokio::time::{Instant, timeout, timeout_at};

use super::error::{FinalRefusal, LlmError, TimeoutKind, server_message};
use super::retry::{is_retryable_status, server_delay};
use super::stream::{StreamError, StreamParser};
use super::types::{Completion, StreamEvent};
use super::window::{is_context_overflow, window_in_error};
use super::wire::Wire;
use crate::http_client::redirect_refusal;
use crate::redact;
use crate::sse::{LineTooLong, SseDecoder};

/// How much of an HTTP error body is read; the message quoted from it is shorter still.
const ERROR_BODY_CAP: usize = 64 * 1024;

/// What one attempt needs.
pub struct Attempt<'a> {
    pub http: &'a reqwest::Client,
    pub wire: &'a dyn Wire,
    pub url: &'a str,
    pub api_key: Option<&'a str>,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_line_bytes: usize,
}

/// How one attempt failed, before it is known whether it will be retried.
#[derive(Debug)]
pub enum Failure {
    Connect(String),
    Network(String),
    Timeout {
        kind: TimeoutKind,
        shown: bool,
    },
    Status {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
        /// The body says the request did not fit the context (with the window, if it says).
        overflow: Option<Option<u64>>,
        /// The body says no retry can help (quota, key, model).
        refusal: Option<FinalRefusal>,
    },
    Cut {
        shown: bool,
        detail: Option<String>,
    },
    /// The server said in the stream that it is overloaded: retried if nothing was shown.
    Overloaded {
        message: String,
        shown: bool,
    },
    /// The line limit was passed (the limit).
    TooLong(usize),
    Fatal(LlmError),
}

impl Failure {
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect(_) | Self::Network(_) => true,
            Self::Timeout { shown, .. }
            | Self::Cut { shown, .. }
            | Self::Overloaded { shown, .. } => !shown,
            Self::Status {
                status,
                overflow,
                refusal,
                ..
            } => overflow.is_none() && refusal.is_none() && is_retryable_status(*status),
            Self::TooLong(_) | Self::Fatal(_) => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// One line for `StreamEvent::Retrying` and the log, scrubbed: a server may quote the key.
    pub fn reason(&self) -> String {
        redact::scrub(&self.unscrubbed_reason())
    }

    fn unscrubbed_reason(&self) -> String {
        match self {
            Self::Connect(detail) => format!("could not connect: {detail}"),
            Self::Network(detail) => format!("connection failed: {detail}"),
            Self::Timeout { kind, .. } => format!("timed out ({})", kind.setting()),
            Self::Status {
                status, message, ..
            } => format!("HTTP {status}: {message}"),
            Self::Cut { .. } => "the response ended before it started".to_string(),
            Self::Overloaded { message, .. } => format!("the server is overloaded: {message}"),
            Self::TooLong(limit) => format!("a line over {limit} bytes"),
            Self::Fatal(e) => e.to_string(),
        }
    }
}

impl Attempt<'_> {
    pub async fn run(
        &self,
        body: Bytes,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, Failure> {
        // One deadline covers the response headers and the first chunk of the body.
        let first_byte_deadline = Instant::now() + self.first_byte_timeout;
        let mut response = self.send(body, first_byte_deadline).await?;
        let parser = self.wire.parser();
        if is_json(response.headers()) {
            self.read_whole(&mut response, parser, first_byte_deadline, on_event)
                .await
        } else {
            self.read_stream(&mut response, parser, first_byte_deadline, on_event)
                .await
        }
    }

    /// Sends the request; the response once its status says success.
    async fn send(
        &self,
        body: Bytes,
        first_byte_deadline: Instant,
    ) -> Result<reqwest::Response, Failure> {
        let request = self
            .http
            .post(self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        let request = self.wire.authorize(request, self.api_key);
        let mut response = match timeout_at(first_byte_deadline, request.send()).await {
            Err(_) => {
                return Err(Failure::Timeout {
                    kind: TimeoutKind::FirstByte,
                    shown: false,
                });
            }
            Ok(Err(e)) => return Err(send_failure(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        tracing::debug!(
            "llm: HTTP {} ({})",
            status.as_u16(),
            response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
        );
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let text = timeout(self.idle_timeout, error_body(&mut response))
                .await
                .unwrap_or_default();
            let overflow =
                is_context_overflow(status.as_u16(), &text).then(|| window_in_error(&text));
            return Err(Failure::Status {
                status: status.as_u16(),
                // A server may quote the key or the URL back.
                message: redact::scrub(&server_message(&text)),
                retry_after,
                overflow,
                // A server error (5xx) quoting such words is still the server's: retried.
                refusal: (400..500)
                    .contains(&status.as_u16())
                    .then(|| FinalRefusal::of(&text))
                    .flatten(),
            });
        }
        Ok(response)
    }

    /// The server ignored `stream: true` and sent the whole answer at once: one "line", bounded
    /// like one.
    async fn read_whole(
        &self,
        response: &mut reqwest::Response,
        mut parser: Box<dyn StreamParser>,
        first_byte_deadline: Instant,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, Failure> {
        let body = read_capped(response, self.max_line_bytes);
        let text = match timeout_at(first_byte_deadline, body).await {
            Err(_) => {
                return Err(Failure::Timeout {
                    kind: TimeoutKind::FirstByte,
                    shown: false,
                });
            }
            Ok(Err(BodyError::Network(e))) => return Err(Failure::Network(innermost(&e))),
            Ok(Err(BodyError::TooLong(e))) => return Err(Failure::TooLong(e.limit)),
            Ok(Ok(text)) => text,
        };
        let shown = parser.has_shown_output();
        parser
            .push_whole(&text, &mut *on_event)
            .map_err(|e| stream_failure(e, shown))?;
        parser
            .finish(&mut *on_event)
            .map_err(|e| stream_failure(e, false))
    }

    /// Reads the event stream chunk by chunk, each within its wait, until the parser has the
    /// whole answer or the stream ends.
    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
        mut parser: Box<dyn StreamParser>,
        first_byte_deadline: Instant,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, Failure> {
        let mut decoder = SseDecoder::with_limit(self.max_line_bytes);
        let mut first_chunk = true;
        let mut broken = None;
        loop {
            let next = if first_chunk {
                timeout_at(first_byte_deadline, response.chunk()).await
            } else {
                timeout(self.idle_timeout, response.chunk()).await
            };
            let bytes = match next {
                Err(_) => {
                    let kind = if first_chunk {
                        TimeoutKind::FirstByte
                    } else {
                        TimeoutKind::Idle
                    };
                    let shown = parser.has_shown_output();
                    return Err(Failure::Timeout { kind, shown });
                }
                Ok(Err(e)) => {
                    broken = Some(innermost(&e));
                    break;
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => bytes,
            };
            first_chunk = false;
            // An over-long line is not a passing failure: retrying would download it again.
            let events = decoder
                .feed(&bytes)
                .map_err(|e| Failure::TooLong(e.limit))?;
            for event in events {
                push(&mut *parser, &event.data, &mut *on_event)?;
                if parser.is_done() {
                    return parser
                        .finish(&mut *on_event)
                        .map_err(|e| stream_failure(e, true));
                }
            }
        }
        if let Some(event) = decoder.finish().map_err(|e| Failure::TooLong(e.limit))? {
            // A half-written last line on a broken connection is the cut, not bad JSON.
            match parser.push(&event.data, &mut *on_event) {
                Err(StreamError::Malformed(_)) | Ok(()) => {}
                Err(e) => return Err(stream_failure(e, parser.has_shown_output())),
            }
        }
        let shown = parser.has_shown_output();
        parser.finish(&mut *on_event).map_err(|e| match e {
            StreamError::Cut => Failure::Cut {
                shown,
                detail: broken,
            },
            other => stream_failure(other, shown),
        })
    }
}

/// One event into the parser; a failure says whether anything had been shown before it.
fn push(
    parser: &mut dyn StreamParser,
    data: &str,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<(), Failure> {
    let shown = parser.has_shown_output();
    parser
        .push(data, on_event)
        .map_err(|e| stream_failure(e, shown))
}

fn stream_failure(e: StreamError, shown: bool) -> Failure {
    match e {
        StreamError::Server(message) => Failure::Fatal(LlmError::Server {
            message: redact::scrub(&message),
        }),
        StreamError::Overloaded(message) => Failure::Overloaded {
            message: redact::scrub(&message),
            shown,
        },
        StreamError::Overflow { message, window } => Failure::Fatal(LlmError::ContextOverflow {
            status: 200,
            message: redact::scrub(&message),
            window,
        }),
        StreamError::Malformed(detail) => Failure::Fatal(LlmError::Protocol { detail }),
        StreamError::Cut => Failure::Cut {
            shown,
            detail: None,
        },
    }
}

pub fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn send_failure(e: &reqwest::Error) -> Failure {
    if e.is_connect() && e.is_timeout() {
        Failure::Timeout {
            kind: TimeoutKind::Connect,
            shown: false,
        }
    } else if e.is_connect() {
        Failure::Connect(innermost(e))
    } else if let Some(refusal) = redirect_refusal(e) {
        Failure::Fatal(LlmError::Redirect(refusal.clone()))
    } else if e.is_builder() {
        Failure::Fatal(LlmError::Setup(redact::scrub(&e.to_string())))
    } else {
        Failure::Network(innermost(e))
    }
}

/// reqwest's own message is "error sending request"; the cause at the bottom of the chain
/// ("Connection refused (os error 111)") is what tells the user something.
fn innermost(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

/// The start of an error body: at most [`ERROR_BODY_CAP`] bytes are read, however much the
/// server sends.
async fn error_body(response: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_CAP {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_CAP - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    server_delay(
        header("retry-after-ms"),
        header("retry-after"),
        chrono::Utc::now(),
    )
}

enum BodyError {
    Network(reqwest::Error),
    TooLong(LineTooLong),
}

/// The whole body as text, refused as soon as it passes `limit` bytes.
async fn read_capped(response: &mut reqwest::Response, limit: usize) -> Result<String, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Network)? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLong(LineTooLong { limit }));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised() {
        let loopback = |u: &str| reqwest::Url::parse(u).is_ok_and(|u| is_loopback(&u));
        assert!(loopback("http://127.0.0.1:8080/v1"));
        assert!(loopback("http://localhost/v1"));
        assert!(loopback("http://[::1]:1234/v1"));
        assert!(!loopback("https://api.openai.com/v1"));
        assert!(!loopback("http://10.0.0.2/v1"));
    }

    #[test]
    fn an_overload_is_retried_only_before_anything_was_shown() {
        let failure = |shown| stream_failure(StreamError::Overloaded("busy".into()), shown);
        assert!(failure(false).is_retryable());
        assert!(!failure(true).is_retryable());
        assert!(!stream_failure(StreamError::Server("no".into()), false).is_retryable());
    }
}
