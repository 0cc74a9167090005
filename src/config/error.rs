use std::path::PathBuf;

/// A configuration problem the user has to fix. Every message names the file and, when the
/// problem is in its text, the line and column, and says what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// A settings value Ling cannot use (a 0 limit, a bad sandbox root).
    #[error("{}: {source}", path.display())]
    Settings {
        path: PathBuf,
        source: super::settings::SettingsError,
    },
    #[error(
        "{} is {kind}, not a regular file; Ling reads configuration only from regular files (a \
         symlink to one is fine): replace it with a file or remove it",
        path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{} is larger than {limit_mib} MiB, the most a configuration file may be; make it smaller",
        path.display()
    )]
    TooLarge { path: PathBuf, limit_mib: usize },
    #[error(
        "{}:{line}:{column}: not UTF-8 text (byte {byte} of the file); save it as UTF-8",
        path.display()
    )]
    /// `byte` counts from 1, as `line` and `column` do.
    NotUtf8 {
        path: PathBuf,
        line: usize,
        column: usize,
        byte: usize,
    },
    #[error(
        "{}: the file holds {found}, not a JSON object; write {{}} for an empty one, or delete \
         the file",
        path.display()
    )]
    NotObject { path: PathBuf, found: &'static str },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}; check that you own it and its folder", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file's owner may not write it (mode 0444): Ling does not replace it behind that.
    #[error(
        "{} is read-only (mode {mode:04o}), so Ling left it unchanged; make it writable \
         (`chmod u+w {}`) and try again, or edit it yourself",
        path.display(), path.display()
    )]
    ReadOnly { path: PathBuf, mode: u32 },
    /// Another process held the lock of a shared file for longer than Ling waits.
    #[error(
        "{} was not updated: another Ling process held its lock {} for over {waited_ms} ms; try \
         again when it is done, or set LING_LOCK_TIMEOUT_MS to wait longer",
        file.display(), lock.display()
    )]
    Busy {
        file: PathBuf,
        lock: PathBuf,
        waited_ms: u128,
    },
    #[error("cannot lock {}: {source}; check that you own its folder", lock.display())]
    Lock {
        lock: PathBuf,
        source: std::io::Error,
    },
    /// The lock file is a symlink (planted in a repository, say): never followed.
    #[error(
        "{} is a symbolic link, and Ling never follows one to lock a file; nothing was changed. \
         Delete the link (`rm {}`) and try again",
        lock.display(), lock.display()
    )]
    LockIsLink { lock: PathBuf },
    #[error("{0}")]
    Other(String),
}
