//! Putting the folders back as a state recorded them: what differs between now and then, each
//! path changed, created or removed, and what is left alone with why: a path someone other
//! than Ling changed since (unless forced), a file that was over the size bound, a content no
//! longer kept. Nothing is written through a symlink: every folder on the way to a path is
//! checked to be a real folder first.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::blobs::Blobs;
use super::tree::{Entry, Tree};

/// What a restore did (or, dry, would do) to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// It did not exist: made again.
    Created,
    /// Its content, mode or target put back.
    Restored,
    /// It did not exist then: removed.
    Removed,
}

/// Why a path was not put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Kept {
    /// Someone other than Ling changed it since (you, your editor, a process left running):
    /// left as it is unless forced.
    ChangedOutside,
    /// It was over `checkpoints.maxFileSize`, so its content was not kept.
    TooLarge,
    /// A socket, fifo or device, which Ling does not make.
    Special,
    /// Writing it failed, or its content is no longer kept: the message says which.
    Failed { message: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restored {
    pub path: PathBuf,
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotRestored {
    pub path: PathBuf,
    #[serde(flatten)]
    pub why: Kept,
}

/// What a restore of the files put back and what it could not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RestoreReport {
    pub restored: Vec<Restored>,
    pub not_restored: Vec<NotRestored>,
    /// Nothing was written: this is what a restore would do.
    pub dry_run: bool,
}

impl RestoreReport {
    pub fn complete(&self) -> bool {
        self.not_restored.is_empty()
    }
}

/// One step of a restore.
enum Step {
    Remove(PathBuf, Entry),
    Put(PathBuf, Entry, Action),
}

/// Puts the folders from `now` back to `then`. `outside`: the paths someone else changed
/// since, left alone unless `force`. `dry_run`: only says what it would do.
pub fn restore(
    blobs: &Blobs,
    roots: &[PathBuf],
    now: &Tree,
    then: &Tree,
    outside: &BTreeSet<PathBuf>,
    force: bool,
    dry_run: bool,
) -> RestoreReport {
    let mut report = RestoreReport {
        dry_run,
        ..RestoreReport::default()
    };
    let mut steps = Vec::new();
    let mut kept: BTreeSet<PathBuf> = BTreeSet::new();
    let touched_outside = |path: &Path| !force && outside.contains(path);
    // Removals, deepest first, so a folder is empty when its turn comes.
    for (path, entry) in now.iter().rev() {
        let wanted = then.get(path);
        if wanted.is_some_and(|w| w.same(entry)) {
            continue;
        }
        // A path of the same kind is written over; only one that goes, or whose kind
        // changes between a folder and the rest, is removed.
        if wanted.is_some_and(|w| w.is_dir() == entry.is_dir()) {
            continue;
        }
        if touched_outside(path) {
            kept.insert(path.clone());
            report.not_restored.push(NotRestored {
                path: path.clone(),
                why: Kept::ChangedOutside,
            });
            continue;
        }
        if kept.iter().any(|k| k.starts_with(path)) {
            // A path below it stays, so the folder stays.
            continue;
        }
        steps.push(Step::Remove(path.clone(), entry.clone()));
    }
    // Then what `then` had, parents first.
    let mut folders = Vec::new();
    for (path, entry) in then {
        let current = now.get(path);
        if current.is_some_and(|c| c.same(entry)) {
            continue;
        }
        if kept.contains(path) || kept.iter().any(|k| path.starts_with(k)) {
            continue;
        }
        if touched_outside(path) {
            kept.insert(path.clone());
            report.not_restored.push(NotRestored {
                path: path.clone(),
                why: Kept::ChangedOutside,
            });
            continue;
        }
        let why_not = match entry {
            Entry::File { hash: None, .. } => Some(Kept::TooLarge),
            Entry::Other { .. } => Some(Kept::Special),
            _ => None,
        };
        if let Some(why) = why_not {
            kept.insert(path.clone());
            report.not_restored.push(NotRestored {
                path: path.clone(),
                why,
            });
            continue;
        }
        let action = match current {
            Some(_) => Action::Restored,
            None => Action::Created,
        };
        if let Entry::Dir { mode, .. } = entry {
            folders.push((path.clone(), *mode));
        }
        steps.push(Step::Put(path.clone(), entry.clone(), action));
    }
    for step in steps {
        let (path, action, result) = match step {
            Step::Remove(path, entry) => {
                let result = if dry_run {
                    Ok(())
                } else {
                    remove(&path, &entry, roots)
                };
                // A removal followed by a put of the same path is one change.
                if then.contains_key(&path) {
                    if let Err(e) = result {
                        report.not_restored.push(NotRestored {
                            path,
                            why: Kept::Failed {
                                message: e.to_string(),
                            },
                        });
                    }
                    continue;
                }
                (path, Action::Removed, result)
            }
            Step::Put(path, entry, action) => {
                let result = if dry_run {
                    Ok(())
                } else {
                    put(blobs, &path, &entry, roots)
                };
                (path, action, result)
            }
        };
        match result {
            Ok(()) => report.restored.push(Restored { path, action }),
            Err(e) => report.not_restored.push(NotRestored {
                path,
                why: Kept::Failed {
                    message: e.to_string(),
                },
            }),
        }
    }
    if !dry_run {
        // Folder modes last, deepest first: a read-only folder must not stop what goes in it.
        for (path, mode) in folders.iter().rev() {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode));
        }
    }
    report.restored.sort_by(|a, b| a.path.cmp(&b.path));
    report.not_restored.sort_by(|a, b| a.path.cmp(&b.path));
    report
}

