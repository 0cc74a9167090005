//! Your own Codex CLI files, read beside Ling's under settings `codexCompat` (the user's
//! settings only: a project cannot turn them on): `AGENTS.md` of Codex's home (with the user's
//! instructions), `prompts/*.md` (commands, `/prompts:NAME` as Codex names them), and the
//! execpolicy `rules/*.rules` (`codex_rules.rs`); `hooks.json` only with
//! `codexCompat.userHooks`. They are the user's own: no trust question, but the sandbox keeps
//! them read-only like Ling's own config.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::codex::codex_home;

/// `codexCompat` of `settings.json`: `false` turns off every Codex file; an object says more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "CodexCompat")]
pub enum RawCodexCompat {
    /// `true` (the default): Codex's `AGENTS.md`, prompts and rules are read; `false`: none.
    Switch(bool),
    /// The parts, each optional.
    Options(RawCodexOptions),
}

/// `codexCompat` as an object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "CodexCompatOptions")]
pub struct RawCodexOptions {
    /// Read Codex's `AGENTS.md`, `prompts/` and `rules/`. Default true.
    pub enabled: Option<bool>,
    /// Also run the hooks of Codex's `hooks.json`. Default false.
    pub user_hooks: Option<bool>,
}

/// What `codexCompat` resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodexCompat {
    pub enabled: bool,
    pub user_hooks: bool,
}

impl Default for CodexCompat {
    fn default() -> Self {
        Self {
            enabled: true,
            user_hooks: false,
        }
    }
}

impl CodexCompat {
    /// `codexCompat` of the user's settings text (absent or unreadable: the default).
    pub fn of_settings(text: Option<&str>) -> Self {
        let raw = text
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| serde_json::from_value(v.get("codexCompat")?.clone()).ok());
        match raw {
            None => Self::default(),
            Some(RawCodexCompat::Switch(on)) => Self {
                enabled: on,
                user_hooks: false,
            },
            Some(RawCodexCompat::Options(options)) => {
                let enabled = options.enabled.unwrap_or(true);
                Self {
                    enabled,
                    user_hooks: enabled && options.user_hooks.unwrap_or(false),
                }
            }
        }
    }

    /// Codex's home when its files are read.
    pub fn home(self) -> Option<PathBuf> {
        self.enabled.then(codex_home).flatten()
    }

    /// Codex's user `AGENTS.md`, when read.
    pub fn agents_md(self) -> Option<PathBuf> {
        self.home().map(|h| h.join("AGENTS.md"))
    }

    /// Codex's `prompts/` folder (its commands), when read.
    pub fn prompts_dir(self) -> Option<PathBuf> {
        self.home().map(|h| h.join("prompts"))
    }

    /// Codex's `hooks.json`, when its hooks run.
    pub fn hooks_file(self) -> Option<PathBuf> {
        self.user_hooks
            .then(codex_home)
            .flatten()
            .map(|h| h.join("hooks.json"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_compat_is_on_without_hooks_by_default() {
        assert_eq!(CodexCompat::of_settings(None), CodexCompat::default());
        assert!(!CodexCompat::of_settings(Some(r#"{"codexCompat": false}"#)).enabled);
        let hooks = CodexCompat::of_settings(Some(r#"{"codexCompat": {"userHooks": true}}"#));
        assert!(hooks.enabled && hooks.user_hooks);
        let off = CodexCompat::of_settings(Some(
            r#"{"codexCompat": {"enabled": false, "userHooks": true}}"#,
        ));
        assert!(!off.enabled && !off.user_hooks);
    }
}
