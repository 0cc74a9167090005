//! Files that two Ling processes may update at once (`trust.json`, the OAuth credentials,
//! `settings.json` and `mcp.json` written by "always" or `ling mcp add`, the context-window
//! cache): each update takes an exclusive lock on a sidecar `<file>.lock`, re-reads the file
//! under it, applies its one change to what is on disk now, and replaces the file atomically (a
//! synced temporary file beside it, renamed over it). Two sessions therefore never lose each
//! other's updates, and a reader never sees half a file.
//!
//! The lock is `flock(2)` on the sidecar, not on the file itself, because the rename swaps the
//! file's inode away. It dies with its process, so a lock file left by a crash holds nobody up;
//! the holder deletes it before letting go, and a waiter that finds it was deleted under it
//! tries again on the new one, so the lock file exists only while an update runs. Waiting is
//! bounded ([`DEFAULT_LOCK_WAIT`], or `LING_LOCK_TIMEOUT_MS`): past it the update fails with an
//! error naming the lock file, and the file is left as it was. A lock file that is a symlink is
//! never followed (nor created through): the update fails, saying to delete it. A file its owner
//! may not write (mode 0444) is never replaced: the update fails, saying so.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::error::ConfigError;
use super::json::{read_config_text, syntax_error};
use super::private_fs;

/// How long an update waits for another process's update of the same file.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(5);
/// The environment variable that sets that wait, in milliseconds.
pub const LOCK_WAIT_ENV: &str = "LING_LOCK_TIMEOUT_MS";
/// The longest pause between two tries at a held lock.
const MAX_PAUSE: Duration = Duration::from_millis(20);

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The user's alone (under `LING_HOME`): 0600 in a 0700 folder, as [`private_fs`] writes.
    /// Otherwise (a project file) it keeps the mode it had, and a new one gets the umask's.
    pub private: bool,
    /// How long to wait for the lock.
    pub wait: Duration,
}

impl Options {
    /// A file under `LING_HOME`, with the wait of `LING_LOCK_TIMEOUT_MS`.
    pub fn private() -> Self {
        Self {
            private: true,
            wait: lock_wait(),
        }
    }

    /// A file in the project, with the wait of `LING_LOCK_TIMEOUT_MS`.
    pub fn project() -> Self {
        Self {
            private: false,
            ..Self::private()
        }
    }

    /// [`Self::private`] when `private`, else [`Self::project`].
    pub fn owner_only(private: bool) -> Self {
        Self {
            private,
            ..Self::private()
        }
    }
}

/// `LING_LOCK_TIMEOUT_MS`, or [`DEFAULT_LOCK_WAIT`] when it is unset or not a number.
fn lock_wait() -> Duration {
    wait_from(std::env::var(LOCK_WAIT_ENV).ok())
}

fn wait_from(ms: Option<String>) -> Duration {
    let Some(ms) = ms.filter(|ms| !ms.is_empty()) else {
        return DEFAULT_LOCK_WAIT;
    };
    ms.trim()
        .parse()
        .map(Duration::from_millis)
        .unwrap_or_else(|_| {
            tracing::warn!(
                "{LOCK_WAIT_ENV}={ms:?} is not a number of milliseconds; using the default"
            );
            DEFAULT_LOCK_WAIT
        })
}

/// What an update does to the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Leave it as it is.
    Keep,
    /// Replace it with these bytes.
    Write(Vec<u8>),
    /// Delete it (nothing happens when there is none).
    Remove,
}

/// Updates `path` under its lock: `change` gets the file's text as it is now (`None`: there is
/// none) and returns what to do with it and a value handed back. Nothing is written when
/// `change` fails or keeps the file.
pub fn update<T, E: From<ConfigError>>(
    path: &Path,
    options: Options,
    change: impl FnOnce(Option<String>) -> Result<(Change, T), E>,
) -> Result<T, E> {
    let _lock = FileLock::acquire(path, options)?;
    let (change, value) = change(read_config_text(path)?)?;
    if change != Change::Keep {
        refuse_read_only(path)?;
    }
    match change {
        Change::Keep => {}
        Change::Write(bytes) => replace(path, &bytes, options.private)?,
        Change::Remove => match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(write_error(path, source).into()),
        },
    }
    Ok(value)
}

/// Replaces `path` with `bytes` under its lock, without reading it: for a file whose whole is
/// the one change (a login's client and tokens).
pub fn write(path: &Path, options: Options, bytes: &[u8]) -> Result<(), ConfigError> {
    let _lock = FileLock::acquire(path, options)?;
    refuse_read_only(path)?;
    replace(path, bytes, options.private)
}

