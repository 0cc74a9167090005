use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::claude::{CLAUDE_SETTINGS_FILES, ClaudeRules, RawClaudeCompat};
use super::hooks::HookLayers;
use super::json::syntax_error;
use super::model_api::{ModelApiSettings, RawModelApi, WireApi, resolve_endpoint};
use super::sandbox::{RawSandbox, SandboxMode, SandboxSettings};
use super::tool_search::{RawToolSearch, ToolSearchSettings};
use super::trust::ProjectConfig;
use super::{ConfigError, Paths, read_json_file};

pub const SETTINGS_FILE: &str = "settings.json";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The default `toolOutputLimit`, in characters.
pub const DEFAULT_TOOL_OUTPUT_LIMIT: usize = 100_000;
/// The default `connectTimeoutMs`.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// The default `firstByteTimeoutMs`.
pub const DEFAULT_FIRST_BYTE_TIMEOUT_MS: u64 = 120_000;
/// The default `idleTimeoutMs`.
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 90_000;
/// The default `maxRetries`.
pub const DEFAULT_MAX_RETRIES: u32 = 4;
/// The default `maxRetryDelayMs`: the longest wait before one retry.
pub const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;
/// The default `autoCompactPercent`: compact when a request would fill this much of the window.
pub const DEFAULT_AUTO_COMPACT_PERCENT: u8 = 85;
/// The context window assumed when neither settings, the server nor the table of well-known
/// models says (tokens).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;
/// The default `maxStreamLineBytes` (8 MiB).
pub const DEFAULT_MAX_STREAM_LINE_BYTES: usize = 8 << 20;

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Default, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    /// Dollars per million prompt (input) tokens.
    #[schemars(range(min = 0))]
    pub input_per_m_tok: f64,
    /// Dollars per million completion (output) tokens.
    #[schemars(range(min = 0))]
    pub output_per_m_tok: f64,
    /// Dollars per million input tokens read from the prompt cache. Default: the input price.
    #[schemars(range(min = 0))]
    #[serde(default)]
    pub cache_read_per_m_tok: Option<f64>,
    /// Dollars per million input tokens written to the prompt cache. Default: the input price.
    #[schemars(range(min = 0))]
    #[serde(default)]
    pub cache_write_per_m_tok: Option<f64>,
}

