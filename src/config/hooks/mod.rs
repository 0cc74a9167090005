//! `hooks.json` in two layers, and which files they are read from. The raw layer (`parse.rs`)
//! is the file's JSON value, checked field by field so that every mistake (an unknown event or
//! handler type, a string where a number belongs) is reported with the file, line and column
//! of the offending key or value: serde's derive cannot point at a key, so the path of the
//! mistake is looked up in the text (`locate`). The resolved layer (`resolved.rs`) is a list
//! of [`HookGroup`]s (event, matcher text, handlers with defaults applied) from
//! `~/.ling/hooks.json` then, in a trusted project, `.ling/hooks.json`, with identical handlers
//! listed twice kept once.
//! Matchers stay text here; the hook engine compiles them (an invalid regex is reported with the
//! position kept in [`HookGroup::matcher_at`]).

pub(crate) mod locate;
mod parse;
mod resolved;
pub(crate) mod schema;

pub use resolved::{
    DEFAULT_TIMEOUT, HandlerKind, HookDialect, HookEventName, HookGroup, HookHandler, HookLayers,
    HooksConfig, Position,
};

use super::ProjectFiles;
use super::claude::{self, CLAUDE_SETTINGS_FILES};
use super::{ConfigError, Paths, read_json_value};

pub const HOOKS_FILE: &str = "hooks.json";

impl HooksConfig {
    /// Reads `~/.ling/hooks.json` then, when `project` is trusted, `.ling/hooks.json` (the text
    /// read when trust was decided) and the `hooks` of `.claude/settings.json` and
    /// `.claude/settings.local.json`, then with `claudeCompat.userHooks` those of
    /// `~/.claude/settings.json`; `layers` switches the user's or the project's off. A missing
    /// file contributes nothing.
    /// [`HooksConfig::load`], then the `hooks` of `--settings` (in Claude Code's format) when
    /// the user's layer is on.
    pub fn load_with(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
        flag: Option<&super::FlagSettings>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::load(paths, project, layers)?;
        if let Some(flag) = flag.filter(|_| layers.user) {
            config.merge(Self::parse_claude(&flag.source, &flag.text)?);
        }
        Ok(config)
    }

    pub fn load(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        if layers.user
            && let Some(user) = paths.user_config_file(HOOKS_FILE)
            && let Some((text, value)) = read_json_value(&user)?
        {
            config.merge(Self::parse_value(&user, &text, &value)?);
        }
        if layers.project
            && let Some((path, text)) = project.trusted_text(HOOKS_FILE)
        {
            config.merge(Self::parse(path, text)?);
        }
        // Claude Code's files after Ling's, so that Ling's win a handler both list.
        if layers.project {
            for name in CLAUDE_SETTINGS_FILES {
                if let Some((path, text)) = project.trusted_text(name) {
                    config.merge(Self::parse_claude(path, text)?);
                }
            }
        }
        if layers.user
            && paths.user_config
            && project.claude().user_hooks
            && let Some(path) = claude::user_settings_file()
            && let Some(text) = crate::config::read_config_text(&path)?
        {
            config.merge(Self::parse_claude(&path, &text)?);
        }
        // Codex's `hooks.json` has Claude Code's shape (settings `codexCompat.userHooks`).
        if layers.user
            && paths.user_config
            && let Some(path) = project.codex().hooks_file()
            && let Some(text) = crate::config::read_config_text(&path)?
        {
            config.merge(Self::parse_claude(&path, &text)?);
        }
        Ok(config)
    }
}
