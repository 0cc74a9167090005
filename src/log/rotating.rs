//! An owner-only log file that rolls over by size (the MCP servers' logs): when a line would take
//! `path` past its limit, `path` becomes `path.1` (an older `path.1` becoming `path.2`, and so on;
//! the one past the number kept is dropped) and a new `path` is begun. Several Ling processes may
//! append to one file: the size checked is the file's own, and a process that finds `path`
//! already rolled over by another just reopens it.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::config::private_fs;

/// An append-only file with a size limit and a bounded number of older files.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    file: File,
}

impl RotatingFile {
    /// Opens `path` for appending (0600, its folder 0700). Past `max_bytes` it rolls over,
    /// keeping `keep` older files.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> std::io::Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes,
            keep,
            file: private_fs::open_append(path)?,
        })
    }

    /// Appends `line` in one write, rolling over first when it would not fit. A line longer than
    /// the limit is written whole to a fresh file.
    pub fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let size = self.file.metadata()?.len();
        if size > 0 && size.saturating_add(line.len() as u64) > self.max_bytes {
            self.roll_over()?;
        }
        self.file.write_all(line)
    }

    fn roll_over(&mut self) -> std::io::Result<()> {
        let ours = self.file.metadata()?;
        let at_path = std::fs::metadata(&self.path).ok();
        // Another process rolled over already when `path` is no longer the file we have open.
        if at_path.is_some_and(|m| m.dev() == ours.dev() && m.ino() == ours.ino()) {
            for n in (1..self.keep).rev() {
                let _ = std::fs::rename(self.numbered(n), self.numbered(n + 1));
            }
            if self.keep == 0 {
                std::fs::remove_file(&self.path)?;
            } else {
                std::fs::rename(&self.path, self.numbered(1))?;
            }
        }
        self.file = private_fs::open_append(&self.path)?;
        Ok(())
    }

    /// `path.n`: `mcp-db.log.1`.
    fn numbered(&self, n: usize) -> PathBuf {
        let mut name = self.path.as_os_str().to_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn a_full_file_rolls_over_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs").join("s.log");
        let mut file = RotatingFile::open(&path, 10, 2).unwrap();
        for line in [
            "aaaa\n", "bbbb\n", "cccc\n", "dddd\n", "eeee\n", "ffff\n", "gg\n",
        ] {
            file.write_line(line.as_bytes()).unwrap();
        }
        assert_eq!(read(&path), "gg\n");
        assert_eq!(read(&dir.path().join("logs/s.log.1")), "eeee\nffff\n");
        assert_eq!(read(&dir.path().join("logs/s.log.2")), "cccc\ndddd\n");
        // "aaaa" and "bbbb" were in the third older file, which is not kept.
        assert!(!dir.path().join("logs/s.log.3").exists());
        for name in ["s.log", "s.log.1", "s.log.2"] {
            let mode = std::fs::metadata(dir.path().join("logs").join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }

    #[test]
    fn a_line_over_the_limit_gets_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let mut file = RotatingFile::open(&path, 4, 1).unwrap();
        file.write_line(b"a\n").unwrap();
        file.write_line(b"a very long line\n").unwrap();
        assert_eq!(read(&path), "a very long line\n");
        assert_eq!(read(&dir.path().join("s.log.1")), "a\n");
    }

    #[test]
    fn a_file_rolled_over_by_another_process_is_reopened_not_rolled_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let mut first = RotatingFile::open(&path, 12, 3).unwrap();
        let mut second = RotatingFile::open(&path, 12, 3).unwrap();
        first.write_line(b"one-1\n").unwrap();
        second.write_line(b"two-1\n").unwrap();
        // The file is full: the first writer rolls it over...
        first.write_line(b"one-2\n").unwrap();
        // ...and the second, whose file is now s.log.1, moves to the new s.log.
        second.write_line(b"two-2\n").unwrap();
        assert_eq!(read(&path), "one-2\ntwo-2\n");
        assert_eq!(read(&dir.path().join("s.log.1")), "one-1\ntwo-1\n");
        assert!(!dir.path().join("s.log.2").exists());
    }
}
