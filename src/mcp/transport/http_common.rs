//! What the Streamable HTTP and the legacy HTTP+SSE transports share: building the client and the
//! configured headers, bounding one exchange by the timeout, turning HTTP failures into messages
//! that say what to change, and answering a request whose exchange failed with a JSON-RPC error
//! so the caller's pending request fails at once instead of waiting for its timeout.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use tokio::sync::mpsc;

use super::{TransportError, TransportEvent};
use crate::error_chain::error_chain;
use crate::http_client::{self, ClientOptions, Target, redirect_refusal};
use crate::mcp::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, Message, RequestId};

/// The code of the JSON-RPC errors a transport makes up for a failed HTTP exchange (the code the
/// MCP TypeScript SDK uses for its transport errors).
pub const HTTP_ERROR_CODE: i64 = -32000;
/// The `data` of those made-up errors: servers use -32000 for their own errors too.
const TRANSPORT_FAILURE: &str = "ling: transport failure";

/// Whether `error` was made up by a transport for a failed exchange (not sent by the server).
pub fn is_transport_failure(error: &ErrorObject) -> bool {
    error.code == HTTP_ERROR_CODE
        && error.data.as_ref().and_then(serde_json::Value::as_str) == Some(TRANSPORT_FAILURE)
}

/// How much of an error body is quoted in a message.
const SNIPPET_CHARS: usize = 300;
/// How much of an error body is read at all.
const ERROR_BODY_BYTES: usize = 16 * 1024;

pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";
pub(crate) const ACCEPT_SSE: &str = "text/event-stream";

/// Why one HTTP exchange failed.
#[derive(Debug)]
pub(crate) enum Failure {
    Status {
        status: StatusCode,
        body: String,
    },
    /// A 4xx whose body is a JSON-RPC error only a 2026-07-28 server sends (a modern error code,
    /// or 404 with -32601 for an unknown method): the server's answer, not a transport failure.
    Rpc {
        status: StatusCode,
        error: ErrorObject,
    },
    Other(String),
}

impl Failure {
    pub(crate) fn describe(&self, url: &Url) -> String {
        let url = shown(url);
        match self {
            Self::Status { status, .. } if *status == StatusCode::UNAUTHORIZED => {
                crate::mcp::auth::refused::unauthorized(&url)
            }
            Self::Status { status, body } if body.is_empty() => {
                format!("the MCP server at {url} answered HTTP {status}")
            }
            Self::Status { status, body } => {
                format!("the MCP server at {url} answered HTTP {status}: {body}")
            }
            Self::Rpc { status, error } => format!(
                "the MCP server at {url} answered HTTP {status}: error {}: {}",
                error.code, error.message
            ),
            Self::Other(text) => text.clone(),
        }
    }
}

/// Parses the server's URL, and registers the secrets it carries (userinfo, query values) so
/// that they are masked wherever Ling shows text.
pub(crate) fn parse_url(url: &str) -> Result<Url, TransportError> {
    crate::redact::register_url(url);
    let shown_url = crate::redact::url(url);
    let parsed = Url::parse(url).map_err(|e| {
        TransportError::Http(format!(
            "invalid MCP server URL {shown_url:?}: {e}; give a full http:// or https:// URL"
        ))
    })?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(TransportError::Http(format!(
            "MCP server URL {shown_url:?} has scheme {other:?}; only http and https are supported"
        ))),
    }
}

/// The URL as messages show it: without userinfo and query values.
pub(crate) fn shown(url: &Url) -> String {
    crate::redact::url(url.as_str())
}

pub(crate) fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, TransportError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        crate::redact::register_header(name, value);
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            TransportError::Http(format!(
                "invalid HTTP header name {name:?} in the server's \"headers\""
            ))
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            TransportError::Http(format!(
                "invalid value for HTTP header {name:?} in the server's \"headers\" (control characters?)"
            ))
        })?;
        map.append(header, value);
    }
    Ok(map)
}

pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, TransportError> {
    let options = ClientOptions::new(Target::McpServer).connect_timeout(timeout);
    http_client::build(options).map_err(|e| {
        TransportError::Http(format!(
            "cannot set up the HTTP client: {}",
            error_chain(&e)
        ))
    })
}

