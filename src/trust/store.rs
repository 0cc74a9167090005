//! `LING_HOME/trust.json`: the folders the user trusted, each keyed by its canonical root, with
//! the fingerprint of its project config and the files' contents at that moment (so a changed
//! config can be shown as what changed). The file is owner-only (0600 in a 0700 folder) and
//! changed only through [`TrustStore::update`], under a lock and replaced atomically, so two
//! sessions trusting folders at once both keep theirs; one that cannot be read or parsed is an
//! error saying what to do, never an empty store.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::TrustError;
use crate::config::shared_file::{self, Change};
use crate::config::{ConfigError, read_config_text};

pub const TRUST_FILE: &str = "trust.json";
const VERSION: u32 = 1;

/// What was trusted for one folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustRecord {
    /// RFC 3339, UTC.
    pub trusted_at: String,
    /// `sha256:<hex>` of the three project files (see `fingerprint`).
    pub fingerprint: String,
    /// Each project file's text as trusted; `None`: the file did not exist.
    pub files: BTreeMap<String, Option<String>>,
    /// Each file the project's hooks and servers run (by its path as shown), as trusted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub code: BTreeMap<String, StoredCode>,
}

/// A file a project's hook or server runs, as trusted: `state` is its fingerprint part
/// (`absent`, `binary`, or a script's `sha256:<hex>`), `text` a script's text when short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCode {
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl StoredCode {
    pub fn of(state: &super::code::FileState) -> Self {
        let text = match state {
            super::code::FileState::Script { text, .. } => text.clone(),
            _ => None,
        };
        Self {
            state: state.fingerprint(),
            text,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    #[serde(default)]
    projects: BTreeMap<String, TrustRecord>,
}

/// The trust file, loaded.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    projects: BTreeMap<String, TrustRecord>,
}

impl TrustStore {
    /// Reads `home/trust.json`; a missing file is an empty store.
    pub fn load(home: &Path) -> Result<Self, TrustError> {
        let path = home.join(TRUST_FILE);
        let text = read_config_text(&path).map_err(|e| unreadable(&path, e))?;
        let projects = parse(&path, text)?;
        Ok(Self { path, projects })
    }

    /// Changes `home/trust.json` as it is on disk now: under the file's lock (another Ling may
    /// be trusting a folder at the same moment) the store is read again, `change` applied to it,
    /// and, when that changed anything, the file replaced atomically (an owner-only file beside
    /// it, synced, renamed over it: a crash leaves the old file or the new one).
    pub fn update<T>(home: &Path, change: impl FnOnce(&mut Self) -> T) -> Result<T, TrustError> {
        let path = home.join(TRUST_FILE);
        shared_file::update(&path, shared_file::Options::private(), |text| {
            let projects = parse(&path, text)?;
            let mut store = Self {
                path: path.clone(),
                projects: projects.clone(),
            };
            let value = change(&mut store);
            if store.projects == projects {
                return Ok((Change::Keep, value));
            }
            Ok((Change::Write(store.to_bytes()?), value))
        })
        .map_err(|e| match e {
            TrustError::Config(
                e @ (ConfigError::Read { .. }
                | ConfigError::NotRegular { .. }
                | ConfigError::TooLarge { .. }),
            ) => unreadable(&path, e),
            other => other,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn get(&self, root: &str) -> Option<&TrustRecord> {
        self.projects.get(root)
    }

    /// Every trusted root, sorted.
    pub fn records(&self) -> impl Iterator<Item = (&String, &TrustRecord)> {
        self.projects.iter()
    }

    pub fn insert(&mut self, root: String, record: TrustRecord) {
        self.projects.insert(root, record);
    }

    pub fn remove(&mut self, root: &str) -> Option<TrustRecord> {
        self.projects.remove(root)
    }

    fn to_bytes(&self) -> Result<Vec<u8>, TrustError> {
        let file = TrustFile {
            version: VERSION,
            projects: self.projects.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file).map_err(|e| TrustError::Write {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        text.push('\n');
        Ok(text.into_bytes())
    }
}

/// The projects of the trust file's `text` (none when there is no file).
fn parse(path: &Path, text: Option<String>) -> Result<BTreeMap<String, TrustRecord>, TrustError> {
    let Some(text) = text else {
        return Ok(BTreeMap::new());
    };
    let file: TrustFile = serde_json::from_str(&text).map_err(|e| TrustError::Corrupt {
        path: path.to_path_buf(),
        // serde_json's message ends with the line and column already.
        message: e.to_string(),
    })?;
    if file.version != VERSION {
        return Err(TrustError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "version {} is not the version {VERSION} this Ling reads",
                file.version
            ),
        });
    }
    Ok(file.projects)
}

fn unreadable(path: &Path, e: ConfigError) -> TrustError {
    TrustError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn record(fingerprint: &str) -> TrustRecord {
        TrustRecord {
            trusted_at: "2025-01-01T00:00:00Z".into(),
            fingerprint: fingerprint.into(),
            files: BTreeMap::from([("hooks.json".to_string(), None)]),
            code: BTreeMap::new(),
        }
    }

    #[test]
    fn saves_owner_only_and_reads_back() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().join("ling-home");
        assert!(TrustStore::load(&home).unwrap().get("/p").is_none());
        TrustStore::update(&home, |store| store.insert("/p".into(), record("sha256:1"))).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home.join(TRUST_FILE)), 0o600);
        assert_eq!(mode(&home), 0o700);
        let again = TrustStore::load(&home).unwrap();
        assert_eq!(again.get("/p"), Some(&record("sha256:1")));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&home).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn an_update_changes_the_file_as_it_is_now_and_only_when_it_changes() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let stale = TrustStore::load(home).unwrap();
        TrustStore::update(home, |store| store.insert("/p".into(), record("sha256:1"))).unwrap();
        // Another session trusts /q after this one loaded its copy: both are kept.
        TrustStore::update(home, |store| store.insert("/q".into(), record("sha256:2"))).unwrap();
        assert!(stale.get("/p").is_none());
        let removed = TrustStore::update(home, |store| store.remove("/p").is_some()).unwrap();
        assert!(removed);
        let roots: Vec<String> = TrustStore::load(home)
            .unwrap()
            .records()
            .map(|(root, _)| root.clone())
            .collect();
        assert_eq!(roots, ["/q"]);
        // Nothing removed: the file is not rewritten.
        std::fs::write(home.join(TRUST_FILE), r#"{"version":1,"projects":{}}"#).unwrap();
        assert!(!TrustStore::update(home, |store| store.remove("/p").is_some()).unwrap());
        assert_eq!(
            std::fs::read_to_string(home.join(TRUST_FILE)).unwrap(),
            r#"{"version":1,"projects":{}}"#
        );
        // A corrupt file is never replaced by an update.
        std::fs::write(home.join(TRUST_FILE), "{ nope").unwrap();
        let err = TrustStore::update(home, |store| store.insert("/r".into(), record("x")));
        assert!(err.unwrap_err().to_string().contains("delete it"));
        assert_eq!(
            std::fs::read_to_string(home.join(TRUST_FILE)).unwrap(),
            "{ nope"
        );
    }

    #[test]
    fn a_corrupt_file_is_an_error_that_says_what_to_do() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(TRUST_FILE), "{ nope").unwrap();
        let err = TrustStore::load(home.path()).unwrap_err().to_string();
        assert!(err.contains("trust.json"), "{err}");
        assert!(err.contains("delete it"), "{err}");
        std::fs::write(home.path().join(TRUST_FILE), r#"{"version": 9}"#).unwrap();
        let err = TrustStore::load(home.path()).unwrap_err().to_string();
        assert!(err.contains("version 9"), "{err}");
    }
}
