//! Where the log lines go: `tracing_appender`'s daily file `ling.YYYY-MM-DD.log` (UTC dates), with
//! `ling.log` a link to today's and the oldest removed so that [`KEPT_FILES`] remain. The appender
//! creates files with the umask's mode; each one is made owner-only (0600) before a line is
//! written to it, and the folder is created 0700 (`config::private_fs`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_appender::rolling::{RollingFileAppender, RollingWriter, Rotation};
use tracing_subscriber::fmt::MakeWriter;

use crate::config::private_fs;

/// The link to today's file.
pub const LOG_FILE: &str = "ling.log";
/// How many daily files are kept (today's among them).
pub const KEPT_FILES: usize = 7;

const PREFIX: &str = "ling";
const SUFFIX: &str = "log";

/// Today's log file, made private whenever the day changes.
pub struct DailyFile {
    appender: RollingFileAppender,
    dir: PathBuf,
    /// The UTC date whose file was last made private.
    private_day: Mutex<String>,
}

impl DailyFile {
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        private_fs::create_dir(dir)?;
        let build = || {
            RollingFileAppender::builder()
                .rotation(Rotation::DAILY)
                .filename_prefix(PREFIX)
                .filename_suffix(SUFFIX)
                .max_log_files(KEPT_FILES)
                .latest_symlink(LOG_FILE)
                .build(dir)
        };
        // Two Lings starting together may both replace the link; the loser tries once more.
        let appender = build()
            .or_else(|_| build())
            .map_err(std::io::Error::other)?;
        let file = Self {
            appender,
            dir: dir.to_path_buf(),
            private_day: Mutex::new(String::new()),
        };
        file.make_private();
        Ok(file)
    }

    /// Makes today's file owner-only once a day. The appender has switched to a new day's file
    /// (created, still empty) before this runs for that day; if the day changes in between, the
    /// file is created here, private, and the appender opens it.
    fn make_private(&self) {
        let today = day(chrono::Utc::now());
        let mut done = self
            .private_day
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *done != today && private_fs::open_append(&self.dir.join(file_name(&today))).is_ok() {
            *done = today;
        }
    }
}

impl<'a> MakeWriter<'a> for DailyFile {
    type Writer = RollingWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        // The appender switches files here when the day changed; the new one is made private
        // before the line is written.
        let writer = self.appender.make_writer();
        self.make_private();
        writer
    }
}

/// `2024-05-01`, as the appender dates its files.
pub(super) fn day(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%Y-%m-%d").to_string()
}

/// `ling.2024-05-01.log`.
pub(super) fn file_name(day: &str) -> String {
    format!("{PREFIX}.{day}.{SUFFIX}")
}