/// Sends a request and waits for its status and headers, at most `timeout`. The body is read
/// later and is not bounded here: an SSE stream may stay open for as long as a tool runs.
pub(crate) async fn exchange(
    request: reqwest::RequestBuilder,
    url: &Url,
    timeout: Duration,
) -> Result<reqwest::Response, Failure> {
    let url = shown(url);
    match tokio::time::timeout(timeout, request.send()).await {
        Err(_) => Err(Failure::Other(format!(
            "the MCP server at {url} did not answer within {} ms",
            timeout.as_millis()
        ))),
        Ok(Err(e)) if redirect_refusal(&e).is_some() => Err(Failure::Other(
            redirect_refusal(&e)
                .map(ToString::to_string)
                .unwrap_or_default(),
        )),
        Ok(Err(e)) if e.is_connect() => Err(Failure::Other(format!(
            "cannot connect to the MCP server at {url}: {}",
            error_chain(&e)
        ))),
        Ok(Err(e)) => Err(Failure::Other(format!(
            "HTTP request to the MCP server at {url} failed: {}",
            error_chain(&e)
        ))),
        Ok(Ok(response)) => Ok(response),
    }
}

/// Turns a non-success response into a [`Failure`], quoting the start of its body.
pub(crate) async fn status_failure(response: reqwest::Response, timeout: Duration) -> Failure {
    let status = response.status();
    let mut response = response;
    let body = tokio::time::timeout(timeout, body_start(&mut response))
        .await
        .unwrap_or_default();
    if let Some(error) = modern_error(status, &body) {
        return Failure::Rpc { status, error };
    }
    Failure::Status {
        status,
        body: snippet(&body),
    }
}

/// The JSON-RPC error of a 4xx body when it is one only a modern server sends.
fn modern_error(status: StatusCode, body: &str) -> Option<ErrorObject> {
    if !status.is_client_error() {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let error: ErrorObject = serde_json::from_value(value.get("error")?.clone()).ok()?;
    let unknown_method = status == StatusCode::NOT_FOUND && error.code == METHOD_NOT_FOUND;
    (crate::mcp::modern::is_modern_error(error.code) || unknown_method).then_some(error)
}

/// The first [`ERROR_BODY_BYTES`] of a body, however much the server sends.
async fn body_start(response: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_BYTES - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).trim().to_string()
}

pub(crate) fn snippet(text: &str) -> String {
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

pub(crate) fn is_event_stream(response: &reqwest::Response) -> bool {
    content_type(response).starts_with("text/event-stream")
}

pub(crate) fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Delivers a made-up JSON-RPC error answering `id`. Spawned, because `send()` may be called from
/// the very loop that drains `events`, and a full channel must not deadlock it.
pub(crate) fn fail_request(events: &mpsc::Sender<TransportEvent>, id: RequestId, reason: String) {
    let events = events.clone();
    tokio::spawn(async move {
        let message = Message::Error {
            id: Some(id),
            error: ErrorObject {
                code: HTTP_ERROR_CODE,
                message: reason,
                data: Some(TRANSPORT_FAILURE.into()),
            },
        };
        let _ = events.send(TransportEvent::Message(message)).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_and_header_errors_say_what_to_fix() {
        assert!(parse_url("ftp://x/y").is_err_and(|e| e.to_string().contains("only http")));
        assert!(parse_url("localhost:3000").is_err());
        assert!(parse_url("http://127.0.0.1:1/mcp").is_ok());
        let bad = header_map(&[("Bad Name".into(), "v".into())]);
        assert!(bad.is_err_and(|e| e.to_string().contains("\"Bad Name\"")));
        let map = header_map(&[("X-A".into(), "1".into())]).unwrap_or_default();
        assert_eq!(map.get("x-a").and_then(|v| v.to_str().ok()), Some("1"));
    }

    #[test]
    fn snippet_cuts_long_bodies_on_char_boundaries() {
        let long = "é".repeat(400);
        let cut = snippet(&long);
        assert_eq!(cut.chars().count(), SNIPPET_CHARS + 1);
        assert_eq!(snippet("short"), "short");
    }

    #[test]
    fn unauthorized_mentions_authentication_and_oauth() {
        let url = Url::parse("http://h/mcp").unwrap();
        let text = Failure::Status {
            status: StatusCode::UNAUTHORIZED,
            body: String::new(),
        }
        .describe(&url);
        assert!(
            text.contains("requires authentication") && text.contains("OAuth"),
            "{text}"
        );
        let text = Failure::Status {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: "boom".into(),
        }
        .describe(&url);
        assert!(text.contains("500") && text.contains("boom"), "{text}");
    }
}
