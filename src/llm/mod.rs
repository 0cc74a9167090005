//! The model client, for three wire APIs: OpenAI chat completions (`chat/`), Anthropic Messages
//! (`anthropic/`) and OpenAI Responses (`responses/`), each an implementation of the `Wire`
//! trait (`wire.rs`) with its streaming parser, behind one [`LlmClient`] that the agent loop
//! drives the same way whichever the server speaks.
//!
//! `crate::sse` splits the byte stream into events, each API's parser turns events into `StreamEvent`s
//! and a `Completion` (their common parts in `stream`), `attempt` does one HTTP request and bounds
//! every wait, `client` picks the API's `Wire`, retries (when `retry` says) and holds the errors
//! the user sees (`error`), `config` is what a client is set up with, `http` builds the HTTP
//! client off the critical path, `window` finds the model's context window, and `models` lists
//! the models a server offers.

mod anthropic;
mod attempt;
mod chat;
mod client;
mod config;
mod error;
mod http;
mod models;
mod probe;
mod responses;
mod retry;
mod stream;
pub mod tape;
mod types;
mod window;
mod wire;

pub use anthropic::default_max_tokens;
pub use client::LlmClient;
pub use config::{DEFAULT_RETRY_BASE_DELAY, LlmConfig, RETRY_BASE_ENV};
pub use error::{LlmError, TimeoutKind};
pub use models::list_models;
pub use probe::PROBE_TIMEOUT;
pub use responses::is_reasoning_model;
pub use stream::StreamError;
pub use types::{
    Completion, FinishReason, FunctionCall, Message, ReasoningItem, StreamEvent, ToolCall,
    ToolSpec, Usage,
};
pub use window::{is_context_overflow, known_window};
