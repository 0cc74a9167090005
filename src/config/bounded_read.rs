//! Reading files that a checkout or the user put in place (configuration files, `AGENTS.md`):
//! only regular files are read (a symlink to one is fine), never more than a limit, and never
//! in a way that can block. A FIFO, a device (`/dev/zero`), a socket or a folder is refused by
//! its metadata before it is opened, and the file is opened non-blocking and checked again on the
//! open handle, so swapping it for a FIFO in between cannot hang Ling either.

use std::fs::{File, FileType, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BoundedReadError {
    #[error("{} is {kind}, not a regular file", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was read of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    /// At most the limit asked for.
    pub bytes: Vec<u8>,
    /// Whether the file had more than the limit.
    pub cut: bool,
}

/// Reads at most `limit` bytes of the regular file at `path` (after symlinks). A missing file
/// (or a dangling symlink) is `Ok(None)`.
pub fn read_regular(path: &Path, limit: usize) -> Result<Option<Bounded>, BoundedReadError> {
    let io = |source| BoundedReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    check_regular(path, meta.file_type())?;
    // O_NONBLOCK: a FIFO put there since the check opens at once instead of waiting for a
    // writer; O_NOCTTY: a terminal device never becomes the controlling terminal.
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    check_regular(path, file.metadata().map_err(io)?.file_type())?;
    read_at_most(file, limit).map(Some).map_err(io)
}

fn read_at_most(file: File, limit: usize) -> std::io::Result<Bounded> {
    let mut bytes = Vec::new();
    let wanted = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    file.take(wanted).read_to_end(&mut bytes)?;
    let cut = bytes.len() > limit;
    bytes.truncate(limit);
    Ok(Bounded { bytes, cut })
}

fn check_regular(path: &Path, kind: FileType) -> Result<(), BoundedReadError> {
    if kind.is_file() {
        return Ok(());
    }
    let kind = if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    };
    Err(BoundedReadError::NotRegular {
        path: path.to_path_buf(),
        kind,
    })
}

/// `text` cut to whole characters when its last bytes were cut in the middle of one.
pub fn lossy_text(bytes: &[u8], cut: bool) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        // An incomplete character at the very end is where the cut fell.
        Err(e) if cut && e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_regular_file_is_read_up_to_the_limit() {
        let dir = tmp();
        let path = dir.path().join("f");
        std::fs::write(&path, "0123456789").unwrap();
        let whole = read_regular(&path, 10).ok().flatten();
        assert_eq!(
            whole,
            Some(Bounded {
                bytes: b"0123456789".to_vec(),
                cut: false
            })
        );
        let cut = read_regular(&path, 4).ok().flatten();
        assert_eq!(
            cut,
            Some(Bounded {
                bytes: b"0123".to_vec(),
                cut: true
            })
        );
        assert!(matches!(
            read_regular(&dir.path().join("none"), 4),
            Ok(None)
        ));
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_without_blocking() {
        let dir = tmp();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let started = Instant::now();
        for (path, kind) in [
            (fifo, "a FIFO (named pipe)"),
            (zero, "a character device"),
            (dir.path().to_path_buf(), "a folder"),
        ] {
            let error = read_regular(&path, 1024).err().map(|e| e.to_string());
            assert_eq!(
                error,
                Some(format!("{} is {kind}, not a regular file", path.display()))
            );
        }
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_cut_in_the_middle_of_a_character_drops_it() {
        assert_eq!(lossy_text("aé".as_bytes(), false), "aé");
        assert_eq!(lossy_text(&"aé".as_bytes()[..2], true), "a");
        assert_eq!(lossy_text(b"a\xffb", false), "a\u{fffd}b");
    }
}
