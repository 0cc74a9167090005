//! How large the model's context window is, where the server or the model's name says: the
//! server is asked once (vLLM's `max_model_len` in `GET {base}/models`, llama.cpp's `n_ctx` in
//! `GET {root}/props`, Ollama's `model_info.*.context_length` in `POST {root}/api/show`, where
//! `{root}` is the base URL without its trailing `/v1`), every request bounded by a short
//! timeout and sent only to the base URL's own server through the model client (same origin
//! rules, same key). Otherwise [`known_window`] looks the model up in a table of well-known
//! models. Also recognises a "context too long" answer ([`is_context_overflow`]).

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use tokio::time::timeout;

use super::LlmClient;

/// How long one probe of the server may take, whole.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);
/// The most of a probe's answer that is read.
const PROBE_BODY_CAP: usize = 256 * 1024;

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

/// The window an overflow error states: llama.cpp's `n_ctx`, or "maximum context length is N".
pub fn window_in_error(body: &str) -> Option<u64> {
    if let Ok(value) = serde_json::from_str::<Value>(body)
        && let Some(n) = value["error"]["n_ctx"].as_u64()
    {
        return Some(n);
    }
    let lower = body.to_ascii_lowercase();
    let at = lower.find("maximum context length is ")? + "maximum context length is ".len();
    let digits: String = lower[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// `{base}` without a trailing `/v1`, where llama.cpp and Ollama serve their own routes, and the
/// query the base URL has (`?api-version=...`), to keep after a route.
fn server_root(base_url: &str) -> (String, &str) {
    let (base, query) = base_url.split_at(base_url.find(['?', '#']).unwrap_or(base_url.len()));
    let base = base.trim_end_matches('/');
    (base.strip_suffix("/v1").unwrap_or(base).to_string(), query)
}

impl LlmClient {
    /// Asks the server for the context window of the configured model: vLLM, then llama.cpp,
    /// then Ollama; `None` when none of them answers in time. Each request is bounded by
    /// [`PROBE_TIMEOUT`].
    pub async fn probe_context_window(&self) -> Option<u64> {
        let base = self.config().base_url.clone();
        let (root, query) = server_root(&base);
        let path = base[..base.len() - query.len()].trim_end_matches('/');
        let model = self.config().model.clone();
        let models = format!("{path}/models{query}");
        let vllm = async {
            let value = self.probe_json(&models, None).await?;
            let data = value["data"].as_array()?;
            let entry = data
                .iter()
                .find(|m| m["id"].as_str() == Some(model.as_str()))
                .or_else(|| (data.len() == 1).then(|| &data[0]))?;
            entry["max_model_len"].as_u64()
        };
        let props = format!("{root}/props{query}");
        let llama = async {
            let value = self.probe_json(&props, None).await?;
            value["default_generation_settings"]["n_ctx"]
                .as_u64()
                .or_else(|| value["n_ctx"].as_u64())
        };
        let show = format!("{root}/api/show{query}");
        let body = serde_json::json!({ "model": model });
        let ollama = async {
            let value = self.probe_json(&show, Some(&body)).await?;
            let info = value["model_info"].as_object()?;
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        };
        let (vllm, llama, ollama) = tokio::join!(vllm, llama, ollama);
        let window = vllm.or(llama).or(ollama).filter(|n| *n > 0);
        tracing::debug!("llm: context window from the server: {window:?}");
        window
    }

    /// One bounded GET (or POST of `body`) to the model's server; its JSON answer, or `None`.
    async fn probe_json(&self, url: &str, body: Option<&Value>) -> Option<Value> {
        let request = match body {
            Some(body) => self
                .http
                .post(url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string()),
            None => self.http.get(url),
        };
        let request = match &self.config().api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        };
        let fetch = async {
            let mut response = request.send().await.ok()?;
            if !response.status().is_success() {
                return None;
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.ok()? {
                if bytes.len() + chunk.len() > PROBE_BODY_CAP {
                    return None;
                }
                bytes.extend_from_slice(&chunk);
            }
            serde_json::from_slice(&bytes).ok()
        };
        timeout(PROBE_TIMEOUT, fetch).await.ok().flatten()
    }
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
        assert!(!is_context_overflow(
            400,
            r#"{"error":{"message":"bad model"}}"#
        ));
        assert!(!is_context_overflow(429, "maximum context length"));
    }

    #[test]
    fn the_root_drops_a_trailing_v1() {
        assert_eq!(
            server_root("http://h:8080/v1"),
            ("http://h:8080".into(), "")
        );
        assert_eq!(
            server_root("http://h:8080/v1/"),
            ("http://h:8080".into(), "")
        );
        assert_eq!(
            server_root("http://h/openai/v1?x=1"),
            ("http://h/openai".into(), "?x=1")
        );
        assert_eq!(server_root("http://h:11434"), ("http://h:11434".into(), ""));
    }
}
