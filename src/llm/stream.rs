//! What the three wire APIs' streaming parsers have in common: the [`StreamParser`] trait the
//! client drives (one event's `data` at a time, or a whole non-streamed answer), the ways a
//! stream can fail ([`StreamError`]), and [`ToolCalls`], which puts tool calls together from
//! their fragments and announces each once its name is whole.

use std::collections::BTreeMap;

use serde_json::Value;

use super::types::{FinishReason, StreamEvent, ToolCall};

/// How an answer with `has_calls` ended, from the reason the server gave: calls can only mean
/// the model wants them run, whatever reason came with them (some servers end every answer
/// with "stop").
pub fn finish_with_calls(reported: Option<FinishReason>, has_calls: bool) -> FinishReason {
    match reported {
        Some(FinishReason::Stop) | None if has_calls => FinishReason::ToolCalls,
        Some(reason) => reason,
        None => FinishReason::Other,
    }
}

/// A failure the server reported in the stream, by what it means for the request: `overloaded`
/// (its code says so: retried with the retry rules), a context overflow (the `overflow` code,
/// or a message that says so: compaction), or an error.
pub fn server_failure(overloaded: bool, overflow: bool, message: String) -> StreamError {
    if overloaded {
        return StreamError::Overloaded(message);
    }
    if overflow || super::is_context_overflow(400, &message) {
        return StreamError::Overflow {
            window: super::window::window_in_error(&message),
            message,
        };
    }
    StreamError::Server(message)
}

/// Why a stream could not be assembled into a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// The server reported an error inside the stream that retrying will not fix.
    Server(String),
    /// The server reported that it is overloaded or rate-limited (Anthropic's
    /// `overloaded_error`, a Responses `server_error`): retried like a 529 when nothing was shown.
    Overloaded(String),
    /// The server reported inside the stream that the request did not fit the context window
    /// (with the window, if it said).
    Overflow {
        message: String,
        window: Option<u64>,
    },
    /// A chunk that is not the JSON this API sends.
    Malformed(String),
    /// The stream ended before its end marker and before any finish reason.
    Cut,
}

/// A streaming parser of one wire API, fed by the client.
pub trait StreamParser: Send {
    /// Takes one event's `data` and reports what it added.
    fn push(
        &mut self,
        data: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError>;

    /// Takes a whole non-streamed answer (the server ignored `stream: true`).
    fn push_whole(
        &mut self,
        body: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError>;

    /// The end marker arrived: nothing more will come.
    fn is_done(&self) -> bool;

    /// Whether anything reached the user (text, reasoning, a tool call); after that a failed
    /// request must not be retried silently, since the retry would show it twice.
    fn has_shown_output(&self) -> bool;

    /// Ends the stream: the whole completion, or why there is none.
    fn finish(
        self: Box<Self>,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<super::Completion, StreamError>;
}

/// One tool call being put together.
#[derive(Debug, Default)]
pub struct PartialCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// `ToolCallStarted` was emitted for this call.
    announced: bool,
}

/// Tool calls by index, each announced (`ToolCallStarted`) once, as soon as its name is whole.
#[derive(Debug, Default)]
pub struct ToolCalls {
    calls: BTreeMap<usize, PartialCall>,
}

impl ToolCalls {
    pub fn get_mut(&mut self, index: usize) -> &mut PartialCall {
        self.calls.entry(index).or_default()
    }

    pub fn contains_id(&self, id: &str) -> bool {
        self.calls.values().any(|c| c.id == id)
    }

    /// Announces the call at `index` if it has a name and was not announced yet.
    pub fn announce(&mut self, index: usize, on_event: &mut dyn FnMut(StreamEvent)) -> bool {
        match self.calls.get_mut(&index) {
            Some(call) => announce(index, call, on_event),
            None => false,
        }
    }

    /// Announces every call below `before` that has a name and was not yet announced; true if
    /// one was.
    pub fn announce_before(
        &mut self,
        before: usize,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> bool {
        let mut any = false;
        for (&index, call) in self.calls.range_mut(..before) {
            any |= announce(index, call, on_event);
        }
        any
    }

    /// The calls in index order, each with an id (made up where the server sent none).
    pub fn into_calls(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|(index, call)| {
                let id = if call.id.is_empty() {
                    synthetic_id(index)
                } else {
                    call.id
                };
                ToolCall::new(id, call.name, call.arguments)
            })
            .collect()
    }
}

fn announce(index: usize, call: &mut PartialCall, on_event: &mut dyn FnMut(StreamEvent)) -> bool {
    if call.announced || call.name.is_empty() {
        return false;
    }
    call.announced = true;
    if call.id.is_empty() {
        call.id = synthetic_id(index);
    }
    on_event(StreamEvent::ToolCallStarted {
        index,
        id: call.id.clone(),
        name: call.name.clone(),
    });
    true
}

/// Some local servers send no tool-call ids; the id only has to match our own tool message.
pub fn synthetic_id(index: usize) -> String {
    format!("call_{index}")
}

/// The human part of an API error object: `{"message": ...}` (OpenAI, Anthropic and most
/// others), a bare string, or else the JSON itself.
pub(crate) fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(map) => match map.get("message").and_then(Value::as_str) {
            Some(message) => message.to_string(),
            None => error.to_string(),
        },
        other => other.to_string(),
    }
}

/// The start of a chunk, quoted, for an error about it.
pub fn snippet(data: &str) -> String {
    const LIMIT: usize = 120;
    match data.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{:?}...", &data[..end]),
        None => format!("{data:?}"),
    }
}

/// Parses one event's JSON, or says which chunk was not JSON.
pub fn parse<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, StreamError> {
    serde_json::from_str(data)
        .map_err(|e| StreamError::Malformed(format!("{e} in chunk {}", snippet(data))))
}
