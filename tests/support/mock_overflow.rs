//! The "context too long" answers of [`super::mock_openai`]'s context limit, as each kind of
//! server words them.

use serde_json::json;

use super::mock_openai::Reply;

/// How the mock says a request is over its context limit, as each server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// OpenAI: 400, `code: context_length_exceeded`.
    OpenAi,
    /// llama.cpp: 400, `type: exceed_context_size_error`, with `n_ctx`.
    LlamaCpp,
    /// vLLM: 400, "This model's maximum context length is N tokens".
    Vllm,
    /// A proxy's 413.
    TooLarge,
    /// Anthropic: 400 `invalid_request_error`, "prompt is too long: N tokens > M maximum".
    Anthropic,
    /// The Responses API: 400 `context_length_exceeded`, the window not stated.
    Responses,
}

impl Overflow {
    /// The refusal of a request of `size` bytes over `limit` bytes, stated as tokens (a
    /// quarter of the bytes), as servers state them.
    pub(super) fn reply(self, size: usize, limit: usize) -> Reply {
        let (size, limit) = (size / 4, limit / 4);
        let body = match self {
            Self::OpenAi => json!({"error": {"message": format!(
                "This model's maximum context length is {limit} tokens. However, your messages resulted in {size} tokens."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
            Self::LlamaCpp => json!({"error": {"code": 400, "message": format!(
                "request ({size} tokens) exceeds the available context size ({limit} tokens), try increasing it"),
                "type": "exceed_context_size_error", "n_prompt_tokens": size, "n_ctx": limit}}),
            Self::Vllm => json!({"object": "error", "message": format!(
                "This model's maximum context length is {limit} tokens. However, you requested {size} tokens. Please reduce the length of the messages or completion."),
                "type": "BadRequestError", "code": 400}),
            Self::TooLarge => json!({"error": "Request Entity Too Large"}),
            Self::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("prompt is too long: {size} tokens > {limit} maximum")}}),
            Self::Responses => json!({"error": {"message":
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}}),
        };
        let status = if self == Self::TooLarge { 413 } else { 400 };
        Reply::status(status).raw_body(body.to_string())
    }
}