/// `settings.json` exactly as written. Unknown keys are kept in `other` (to be warned about and
/// ignored), so that newer files still load.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawSettings {
    /// Where this file's JSON Schema is, for editors; Ling does not read it.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// The model id sent to the API. `--model` and `LING_MODEL` come first. Default `gpt-4o-mini`.
    #[schemars(extend("default" = DEFAULT_MODEL))]
    pub model: Option<String>,
    /// The server's base URL, ending before `/chat/completions`, e.g.
    /// `http://127.0.0.1:8080/v1` (with `api: anthropic` the server's root). `--base-url`,
    /// `OPENAI_BASE_URL` (with anthropic `ANTHROPIC_BASE_URL`) and `LING_BASE_URL` come first.
    /// Default `https://api.openai.com/v1` (with anthropic `https://api.anthropic.com`).
    #[schemars(extend("default" = DEFAULT_BASE_URL))]
    pub base_url: Option<String>,
    /// The environment variable that holds the API key. Default `OPENAI_API_KEY` (with
    /// `api: anthropic`, `ANTHROPIC_API_KEY`).
    #[schemars(extend("default" = DEFAULT_API_KEY_ENV))]
    pub api_key_env: Option<String>,
    /// The permission mode and rules.
    #[serde(default)]
    pub permissions: RawPermissions,
    /// Turn hooks off: in `~/.ling/settings.json` every hook, in a project's settings only that
    /// project's hooks. Default false.
    #[schemars(extend("default" = false))]
    pub disable_all_hooks: Option<bool>,
    /// Stop a run after this many model requests (exceeding it is an error). Default: no limit
    /// in the REPL, 100 in `-p` runs.
    #[schemars(range(min = 1))]
    pub max_turns: Option<u32>,
    /// Characters of one tool result sent to the model before it is cut (head and tail kept).
    /// Default 100000.
    #[schemars(extend("default" = DEFAULT_TOOL_OUTPUT_LIMIT))]
    pub tool_output_limit: Option<usize>,
    /// How long connecting to the model server may take, in milliseconds. Default 10000.
    #[schemars(extend("default" = DEFAULT_CONNECT_TIMEOUT_MS))]
    pub connect_timeout_ms: Option<u64>,
    /// How long to wait for the first byte of a model answer, in milliseconds. Default 120000.
    #[schemars(extend("default" = DEFAULT_FIRST_BYTE_TIMEOUT_MS))]
    pub first_byte_timeout_ms: Option<u64>,
    /// How long a model answer may pause between two chunks, in milliseconds. Default 90000.
    #[schemars(extend("default" = DEFAULT_IDLE_TIMEOUT_MS))]
    pub idle_timeout_ms: Option<u64>,
    /// How many times a failed model request is retried (connection errors, 408, 409, 429, 5xx,
    /// a stream cut before anything was shown). Default 4.
    #[schemars(extend("default" = DEFAULT_MAX_RETRIES))]
    pub max_retries: Option<u32>,
    /// The longest wait before a retry, in milliseconds, however long the server's
    /// `Retry-After` asks for. Default 60000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_RETRY_DELAY_MS))]
    pub max_retry_delay_ms: Option<u64>,
    /// The longest line of a model's event stream (and the largest non-streamed answer), in
    /// bytes; a longer one fails the request without a retry. Default 8388608 (8 MiB).
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_STREAM_LINE_BYTES))]
    pub max_stream_line_bytes: Option<usize>,
    /// Let the `bash` tool, command hooks and stdio MCP servers inherit the API key variable.
    /// Default false.
    #[schemars(extend("default" = false))]
    pub share_api_key_with_tools: Option<bool>,
    /// Allow MCP servers' `sampling/createMessage` in non-interactive runs, without asking.
    /// Default false.
    #[schemars(extend("default" = false))]
    pub allow_sampling: Option<bool>,
    /// Answer to MCP elicitation in non-interactive runs: `decline` (default) or
    /// `accept-defaults` (accept with every field's default, when every required field has one).
    #[schemars(extend("enum" = ["decline", "accept-defaults"], "default" = "decline"))]
    pub elicitation: Option<String>,
    /// The model's context window in tokens. Default: what the server says (llama.cpp, vLLM,
    /// Ollama), else a table of well-known models, else 32768.
    #[schemars(range(min = 1))]
    pub context_window: Option<u64>,
    /// Summarise the conversation by itself when it nears the context window. Default true.
    #[schemars(extend("default" = true))]
    pub auto_compact: Option<bool>,
    /// How full the context window may get, in percent, before the conversation is compacted.
    /// Default 85.
    #[schemars(range(min = 10, max = 100), extend("default" = DEFAULT_AUTO_COMPACT_PERCENT))]
    pub auto_compact_percent: Option<u8>,
    /// Claude Code's files: `true` (default) reads a trusted project's `.claude/settings.json`,
    /// `.claude/settings.local.json` and `.mcp.json`, and `CLAUDE.md`; `false` none of them;
    /// `{"userHooks": true}` also runs the hooks of `~/.claude/settings.json`.
    pub claude_compat: Option<RawClaudeCompat>,
    /// When MCP tools are offered by name behind `search_tools` rather than in full.
    pub tool_search: Option<RawToolSearch>,
    /// The shell sandbox of the `bash` tool (Linux: Landlock and seccomp).
    #[serde(default)]
    pub sandbox: RawSandbox,
    /// What models cost, for the REPL's `/cost` and `cost_usd` in the JSON results: per model
    /// id, US dollars per million input and output tokens (and prompt-cache reads and writes),
    /// e.g. `{"gpt-4o": {"inputPerMTok": 2.5, "outputPerMTok": 10}}`. A project's entry for a
    /// model wins over the user's.
    pub prices: Option<std::collections::BTreeMap<String, Price>>,
    /// The wire API and what is sent to it (`api`, `serverKind`, `maxOutputTokens`,
    /// `reasoningEffort`).
    #[serde(flatten)]
    pub model_api: RawModelApi,
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: BTreeMap<String, serde_json::Value>,
}

