//! The model client: OpenAI-compatible `POST {base_url}/chat/completions` with streaming and tool
//! calls, the SSE parser that assembles a response from its deltas, and retries.
//!
//! `sse` splits the byte stream into events, `stream` turns events into `StreamEvent`s and a
//! `Completion`, `retry` decides how long to wait, `client` does the HTTP and bounds every wait,
//! and `error` holds the messages the user sees.

mod client;
mod error;
mod models;
mod retry;
mod sse;
mod stream;
mod types;
mod window;

pub use client::{DEFAULT_RETRY_BASE_DELAY, LlmClient, LlmConfig, RETRY_BASE_ENV};
pub use error::{LlmError, TimeoutKind};
pub use models::list_models;
pub use sse::{SseDecoder, SseEvent};
pub use stream::{ChunkAssembler, StreamError};
pub use types::{
    Completion, FinishReason, FunctionCall, Message, StreamEvent, ToolCall, ToolSpec, Usage,
};
pub use window::{PROBE_TIMEOUT, is_context_overflow, known_window};
