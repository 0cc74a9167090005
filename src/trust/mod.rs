//! Workspace trust: whether a project's own config (`.ling/settings.json`, `hooks.json`,
//! `mcp.json`, Claude Code's project files) may apply. [`ProjectConfig::read`] reads the files
//! once (`config::ProjectFiles`) and decides; every loader of project config takes
//! [`ProjectConfig::layer`] and gets a file's text only when the project is trusted (settings'
//! `permissions.deny`, which only narrows, applies either way). A project is trusted when the
//! user trusted its canonical root and the SHA-256 fingerprint of the files still matches what
//! `LING_HOME/trust.json` recorded ([`store`]). A project without project config needs no
//! trust, and a `.ling` that is the user's own config (`LING_HOME`, or the root is `$HOME`) is
//! never a project layer. [`listing`] says what a project would bring, and `untrusted.rs` what
//! a run that cannot ask says of an untrusted one.
//!
//! Trust sits above `config` (which knows nothing of it) and below the frontends and `setup`.

pub mod code;
pub mod guard;
pub mod listing;
mod listing_error;
mod programs;
pub mod store;
pub mod surface;
mod untrusted;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::mcp::{MCP_FILE, parse_mcp_text};
pub use crate::config::project::{
    ALL_PROJECT_FILES, EXTENSIONS, PROJECT_FILES, is_claude_file, shown_name,
};
use crate::config::{ConfigError, Paths, ProjectFiles, read_config_text};
use code::{Areas, CodeFile, FileState};
use listing::FileText;
pub use listing::{
    Changes, CodeChange, FileChange, FileChangeKind, FileListing, HookTarget, Item, ListingError,
    ProjectListing, ServerTarget,
};
pub use store::StoredCode;
use store::{TrustRecord, TrustStore};

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error(
        "cannot read {}: {message}; make it readable by you, or delete it to forget every \
         trusted folder (Ling then asks again)", path.display()
    )]
    Unreadable { path: PathBuf, message: String },
    #[error(
        "{} is not a trust file this Ling can read ({message}); fix it, or delete it to forget \
         every trusted folder (Ling then asks again)", path.display()
    )]
    Corrupt { path: PathBuf, message: String },
    #[error("cannot write {}: {source}; check that you own its folder", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot record trust for {}: the path is not valid UTF-8; move the project to a folder \
         whose path is UTF-8", path.display()
    )]
    NotUtf8 { path: PathBuf },
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What `project_trust` says in the json outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustStatus {
    /// No project config (or `.ling` is the user's config): nothing to trust.
    None,
    Trusted,
    /// Never trusted, or changed since it was.
    Untrusted,
}

impl TrustStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Trusted => "trusted",
            Self::Untrusted => "untrusted",
        }
    }
}

/// The project's config files, read once, and the trust decision over them.
#[derive(Debug, Clone)]
pub struct ProjectConfig {
    files: ProjectFiles,
    home: PathBuf,
    /// The files the project's own hooks and servers run from places a sandboxed command can
    /// write, as they were when read: part of the fingerprint.
    code: Vec<(CodeFile, FileState)>,
    fingerprint: String,
    status: TrustStatus,
    /// The trust recorded for this root when the config changed since.
    previous: Option<TrustRecord>,
}

impl ProjectConfig {
    /// Reads the project files and decides. `trust.json` is read only when there is project
    /// config; an unreadable or corrupt one is an error.
    pub fn read(paths: &Paths) -> Result<Self, TrustError> {
        let files = ProjectFiles::read(paths)?;
        let mut config = Self {
            fingerprint: String::new(),
            code: Vec::new(),
            files,
            home: paths.home.clone(),
            status: TrustStatus::None,
            previous: None,
        };
        config.code = code_of(&config.listing(paths));
        // Claude Code's files count only when present, so that trust recorded before Ling
        // read them still holds for projects without them; so do code files, for projects
        // whose hooks and servers run none.
        config.fingerprint = fingerprint(
            config
                .files
                .files()
                .iter()
                .filter(|f| f.text.is_some() || !is_claude_file(f.name))
                .map(|f| (f.name, f.text.as_deref())),
            &config.code,
        );
        if config.has_config() {
            let store = TrustStore::load(&config.home)?;
            config.status = match config.root().to_str().and_then(|key| store.get(key)) {
                Some(record) if record.fingerprint == config.fingerprint => TrustStatus::Trusted,
                Some(record) => {
                    config.previous = Some(record.clone());
                    TrustStatus::Untrusted
                }
                None => TrustStatus::Untrusted,
            };
        }
        config
            .files
            .set_trusted(config.status == TrustStatus::Trusted);
        Ok(config)
    }

