//! [`Settings`], the settings a run uses: `settings.json` of the user, of a trusted project and
//! of `--settings` (read as [`RawSettings`]), laid over each other with the flags and the
//! environment on top, defaults filled in and checked. The raw file and its defaults are in
//! `settings_raw.rs`, the pieces resolving is made of in `settings_resolve.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::checkpoints::CheckpointSettings;
use super::claude::{CLAUDE_SETTINGS_FILES, ClaudeRules};
use super::hooks::HookLayers;
use super::json::{check_object_text, syntax_error};
use super::model_api::{ModelApiSettings, WireApi};
pub use super::modes::{ElicitationPolicy, PermissionMode};
use super::sandbox::SandboxSettings;
use super::settings_raw::{
    DEFAULT_IDLE_NOTIFY_MS, DEFAULT_MAX_AGENT_DEPTH, DEFAULT_MAX_PARALLEL_AGENTS, FlagSettings,
    Price, RawProjectState, RawSettings, SETTINGS_FILE, SettingsOverrides,
};
pub use super::settings_resolve::SettingsError;
use super::settings_resolve::{Layers, Limits, Rules, model_id, resolve_endpoint};
use super::tool_search::ToolSearchSettings;
use super::web::{WebFetchSettings, WebSearchSettings};
use super::{ConfigError, Paths, ProjectFiles, read_json_file};

/// Settings `theme`: the background the REPL paints code for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ThemeSetting {
    /// Ask the terminal (OSC 11), else `COLORFGBG`, else dark.
    #[default]
    Auto,
    Dark,
    Light,
}

impl ThemeSetting {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "dark" => Some(Self::Dark),
            "light" => Some(Self::Light),
            _ => None,
        }
    }
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
    /// `maxBudgetUsd` or `--max-budget-usd`: US dollars a run may spend.
    pub max_budget_usd: Option<f64>,
    /// `maxStopHookBlocks`.
    pub max_stop_hook_blocks: u32,
    /// `backgroundOutputBytes`.
    pub background_output_bytes: usize,
    /// `idleNotifyMs`.
    pub idle_notify_after: Duration,
    /// Nothing is asked: a call that needs approval is denied.
    pub never_ask: bool,
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
    /// `theme`.
    pub theme: ThemeSetting,
    /// `statusLine`'s command: Ling's settings, else a trusted project's Claude Code settings,
    /// else `~/.claude/settings.json` (`user_compat.rs`).
    pub status_line: Option<String>,
    pub tool_search: ToolSearchSettings,
    /// `checkpoints`.
    pub checkpoints: CheckpointSettings,
    /// `webFetch`.
    pub web_fetch: WebFetchSettings,
    /// `webSearch`: where `web_search` searches, if anywhere.
    pub web_search: WebSearchSettings,
    /// The shell sandbox asked for (whether the kernel can enforce it is decided at setup).
    pub sandbox: SandboxSettings,
    /// `prices` of both files, the project's winning per model.
    pub prices: std::collections::BTreeMap<String, Price>,
    /// `modelAliases` of both files, the project's winning per alias.
    pub model_aliases: std::collections::BTreeMap<String, String>,
    /// `maxParallelAgents`.
    pub max_parallel_agents: usize,
    /// `maxAgentDepth`.
    pub max_agent_depth: usize,
    /// `worktreeDir`.
    pub worktree_dir: Option<std::path::PathBuf>,
    /// `serverKind`, `maxOutputTokens`, `reasoningEffort`.
    pub model_api: ModelApiSettings,
    /// Unknown keys found in the settings files, for a warning.
    pub warnings: Vec<String>,
    /// `--settings`, whose `hooks` the hook loader adds.
    pub flag_settings: Option<FlagSettings>,
    /// `env` of the user's settings, a trusted project's Claude Code files, the project's
    /// settings and `--settings`, a later one winning a name.
    pub env: BTreeMap<String, String>,
    /// This project's entry of the user's `projects`: MCP servers switched off or on here.
    pub project_state: RawProjectState,
    /// The user-level Claude Code and Codex files whose rules and env were taken
    /// (`user_compat.rs`), for `/status`.
    pub user_compat_files: Vec<std::path::PathBuf>,
}

