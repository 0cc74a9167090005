//! The user-level files of Claude Code and Codex that the settings take in, after Ling's own
//! and a trusted project's: `~/.claude/settings.json`'s `permissions` and `env` (settings
//! `claudeCompat.userFiles`, on by default, and only when the user's config is read at all),
//! and Codex's execpolicy rules (`rules/*.rules` of Codex's home under `codexCompat`; a
//! project's `.codex/rules/`, whose forbidden and prompt rules apply even untrusted, as a
//! project's deny rules do, and its allow rules only when trusted), never with
//! `--ignore-rules`. Each file taken is listed in [`Settings::user_compat_files`] for
//! `/status`.

use super::claude::{ClaudeRules, user_settings_file};
use super::codex_rules::CodexRules;
use super::{ConfigError, Paths, ProjectFiles, Settings, SettingsOverrides};

/// Where the rules of `~/.claude/settings.json` come from, for `/permissions`.
const CLAUDE_USER_ORIGIN: &str = "~/.claude/settings.json";
/// Where the rules of Codex's rules files come from.
const CODEX_RULES_ORIGIN: &str = "Codex rules";

impl Settings {
    /// Adds the rules and `env` of the user-level files `project`'s compat settings allow.
    pub(super) fn add_user_compat(
        &mut self,
        paths: &Paths,
        project: &ProjectFiles,
        overrides: &SettingsOverrides,
    ) -> Result<(), ConfigError> {
        // A trusted project's Claude Code settings give the status line before the user's.
        if self.status_line.is_none() {
            self.status_line = super::claude::CLAUDE_SETTINGS_FILES
                .iter()
                .rev()
                .filter_map(|name| project.trusted_text(name))
                .find_map(|(_, text)| status_line_of(text));
        }
        let claude_file = user_settings_file()
            .filter(|_| project.claude().user_files && paths.user_config)
            .filter(|f| f.is_file());
        if let Some(path) = claude_file {
            let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            let rules = ClaudeRules::parse(&path, &text)?;
            self.add_rules(&rules.allow, &rules.ask, &rules.deny, CLAUDE_USER_ORIGIN);
            if self.status_line.is_none() {
                self.status_line = status_line_of(&text);
            }
            for (name, value) in rules.env {
                self.env.entry(name).or_insert(value);
            }
            self.user_compat_files.push(path);
        }
        if overrides.ignore_codex_rules {
            return Ok(());
        }
        let mut codex = CodexRules::default();
        if let Some(home) = project.codex().home().filter(|_| paths.user_config) {
            codex.add_dir(&home.join("rules"), false)?;
        }
        if !project.is_user_config() {
            let dir = paths.project_root.join(".codex/rules");
            codex.add_dir(&dir, !project.is_trusted())?;
        }
        self.add_rules(&codex.allow, &codex.ask, &codex.deny, CODEX_RULES_ORIGIN);
        self.user_compat_files.extend(codex.files);
        Ok(())
    }

    fn add_rules(
        &mut self,
        allow: &[String],
        ask: &[String],
        deny: &[String],
        origin: &'static str,
    ) {
        self.allow_rules.extend(allow.iter().cloned());
        self.ask_rules.extend(ask.iter().cloned());
        self.deny_rules.extend(deny.iter().cloned());
        let origins = allow.iter().chain(deny).map(|r| (r.clone(), origin));
        self.rule_origins.extend(origins);
    }
}

/// `statusLine.command` of a Claude Code settings file's text.
fn status_line_of(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let line = value.get("statusLine")?;
    (line.get("type")?.as_str()? == "command")
        .then(|| line.get("command")?.as_str().map(str::to_string))
        .flatten()
}

/// The user-level Claude Code and Codex files a run reads besides the settings' (whose files
/// are in [`Settings::user_compat_files`]): the instruction files that exist, and the
/// definitions loaded from `~/.claude/` and Codex's `prompts/` (among `extension_files`).
pub fn user_compat_extras<'a>(
    project: &ProjectFiles,
    extension_files: impl Iterator<Item = &'a std::path::PathBuf>,
) -> Vec<std::path::PathBuf> {
    let claude_dir = super::claude::user_dir();
    let codex_home = project.codex().home();
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    let memory = claude_dir
        .as_ref()
        .filter(|_| project.claude().project)
        .map(|d| d.join("CLAUDE.md"));
    out.extend(
        memory
            .into_iter()
            .chain(project.codex().agents_md())
            .filter(|f| f.is_file()),
    );
    let mine = |f: &&std::path::PathBuf| {
        claude_dir.as_ref().is_some_and(|d| f.starts_with(d))
            || codex_home.as_ref().is_some_and(|d| f.starts_with(d))
    };
    out.extend(extension_files.filter(mine).cloned());
    out
}
