//! Reading the body of a Streamable HTTP reply: one JSON message (or, tolerated, an array), or
//! an SSE stream of messages. A stream that ends before the response to its request is resumed,
//! as the specification asks, by waiting the server's `retry` delay and GETting the endpoint with
//! `Last-Event-ID`; the response may then come on that GET stream. A request whose response can
//! no longer come is answered with a JSON-RPC error so its caller does not wait for a timeout.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::oneshot;

use super::http_common::{self, Failure};
use super::http_session::Shared;
use crate::mcp::jsonrpc::{Message, RequestId};
use crate::sse::SseDecoder;

/// The wait before resuming when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many GETs one cut stream may take to resume.
const RESUME_ATTEMPTS: usize = 3;
/// The largest message read from a reply, a JSON body or one SSE event (16 MiB, as for stdio). A
/// larger one fails the request it answers at once.
const MAX_MESSAGE: usize = super::stdio::MAX_LINE;

/// What a reply is read for.
pub(crate) struct Reader {
    /// The request this reply answers.
    expect: Option<RequestId>,
    /// Where the response goes instead of the client (a replayed initialize).
    swallow: Option<oneshot::Sender<Message>>,
}

impl Reader {
    pub(crate) fn answering(id: RequestId) -> Self {
        Self {
            expect: Some(id),
            swallow: None,
        }
    }

    pub(crate) fn swallowing(id: RequestId, answer: oneshot::Sender<Message>) -> Self {
        Self {
            expect: Some(id),
            swallow: Some(answer),
        }
    }

    /// A stream answering no request of ours (the standalone GET, a notification's reply).
    pub(crate) fn stream() -> Self {
        Self {
            expect: None,
            swallow: None,
        }
    }

    /// The request id whose response has still not arrived.
    fn pending(&self, shared: &Shared) -> Option<&RequestId> {
        let id = self.expect.as_ref()?;
        let waiting = if self.swallow.is_some() {
            true
        } else {
            shared.is_awaiting(id)
        };
        waiting.then_some(id)
    }

    async fn route(&mut self, shared: &Shared, message: Message) {
        if let Message::Response { id, .. } | Message::Error { id: Some(id), .. } = &message
            && self.swallow.is_some()
            && self.expect.as_ref() == Some(id)
        {
            if let Some(answer) = self.swallow.take() {
                let _ = answer.send(message);
            }
            return;
        }
        shared.deliver(message).await;
    }

    fn fail(&mut self, shared: &Shared, reason: String) {
        // A swallowing reader fails by dropping its sender, which its waiter sees.
        self.swallow = None;
        if let Some(id) = &self.expect {
            shared.fail(id, reason);
        }
    }
}

/// Reads one reply to its end (and resumes it when it was cut short).
pub(crate) async fn read(shared: Arc<Shared>, response: reqwest::Response, mut reader: Reader) {
    if http_common::is_event_stream(&response) {
        let mut parser = SseDecoder::with_limit(MAX_MESSAGE);
        if read_events(&shared, response, &mut parser, &mut reader).await {
            resume(&shared, parser, reader).await;
        }
    } else {
        read_json(&shared, response, &mut reader).await;
    }
}

async fn read_json(shared: &Shared, response: reqwest::Response, reader: &mut Reader) {
    let status = response.status();
    let content_type = http_common::content_type(&response);
    let mut response = response;
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if bytes.len() + chunk.len() > MAX_MESSAGE => {
                return reader.fail(shared, too_large(shared));
            }
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) => {
                let reason = format!(
                    "reading the reply of the MCP server at {} failed: {}",
                    http_common::shown(&shared.url),
                    crate::error_chain::error_chain(&e)
                );
                return reader.fail(shared, reason);
            }
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let values = match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(serde_json::Value::Array(values)) => values,
        Ok(value) => vec![value],
        Err(_) => Vec::new(),
    };
    for value in values {
        // Anything that is not a JSON-RPC message (the conformance `initialize` fixture answers
        // a notification with `{"jsonrpc":"2.0","result":{}}`) is skipped.
        if let Ok(message) = Message::from_value(value) {
            reader.route(shared, message).await;
        }
    }
    if reader.pending(shared).is_some() {
        let body = http_common::snippet(text.trim());
        let reason = if body.is_empty() {
            format!(
                "the MCP server at {} answered HTTP {status} with no response",
                http_common::shown(&shared.url)
            )
        } else {
            format!(
                "the MCP server at {} answered HTTP {status} ({content_type}) without the \
                 response: {body}",
                http_common::shown(&shared.url)
            )
        };
        reader.fail(shared, reason);
    }
}

/// Why a reply was dropped: it was over [`MAX_MESSAGE`].
fn too_large(shared: &Shared) -> String {
    format!(
        "the reply of the MCP server at {} was over the {} MiB limit of one message; it was \
         dropped",
        http_common::shown(&shared.url),
        MAX_MESSAGE >> 20
    )
}

/// Reads an SSE reply until it ends. False when it was given up because one event grew over
/// [`MAX_MESSAGE`] (its request failed then; there is nothing to resume).
async fn read_events(
    shared: &Shared,
    response: reqwest::Response,
    parser: &mut SseDecoder,
    reader: &mut Reader,
) -> bool {
    let mut body = response.bytes_stream();
    // A stream that breaks is handled like one that ends: resumed if its response is missing.
    while let Some(Ok(chunk)) = body.next().await {
        // Checked before feeding: an event cannot even start to grow past the limit. The
        // decoder holds to the same limit.
        let fed = if parser.buffered() + chunk.len() > MAX_MESSAGE {
            None
        } else {
            parser.feed(&chunk).ok()
        };
        let Some(events) = fed else {
            reader.fail(shared, too_large(shared));
            return false;
        };
        for event in events {
            // Priming events carry an id and no data; other event types are not MCP messages.
            if event.data.trim().is_empty() || event.kind() != "message" {
                continue;
            }
            if let Ok(message) = Message::parse(&event.data) {
                reader.route(shared, message).await;
            }
        }
    }
    true
}

async fn resume(shared: &Shared, mut parser: SseDecoder, mut reader: Reader) {
    for _ in 0..RESUME_ATTEMPTS {
        if reader.pending(shared).is_none() {
            return;
        }
        let Some(last_event_id) = parser.last_event_id().map(str::to_string) else {
            // Without an event id the server cannot tell where to resume from.
            break;
        };
        tokio::time::sleep(parser.retry().unwrap_or(DEFAULT_RETRY)).await;
        if reader.pending(shared).is_none() {
            return;
        }
        match shared.get_stream(Some(&last_event_id)).await {
            Ok(response) if http_common::is_event_stream(&response) => {
                parser = parser.next_stream();
                if !read_events(shared, response, &mut parser, &mut reader).await {
                    return;
                }
            }
            // A status (405: no resuming here) or a non-stream answer will not change.
            Ok(_) | Err(Failure::Status { .. } | Failure::Rpc { .. }) => break,
            Err(Failure::Other(_)) => {}
        }
    }
    if reader.pending(shared).is_some() {
        let reason = format!(
            "the MCP server at {} closed the reply stream before answering, and it could not \
             be resumed",
            http_common::shown(&shared.url)
        );
        reader.fail(shared, reason);
    }
}