    /// The files, for the loaders of project config: they get a file's text only when trusted.
    pub fn layer(&self) -> &ProjectFiles {
        &self.files
    }

    /// What `claudeCompat` says for this run: whether Claude Code's project files (when trusted)
    /// and `CLAUDE.md` are read, and whether `~/.claude/settings.json` hooks run.
    pub fn claude(&self) -> crate::config::claude::ClaudeCompat {
        self.files.claude()
    }

    pub fn status(&self) -> TrustStatus {
        self.status
    }

    /// The canonical project root, the key of its trust.
    pub fn root(&self) -> &Path {
        self.files.root()
    }

    /// Whether any of the project files exists (never for the user's own `.ling`).
    pub fn has_config(&self) -> bool {
        self.files.has_config()
    }

    /// Whether `.ling` under the root is the user's own config (`LING_HOME`, or root = `$HOME`).
    pub fn is_user_config(&self) -> bool {
        self.files.is_user_config()
    }

    /// Whether the project was trusted before and its config changed since.
    pub fn changed_since_trusted(&self) -> bool {
        self.previous.is_some()
    }

    /// When the config that changed since had been trusted (RFC 3339).
    pub fn previous_trusted_at(&self) -> Option<&str> {
        self.previous.as_ref().map(|r| r.trusted_at.as_str())
    }

    /// Leaves these files out of this run (`--setting-sources`), as if they did not exist; the
    /// trust decided over what was read stands.
    pub fn leave_out(&mut self, names: &[&str]) {
        self.files.leave_out(names);
    }

    /// A project file's text for loading: only in a trusted project.
    pub fn trusted_text(&self, name: &str) -> Option<(&Path, &str)> {
        self.files.trusted_text(name)
    }

    /// A project file's text whatever the trust: for listings.
    fn any_text(&self, name: &str) -> Option<(&Path, &str)> {
        self.files.any_text(name)
    }

    /// What the project config would bring. `paths` gives the user's `mcp.json`, whose server
    /// names a project server may replace, and the user's settings, which a project setting is
    /// compared with.
    pub fn listing(&self, paths: &Paths) -> ProjectListing {
        self.build_listing(&self.texts(|f| f.text.as_deref()), paths)
    }

    /// Each project file with the text `text_of` gives it (as on disk, or as trusted).
    fn texts<'a>(
        &'a self,
        text_of: impl Fn(&'a crate::config::project::ProjectFile) -> Option<&'a str>,
    ) -> Vec<FileText<'a>> {
        self.files
            .files()
            .iter()
            .map(|f| FileText {
                name: f.name,
                path: f.path.clone(),
                text: text_of(f),
            })
            .collect()
    }

    fn build_listing(&self, texts: &[FileText<'_>], paths: &Paths) -> ProjectListing {
        let user_servers = user_server_names(paths);
        let user = read_config_text(&paths.user_file(PROJECT_FILES[0]))
            .ok()
            .flatten()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let areas = Areas::new(self.root(), &[]);
        let context = listing::Context {
            user_servers: &user_servers,
            user: &user,
            areas: &areas,
        };
        ProjectListing::build(texts, &context)
    }

    /// What changed since the config was trusted, when it was and did: the config files, and
    /// the files its hooks and servers run.
    pub fn changes(&self, paths: &Paths) -> Option<Changes> {
        let previous = self.previous.as_ref()?;
        let texts = self.texts(|f| previous.files.get(f.name).and_then(|t| t.as_deref()));
        let old = self.build_listing(&texts, paths);
        let mut changes = Changes::between(&old, &self.listing(paths));
        changes.files.retain(|change| {
            let now = self.any_text(change.name).map(|(_, text)| text);
            let then = previous.files.get(change.name).and_then(|t| t.as_deref());
            now != then
        });
        changes.code = code_changes(&previous.code, &self.code);
        Some(changes)
    }

    /// What a project file a hook or server runs was when this config was read (and, in a
    /// trusted project, trusted): `None` for a file the project's entries do not run.
    pub fn code_state(&self, path: &Path) -> Option<&FileState> {
        self.code
            .iter()
            .find(|(file, _)| file.path == path)
            .map(|(_, state)| state)
    }

    /// Records that the user trusts this config as it is now; from then on it loads.
    pub fn trust(&mut self) -> Result<(), TrustError> {
        if !self.has_config() {
            return Ok(());
        }
        let key = self.root().to_str().ok_or_else(|| TrustError::NotUtf8 {
            path: self.root().to_path_buf(),
        })?;
        let files: BTreeMap<String, Option<String>> = self
            .files
            .files()
            .iter()
            .map(|f| (f.name.to_string(), f.text.clone()))
            .collect();
        let code = self
            .code
            .iter()
            .map(|(file, state)| (file.shown.clone(), StoredCode::of(state)))
            .collect();
        let record = TrustRecord {
            trusted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            fingerprint: self.fingerprint.clone(),
            files,
            code,
        };
        TrustStore::update(&self.home, |store| store.insert(key.to_string(), record))?;
        self.status = TrustStatus::Trusted;
        self.previous = None;
        self.files.set_trusted(true);
        Ok(())
    }
}

