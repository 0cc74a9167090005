//! Which wire API the model speaks and what is sent to it: the `api`, `serverKind`,
//! `maxOutputTokens` and `reasoningEffort` settings, the guess of the API from the base URL, and
//! the Anthropic SDKs' defaults (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`). Where the model is
//! (base URL, key variable and model together, each depending on the API) is resolved with the
//! other settings, in `settings_resolve.rs`.

use schemars::JsonSchema;
use serde::Deserialize;

/// Where `api: "anthropic"` goes when nothing says: the Anthropic SDKs' default.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// The wire API of the model server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// OpenAI chat completions, `POST {baseUrl}/chat/completions`: most providers and every
    /// local server.
    #[default]
    #[serde(alias = "chat-completions", alias = "chat_completions")]
    Chat,
    /// OpenAI Responses, `POST {baseUrl}/responses`: stateless (`store: false`), reasoning
    /// carried between turns encrypted.
    Responses,
    /// Anthropic Messages, `POST {baseUrl}/v1/messages`, with prompt caching.
    #[serde(alias = "messages")]
    Anthropic,
}

impl WireApi {
    pub const NAMES: [&str; 3] = ["chat", "responses", "anthropic"];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Responses => "responses",
            Self::Anthropic => "anthropic",
        }
    }

    /// The API a base URL names without doubt: Anthropic's own host; anything else is
    /// taken for chat completions.
    pub fn guess(base_url: &str) -> Self {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        match host.as_deref() {
            Some("api.anthropic.com") => Self::Anthropic,
            _ => Self::Chat,
        }
    }
}

/// What kind of server answers at the base URL, for the context-window probe: it is sent only
/// to the server that can answer it, and only to a loopback or private address unless this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ServerKind {
    /// `GET {root}/props` (`n_ctx`).
    #[serde(rename = "llama.cpp", alias = "llamacpp", alias = "llama-server")]
    LlamaCpp,
    /// `GET {baseUrl}/models` (`max_model_len`).
    #[serde(rename = "vllm")]
    Vllm,
    /// `POST {root}/api/show` (`context_length`).
    #[serde(rename = "ollama")]
    Ollama,
    /// A server that says nothing of its window (a cloud API, a proxy): never probed.
    #[serde(rename = "other")]
    Other,
}

/// How hard a reasoning model thinks: the Responses API's `reasoning.effort`, Anthropic's
/// thinking budget, chat completions' `reasoning_effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// No thinking (Anthropic), the least reasoning (OpenAI `minimal`).
    #[serde(alias = "none", alias = "off")]
    Minimal,
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// The settings of this file, in `RawSettings`.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RawModelApi {
    /// The wire API: `chat` (OpenAI chat completions), `responses` (OpenAI Responses) or
    /// `anthropic` (Anthropic Messages). `--api` comes first. Default: `anthropic` for a base
    /// URL on api.anthropic.com, else `chat`.
    pub api: Option<WireApi>,
    /// The kind of server at the base URL (`llama.cpp`, `vllm`, `ollama`, `other`), so that
    /// the context window is asked of it alone, wherever it is. Default: asked of a loopback or
    /// private address only, by all three routes.
    pub server_kind: Option<ServerKind>,
    /// The most tokens one answer may have (`max_tokens`, `max_output_tokens`). Default: the
    /// server's own for chat and responses; for anthropic the model's (32000 for Claude 4).
    #[schemars(range(min = 1))]
    pub max_output_tokens: Option<u32>,
    /// `minimal`, `low`, `medium` or `high`. Default: the server's own; with anthropic, no
    /// extended thinking.
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// Why this file's settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelApiError {
    #[error(
        "maxOutputTokens is 0, which would refuse every answer; set the most tokens one answer \
         may have, or remove it for the default"
    )]
    MaxOutputTokensZero,
}

/// The rest of this file's settings, resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelApiSettings {
    pub server_kind: Option<ServerKind>,
    pub max_output_tokens: Option<u32>,
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl ModelApiSettings {
    pub fn resolve(user: &RawModelApi, project: &RawModelApi) -> Result<Self, ModelApiError> {
        let max_output_tokens = project.max_output_tokens.or(user.max_output_tokens);
        if max_output_tokens == Some(0) {
            return Err(ModelApiError::MaxOutputTokensZero);
        }
        Ok(Self {
            server_kind: project.server_kind.or(user.server_kind),
            max_output_tokens,
            reasoning_effort: project.reasoning_effort.or(user.reasoning_effort),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_api_is_guessed_only_from_anthropic_s_own_host() {
        assert_eq!(
            WireApi::guess("https://api.anthropic.com/v1"),
            WireApi::Anthropic
        );
        assert_eq!(
            WireApi::guess("https://API.Anthropic.com"),
            WireApi::Anthropic
        );
        for other in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:8080/v1",
            "https://my-proxy.example/anthropic",
            "not a url",
        ] {
            assert_eq!(WireApi::guess(other), WireApi::Chat, "{other}");
        }
    }

    #[test]
    fn max_output_tokens_0_is_refused() {
        let zero = RawModelApi {
            max_output_tokens: Some(0),
            ..RawModelApi::default()
        };
        let error = ModelApiSettings::resolve(&RawModelApi::default(), &zero).err();
        assert_eq!(error, Some(ModelApiError::MaxOutputTokensZero));
        assert!(
            error
                .map(|e| e.to_string())
                .is_some_and(|e| e.contains("maxOutputTokens"))
        );
    }
}