/// Refuses to replace (or delete) a file its owner may not write: a `chmod 444` says "leave it
/// as it is", and the rename that replaces a file would not ask the file's mode.
fn refuse_read_only(path: &Path) -> Result<(), ConfigError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.permissions().mode() & 0o200 == 0 => Err(ConfigError::ReadOnly {
            path: path.to_path_buf(),
            mode: meta.permissions().mode() & 0o7777,
        }),
        _ => Ok(()),
    }
}

/// Deletes `path` under its lock, without reading it (a broken file can always be removed);
/// whether there was one.
pub fn remove(path: &Path, options: Options) -> Result<bool, ConfigError> {
    let _lock = FileLock::acquire(path, options)?;
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(write_error(path, source)),
    }
}

/// [`update`] of a JSON object file (a missing one is an empty object): `change` edits the
/// object as it is on disk now and says whether it changed; a changed object is written back
/// pretty-printed, every key `change` did not touch as it was. `not_object` says what the file
/// should hold when it is JSON but not an object.
pub fn update_json_object<T>(
    path: &Path,
    options: Options,
    not_object: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(bool, T), ConfigError>,
) -> Result<T, ConfigError> {
    update(path, options, |text| {
        let mut object = match text {
            None => Map::new(),
            Some(text) => match serde_json::from_str(&text) {
                Ok(Value::Object(object)) => object,
                Ok(_) => {
                    return Err(ConfigError::Invalid {
                        path: path.to_path_buf(),
                        message: not_object.to_string(),
                    });
                }
                Err(e) => return Err(syntax_error(path, &e)),
            },
        };
        let (changed, value) = change(&mut object)?;
        if !changed {
            return Ok((Change::Keep, value));
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(object))
            .map_err(|e| ConfigError::Other(e.to_string()))?;
        text.push('\n');
        Ok((Change::Write(text.into_bytes()), value))
    })
}

/// The exclusive lock on `<file>.lock`, released (and the lock file deleted) when dropped.
struct FileLock {
    path: PathBuf,
    file: File,
}

impl FileLock {
    fn acquire(file: &Path, options: Options) -> Result<Self, ConfigError> {
        let path = lock_path(file);
        let failed = |source: std::io::Error| ConfigError::Lock {
            lock: path.clone(),
            source,
        };
        match path.parent() {
            Some(dir) if options.private => private_fs::create_dir(dir),
            Some(dir) => std::fs::create_dir_all(dir),
            None => Ok(()),
        }
        .map_err(failed)?;
        let deadline = Instant::now() + options.wait;
        let mut pause = Duration::from_millis(1);
        loop {
            // Never through a symlink: a repository's dangling `.ling/mcp.json.lock` link would
            // otherwise have Ling create (and lock) the file it names, wherever that is.
            let lock = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(private_fs::FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(|source| match source.raw_os_error() {
                    Some(libc::ELOOP) => ConfigError::LockIsLink { lock: path.clone() },
                    _ => failed(source),
                })?;
            match lock.try_lock() {
                // The holder before us may have deleted the file we locked: then the lock that
                // counts is on the one at `path` now, tried again (within the same wait).
                Ok(()) if same_file(&lock, &path) => {
                    return Ok(Self { path, file: lock });
                }
                Ok(()) | Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(failed(e)),
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ConfigError::Busy {
                    file: file.to_path_buf(),
                    lock: path,
                    waited_ms: options.wait.as_millis(),
                });
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Deleted while still held, so no one can lock it after us and think it is theirs; only
        // when it is still ours (someone may have deleted it by hand and another Ling made anew).
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `<file>.lock` beside `file`.
fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    file.with_file_name(name)
}

/// Whether `open` is the file at `path` now.
fn same_file(open: &File, path: &Path) -> bool {
    match (open.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Replaces `path` with `bytes`: a temporary file beside it, synced, renamed over it.
fn replace(path: &Path, bytes: &[u8], private: bool) -> Result<(), ConfigError> {
    if private {
        return private_fs::write_atomic(path, bytes).map_err(|e| write_error(path, e));
    }
    let kept_mode = std::fs::metadata(path)
        .ok()
        .map(|meta| meta.permissions().mode() & 0o7777);
    let tmp = private_fs::temp_path(path);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&tmp)?;
        if let Some(mode) = kept_mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(|e| write_error(path, e))
}

fn write_error(path: &Path, source: std::io::Error) -> ConfigError {
    ConfigError::Write {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
#[path = "shared_file_tests.rs"]
mod tests;
