//! A server's log file, `LING_HOME/logs/mcp-<server>.log`: its stderr, the lines its stdout had
//! that were not JSON-RPC, and its `notifications/message` entries. Nothing about a server ever
//! reaches the terminal; error reports point here instead. The file is owner-only and its lines
//! are scrubbed of the config's secrets: a server may print the token it was given. A chatty
//! server cannot fill the disk: past [`LOG_MAX_BYTES`] the file rolls over to `mcp-<server>.log.1`
//! and [`LOG_KEPT_FILES`] older files are kept (`crate::log::RotatingFile`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::redact::Redactor;
use crate::log::RotatingFile;

/// A server's log rolls over past this size.
pub const LOG_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// How many rolled-over files of a server's log are kept (`.1` the newest).
pub const LOG_KEPT_FILES: usize = 2;

/// How many stderr lines are kept in memory for error reports.
const TAIL_LINES: usize = 20;
/// A kept stderr line is cut to this many characters.
const TAIL_LINE_CHARS: usize = 400;

/// Appends timestamped lines to one server's log file and keeps its stderr tail.
#[derive(Debug)]
pub struct ServerLog {
    path: PathBuf,
    file: Mutex<Option<RotatingFile>>,
    tail: Mutex<VecDeque<String>>,
    /// The secrets of the server's config, kept out of every line.
    redactor: Redactor,
}

impl ServerLog {
    /// Opens (appending) `<logs_dir>/mcp-<server>.log`, owner-only. When it cannot be opened,
    /// lines are dropped: a log must never stop a server from starting. `redactor` holds the
    /// config's secrets, which no line will show.
    pub fn open(logs_dir: &Path, server: &str, redactor: Redactor) -> Self {
        let safe: String = server
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = logs_dir.join(format!("mcp-{safe}.log"));
        let file = RotatingFile::open(&path, LOG_MAX_BYTES, LOG_KEPT_FILES).ok();
        Self {
            path,
            file: Mutex::new(file),
            tail: Mutex::new(VecDeque::new()),
            redactor,
        }
    }

    /// A log that writes nowhere (ad-hoc connections in tests and benches).
    pub fn discard() -> Self {
        Self {
            path: PathBuf::new(),
            file: Mutex::new(None),
            tail: Mutex::new(VecDeque::new()),
            redactor: Redactor::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `text` without the config's secrets (`${VAR}` values shown as written) nor any other
    /// `crate::redact` knows, as the log and error reports show it.
    pub fn scrub(&self, text: &str) -> String {
        self.redactor.scrub(text)
    }

    /// Writes one entry, in one write: `<time> <kind>: <text>`, scrubbed of secrets.
    pub fn line(&self, kind: &str, text: &str) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        if let Some(file) = guard.as_mut() {
            let now = chrono::Local::now().format("%Y-%m-%dT%H:%M:%S%.3f");
            let line = format!("{now} {kind}: {}\n", self.scrub(text));
            let _ = file.write_line(line.as_bytes());
        }
    }

    /// Records one stderr line: logged, and kept in the tail (scrubbed, as error reports quote
    /// it).
    pub fn stderr(&self, text: &str) {
        self.line("stderr", text);
        let text = self.scrub(text);
        if let Ok(mut tail) = self.tail.lock() {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.chars().take(TAIL_LINE_CHARS).collect());
        }
    }

    /// The last stderr lines, joined, or `None` when the server wrote nothing there.
    pub fn stderr_tail(&self) -> Option<String> {
        let tail = self.tail.lock().ok()?;
        if tail.is_empty() {
            return None;
        }
        Some(tail.iter().cloned().collect::<Vec<_>>().join("\n"))
    }

    /// `reason`, followed by the stderr tail when there is one, as error reports show it.
    pub fn with_tail(&self, reason: &str) -> String {
        match self.stderr_tail() {
            Some(tail) => format!("{reason}\nlast lines of its stderr:\n{tail}"),
            None => reason.to_string(),
        }
    }
}