impl RawSettings {
    /// What an untrusted project's settings keep: their deny rules, which only narrow.
    pub fn deny_only(self) -> Self {
        Self {
            permissions: RawPermissions {
                deny: self.permissions.deny,
                // `ask` only narrows too.
                ask: self.permissions.ask,
                ..RawPermissions::default()
            },
            ..Self::default()
        }
    }
}

/// `permissions` of `settings.json`. Rules: a tool name (`read_file`), a trailing wildcard
/// (`mcp__sqlite__*`), `bash(PREFIX*)` or `bash(exact command)`, or a file tool with a path glob
/// (`edit_file(src/**)`). Deny rules win over allow rules, and rules over the mode.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "Permissions")]
pub struct RawPermissions {
    /// Calls these rules allow without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Calls these rules deny. An untrusted project's deny rules still apply.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Calls these rules always ask about, whatever the mode or an allow rule says (deny rules
    /// still win).
    #[serde(default)]
    pub ask: Vec<String>,
    /// The permission mode when `--permission-mode` is not given. Default `default`.
    #[schemars(extend("enum" = PermissionMode::NAMES, "default" = "default"))]
    pub default_mode: Option<String>,
    /// Keys Ling does not know, warned about and ignored.
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionMode {
    Default,
    AcceptEdits,
    Plan,
    Bypass,
}

impl PermissionMode {
    /// Every name [`Self::parse`] accepts: Ling's, and Claude Code's camelCase ones.
    pub const NAMES: [&str; 6] = [
        "default",
        "accept-edits",
        "acceptEdits",
        "plan",
        "bypass",
        "bypassPermissions",
    ];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "default" => Some(Self::Default),
            "accept-edits" | "acceptEdits" => Some(Self::AcceptEdits),
            "plan" => Some(Self::Plan),
            "bypass" | "bypassPermissions" => Some(Self::Bypass),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::Bypass => "bypass",
        }
    }

    /// The name hook scripts written for Claude Code expect in `permission_mode`.
    pub fn hook_name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Bypass => "bypassPermissions",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitationPolicy {
    Decline,
    AcceptDefaults,
}

/// What the command line says; each field overrides the environment and the settings files.
#[derive(Debug, Default, Clone)]
pub struct SettingsOverrides {
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub max_turns: Option<u32>,
    pub no_hooks: bool,
    pub allow_sampling: bool,
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `--api`.
    pub api: Option<WireApi>,
}

/// Resolved settings: flags over environment over `.ling/settings.json` (of a trusted project)
/// over `~/.ling/settings.json` over defaults.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The wire API of the model server.
    pub api: WireApi,
    pub model: String,
    pub base_url: String,
    pub api_key_env: String,
    pub api_key: Option<String>,
    pub permission_mode: PermissionMode,
    pub allow_rules: Vec<String>,
    pub deny_rules: Vec<String>,
    /// Rules that always ask: settings `permissions.ask`, Ling's then Claude Code's.
    pub ask_rules: Vec<String>,
    /// Where each rule of `allow_rules` and `deny_rules` came from: `flag`, `project settings`
    /// or `user settings` (the REPL's `/permissions` lists them).
    pub rule_origins: Vec<(String, &'static str)>,
    /// Every hook off: `--no-hooks`, or `disableAllHooks` in the user's settings.
    pub hooks_disabled: bool,
    /// The project's hooks off: `disableAllHooks` in the project's settings (never the user's).
    pub project_hooks_disabled: bool,
    pub max_turns: Option<u32>,
    pub tool_output_limit: usize,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub max_retry_delay: Duration,
    pub max_stream_line_bytes: usize,
    /// Children keep the API key variable (`shareApiKeyWithTools`); by default they lose it.
    pub share_api_key_with_tools: bool,
    pub allow_sampling: bool,
    pub elicitation: ElicitationPolicy,
    /// `contextWindow`: the window in tokens when the settings say it.
    pub context_window: Option<u64>,
    pub auto_compact: bool,
    pub auto_compact_percent: u8,
    pub tool_search: ToolSearchSettings,
    /// The shell sandbox asked for (whether the kernel can enforce it is decided at setup).
    pub sandbox: SandboxSettings,
    /// `prices` of both files, the project's winning per model.
    pub prices: std::collections::BTreeMap<String, Price>,
    /// `serverKind`, `maxOutputTokens`, `reasoningEffort`.
    pub model_api: ModelApiSettings,
    /// Unknown keys found in the settings files, for a warning.
    pub warnings: Vec<String>,
}