#[derive(Debug, thiserror::Error)]
enum PutError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Blob(#[from] super::blobs::BlobError),
    #[error("{} is not a folder now (a file or symlink is in the way)", .0.display())]
    NotAFolder(PathBuf),
    #[error("it is outside the recorded folders")]
    Outside,
}

/// Every folder between the root holding `path` and `path` is a real folder (not a symlink
/// that would lead the write elsewhere).
fn check_parents(path: &Path, roots: &[PathBuf]) -> Result<(), PutError> {
    let root = roots
        .iter()
        .find(|r| path.starts_with(r) && path != r.as_path())
        .ok_or(PutError::Outside)?;
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root.as_path() || !d.starts_with(root) {
            break;
        }
        let meta = std::fs::symlink_metadata(d)?;
        if !meta.is_dir() {
            return Err(PutError::NotAFolder(d.to_path_buf()));
        }
        dir = d.parent();
    }
    Ok(())
}

fn remove(path: &Path, entry: &Entry, roots: &[PathBuf]) -> Result<(), PutError> {
    check_parents(path, roots)?;
    let result = if entry.is_dir() {
        std::fs::remove_dir(path)
    } else {
        std::fs::remove_file(path)
    };
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => Ok(other?),
    }
}

fn put(blobs: &Blobs, path: &Path, entry: &Entry, roots: &[PathBuf]) -> Result<(), PutError> {
    check_parents(path, roots)?;
    let parent = path.parent().ok_or(PutError::Outside)?;
    match entry {
        Entry::Dir { mode, .. } => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(PutError::NotAFolder(path.to_path_buf())),
            Err(_) => {
                std::fs::create_dir(path)?;
                // The mode is set at the end; until then Ling must be able to write in it.
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700))?;
                Ok(())
            }
        },
        Entry::File {
            mode,
            hash: Some(hash),
            ..
        } => {
            let content = blobs.read(hash)?;
            let tmp = temp_beside(parent, path);
            let written = (|| -> std::io::Result<()> {
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp)?;
                file.write_all(&content)?;
                file.set_permissions(std::fs::Permissions::from_mode(*mode))?;
                drop(file);
                replace(&tmp, path)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            Ok(written?)
        }
        Entry::Link { target } => {
            let tmp = temp_beside(parent, path);
            std::os::unix::fs::symlink(&target.0, &tmp)?;
            let replaced = replace(&tmp, path);
            if replaced.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            Ok(replaced?)
        }
        Entry::File { hash: None, .. } | Entry::Other { .. } => Ok(()),
    }
}

/// Renames `tmp` over `path`; a folder in the way (empty, or the rename fails) goes first.
fn replace(tmp: &Path, path: &Path) -> std::io::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_dir()
    {
        std::fs::remove_dir(path)?;
    }
    std::fs::rename(tmp, path)
}

fn temp_beside(parent: &Path, path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent.join(format!(".{name}.ling-rewind-{}", fastrand::u32(..)))
}
