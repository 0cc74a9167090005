//! The debug log `LING_HOME/logs/ling.log`, for finding out afterwards what Ling did
//! (`LING_LOG=debug`; also `info`, `warn`, `error`). It never prints: the terminal belongs to the
//! UI. Until [`init`] enables a level every call is one relaxed atomic load and the message is
//! never built; the file is opened on the first line written and only appended to, one write per
//! line, so several Ling processes can share it. A log that cannot be written is switched off.
//! The file is owner-only (0600 in a 0700 folder) and every line is scrubbed of secrets
//! (`crate::redact`) before it is written.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// The variable that picks the level.
pub const LOG_ENV: &str = "LING_LOG";
pub const LOG_FILE: &str = "ling.log";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
}

impl Level {
    /// `error`, `warn`, `info` or `debug` (any case); `off` or empty is `None`.
    pub fn parse(value: &str) -> Result<Option<Self>, LogError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "off" | "none" => Ok(None),
            "error" => Ok(Some(Self::Error)),
            "warn" | "warning" => Ok(Some(Self::Warn)),
            "info" => Ok(Some(Self::Info)),
            "debug" | "trace" => Ok(Some(Self::Debug)),
            _ => Err(LogError::UnknownLevel(value.to_string())),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Error => "ERROR",
            Self::Warn => "WARN",
            Self::Info => "INFO",
            Self::Debug => "DEBUG",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{LOG_ENV}={0:?} is not a log level; use error, warn, info or debug (or unset it)")]
    UnknownLevel(String),
}

/// 0 is off; otherwise the highest `Level` written.
static LEVEL: AtomicU8 = AtomicU8::new(0);
static TARGET: OnceLock<PathBuf> = OnceLock::new();
static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();

/// Reads `LING_LOG` and, when it names a level, logs to `logs_dir/ling.log` from now on. Only the
/// first call that enables logging chooses the file.
pub fn init(logs_dir: &Path) -> Result<(), LogError> {
    let level = Level::parse(&std::env::var(LOG_ENV).unwrap_or_default())?;
    if let Some(level) = level {
        enable(level, logs_dir);
    }
    Ok(())
}

/// Logs at `level` and above to `logs_dir/ling.log`, whatever `LING_LOG` says.
pub fn enable(level: Level, logs_dir: &Path) {
    let _ = TARGET.set(logs_dir.join(LOG_FILE));
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    LEVEL.load(Ordering::Relaxed) >= level as u8
}

/// Writes one line at `level`; `message` is only called when the level is enabled.
pub fn log(level: Level, message: impl FnOnce() -> String) {
    if !enabled(level) {
        return;
    }
    let Some(file) = FILE.get_or_init(open) else {
        return;
    };
    let line = format_line(
        &chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        std::process::id(),
        level,
        &crate::redact::scrub(&message()),
    );
    let mut file = file
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if file.write_all(line.as_bytes()).is_err() {
        LEVEL.store(0, Ordering::Relaxed);
    }
}

pub fn error(message: impl FnOnce() -> String) {
    log(Level::Error, message);
}

pub fn warn(message: impl FnOnce() -> String) {
    log(Level::Warn, message);
}

pub fn info(message: impl FnOnce() -> String) {
    log(Level::Info, message);
}

pub fn debug(message: impl FnOnce() -> String) {
    log(Level::Debug, message);
}

fn open() -> Option<Mutex<File>> {
    let opened = TARGET
        .get()
        .and_then(|path| crate::config::private_fs::open_append(path).ok());
    if opened.is_none() {
        LEVEL.store(0, Ordering::Relaxed);
    }
    opened.map(Mutex::new)
}

/// `2024-05-01T12:00:00.123Z 4242 DEBUG message`, with the message kept on one line.
fn format_line(timestamp: &str, pid: u32, level: Level, message: &str) -> String {
    let message = message.replace('\n', "\\n");
    format!("{timestamp} {pid} {:<5} {message}\n", level.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_unknown_ones_say_what_to_use() {
        assert_eq!(Level::parse("DEBUG").ok(), Some(Some(Level::Debug)));
        assert_eq!(Level::parse(" warn ").ok(), Some(Some(Level::Warn)));
        assert_eq!(Level::parse("").ok(), Some(None));
        let message = Level::parse("loud").err().map(|e| e.to_string());
        assert_eq!(
            message.as_deref(),
            Some(
                "LING_LOG=\"loud\" is not a log level; use error, warn, info or debug (or unset it)"
            )
        );
        assert!(Level::Error < Level::Debug);
    }

    #[test]
    fn a_line_has_time_pid_level_and_one_line_of_message() {
        assert_eq!(
            format_line("2024-05-01T12:00:00.123Z", 7, Level::Info, "a\nb"),
            "2024-05-01T12:00:00.123Z 7 INFO  a\\nb\n"
        );
    }

    #[test]
    fn nothing_is_built_while_logging_is_off() {
        // The unit tests never enable the log, so the closure must not run.
        debug(|| panic!("the message was built with logging off"));
        assert!(!enabled(Level::Error));
    }
}
