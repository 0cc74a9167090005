//! The legacy HTTP+SSE transport of MCP 2024-11-05: a long-lived GET stream whose first `endpoint`
//! event names the URL to POST messages to; every server message, responses included, then
//! arrives as a `message` event on that stream. Deprecated by Streamable HTTP, still served by
//! older servers.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::http_common::{self, ACCEPT_BOTH, ACCEPT_SSE};
use super::{Connection, Transport, TransportError, TransportEvent};
use crate::mcp::jsonrpc::Message;
use crate::sse::SseDecoder;

/// Opens the GET stream at `url` and waits (at most `timeout`) for its `endpoint` event.
pub async fn connect(
    url: &str,
    headers: &[(String, String)],
    timeout: Duration,
) -> Result<Connection, TransportError> {
    let url = http_common::parse_url(url)?;
    let shown = http_common::shown(&url);
    let headers = http_common::header_map(headers)?;
    let client = http_common::client(timeout)?;
    let request = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, ACCEPT_SSE);
    let response = http_common::exchange(request, &url, timeout)
        .await
        .map_err(|f| TransportError::Http(f.describe(&url)))?;
    if !response.status().is_success() {
        let failure = http_common::status_failure(response, timeout).await;
        return Err(TransportError::Http(failure.describe(&url)));
    }
    if !http_common::is_event_stream(&response) {
        return Err(TransportError::Http(format!(
            "the MCP server at {shown} answered the SSE GET with {:?}, not text/event-stream; \
             is it a Streamable HTTP server (\"type\": \"http\")?",
            http_common::content_type(&response)
        )));
    }
    let (events, receiver) = mpsc::channel(256);
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let cancel = CancellationToken::new();
    let stream = read_stream(response, url.clone(), events.clone(), endpoint_tx);
    let token = cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = token.cancelled() => {}
            () = stream => {}
        }
    });
    let endpoint = match tokio::time::timeout(timeout, endpoint_rx).await {
        Ok(Ok(Ok(endpoint))) => endpoint,
        Ok(Ok(Err(refused))) => {
            cancel.cancel();
            return Err(TransportError::Http(refused.to_string()));
        }
        Ok(Err(_)) => {
            cancel.cancel();
            return Err(TransportError::Http(format!(
                "the SSE stream of the MCP server at {shown} ended before its endpoint event"
            )));
        }
        Err(_) => {
            cancel.cancel();
            return Err(TransportError::Http(format!(
                "the MCP server at {shown} sent no endpoint event within {} ms; is it a \
                 Streamable HTTP server (\"type\": \"http\")?",
                timeout.as_millis()
            )));
        }
    };
    let transport = SseTransport {
        client,
        endpoint,
        headers,
        timeout,
        events,
        cancel,
    };
    Ok(Connection {
        transport: Arc::new(transport),
        events: receiver,
    })
}

pub struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    timeout: Duration,
    events: mpsc::Sender<TransportEvent>,
    cancel: CancellationToken,
}

/// Reads the GET stream: the endpoint event first, then messages until the stream ends.
async fn read_stream(
    response: reqwest::Response,
    url: Url,
    events: mpsc::Sender<TransportEvent>,
    endpoint: oneshot::Sender<Result<Url, EndpointError>>,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = SseDecoder::new();
    let mut body = response.bytes_stream();
    let end = loop {
        let chunk = match body.next().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => {
                break format!(
                    "the SSE stream broke: {}",
                    crate::error_chain::error_chain(&e)
                );
            }
            None => break "the server closed the SSE stream".to_string(),
        };
        // The legacy transport sets no limit, so feeding never fails.
        let decoded = match parser.feed(&chunk) {
            Ok(decoded) => decoded,
            Err(e) => break e.to_string(),
        };
        for event in decoded {
            match event.kind() {
                "endpoint" => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(resolve_endpoint(&url, event.data.trim()));
                    }
                }
                "message" => {
                    if let Ok(message) = Message::parse(&event.data) {
                        let _ = events.send(TransportEvent::Message(message)).await;
                    }
                }
                _ => {}
            }
        }
    };
    let reason = format!(
        "lost the connection to the MCP server at {}: {end}",
        http_common::shown(&url)
    );
    let _ = events.send(TransportEvent::Closed { reason }).await;
}

/// Why the `endpoint` event cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum EndpointError {
    #[error("the MCP server at {server} sent an invalid endpoint {endpoint:?}: {reason}")]
    Invalid {
        server: String,
        endpoint: String,
        reason: String,
    },
    #[error(
        "the MCP server at {server} sent endpoint {endpoint}, on another origin; refusing to \
         send messages (and headers) there"
    )]
    OtherOrigin { server: String, endpoint: String },
}

/// The endpoint may be relative; it must stay on the server's origin, since the configured
/// headers (tokens) are sent to it.
fn resolve_endpoint(url: &Url, endpoint: &str) -> Result<Url, EndpointError> {
    let server = http_common::shown(url);
    let resolved = match url.join(endpoint) {
        Ok(resolved) => resolved,
        Err(e) => {
            return Err(EndpointError::Invalid {
                server,
                endpoint: endpoint.to_string(),
                reason: e.to_string(),
            });
        }
    };
    if resolved.origin() != url.origin() {
        return Err(EndpointError::OtherOrigin {
            server,
            endpoint: http_common::shown(&resolved),
        });
    }
    Ok(resolved)
}

#[async_trait]
impl Transport for SseTransport {
    /// POSTs the message to the endpoint; its response arrives on the GET stream. A failed POST
    /// of a request is answered with a JSON-RPC error, as in the Streamable HTTP transport.
    async fn send(&self, message: Message) -> Result<(), TransportError> {
        if self.cancel.is_cancelled() {
            return Err(TransportError::Closed(format!(
                "the connection to the MCP server at {} is closed",
                self.endpoint
            )));
        }
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(message.to_line());
        let failure = match http_common::exchange(request, &self.endpoint, self.timeout).await {
            Ok(response) if response.status().is_success() => return Ok(()),
            Ok(response) => http_common::status_failure(response, self.timeout).await,
            Err(failure) => failure,
        };
        let reason = failure.describe(&self.endpoint);
        match message {
            Message::Request { id, .. } => {
                http_common::fail_request(&self.events, id, reason);
                Ok(())
            }
            _ => Err(TransportError::Http(reason)),
        }
    }

    async fn close(&self, _how: super::Shutdown) {
        self.cancel.cancel();
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_is_resolved_against_the_url_and_kept_on_its_origin() {
        let url = Url::parse("http://127.0.0.1:9/sse").unwrap();
        let got = resolve_endpoint(&url, "/messages?sessionId=abc").map(|u| u.to_string());
        assert_eq!(
            got,
            Ok("http://127.0.0.1:9/messages?sessionId=abc".to_string())
        );
        let got = resolve_endpoint(&url, "http://127.0.0.1:9/m").map(|u| u.to_string());
        assert_eq!(got, Ok("http://127.0.0.1:9/m".to_string()));
        assert!(resolve_endpoint(&url, "http://evil.example/m").is_err());
    }
}
