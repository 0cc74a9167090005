//! How large the model's context window is by the model's name ([`known_window`], a table of
//! well-known models, for when the server cannot say: `probe.rs` asks it), and how a server says
//! a request did not fit it ([`is_context_overflow`], [`window_in_error`]).

use serde_json::Value;

/// Well-known models and their context windows in tokens, the first whose pattern the model
/// name (lower-cased, without a `provider/` prefix) starts with or contains wins, so the more
/// specific come first.
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("deepseek-coder", 128_000),
    ("qwen3-coder", 262_144),
    ("qwen2.5-coder", 32_768),
    ("qwen3", 32_768),
    ("qwen2.5", 32_768),
    ("llama-3.1", 131_072),
    ("llama3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3.3", 131_072),
    ("llama-4", 1_048_576),
    ("llama3", 8_192),
    ("codestral", 256_000),
    ("devstral", 131_072),
    ("mistral-large", 131_072),
    ("mixtral", 32_768),
    ("mistral", 32_768),
    ("gemma3", 131_072),
    ("gemma-3", 131_072),
    ("gemma2", 8_192),
    ("phi-4", 16_384),
    ("phi4", 16_384),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("glm-4.5", 131_072),
    ("kimi-k2", 131_072),
];

/// The window of a well-known model, from its name.
pub fn known_window(model: &str) -> Option<u64> {
    let model = model.to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or(&model);
    KNOWN
        .iter()
        .find(|(pattern, _)| name.starts_with(pattern))
        .or_else(|| KNOWN.iter().find(|(pattern, _)| name.contains(pattern)))
        .map(|(_, window)| *window)
}

/// Whether an HTTP error says the request did not fit the model's context: a 413, or a 400/422
/// whose body reads like OpenAI's `context_length_exceeded`, llama.cpp's
/// `exceed_context_size_error`, vLLM's "maximum context length", or the like of other servers.
pub fn is_context_overflow(status: u16, body: &str) -> bool {
    if status == 413 {
        return true;
    }
    if !matches!(status, 400 | 422 | 500) {
        return false;
    }
    let body = body.to_ascii_lowercase();
    const SIGNS: &[&str] = &[
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context size",
        "maximum context length",
        "context length exceeded",
        "context window",
        "longer than the model's context length",
        "prompt is too long",
        "too many tokens",
        "reduce the length of the messages",
        "input is too long",
        "prompt too long",
        "maximum context size",
        "exceeds the context",
    ];
    SIGNS.iter().any(|sign| body.contains(sign))
}

/// The window an overflow error states: llama.cpp's `n_ctx`, "maximum context length is N"
/// (OpenAI, vLLM), or Anthropic's "prompt is too long: N tokens > M maximum".
pub fn window_in_error(body: &str) -> Option<u64> {
    if let Ok(value) = serde_json::from_str::<Value>(body)
        && let Some(n) = value["error"]["n_ctx"].as_u64()
    {
        return Some(n);
    }
    let lower = body.to_ascii_lowercase();
    if let Some(end) = lower.find(" maximum")
        && let Some(gt) = lower[..end].rfind("> ")
        && let Ok(n) = lower[gt + 2..end].trim().parse::<u64>()
        && n > 0
    {
        return Some(n);
    }
    let at = lower.find("maximum context length is ")? + "maximum context length is ".len();
    let digits: String = lower[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_models_have_their_windows() {
        assert_eq!(known_window("gpt-4o"), Some(128_000));
        assert_eq!(known_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_window("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_window("o3"), Some(200_000));
        assert_eq!(known_window("o4-mini"), Some(200_000));
        assert_eq!(known_window("deepseek-chat"), Some(128_000));
        assert_eq!(known_window("qwen2.5-coder:14b"), Some(32_768));
        assert_eq!(
            known_window("Qwen/Qwen2.5-Coder-32B-Instruct"),
            Some(32_768)
        );
        assert_eq!(
            known_window("meta-llama/llama-3.1-8b-instruct"),
            Some(131_072)
        );
        assert_eq!(known_window("llama3.1:8b"), Some(131_072));
        assert_eq!(known_window("gpt-4"), Some(8_192));
        assert_eq!(known_window("my-own-finetune"), None);
        assert_eq!(known_window("local"), None);
    }

    #[test]
    fn overflow_answers_of_the_usual_servers_are_recognised() {
        let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!(is_context_overflow(400, openai));
        assert_eq!(window_in_error(openai), Some(128_000));
        let llama = r#"{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
        assert!(is_context_overflow(400, llama));
        assert_eq!(window_in_error(llama), Some(4096));
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","code":400}"#;
        assert!(is_context_overflow(400, vllm));
        assert_eq!(window_in_error(vllm), Some(4096));
        assert!(is_context_overflow(413, "Request Entity Too Large"));
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210345 tokens > 200000 maximum"}}"#;
        assert!(is_context_overflow(400, anthropic));
        assert_eq!(window_in_error(anthropic), Some(200_000));
        let responses = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
        assert!(is_context_overflow(400, responses));
        assert_eq!(window_in_error(responses), None);
        assert!(!is_context_overflow(
            400,
            r#"{"error":{"message":"bad model"}}"#
        ));
        assert!(!is_context_overflow(429, "maximum context length"));
    }
}
