//! The model client: OpenAI-compatible `POST {base_url}/chat/completions` with streaming and tool
//! calls, the SSE parser that assembles a response from its deltas, and retries.

mod client;
mod types;

pub use client::{LlmClient, LlmConfig, LlmError};
pub use types::{
    Completion, FinishReason, FunctionCall, Message, StreamEvent, ToolCall, ToolSpec, Usage,
};