impl Settings {
    /// What `model` costs: settings `prices`, else Ling's table of well-known models.
    pub fn price(&self, model: &str) -> Option<Price> {
        super::prices::price_of(&self.prices, model)
    }

    /// Reads `~/.ling/settings.json` and the project's: all of it in a trusted project, only
    /// its `permissions.deny` rules (which only narrow) otherwise.
    pub fn load(
        paths: &Paths,
        project: &ProjectFiles,
        overrides: &SettingsOverrides,
    ) -> Result<Self, ConfigError> {
        let user_path = paths.user_file(SETTINGS_FILE);
        let user: RawSettings = match paths.user_config_file(SETTINGS_FILE) {
            Some(path) => read_json_file(&path)?.unwrap_or_default(),
            None => RawSettings::default(),
        };
        let (project_path, project_raw) = match project.any_text(SETTINGS_FILE) {
            Some((path, text)) => {
                check_object_text(path, text)?;
                let raw = if project.trusted_text(SETTINGS_FILE).is_some() {
                    serde_json::from_str(text)
                } else {
                    RawSettings::narrowing_only(text)
                };
                (path.to_path_buf(), raw.map_err(|e| syntax_error(path, &e))?)
            }
            None => (paths.project_file(SETTINGS_FILE), RawSettings::default()),
        };
        Self::resolve(&user, &project_raw, overrides, &|name| {
            std::env::var(name).ok()
        })
        .map_err(|source| ConfigError::Settings {
            path: culprit(
                &source,
                &user_path,
                &user,
                &project_path,
                &project_raw,
                overrides,
            ),
            source,
        })
        .map(|mut settings| {
            // Relative paths of the sandbox settings are the project's.
            for list in settings.sandbox.path_lists_mut() {
                for path in list.iter_mut().filter(|p| p.is_relative()) {
                    *path = paths.project_root.join(&*path);
                }
            }
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(std::path::PathBuf::from);
            let refused =
                settings
                    .sandbox
                    .confine(&paths.project_root, home.as_deref(), &project_path);
            settings.warnings.extend(refused);
            let flag = overrides.settings.as_ref().map(|f| (&f.source, &f.raw));
            for (path, raw) in [(&user_path, &user), (&project_path, &project_raw)]
                .into_iter()
                .chain(flag)
            {
                let permissions = raw
                    .permissions
                    .other
                    .keys()
                    .map(|k| format!("permissions.{k}"));
                // `--settings` may hold Claude Code's hooks, which the hook loader reads.
                let keys = raw
                    .other
                    .keys()
                    .filter(|k| !(*k == "hooks" && Some(path) == flag.map(|f| f.0)));
                for key in keys.cloned().chain(permissions) {
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
            settings.add_user_compat(paths, project, overrides)?;
            let root = paths.project_root.to_string_lossy();
            settings.project_state = user
                .projects
                .as_ref()
                .and_then(|projects| projects.get(root.as_ref()))
                .cloned()
                .unwrap_or_default();
            Ok(settings)
        })
    }

    /// The `permissions` of a trusted project's Claude Code settings files, after Ling's own.
    fn add_claude_rules(&mut self, project: &ProjectFiles) -> Result<(), ConfigError> {
        for name in CLAUDE_SETTINGS_FILES {
            let Some((path, text)) = project.trusted_text(name) else {
                continue;
            };
            let rules = ClaudeRules::parse(path, text)?;
            self.allow_rules.extend(rules.allow);
            self.ask_rules.extend(rules.ask);
            self.deny_rules.extend(rules.deny);
            // Ling's own settings win a name both set.
            for (name, value) in rules.env {
                self.env.entry(name).or_insert(value);
            }
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

    /// Flags over environment over the project's file over the user's over defaults. `env`
    /// reads an environment variable (a test passes its own).
    pub fn resolve(
        user: &RawSettings,
        project: &RawSettings,
        overrides: &SettingsOverrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingsError> {
        let flag = overrides.settings.as_ref().map(|f| &f.raw);
        let layers = Layers {
            flag,
            project,
            user,
        };
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
        let endpoint = resolve_endpoint(user, project, flag, overrides, env);
        let mut model_api = ModelApiSettings::resolve(&user.model_api, &project.model_api)
            .map_err(SettingsError::ModelApi)?;
        if let Some(effort) = overrides.reasoning_effort {
            model_api.reasoning_effort = Some(effort);
        }
        let (model, warnings) = model_id(&layers, &endpoint);
        let rules = Rules::of(&layers, overrides);
        let limits = Limits::of(&layers)?;
        let home = env("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from);
        let mut sandbox = SandboxSettings::resolve(
            overrides.sandbox,
            &user.sandbox,
            &project.sandbox,
            std::path::Path::new(""),
            home.as_deref(),
        )
        .map_err(SettingsError::Sandbox)?;
        if let Some(network) = overrides.sandbox_network {
            sandbox.network = network;
        }
        let tool_search =
            ToolSearchSettings::resolve(project.tool_search.as_ref(), user.tool_search.as_ref())
                .map_err(SettingsError::ToolSearch)?;
        let checkpoints = CheckpointSettings::resolve(&[
            flag.and_then(|f| f.checkpoints.as_ref()),
            project.checkpoints.as_ref(),
            user.checkpoints.as_ref(),
        ])
        .map_err(SettingsError::Checkpoints)?;
        let web_fetch = WebFetchSettings::resolve(layers.pick(|s| s.web_fetch.clone()).as_ref());
        let web_search = WebSearchSettings::resolve(
            layers.pick(|s| s.web_search.clone()).as_ref(),
            endpoint.api,
            env,
        )
        .map_err(SettingsError::WebSearch)?;
        let theme = match layers.pick(|s| s.theme.clone()) {
            None => ThemeSetting::Auto,
            Some(text) => ThemeSetting::parse(&text).ok_or(SettingsError::Theme(text))?,
        };
        let max_parallel_agents = layers
            .pick(|s| s.max_parallel_agents)
            .unwrap_or(DEFAULT_MAX_PARALLEL_AGENTS)
            .clamp(1, 64);
        let max_agent_depth = layers
            .pick(|s| s.max_agent_depth)
            .unwrap_or(DEFAULT_MAX_AGENT_DEPTH)
            .clamp(1, 8);
        Ok(Self {
            // `--settings` names no prices.
            prices: merged([Some(user), Some(project)], |s| s.prices.clone()),
            model_aliases: merged([Some(user), Some(project), flag], |s| {
                s.model_aliases.clone()
            }),
            max_parallel_agents,
            max_agent_depth,
            worktree_dir: layers.pick(|s| s.worktree_dir.clone()),
            api: endpoint.api,
            model,
            base_url: endpoint.base_url,
            api_key: non_empty(&endpoint.api_key_env),
            api_key_env: endpoint.api_key_env,
            model_api,
            permission_mode: overrides
                .permission_mode
                .or_else(|| layers.pick(|s| s.permissions.default_mode))
                .unwrap_or(PermissionMode::Default),
            allow_rules: rules.allow,
            rule_origins: rules.origins,
            deny_rules: rules.deny,
            ask_rules: rules.ask,
            hooks_disabled: overrides.no_hooks
                || user.disable_all_hooks.unwrap_or(false)
                || flag.and_then(|f| f.disable_all_hooks).unwrap_or(false),
            project_hooks_disabled: project.disable_all_hooks.unwrap_or(false),
            max_turns: overrides.max_turns.or(limits.max_turns),
            max_budget_usd: budget(overrides, &layers)?,
            max_stop_hook_blocks: limits.max_stop_hook_blocks,
            background_output_bytes: layers
                .pick(|s| s.background_output_bytes)
                .filter(|&b| b > 0)
                .unwrap_or(super::settings_raw::DEFAULT_BACKGROUND_OUTPUT_BYTES),
            idle_notify_after: Duration::from_millis(
                layers
                    .pick(|s| s.idle_notify_ms)
                    .unwrap_or(DEFAULT_IDLE_NOTIFY_MS),
            ),
            never_ask: overrides.never_ask,
            tool_output_limit: limits.tool_output_limit,
            connect_timeout: limits.connect_timeout,
            first_byte_timeout: limits.first_byte_timeout,
            idle_timeout: limits.idle_timeout,
            max_retries: limits.max_retries,
            max_retry_delay: limits.max_retry_delay,
            max_stream_line_bytes: limits.max_stream_line_bytes,
            share_api_key_with_tools: layers.pick(|s| s.share_api_key_with_tools).unwrap_or(false),
            allow_sampling: overrides.allow_sampling
                || layers.pick(|s| s.allow_sampling).unwrap_or(false),
            elicitation: layers
                .pick(|s| s.elicitation)
                .unwrap_or(ElicitationPolicy::Decline),
            context_window: limits.context_window,
            auto_compact: layers.pick(|s| s.auto_compact).unwrap_or(true),
            auto_compact_percent: limits.auto_compact_percent,
            theme,
            status_line: layers.pick(|s| s.status_line.clone()).map(|l| l.command),
            tool_search,
            checkpoints,
            web_fetch,
            web_search,
            sandbox,
            warnings,
            flag_settings: overrides.settings.clone(),
            env: merged([Some(user), Some(project), flag], |s| s.env.clone()),
            project_state: RawProjectState::default(),
            user_compat_files: Vec::new(),
        })
    }
}

/// The maps `of` gives in `layers` (weakest first) laid over each other, a later one winning a
/// key.
fn merged<'a, V>(
    layers: impl IntoIterator<Item = Option<&'a RawSettings>>,
    of: impl Fn(&RawSettings) -> Option<BTreeMap<String, V>>,
) -> BTreeMap<String, V> {
    let mut map = BTreeMap::new();
    for layer in layers.into_iter().flatten() {
        map.extend(of(layer).unwrap_or_default());
    }
    map
}

/// The file whose value makes resolving fail with `error`: the first of `--settings`, the
/// project's file and the user's that fails the same way on its own (the project's file when
/// none does, as when only the environment is to blame).
fn culprit(
    error: &SettingsError,
    user_path: &std::path::Path,
    user: &RawSettings,
    project_path: &std::path::Path,
    project: &RawSettings,
    overrides: &SettingsOverrides,
) -> std::path::PathBuf {
    let alone = |raw: &RawSettings, overrides: &SettingsOverrides| {
        Settings::resolve(&RawSettings::default(), raw, overrides, &|_| None).err()
    };
    let bare = SettingsOverrides {
        settings: None,
        ..overrides.clone()
    };
    if let Some(flag) = &overrides.settings
        && alone(&RawSettings::default(), overrides).as_ref() == Some(error)
    {
        return flag.source.clone();
    }
    if alone(project, &bare).as_ref() == Some(error) {
        return project_path.to_path_buf();
    }
    if alone(user, &bare).as_ref() == Some(error) {
        return user_path.to_path_buf();
    }
    project_path.to_path_buf()
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;

/// `--max-budget-usd`, else settings `maxBudgetUsd`: a negative or NaN cap is refused.
fn budget(
    overrides: &SettingsOverrides,
    layers: &super::settings_resolve::Layers<'_>,
) -> Result<Option<f64>, SettingsError> {
    match overrides
        .max_budget_usd
        .or_else(|| layers.pick(|s| s.max_budget_usd))
    {
        Some(usd) if usd.is_nan() || usd < 0.0 => Err(SettingsError::MaxBudget(usd)),
        cap => Ok(cap),
    }
}