/// One trusted folder, as `ling trust --list` shows it.
#[derive(Debug, Clone)]
pub struct TrustedFolder {
    pub root: String,
    pub trusted_at: String,
    pub state: FolderState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderState {
    /// The config on disk is the one trusted.
    Matches,
    /// It changed: Ling asks again (or, in `-p`, skips it).
    Changed,
    /// The folder is gone.
    Missing,
}

/// Every folder in `home/trust.json`, with whether its config still matches.
pub fn trusted_folders(home: &Path) -> Result<Vec<TrustedFolder>, TrustError> {
    let store = TrustStore::load(home)?;
    let mut folders = Vec::new();
    for (root, record) in store.records() {
        let dir = Path::new(root);
        let state = if !dir.is_dir() {
            FolderState::Missing
        } else {
            let paths = Paths::with_home(dir.to_path_buf(), home.to_path_buf());
            // A folder whose files cannot be read now does not match.
            match ProjectConfig::read(&paths) {
                Ok(config) if config.fingerprint == record.fingerprint => FolderState::Matches,
                _ => FolderState::Changed,
            }
        };
        folders.push(TrustedFolder {
            root: root.clone(),
            trusted_at: record.trusted_at.clone(),
            state,
        });
    }
    Ok(folders)
}

/// Forgets the trust of `root` (canonical when it still exists). Returns whether it was trusted.
pub fn revoke(home: &Path, root: &Path) -> Result<bool, TrustError> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let Some(key) = root.to_str() else {
        return Ok(false);
    };
    TrustStore::update(home, |store| store.remove(key).is_some())
}

