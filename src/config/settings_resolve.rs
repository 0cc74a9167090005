//! The pieces [`Settings::resolve`](super::settings::Settings::resolve) is made of: the layers
//! a key is picked from, the permission rules with their origins, the limits with their
//! defaults, and [`SettingsError`], why resolved settings cannot be used.

use std::time::Duration;

use super::settings::{
    DEFAULT_AUTO_COMPACT_PERCENT, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FIRST_BYTE_TIMEOUT_MS,
    DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS,
    DEFAULT_MAX_STOP_HOOK_BLOCKS, DEFAULT_MAX_STREAM_LINE_BYTES, DEFAULT_TOOL_OUTPUT_LIMIT,
    RawSettings, SettingsOverrides,
};

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
    #[error("theme {0:?} is not one of auto, dark, light")]
    Theme(String),
    /// `api`, `serverKind`, `maxOutputTokens`, `reasoningEffort` (the message names the key).
    #[error("{0}")]
    ModelApi(String),
    /// `sandbox` (its message names the key).
    #[error("{0}")]
    Sandbox(String),
    /// `toolSearch` (its message names the key).
    #[error("{0}")]
    ToolSearch(String),
    /// `checkpoints` (its message names the key).
    #[error("{0}")]
    Checkpoints(String),
    /// `webSearch` (its message names the key).
    #[error("{0}")]
    WebSearch(String),
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
