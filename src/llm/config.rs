//! The settings of one model client ([`LlmConfig`]): which server and wire API, the model, the
//! key, and the bounds on each wait and retry, from the resolved settings or from defaults. The
//! client (`client.rs`) and each API's request body (`wire.rs`) read it.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{
    DEFAULT_API_KEY_ENV, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FIRST_BYTE_TIMEOUT_MS,
    DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS,
    DEFAULT_MAX_STREAM_LINE_BYTES, ReasoningEffort, ServerKind, Settings, WireApi,
};

pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// Overrides `retry_base_delay` in milliseconds; the integration tests use it to retry quickly.
pub const RETRY_BASE_ENV: &str = "LING_RETRY_BASE_MS";

#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The wire API of the server.
    pub api: WireApi,
    /// Ends before `/chat/completions` (or `/responses`), e.g. `http://127.0.0.1:8080/v1`; for
    /// Anthropic the server's root (`https://api.anthropic.com`) or that with `/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The variable the key is read from, named in error messages.
    pub api_key_env: String,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub retry_base_delay: Duration,
    /// The cap on one wait before a retry, `Retry-After` included.
    pub max_retry_delay: Duration,
    /// The longest event-stream line (or non-streamed answer) read; a longer one fails the
    /// request without a retry.
    pub max_line_bytes: usize,
    /// `serverKind`: which server the context-window probe may ask, and how.
    pub server_kind: Option<ServerKind>,
    /// `maxOutputTokens`.
    pub max_output_tokens: Option<u32>,
    /// `reasoningEffort`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Where the context window a server stated is kept between runs (`LING_HOME/cache`); no
    /// cache without it.
    pub cache_dir: Option<PathBuf>,
}

impl LlmConfig {
    /// The defaults of `Settings` (chat completions, no key, `OPENAI_API_KEY`) for the given
    /// server and model.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            api: WireApi::Chat,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: DEFAULT_API_KEY_ENV.to_string(),
            connect_timeout: Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS),
            first_byte_timeout: Duration::from_millis(DEFAULT_FIRST_BYTE_TIMEOUT_MS),
            idle_timeout: Duration::from_millis(DEFAULT_IDLE_TIMEOUT_MS),
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_retry_delay: Duration::from_millis(DEFAULT_MAX_RETRY_DELAY_MS),
            max_line_bytes: DEFAULT_MAX_STREAM_LINE_BYTES,
            server_kind: None,
            max_output_tokens: None,
            reasoning_effort: None,
            cache_dir: None,
        }
    }

    pub fn from_settings(s: &Settings) -> Self {
        let retry_base_delay = std::env::var(RETRY_BASE_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_RETRY_BASE_DELAY, Duration::from_millis);
        Self {
            api: s.api,
            base_url: s.base_url.clone(),
            model: s.model.clone(),
            api_key: s.api_key.clone(),
            api_key_env: s.api_key_env.clone(),
            connect_timeout: s.connect_timeout,
            first_byte_timeout: s.first_byte_timeout,
            idle_timeout: s.idle_timeout,
            max_retries: s.max_retries,
            retry_base_delay,
            max_retry_delay: s.max_retry_delay,
            max_line_bytes: s.max_stream_line_bytes,
            server_kind: s.model_api.server_kind,
            max_output_tokens: s.model_api.max_output_tokens,
            reasoning_effort: s.model_api.reasoning_effort,
            cache_dir: Some(crate::config::ling_home().join("cache")),
        }
    }
}
