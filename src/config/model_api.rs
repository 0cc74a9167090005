//! Which wire API the model speaks and where it is: the `api`, `serverKind`,
//! `maxOutputTokens` and `reasoningEffort` settings, `--api`, and the guess from the base URL.
//! Resolves the base URL, the key's variable and the default model together, since each depends
//! on the API: Anthropic's are read as the Anthropic SDKs read them (`ANTHROPIC_BASE_URL`,
//! `ANTHROPIC_API_KEY`), OpenAI's (`OPENAI_BASE_URL`, `OPENAI_API_KEY`) for the other two.

use schemars::JsonSchema;
use serde::Deserialize;

use super::settings::{
    DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL, DEFAULT_MODEL, RawSettings, SettingsOverrides,
};

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

/// The model's server, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEndpoint {
    pub api: WireApi,
    pub base_url: String,
    pub model: String,
    pub api_key_env: String,
}

/// Flags over environment over the project's settings over the user's over the API's default.
pub fn resolve_endpoint(
    user: &RawSettings,
    project: &RawSettings,
    flag: Option<&RawSettings>,
    overrides: &SettingsOverrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> ModelEndpoint {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    // `--settings` over the project's over the user's.
    let pick = |f: &dyn Fn(&RawSettings) -> Option<String>| {
        flag.and_then(f).or_else(|| f(project)).or_else(|| f(user))
    };
    let chosen = overrides
        .api
        .or(flag.and_then(|f| f.model_api.api))
        .or(project.model_api.api)
        .or(user.model_api.api);
    let settings_base = pick(&|s| s.base_url.clone());
    let base_url = if chosen == Some(WireApi::Anthropic) {
        overrides
            .base_url
            .clone()
            .or_else(|| non_empty("ANTHROPIC_BASE_URL"))
            .or_else(|| non_empty("LING_BASE_URL"))
            .or(settings_base)
            .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_string())
    } else {
        overrides
            .base_url
            .clone()
            .or_else(|| non_empty("OPENAI_BASE_URL"))
            .or_else(|| non_empty("LING_BASE_URL"))
            .or(settings_base)
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
    };
    let base_url = base_url.trim_end_matches('/').to_string();
    let api = chosen.unwrap_or_else(|| WireApi::guess(&base_url));
    let anthropic = api == WireApi::Anthropic;
    let model = overrides
        .model
        .clone()
        .or_else(|| non_empty("LING_MODEL"))
        .or_else(|| pick(&|s| s.model.clone()))
        .unwrap_or_else(|| {
            if anthropic {
                ANTHROPIC_MODEL
            } else {
                DEFAULT_MODEL
            }
            .to_string()
        });
    let api_key_env = pick(&|s| s.api_key_env.clone()).unwrap_or_else(|| {
        if anthropic {
            ANTHROPIC_API_KEY_ENV
        } else {
            DEFAULT_API_KEY_ENV
        }
        .to_string()
    });
    ModelEndpoint {
        api,
        base_url,
        model,
        api_key_env,
    }
}

/// The rest of this file's settings, resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelApiSettings {
    pub server_kind: Option<ServerKind>,
    pub max_output_tokens: Option<u32>,
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl ModelApiSettings {
    pub fn resolve(user: &RawModelApi, project: &RawModelApi) -> Result<Self, String> {
        let max_output_tokens = project.max_output_tokens.or(user.max_output_tokens);
        if max_output_tokens == Some(0) {
            return Err(
                "maxOutputTokens is 0, which would refuse every answer; set the most tokens one \
                 answer may have, or remove it for the default"
                    .to_string(),
            );
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

    fn raw(json: &str) -> RawSettings {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    fn endpoint(
        settings: &str,
        overrides: &SettingsOverrides,
        vars: &[(&str, &str)],
    ) -> ModelEndpoint {
        let env = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        resolve_endpoint(
            &RawSettings::default(),
            &raw(settings),
            None,
            overrides,
            &env,
        )
    }

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
    fn anthropic_reads_the_anthropic_sdk_variables() {
        let flags = SettingsOverrides {
            api: Some(WireApi::Anthropic),
            ..SettingsOverrides::default()
        };
        let vars = [
            ("ANTHROPIC_BASE_URL", "https://gateway.example/"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1"),
        ];
        assert_eq!(
            endpoint("{}", &flags, &vars),
            ModelEndpoint {
                api: WireApi::Anthropic,
                base_url: "https://gateway.example".into(),
                model: ANTHROPIC_MODEL.into(),
                api_key_env: "ANTHROPIC_API_KEY".into(),
            }
        );
        // Nothing set: Anthropic's own server.
        assert_eq!(
            endpoint(
                r#"{"api": "anthropic"}"#,
                &SettingsOverrides::default(),
                &[]
            )
            .base_url,
            ANTHROPIC_BASE_URL
        );
        // The base URL alone decides, when it is Anthropic's host; settings can name the key.
        let guessed = endpoint(
            r#"{"baseUrl": "https://api.anthropic.com", "apiKeyEnv": "MY_KEY"}"#,
            &SettingsOverrides::default(),
            &[],
        );
        assert_eq!(
            (guessed.api, guessed.api_key_env.as_str()),
            (WireApi::Anthropic, "MY_KEY")
        );
    }

    #[test]
    fn chat_and_responses_read_the_openai_variables() {
        let vars = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"),
            ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
        ];
        let chat = endpoint("{}", &SettingsOverrides::default(), &vars);
        assert_eq!(
            chat,
            ModelEndpoint {
                api: WireApi::Chat,
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: DEFAULT_MODEL.into(),
                api_key_env: DEFAULT_API_KEY_ENV.into(),
            }
        );
        let responses = endpoint(
            r#"{"api": "responses"}"#,
            &SettingsOverrides::default(),
            &vars,
        );
        assert_eq!(responses.api, WireApi::Responses);
        assert_eq!(responses.base_url, "http://127.0.0.1:8080/v1");
    }

    #[test]
    fn names_and_their_aliases_parse_and_others_say_what_works() {
        assert_eq!(
            raw(r#"{"api": "chat-completions"}"#).model_api.api,
            Some(WireApi::Chat)
        );
        assert_eq!(
            raw(r#"{"serverKind": "llama-server"}"#)
                .model_api
                .server_kind,
            Some(ServerKind::LlamaCpp)
        );
        assert_eq!(
            raw(r#"{"reasoningEffort": "off"}"#)
                .model_api
                .reasoning_effort,
            Some(ReasoningEffort::Minimal)
        );
        let error = serde_json::from_str::<RawSettings>(r#"{"api": "gemini"}"#)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("chat") && error.contains("anthropic"),
            "{error}"
        );
    }

    #[test]
    fn max_output_tokens_0_is_refused() {
        let zero = RawModelApi {
            max_output_tokens: Some(0),
            ..RawModelApi::default()
        };
        let error = ModelApiSettings::resolve(&RawModelApi::default(), &zero).err();
        assert!(error.is_some_and(|e| e.contains("maxOutputTokens")));
    }
}
