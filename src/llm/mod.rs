//! The model client: OpenAI-compatible `POST {base_url}/chat/completions` with streaming and tool
//! calls, the SSE parser that assembles a response from its deltas, and retries.

mod types;

pub use types::{Completion, FinishReason, Message, StreamEvent, ToolCall, ToolSpec, Usage};