/// `sha256:<hex>` over each file's name and contents, a missing file told apart from an
/// empty one, then over each code file's path and state (a script's hash; for a binary, only
/// that it exists).
fn fingerprint<'a>(
    files: impl Iterator<Item = (&'a str, Option<&'a str>)>,
    code: &[(CodeFile, FileState)],
) -> String {
    let mut hash = Sha256::new();
    for (name, text) in files {
        hash.update(name.as_bytes());
        hash.update([0]);
        match text {
            None => hash.update([0]),
            Some(text) => {
                hash.update([1]);
                hash.update((text.len() as u64).to_be_bytes());
                hash.update(text.as_bytes());
            }
        }
    }
    for (file, state) in code {
        hash.update(b"\0code\0");
        hash.update(file.shown.as_bytes());
        hash.update([0]);
        hash.update(state.fingerprint().as_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Every file the listed hooks and servers run, once, in path order, with its state now.
fn code_of(listing: &ProjectListing) -> Vec<(CodeFile, FileState)> {
    let mut files: Vec<CodeFile> = Vec::new();
    for item in listing.items() {
        let runs = match item {
            Item::Hook { runs, .. } | Item::Server { runs, .. } => runs.as_ref(),
            Item::Environment { runs } => Some(runs),
            Item::Setting { .. } | Item::Extension { .. } => None,
        };
        for file in runs.into_iter().flat_map(|r| &r.files) {
            if !files.iter().any(|f| f.path == file.path) {
                files.push(file.clone());
            }
        }
    }
    files.sort_by(|a, b| a.shown.cmp(&b.shown));
    files
        .into_iter()
        .map(|file| {
            let state = FileState::of(&file.path);
            (file, state)
        })
        .collect()
}

/// How the code files differ from the ones trusted, by path.
fn code_changes(
    trusted: &BTreeMap<String, StoredCode>,
    now: &[(CodeFile, FileState)],
) -> Vec<CodeChange> {
    let mut changes = Vec::new();
    for (file, state) in now {
        let before = trusted.get(&file.shown);
        let after = StoredCode::of(state);
        if before.is_some_and(|b| b.state == after.state) {
            continue;
        }
        changes.push(CodeChange {
            shown: file.shown.clone(),
            before: before.cloned(),
            after,
        });
    }
    for (shown, before) in trusted {
        if !now.iter().any(|(f, _)| f.shown == *shown) {
            changes.push(CodeChange {
                shown: shown.clone(),
                before: Some(before.clone()),
                after: StoredCode {
                    state: "not run any more".into(),
                    text: None,
                },
            });
        }
    }
    changes
}

/// The server names of `~/.ling/mcp.json` (none when it is missing or invalid: loading it
/// reports that).
fn user_server_names(paths: &Paths) -> Vec<String> {
    let path = paths.user_file(MCP_FILE);
    let Ok(Some(text)) = read_config_text(&path) else {
        return Vec::new();
    };
    parse_mcp_text(&path, &text, &mut Vec::new())
        .map(|raw| {
            raw.mcp_servers
                .0
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(files: &[(&'static str, Option<&'static str>)]) -> String {
        fingerprint(files.iter().copied(), &[])
    }

    #[test]
    fn a_missing_file_is_not_an_empty_one() {
        let missing = fp(&[("hooks.json", None)]);
        let empty = fp(&[("hooks.json", Some(""))]);
        assert_ne!(missing, empty);
        assert_ne!(
            fp(&[("hooks.json", Some("ab")), ("mcp.json", Some("c"))]),
            fp(&[("hooks.json", Some("a")), ("mcp.json", Some("bc"))])
        );
        assert!(missing.starts_with("sha256:") && missing.len() == 7 + 64);
    }

    fn project() -> (tempfile::TempDir, tempfile::TempDir, Paths) {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::with_home(root.path().to_path_buf(), home.path().to_path_buf());
        (root, home, paths)
    }

    #[test]
    fn trust_lapses_when_the_config_changes() {
        let (_root, _home, paths) = project();
        assert_eq!(
            ProjectConfig::read(&paths).unwrap().status(),
            TrustStatus::None
        );
        std::fs::create_dir_all(paths.project_dir()).unwrap();
        std::fs::write(paths.project_file("hooks.json"), "{}").unwrap();
        let mut config = ProjectConfig::read(&paths).unwrap();
        assert_eq!(config.status(), TrustStatus::Untrusted);
        assert!(config.trusted_text("hooks.json").is_none());
        config.trust().unwrap();
        let config = ProjectConfig::read(&paths).unwrap();
        assert_eq!(config.status(), TrustStatus::Trusted);
        assert_eq!(config.trusted_text("hooks.json").map(|t| t.1), Some("{}"));

        // An empty settings file appearing is a change too.
        std::fs::write(paths.project_file("settings.json"), "").unwrap();
        let config = ProjectConfig::read(&paths).unwrap();
        assert_eq!(config.status(), TrustStatus::Untrusted);
        assert!(config.changed_since_trusted());
    }

    #[test]
    fn a_dot_ling_that_is_ling_home_is_user_config() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join(".ling");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("hooks.json"), "{}").unwrap();
        let paths = Paths::with_home(root.path().to_path_buf(), home);
        let config = ProjectConfig::read(&paths).unwrap();
        assert!(config.is_user_config());
        assert_eq!(config.status(), TrustStatus::None);
        assert!(config.trusted_text("hooks.json").is_none());
    }
}