impl Settings {
    /// Reads `~/.ling/settings.json` and the project's: all of it in a trusted project, only
    /// its `permissions.deny` rules (which only narrow) otherwise.
    pub fn load(
        paths: &Paths,
        project: &ProjectConfig,
        overrides: &SettingsOverrides,
    ) -> Result<Self, ConfigError> {
        let user_path = paths.user_file(SETTINGS_FILE);
        let user: RawSettings = read_json_file(&user_path)?.unwrap_or_default();
        let (project_path, project_raw) = match project.any_text(SETTINGS_FILE) {
            Some((path, text)) => {
                let raw: RawSettings =
                    serde_json::from_str(text).map_err(|e| syntax_error(path, &e))?;
                let trusted = project.trusted_text(SETTINGS_FILE).is_some();
                (
                    path.to_path_buf(),
                    if trusted { raw } else { raw.deny_only() },
                )
            }
            None => (paths.project_file(SETTINGS_FILE), RawSettings::default()),
        };
        Self::resolve(&user, &project_raw, overrides, &|name| {
            std::env::var(name).ok()
        })
        .map_err(|message| ConfigError::Invalid {
            path: project_path.clone(),
            message,
        })
        .map(|mut settings| {
            // Relative writable roots are the project's.
            for root in &mut settings.sandbox.writable_roots {
                if root.is_relative() {
                    *root = paths.project_root.join(&*root);
                }
            }
            for (path, raw) in [(&user_path, &user), (&project_path, &project_raw)] {
                let permissions = raw
                    .permissions
                    .other
                    .keys()
                    .map(|k| format!("permissions.{k}"));
                for key in raw.other.keys().cloned().chain(permissions) {
                    settings.warnings.push(format!(
                        "{}: unknown setting `{key}` ignored",
                        path.display()
                    ));
                }
            }
            settings
        })
        .and_then(|mut settings| {
            settings.add_claude_rules(project)?;
            Ok(settings)
        })
    }

    /// The `permissions` of a trusted project's Claude Code settings files, after Ling's own.
    fn add_claude_rules(&mut self, project: &ProjectConfig) -> Result<(), ConfigError> {
        for name in CLAUDE_SETTINGS_FILES {
            let Some((path, text)) = project.trusted_text(name) else {
                continue;
            };
            let rules = ClaudeRules::parse(path, text)?;
            self.allow_rules.extend(rules.allow);
            self.ask_rules.extend(rules.ask);
            self.deny_rules.extend(rules.deny);
        }
        Ok(())
    }

    /// Which hook files load: `--no-hooks` or the user's `disableAllHooks` turn off all, the
    /// project's `disableAllHooks` only the project's.
    pub fn hook_layers(&self) -> HookLayers {
        HookLayers {
            user: !self.hooks_disabled,
            project: !self.hooks_disabled && !self.project_hooks_disabled,
        }
    }

    pub fn resolve(
        user: &RawSettings,
        project: &RawSettings,
        overrides: &SettingsOverrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        fn pick<T: Clone>(
            project: &RawSettings,
            user: &RawSettings,
            f: impl Fn(&RawSettings) -> Option<T>,
        ) -> Option<T> {
            f(project).or_else(|| f(user))
        }
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());

        let endpoint = resolve_endpoint(user, project, overrides, env);
        let api_key = non_empty(&endpoint.api_key_env);
        let model_api = ModelApiSettings::resolve(&user.model_api, &project.model_api)?;

