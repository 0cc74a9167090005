//! The pieces [`Settings::resolve`](super::settings::Settings::resolve) is made of: the layers
//! a key is picked from, the model's endpoint (the base URL, the key's variable and the default
//! model depend on the wire API: Anthropic's read as the Anthropic SDKs read them, OpenAI's for
//! the other two), the permission rules with their origins, the limits with their defaults, and
//! [`SettingsError`], why resolved settings cannot be used.

use std::time::Duration;

use super::model_api::{
    ANTHROPIC_API_KEY_ENV, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, ModelApiError, WireApi,
};
use super::sandbox::SandboxSettingsError;
use super::settings_raw::{
    DEFAULT_API_KEY_ENV, DEFAULT_AUTO_COMPACT_PERCENT, DEFAULT_BASE_URL,
    DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FIRST_BYTE_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS,
    DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS, DEFAULT_MAX_STOP_HOOK_BLOCKS,
    DEFAULT_MAX_STREAM_LINE_BYTES, DEFAULT_MODEL, DEFAULT_TOOL_OUTPUT_LIMIT, RawSettings,
    SettingsOverrides,
};
use super::tool_search::ToolSearchError;

/// Why the settings cannot be used. Each message names the key and says what to set instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "maxTurns is 0, which would stop every run before its first model request; set it to 1 \
         or more, or remove it for no limit"
    )]
    MaxTurnsZero,
    #[error(
        "maxStopHookBlocks is 0, which would end every turn a Stop hook blocks; set it to how \
         many times in a row a Stop hook may send the model back to work (default \
         {DEFAULT_MAX_STOP_HOOK_BLOCKS})"
    )]
    MaxStopHookBlocksZero,
    #[error(
        "maxRetryDelayMs is 0, which would retry without any pause; set it to the longest wait \
         in milliseconds, or set maxRetries to 0 to not retry"
    )]
    MaxRetryDelayZero,
    #[error(
        "maxStreamLineBytes is 0, which would refuse every answer; set it to a byte count (the \
         default is {DEFAULT_MAX_STREAM_LINE_BYTES}) or remove it"
    )]
    MaxStreamLineBytesZero,
    #[error(
        "contextWindow is 0; set it to the model's context window in tokens (e.g. 32768), or \
         remove it to ask the server"
    )]
    ContextWindowZero,
    #[error(
        "autoCompactPercent {0} is not between 10 and 100; set the percentage of the context \
         window at which to compact (default {DEFAULT_AUTO_COMPACT_PERCENT})"
    )]
    AutoCompactPercent(u8),
    #[error(
        "maxBudgetUsd {0} is not a number of US dollars of 0 or more; set it to what a run may \
         spend (e.g. 5), or remove it for no cap"
    )]
    MaxBudget(f64),
    #[error("theme {0:?} is not one of auto, dark, light")]
    Theme(String),
    /// `maxOutputTokens` (the message names the key).
    #[error(transparent)]
    ModelApi(#[from] ModelApiError),
    /// `sandbox` (its message names the key).
    #[error(transparent)]
    Sandbox(#[from] SandboxSettingsError),
    /// `toolSearch` (its message names the key).
    #[error(transparent)]
    ToolSearch(#[from] ToolSearchError),
    /// `checkpoints` (its message names the key).
    #[error("{0}")]
    Checkpoints(String),
    /// `webSearch` (its message names the key).
    #[error(transparent)]
    WebSearch(#[from] super::web::WebSearchError),
}

/// The layers, strongest first: `--settings`, the project's file, the user's.
pub(super) struct Layers<'a> {
    pub flag: Option<&'a RawSettings>,
    pub project: &'a RawSettings,
    pub user: &'a RawSettings,
}

impl Layers<'_> {
    pub fn pick<T>(&self, f: impl Fn(&RawSettings) -> Option<T>) -> Option<T> {
        self.flag
            .and_then(&f)
            .or_else(|| f(self.project))
            .or_else(|| f(self.user))
    }
}

/// Claude Code's `--model` aliases; one without a `modelAliases` entry is warned about.
const CLAUDE_MODEL_ALIASES: [&str; 5] = ["sonnet", "opus", "haiku", "opusplan", "sonnet[1m]"];

/// The model id sent: the endpoint's model (Claude Code's `default` is the settings' model),
/// through `modelAliases`; and a warning for a Claude Code alias sent as it is.
pub(super) fn model_id(layers: &Layers<'_>, endpoint: &ModelEndpoint) -> (String, Vec<String>) {
    let anthropic = endpoint.api == WireApi::Anthropic;
    let mut warnings = Vec::new();
    let model = match endpoint.model.as_str() {
        // Claude Code's `--model default`: the model the settings give.
        "default" => layers.pick(|s| s.model.clone()).unwrap_or_else(|| {
            if anthropic {
                ANTHROPIC_MODEL
            } else {
                DEFAULT_MODEL
            }
            .to_string()
        }),
        _ => endpoint.model.clone(),
    };
    let model = match layers.pick(|s| s.model_aliases.as_ref()?.get(&model).cloned()) {
        Some(id) => id,
        None => {
            if CLAUDE_MODEL_ALIASES.contains(&model.as_str()) && !anthropic {
                warnings.push(format!(
                    "model `{model}` is one of Claude Code's aliases of Anthropic models; \
                     it is sent as it is, so the server must know it by that name. Name the \
                     id it stands for in settings `modelAliases`, e.g. \
                     {{\"{model}\": \"anthropic/claude-{model}-4.5\"}}"
                ));
            }
            model
        }
    };
    (model, warnings)
}

/// The permission rules of the flags and both files, and where each came from.
pub(super) struct Rules {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub ask: Vec<String>,
    pub origins: Vec<(String, &'static str)>,
}

impl Rules {
    pub fn of(layers: &Layers<'_>, overrides: &SettingsOverrides) -> Self {
        let (project, user) = (&layers.project.permissions, &layers.user.permissions);
        let flag = layers.flag.map(|f| &f.permissions);
        let none = Vec::new();
        let (flag_allow, flag_deny, flag_ask) = match flag {
            Some(p) => (&p.allow, &p.deny, &p.ask),
            None => (&none, &none, &none),
        };
        let mut origins = Vec::new();
        for (rules, origin) in [
            (&overrides.allowed_tools, "flag"),
            (&overrides.disallowed_tools, "flag"),
            (flag_allow, "--settings"),
            (flag_deny, "--settings"),
            (&project.allow, "project settings"),
            (&project.deny, "project settings"),
            (&user.allow, "user settings"),
            (&user.deny, "user settings"),
        ] {
            origins.extend(rules.iter().map(|r| (r.trim().to_string(), origin)));
        }
        let chain = |lists: [&[String]; 4]| -> Vec<String> { lists.concat() };
        Self {
            allow: chain([
                &overrides.allowed_tools,
                flag_allow,
                &project.allow,
                &user.allow,
            ]),
            deny: chain([
                &overrides.disallowed_tools,
                flag_deny,
                &project.deny,
                &user.deny,
            ]),
            ask: chain([&[], flag_ask, &project.ask, &user.ask]),
            origins,
        }
    }
}

/// The limits and timeouts, with their defaults; a 0 that would make Ling useless is refused.
pub(super) struct Limits {
    pub max_turns: Option<u32>,
    pub max_stop_hook_blocks: u32,
    pub tool_output_limit: usize,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub max_retry_delay: Duration,
    pub max_stream_line_bytes: usize,
    pub context_window: Option<u64>,
    pub auto_compact_percent: u8,
}

impl Limits {
    pub fn of(layers: &Layers<'_>) -> Result<Self, SettingsError> {
        let ms = |v: Option<u64>, default: u64| Duration::from_millis(v.unwrap_or(default));
        let auto_compact_percent = layers
            .pick(|s| s.auto_compact_percent)
            .unwrap_or(DEFAULT_AUTO_COMPACT_PERCENT);
        if !(10..=100).contains(&auto_compact_percent) {
            return Err(SettingsError::AutoCompactPercent(auto_compact_percent));
        }
        Ok(Self {
            max_turns: nonzero(layers.pick(|s| s.max_turns), SettingsError::MaxTurnsZero)?,
            max_stop_hook_blocks: nonzero(
                layers.pick(|s| s.max_stop_hook_blocks),
                SettingsError::MaxStopHookBlocksZero,
            )?
            .unwrap_or(DEFAULT_MAX_STOP_HOOK_BLOCKS),
            tool_output_limit: layers
                .pick(|s| s.tool_output_limit)
                .unwrap_or(DEFAULT_TOOL_OUTPUT_LIMIT),
            connect_timeout: ms(
                layers.pick(|s| s.connect_timeout_ms),
                DEFAULT_CONNECT_TIMEOUT_MS,
            ),
            first_byte_timeout: ms(
                layers.pick(|s| s.first_byte_timeout_ms),
                DEFAULT_FIRST_BYTE_TIMEOUT_MS,
            ),
            idle_timeout: ms(layers.pick(|s| s.idle_timeout_ms), DEFAULT_IDLE_TIMEOUT_MS),
            max_retries: layers
                .pick(|s| s.max_retries)
                .unwrap_or(DEFAULT_MAX_RETRIES),
            max_retry_delay: ms(
                nonzero(
                    layers.pick(|s| s.max_retry_delay_ms),
                    SettingsError::MaxRetryDelayZero,
                )?,
                DEFAULT_MAX_RETRY_DELAY_MS,
            ),
            max_stream_line_bytes: nonzero(
                layers.pick(|s| s.max_stream_line_bytes),
                SettingsError::MaxStreamLineBytesZero,
            )?
            .unwrap_or(DEFAULT_MAX_STREAM_LINE_BYTES),
            context_window: nonzero(
                layers.pick(|s| s.context_window),
                SettingsError::ContextWindowZero,
            )?,
            auto_compact_percent,
        })
    }
}

/// `value`, unless it is 0.
fn nonzero<T: Default + PartialEq>(
    value: Option<T>,
    zero: SettingsError,
) -> Result<Option<T>, SettingsError> {
    match value {
        Some(v) if v == T::default() => Err(zero),
        other => Ok(other),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model_api::{
        ANTHROPIC_BASE_URL, ANTHROPIC_MODEL, ReasoningEffort, ServerKind,
    };
    use crate::config::settings_raw::{DEFAULT_API_KEY_ENV, DEFAULT_MODEL};
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
}
