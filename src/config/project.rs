//! The project's own config files, read once at start: `.ling/settings.json`, `hooks.json`,
//! `mcp.json` and Claude Code's project files. [`ProjectFiles`] holds their texts and whether the
//! project is trusted; every loader of project config takes it and gets a file's text only when
//! it is (settings' `permissions.deny` and `ask`, which only narrow, apply either way). Whether
//! the project *is* trusted is decided above config, by the `trust` module, which sets it here.

use std::path::{Path, PathBuf};

use super::claude::{CLAUDE_PROJECT_FILES, ClaudeCompat};
use super::json::read_config_text;
use super::{ConfigError, Paths};

/// Ling's project files trust covers (under `.ling/`), in fingerprint order.
pub const PROJECT_FILES: [&str; 3] = ["settings.json", "hooks.json", "mcp.json"];
/// Every project file trust covers, in fingerprint and listing order: Ling's, then Claude Code's
/// (relative to the project root, read unless `claudeCompat` is off).
pub const ALL_PROJECT_FILES: [&str; 6] = [
    PROJECT_FILES[0],
    PROJECT_FILES[1],
    PROJECT_FILES[2],
    CLAUDE_PROJECT_FILES[0],
    CLAUDE_PROJECT_FILES[1],
    CLAUDE_PROJECT_FILES[2],
];

/// The project's commands, skills and agents, fingerprinted as one more project file (their
/// [`crate::config::extensions::project_manifest`]).
pub const EXTENSIONS: &str = "commands, skills and agents";

/// Whether `name` is one of Claude Code's files (relative to the root, not under `.ling/`).
pub fn is_claude_file(name: &str) -> bool {
    CLAUDE_PROJECT_FILES.contains(&name)
}

/// How a project file is shown: `.ling/hooks.json`, `.mcp.json`.
pub fn shown_name(name: &str) -> String {
    if is_claude_file(name) || name == EXTENSIONS {
        name.to_string()
    } else {
        format!(".ling/{name}")
    }
}

/// One project file as read at start: `text` is `None` when the file does not exist.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub name: &'static str,
    pub path: PathBuf,
    pub text: Option<String>,
}

/// The project's config files, read once, and whether they may apply.
#[derive(Debug, Clone)]
pub struct ProjectFiles {
    /// The canonical project root.
    root: PathBuf,
    /// Empty when `.ling` is the user's own config.
    files: Vec<ProjectFile>,
    user_config: bool,
    trusted: bool,
    /// `claudeCompat` of the user's settings, as written.
    user_compat: Option<super::claude::RawClaudeCompat>,
    /// What `claudeCompat` of the user's settings and (trusted) the project's says.
    claude: ClaudeCompat,
    /// What `codexCompat` of the user's settings says.
    codex: super::codex_user::CodexCompat,
}

impl ProjectFiles {
    /// Reads the project files (untrusted until [`ProjectFiles::set_trusted`]). A file that
    /// cannot be read is an error naming it.
    pub fn read(paths: &Paths) -> Result<Self, ConfigError> {
        let root = std::fs::canonicalize(&paths.project_root)
            .unwrap_or_else(|_| paths.project_root.clone());
        let user_config = is_user_config(&root, &paths.home);
        // Unreadable user settings are reported by the settings loader; here they say nothing.
        let user_settings = read_config_text(&paths.user_file(PROJECT_FILES[0]))
            .ok()
            .flatten();
        let user_compat = user_settings.as_deref().and_then(ClaudeCompat::raw_of);
        let claude = ClaudeCompat::resolve(&[user_compat]);
        let codex = super::codex_user::CodexCompat::of_settings(user_settings.as_deref());
        let mut files = Vec::new();
        if !user_config {
            for name in PROJECT_FILES {
                let path = paths.project_file(name);
                let text = read_config_text(&path)?;
                files.push(ProjectFile { name, path, text });
            }
            for name in CLAUDE_PROJECT_FILES.into_iter().filter(|_| claude.project) {
                let path = paths.project_root.join(name);
                let text = read_config_text(&path)?;
                files.push(ProjectFile { name, path, text });
            }
            // Only when there are some, so trust recorded before Ling read them still holds.
            if let Some(text) = super::extensions::project_manifest(&root, claude.project) {
                files.push(ProjectFile {
                    name: EXTENSIONS,
                    path: root.clone(),
                    text: Some(text),
                });
            }
        }
        Ok(Self {
            root,
            files,
            user_config,
            trusted: false,
            user_compat,
            claude,
            codex,
        })
    }

    /// Leaves these files out of this run (`--setting-sources`), as if they did not exist.
    pub fn leave_out(&mut self, names: &[&str]) {
        for file in self.files.iter_mut().filter(|f| names.contains(&f.name)) {
            file.text = None;
        }
    }

    /// Lets the files apply (or not): trust's decision. A trusted project's own `claudeCompat`
    /// then counts too.
    pub fn set_trusted(&mut self, trusted: bool) {
        self.trusted = trusted;
        let project_compat = self
            .trusted_text(PROJECT_FILES[0])
            .and_then(|(_, text)| ClaudeCompat::raw_of(text));
        self.claude = ClaudeCompat::resolve(&[project_compat, self.user_compat]);
    }

    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// What `claudeCompat` says for this run: whether Claude Code's project files (when trusted)
    /// and `CLAUDE.md` are read, and whether `~/.claude/settings.json` hooks run.
    pub fn claude(&self) -> ClaudeCompat {
        self.claude
    }

    /// What `codexCompat` says for this run.
    pub fn codex(&self) -> super::codex_user::CodexCompat {
        self.codex
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether any project file exists (never for the user's own `.ling`).
    pub fn has_config(&self) -> bool {
        self.files.iter().any(|f| f.text.is_some())
    }

    /// Whether `.ling` under the root is the user's own config (`LING_HOME`, or root = `$HOME`).
    pub fn is_user_config(&self) -> bool {
        self.user_config
    }

    /// Every file looked for, in [`ALL_PROJECT_FILES`] order.
    pub fn files(&self) -> &[ProjectFile] {
        &self.files
    }

    /// A project file's text for loading: only in a trusted project.
    pub fn trusted_text(&self, name: &str) -> Option<(&Path, &str)> {
        if !self.trusted || (is_claude_file(name) && !self.claude.project) {
            return None;
        }
        self.any_text(name)
    }

    /// A project file's text whatever the trust: for `permissions.deny` and for listings.
    pub fn any_text(&self, name: &str) -> Option<(&Path, &str)> {
        let file = self.files.iter().find(|f| f.name == name)?;
        Some((file.path.as_path(), file.text.as_deref()?))
    }
}

/// Whether `root/.ling` is the user's config: the root is `$HOME`, or `root/.ling` is
/// `LING_HOME` (compared canonically, so a symlink does not make it a project layer).
fn is_user_config(root: &Path, home: &Path) -> bool {
    let home_dir = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok());
    if home_dir.as_deref() == Some(root) {
        return true;
    }
    let dot_ling = root.join(".ling");
    match (
        std::fs::canonicalize(&dot_ling),
        std::fs::canonicalize(home),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => dot_ling == home,
    }
}