        let permission_mode = match overrides.permission_mode {
            Some(mode) => mode,
            None => match pick(project, user, |s| s.permissions.default_mode.clone()) {
                Some(name) => PermissionMode::parse(&name).ok_or_else(|| {
                    format!(
                        "permissions.defaultMode {name:?} is not one of default, accept-edits, plan, bypass"
                    )
                })?,
                None => PermissionMode::Default,
            },
        };
        let mut rule_origins = Vec::new();
        for (rules, origin) in [
            (&overrides.allowed_tools, "flag"),
            (&overrides.disallowed_tools, "flag"),
            (&project.permissions.allow, "project settings"),
            (&project.permissions.deny, "project settings"),
            (&user.permissions.allow, "user settings"),
            (&user.permissions.deny, "user settings"),
        ] {
            rule_origins.extend(rules.iter().map(|r| (r.trim().to_string(), origin)));
        }
        let mut allow_rules = overrides.allowed_tools.clone();
        allow_rules.extend(project.permissions.allow.iter().cloned());
        allow_rules.extend(user.permissions.allow.iter().cloned());
        let mut deny_rules = overrides.disallowed_tools.clone();
        deny_rules.extend(project.permissions.deny.iter().cloned());
        deny_rules.extend(user.permissions.deny.iter().cloned());
        let mut ask_rules = project.permissions.ask.clone();
        ask_rules.extend(user.permissions.ask.iter().cloned());

        let elicitation = match pick(project, user, |s| s.elicitation.clone()).as_deref() {
            None | Some("decline") => ElicitationPolicy::Decline,
            Some("accept-defaults") => ElicitationPolicy::AcceptDefaults,
            Some(other) => {
                return Err(format!(
                    "elicitation {other:?} is not one of decline, accept-defaults"
                ));
            }
        };
        let settings_max_turns = pick(project, user, |s| s.max_turns);
        if settings_max_turns == Some(0) {
            return Err(
                "maxTurns is 0, which would stop every run before its first model request; set it \
                 to 1 or more, or remove it for no limit"
                    .to_string(),
            );
        }
        let ms = |v: Option<u64>, default: u64| Duration::from_millis(v.unwrap_or(default));
        let max_stream_line_bytes = pick(project, user, |s| s.max_stream_line_bytes)
            .unwrap_or(DEFAULT_MAX_STREAM_LINE_BYTES);
        let max_retry_delay_ms = pick(project, user, |s| s.max_retry_delay_ms);
        if max_retry_delay_ms == Some(0) {
            return Err(
                "maxRetryDelayMs is 0, which would retry without any pause; set it to the longest \
                 wait in milliseconds, or set maxRetries to 0 to not retry"
                    .to_string(),
            );
        }
        if max_stream_line_bytes == 0 {
            return Err(format!(
                "maxStreamLineBytes is 0, which would refuse every answer; set it to a byte \
                 count (the default is {DEFAULT_MAX_STREAM_LINE_BYTES}) or remove it"
            ));
        }

