//! Claude Code's files, read beside Ling's own so that a Claude Code user's project works on day
//! one: `.claude/settings.json` and `.claude/settings.local.json` (their `hooks` and
//! `permissions.allow/ask/deny`) and `.mcp.json` (`mcpServers`), all project files under
//! workspace trust like `.ling/`; `~/.claude/settings.json` hooks only with settings
//! `claudeCompat.userHooks`. Settings `claudeCompat: false` turns all of it off (`CLAUDE.md`, read
//! by the system prompt, too). Ling's own files win where both name the same thing.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::ConfigError;
use super::json::syntax_error;

/// Claude Code's project settings files, relative to the project root, in the order they load
/// (the local one, the user's own, last).
pub const CLAUDE_SETTINGS_FILES: [&str; 2] =
    [".claude/settings.json", ".claude/settings.local.json"];
/// Claude Code's project MCP servers file, relative to the project root.
pub const CLAUDE_MCP_FILE: &str = ".mcp.json";
/// Every Claude Code project file trust covers.
pub const CLAUDE_PROJECT_FILES: [&str; 3] = [
    CLAUDE_SETTINGS_FILES[0],
    CLAUDE_SETTINGS_FILES[1],
    CLAUDE_MCP_FILE,
];

/// `claudeCompat` of `settings.json`: `false` turns off every Claude Code file; an object says
/// more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "ClaudeCompat")]
pub enum RawClaudeCompat {
    /// `true` (the default): Claude Code's project files and `CLAUDE.md` are read; `false`: none.
    Switch(bool),
    /// The parts, each optional.
    Options(RawClaudeOptions),
}

/// `claudeCompat` as an object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "ClaudeCompatOptions")]
pub struct RawClaudeOptions {
    /// Read Claude Code's project files and `CLAUDE.md`. Default true.
    pub enabled: Option<bool>,
    /// Also run the hooks of `~/.claude/settings.json`. Default false.
    pub user_hooks: Option<bool>,
    /// Read your own Claude Code files: `~/.claude/settings.json`'s `permissions` and `env`,
    /// and `~/.claude/commands`, `skills` and `agents`. Default true.
    pub user_files: Option<bool>,
}

/// What `claudeCompat` resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaudeCompat {
    /// Claude Code's project files (under trust) and `CLAUDE.md`.
    pub project: bool,
    /// The hooks of `~/.claude/settings.json`.
    pub user_hooks: bool,
    /// `~/.claude/settings.json`'s permissions and env, and `~/.claude/` commands, skills and
    /// agents.
    pub user_files: bool,
}

impl Default for ClaudeCompat {
    fn default() -> Self {
        Self {
            project: true,
            user_hooks: false,
            user_files: true,
        }
    }
}

impl ClaudeCompat {
    /// The first of `layers` (most important first) that says, part by part.
    pub fn resolve(layers: &[Option<RawClaudeCompat>]) -> Self {
        let mut project = None;
        let mut user_hooks = None;
        let mut user_files = None;
        for layer in layers.iter().flatten() {
            match layer {
                RawClaudeCompat::Switch(on) => project = project.or(Some(*on)),
                RawClaudeCompat::Options(options) => {
                    project = project.or(options.enabled);
                    user_hooks = user_hooks.or(options.user_hooks);
                    user_files = user_files.or(options.user_files);
                }
            }
        }
        let project = project.unwrap_or(true);
        Self {
            project,
            user_hooks: project && user_hooks.unwrap_or(false),
            user_files: project && user_files.unwrap_or(true),
        }
    }

    /// `claudeCompat` of one settings file's JSON text; `None` when absent or not readable as
    /// such (the settings loader reports that).
    pub fn raw_of(text: &str) -> Option<RawClaudeCompat> {
        let value: Value = serde_json::from_str(text).ok()?;
        serde_json::from_value(value.get("claudeCompat")?.clone()).ok()
    }
}

/// Claude Code's user folder (its `CLAUDE.md`): `CLAUDE_CONFIG_DIR` when set, else `~/.claude`.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".claude"))
}

/// `~/.claude/settings.json`, from `HOME`; `settings.json` of `CLAUDE_CONFIG_DIR` when set, as
/// Claude Code reads it.
pub fn user_settings_file() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("settings.json"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".claude/settings.json"))
}

/// The permission rules of a Claude Code settings file, as written, and its `env`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaudeRules {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// `env`: variables for the programs Ling starts.
    pub env: std::collections::BTreeMap<String, String>,
}

impl ClaudeRules {
    /// `permissions.allow`, `ask` and `deny` of a Claude Code settings file. Other keys (Claude
    /// Code has many Ling does not use) are left alone; a rule list that is not a list of
    /// strings is an error naming the file.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|e| syntax_error(path, &e))?;
        let mut rules = Self::default();
        if let Some(env) = value.get("env") {
            rules.env = serde_json::from_value(env.clone()).map_err(|_| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: "`env` must be an object of variable names to strings".into(),
            })?;
        }
        let Some(permissions) = value.get("permissions") else {
            return Ok(rules);
        };
        for (key, list) in [
            ("allow", &mut rules.allow),
            ("ask", &mut rules.ask),
            ("deny", &mut rules.deny),
        ] {
            let Some(found) = permissions.get(key) else {
                continue;
            };
            let strings = found.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|r| r.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            });
            *list = strings.ok_or_else(|| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!("`permissions.{key}` must be a list of rule strings"),
            })?;
        }
        Ok(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_compat_resolves_part_by_part() {
        let on = ClaudeCompat::default();
        assert_eq!(ClaudeCompat::resolve(&[]), on);
        let off = ClaudeCompat {
            project: false,
            user_hooks: false,
            user_files: false,
        };
        assert_eq!(
            ClaudeCompat::resolve(&[None, Some(RawClaudeCompat::Switch(false))]),
            off
        );
        let user_hooks = RawClaudeCompat::Options(RawClaudeOptions {
            enabled: None,
            user_hooks: Some(true),
            user_files: None,
        });
        assert_eq!(
            ClaudeCompat::resolve(&[Some(user_hooks)]),
            ClaudeCompat {
                project: true,
                user_hooks: true,
                user_files: true,
            }
        );
        // The project's `false` wins over the user's userHooks.
        assert_eq!(
            ClaudeCompat::resolve(&[Some(RawClaudeCompat::Switch(false)), Some(user_hooks)]),
            off
        );
        assert_eq!(
            ClaudeCompat::raw_of(r#"{"claudeCompat":{"userHooks":true}}"#),
            Some(user_hooks)
        );
    }

    #[test]
    fn rules_are_read_and_a_bad_list_is_named() {
        let rules = ClaudeRules::parse(
            Path::new("s.json"),
            r#"{"permissions":{"allow":["Bash(npm run test:*)"],"ask":["Edit"],"deny":["Read(./.env)"]},"env":{}}"#,
        )
        .unwrap();
        assert_eq!(rules.allow, ["Bash(npm run test:*)"]);
        assert_eq!(rules.ask, ["Edit"]);
        assert_eq!(rules.deny, ["Read(./.env)"]);
        let err = ClaudeRules::parse(Path::new("s.json"), r#"{"permissions":{"deny":"x"}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("permissions.deny"), "{err}");
    }
}