        let context_window = pick(project, user, |s| s.context_window);
        if context_window == Some(0) {
            return Err(
                "contextWindow is 0; set it to the model's context window in tokens (e.g. 32768), \
                 or remove it to ask the server"
                    .to_string(),
            );
        }
        let auto_compact_percent =
            pick(project, user, |s| s.auto_compact_percent).unwrap_or(DEFAULT_AUTO_COMPACT_PERCENT);
        if !(10..=100).contains(&auto_compact_percent) {
            return Err(format!(
                "autoCompactPercent {auto_compact_percent} is not between 10 and 100; set the \
                 percentage of the context window at which to compact (default \
                 {DEFAULT_AUTO_COMPACT_PERCENT})"
            ));
        }
        let home = env("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from);
        let sandbox = SandboxSettings::resolve(
            overrides.sandbox,
            &user.sandbox,
            &project.sandbox,
            std::path::Path::new(""),
            home.as_deref(),
        )?;

        let mut prices = user.prices.clone().unwrap_or_default();
        prices.extend(project.prices.clone().unwrap_or_default());
        Ok(Self {
            prices,
            api: endpoint.api,
            model: endpoint.model,
            base_url: endpoint.base_url,
            api_key_env: endpoint.api_key_env,
            api_key,
            model_api,
            permission_mode,
            allow_rules,
            rule_origins,
            deny_rules,
            ask_rules,
            hooks_disabled: overrides.no_hooks || user.disable_all_hooks.unwrap_or(false),
            project_hooks_disabled: project.disable_all_hooks.unwrap_or(false),
            max_turns: overrides.max_turns.or(settings_max_turns),
            tool_output_limit: pick(project, user, |s| s.tool_output_limit)
                .unwrap_or(DEFAULT_TOOL_OUTPUT_LIMIT),
            connect_timeout: ms(
                pick(project, user, |s| s.connect_timeout_ms),
                DEFAULT_CONNECT_TIMEOUT_MS,
            ),
            first_byte_timeout: ms(
                pick(project, user, |s| s.first_byte_timeout_ms),
                DEFAULT_FIRST_BYTE_TIMEOUT_MS,
            ),
            idle_timeout: ms(
                pick(project, user, |s| s.idle_timeout_ms),
                DEFAULT_IDLE_TIMEOUT_MS,
            ),
            max_retries: pick(project, user, |s| s.max_retries).unwrap_or(DEFAULT_MAX_RETRIES),
            max_retry_delay: ms(max_retry_delay_ms, DEFAULT_MAX_RETRY_DELAY_MS),
            max_stream_line_bytes,
            share_api_key_with_tools: pick(project, user, |s| s.share_api_key_with_tools)
                .unwrap_or(false),
            allow_sampling: overrides.allow_sampling
                || pick(project, user, |s| s.allow_sampling).unwrap_or(false),
            elicitation,
            context_window,
            auto_compact: pick(project, user, |s| s.auto_compact).unwrap_or(true),
            auto_compact_percent,
            tool_search: ToolSearchSettings::resolve(
                project.tool_search.as_ref(),
                user.tool_search.as_ref(),
            )?,
            sandbox,
            warnings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> RawSettings {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn flags_beat_env_beat_project_beat_user() {
        let user = raw(r#"{"model":"user-model","baseUrl":"http://user/v1","maxTurns":3}"#);
        let project = raw(r#"{"model":"project-model"}"#);
        let none = |_: &str| None;
        let s = Settings::resolve(&user, &project, &SettingsOverrides::default(), &none).unwrap();
        assert_eq!(s.model, "project-model");
        assert_eq!(s.base_url, "http://user/v1");
        assert_eq!(s.max_turns, Some(3));

        let env = |name: &str| (name == "LING_MODEL").then(|| "env-model".to_string());
        let s = Settings::resolve(&user, &project, &SettingsOverrides::default(), &env).unwrap();
        assert_eq!(s.model, "env-model");

        let flags = SettingsOverrides {
            model: Some("flag-model".into()),
            ..Default::default()
        };
        let s = Settings::resolve(&user, &project, &flags, &env).unwrap();
        assert_eq!(s.model, "flag-model");
    }

    #[test]
    fn context_settings_have_defaults_and_refuse_nonsense() {
        let none = |_: &str| None;
        let resolve = |project: &str| {
            Settings::resolve(
                &RawSettings::default(),
                &raw(project),
                &SettingsOverrides::default(),
                &none,
            )
        };
        let s = resolve("{}").unwrap();
        assert_eq!(
            (s.context_window, s.auto_compact, s.auto_compact_percent),
            (None, true, 85)
        );
        let s = resolve(r#"{"contextWindow":4096,"autoCompact":false,"autoCompactPercent":70}"#)
            .unwrap();
        assert_eq!(
            (s.context_window, s.auto_compact, s.auto_compact_percent),
            (Some(4096), false, 70)
        );
        let err = resolve(r#"{"contextWindow":0}"#).unwrap_err();
        assert!(err.contains("contextWindow is 0"), "{err}");
        let err = resolve(r#"{"autoCompactPercent":5}"#).unwrap_err();
        assert!(err.contains("between 10 and 100"), "{err}");
    }

    #[test]
    fn an_untrusted_project_keeps_only_its_narrowing_rules() {
        let s = raw(r#"{"model":"m","permissions":{"allow":["bash"],"deny":["x"],"ask":["y"]}}"#)
            .deny_only();
        assert_eq!(s.model, None);
        assert!(s.permissions.allow.is_empty());
        assert_eq!(s.permissions.deny, ["x"]);
        assert_eq!(s.permissions.ask, ["y"]);
    }

    #[test]
    fn api_key_comes_from_the_named_variable() {
        let project = raw(r#"{"apiKeyEnv":"DEEPSEEK_API_KEY"}"#);
        let env = |name: &str| (name == "DEEPSEEK_API_KEY").then(|| "sk-1".to_string());
        let s = Settings::resolve(
            &RawSettings::default(),
            &project,
            &SettingsOverrides::default(),
            &env,
        )
        .unwrap();
        assert_eq!(s.api_key.as_deref(), Some("sk-1"));
        assert_eq!(s.api_key_env, "DEEPSEEK_API_KEY");
    }

    #[test]
    fn max_turns_0_is_an_error_naming_the_setting() {
        let project = raw(r#"{"maxTurns":0}"#);
        let err = Settings::resolve(
            &RawSettings::default(),
            &project,
            &SettingsOverrides::default(),
            &|_| None,
        )
        .err()
        .unwrap_or_default();
        assert!(
            err.contains("maxTurns is 0") && err.contains("1 or more"),
            "{err}"
        );
    }

    #[test]
    fn retry_and_line_limits_have_defaults_and_refuse_0() {
        let none = |_: &str| None;
        let defaults = SettingsOverrides::default();
        let s = Settings::resolve(
            &RawSettings::default(),
            &RawSettings::default(),
            &defaults,
            &none,
        )
        .unwrap();
        assert_eq!(s.max_retry_delay, Duration::from_secs(60));
        assert_eq!(s.max_stream_line_bytes, 8 * 1024 * 1024);
        assert!(!s.share_api_key_with_tools);
        let set =
            raw(r#"{"maxRetryDelayMs":250,"maxStreamLineBytes":1000,"shareApiKeyWithTools":true}"#);
        let s = Settings::resolve(&RawSettings::default(), &set, &defaults, &none).unwrap();
        assert_eq!(s.max_retry_delay, Duration::from_millis(250));
        assert_eq!(s.max_stream_line_bytes, 1000);
        assert!(s.share_api_key_with_tools);
        for (json, needle) in [
            (r#"{"maxRetryDelayMs":0}"#, "maxRetryDelayMs is 0"),
            (r#"{"maxStreamLineBytes":0}"#, "maxStreamLineBytes is 0"),
        ] {
            let err = Settings::resolve(&RawSettings::default(), &raw(json), &defaults, &none)
                .err()
                .unwrap_or_default();
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn the_schema_enum_of_modes_is_what_parse_accepts() {
        for name in PermissionMode::NAMES {
            assert!(PermissionMode::parse(name).is_some(), "{name}");
        }
        for mode in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::Bypass,
        ] {
            assert!(PermissionMode::NAMES.contains(&mode.as_str()), "{mode:?}");
            assert!(
                PermissionMode::NAMES.contains(&mode.hook_name()),
                "{mode:?}"
            );
        }
    }

    #[test]
    fn unknown_permission_keys_are_kept_for_a_warning() {
        let s = raw(r#"{"permissions":{"alow":["bash"],"deny":["x"]}}"#);
        assert_eq!(s.permissions.other.keys().collect::<Vec<_>>(), ["alow"]);
        assert_eq!(s.permissions.deny, ["x"]);
    }

    #[test]
    fn a_bad_mode_says_which_values_work() {
        let project = raw(r#"{"permissions":{"defaultMode":"yolo"}}"#);
        let err = Settings::resolve(
            &RawSettings::default(),
            &project,
            &SettingsOverrides::default(),
            &|_| None,
        )
        .err()
        .unwrap_or_default();
        assert!(err.contains("default, accept-edits, plan, bypass"), "{err}");
    }
}
