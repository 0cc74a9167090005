//! File access shared by the file tools: text decoding with binary detection, the session's
//! "has this file been read" record, and atomic writes (temp file in the same folder + rename).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;

use super::beneath::{Dir, is_symlink_refusal};
use super::{ToolContext, ToolError};

/// A file with a NUL byte in its first 8 KiB is treated as binary, as git and ripgrep do.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Decodes a file's bytes as text, refusing binary content with a message the model can act on.
pub fn decode_text(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    let len = bytes.len();
    let binary = |why: &str| {
        ToolError::failed(format!(
            "{shown} is a binary file ({len} bytes, {why}); read_file only shows text. Use bash \
             (e.g. `file {shown}` or `xxd {shown} | head`) to inspect it",
        ))
    };
    if bytes[..len.min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(binary("contains NUL bytes"));
    }
    String::from_utf8(bytes).map_err(|_| binary("not valid UTF-8"))
}

/// The largest file the file tools read whole (50 MiB); bigger ones are refused with a hint.
pub const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;

/// Refuses what cannot be read whole without risk: FIFOs, sockets and devices (a read could
/// block forever) and files over [`MAX_FILE_BYTES`].
pub fn check_readable(meta: &std::fs::Metadata, shown: &str) -> Result<(), ToolError> {
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "{shown} is not a regular file (a FIFO, socket or device); the file tools only read \
             regular files"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::failed(format!(
            "{shown} is {} MiB, more than the {} MiB the file tools read; use bash with `head`, \
             `tail`, `sed -n 'A,Bp'` or `grep -n` to look at parts of it",
            meta.len() / (1024 * 1024),
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// Reads a text file for an edit, with errors phrased for the model. `root` is the canonical
/// project root: the file is reached beneath it without following a symlink ([`beneath`]).
///
/// [`beneath`]: super::beneath
pub async fn read_text(root: &Path, path: &Path, shown: &str) -> Result<String, ToolError> {
    match read_bytes(root, path, shown).await? {
        Some(bytes) => decode_text(bytes, shown),
        None => Err(io_error(
            "read",
            shown,
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        )),
    }
}

/// A regular file's bytes, reached beneath `root` without following a symlink; `None` when
/// it does not exist.
pub async fn read_bytes(
    root: &Path,
    path: &Path,
    shown: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    let (root, path, shown) = (root.to_path_buf(), path.to_path_buf(), shown.to_string());
    tokio::task::spawn_blocking(move || read_bytes_blocking(&root, &path, &shown))
        .await
        .map_err(|e| ToolError::failed(format!("reading was aborted: {e}")))?
}

fn read_bytes_blocking(
    root: &Path,
    path: &Path,
    shown: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    use std::io::Read;
    let opened = Dir::parent_of(root, path, false).and_then(|(dir, name)| dir.open_read(name));
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(path_error("read", shown, &e)),
    };
    let meta = file.metadata().map_err(|e| io_error("read", shown, &e))?;
    check_readable(&meta, shown)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    Read::by_ref(&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", shown, &e))?;
    Ok(Some(bytes))
}

/// An error reaching a path: a symlink met on the way is said as such.
fn path_error(what: &str, shown: &str, e: &std::io::Error) -> ToolError {
    if is_symlink_refusal(e) {
        return ToolError::failed(format!(
            "cannot {what} {shown}: a part of its path is a symbolic link (or not a folder) now, \
             though it was not when the path was checked; file tools never follow a link that \
             appears after the check. Check the path with glob and retry"
        ));
    }
    io_error(what, shown, e)
}

pub fn mark_read(ctx: &ToolContext, path: &Path) {
    if let Ok(mut set) = ctx.read_files.lock() {
        set.insert(path.to_path_buf());
    }
}

pub fn was_read(ctx: &ToolContext, path: &Path) -> bool {
    ctx.read_files
        .lock()
        .map(|set| set.contains(path))
        .unwrap_or(false)
}

/// Refuses to change an existing file the session has not read: the model would otherwise
/// overwrite content it has never seen.
pub fn require_read(ctx: &ToolContext, path: &Path, shown: &str) -> Result<(), ToolError> {
    if was_read(ctx, path) {
        Ok(())
    } else {
        Err(ToolError::failed(format!(
            "{shown} already exists and has not been read in this session; call read_file on it \
             first, then retry (so you do not overwrite content you have not seen)"
        )))
    }
}

/// An I/O error as a tool error naming the operation and the path.
pub fn io_error(what: &str, shown: &str, e: &std::io::Error) -> ToolError {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => " (no such file or directory; check the path with glob)",
        std::io::ErrorKind::PermissionDenied => " (permission denied)",
        _ => "",
    };
    ToolError::failed(format!("cannot {what} {shown}: {e}{hint}"))
}

/// Writes `content` to `path` atomically: a temp file next to it is written, flushed and renamed
/// over the target, so a failure never leaves a half-written file. An existing file keeps its
/// permissions. Parent folders are created. The folder is reached beneath `root` (the canonical
/// project root) without following a symlink, and the temp file is made and renamed in it.
pub async fn write_atomic(
    root: &Path,
    path: &Path,
    content: &[u8],
    shown: &str,
) -> Result<(), ToolError> {
    let (root, path) = (root.to_path_buf(), path.to_path_buf());
    let content = content.to_vec();
    let shown = shown.to_string();
    tokio::task::spawn_blocking(move || write_atomic_blocking(&root, &path, &content, &shown))
        .await
        .map_err(|e| ToolError::failed(format!("writing was aborted: {e}")))?
}

fn write_atomic_blocking(
    root: &Path,
    path: &Path,
    content: &[u8],
    shown: &str,
) -> Result<(), ToolError> {
    if path.parent().is_none() {
        return Err(ToolError::failed(format!("{shown} has no parent folder")));
    }
    let (dir, name) =
        Dir::parent_of(root, path, true).map_err(|e| path_error("write", shown, &e))?;
    let permissions = dir
        .open_read(name)
        .and_then(|f| f.metadata())
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.permissions());
    let temp = temp_name(name);
    let result = (|| {
        let mut file = dir.create_new(&temp)?;
        file.write_all(content)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        dir.rename(&temp, name)
    })();
    result.map_err(|e| {
        // The temp file is ours alone; removing it is best effort after a failure already reported.
        let _ = dir.remove(&temp);
        path_error("write", shown, &e)
    })
}

/// Checks `path` for a write that another program makes (an ACP editor saving its buffer,
/// which follows symlinks): at the moment it is handed over, the path is still reached beneath
/// `root` without a symlink, its missing folders made there, and the file is not a link. The
/// check at the tool call's start is not enough: a command running meanwhile can swap a folder
/// on the path for a link out of the project.
pub async fn check_write_path(root: &Path, path: &Path, shown: &str) -> Result<(), ToolError> {
    let (root, path, shown) = (root.to_path_buf(), path.to_path_buf(), shown.to_string());
    tokio::task::spawn_blocking(move || {
        Dir::parent_of(&root, &path, true)
            .and_then(|(dir, name)| dir.refuse_symlink(name))
            .map_err(|e| path_error("write", &shown, &e))
    })
    .await
    .map_err(|e| ToolError::failed(format!("checking where to write was aborted: {e}")))?
}

fn temp_name(name: &OsStr) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".ling-{}.tmp", uuid::Uuid::new_v4().simple()));
    temp
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn nul_bytes_and_invalid_utf8_are_binary() {
        let err = decode_text(b"ab\0cd".to_vec(), "x.bin")
            .unwrap_err()
            .to_string();
        assert!(err.contains("binary") && err.contains("NUL"), "{err}");
        let err = decode_text(vec![0xff, 0xfe, b'a'], "x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid UTF-8"), "{err}");
        assert_eq!(decode_text("héllo".into(), "x").unwrap(), "héllo");
    }

    #[tokio::test]
    async fn atomic_write_creates_folders_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/run.sh");
        write_atomic(dir.path(), &path, b"one", "run.sh")
            .await
            .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(dir.path(), &path, b"two", "run.sh")
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[tokio::test]
    async fn a_failed_write_leaves_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory, so the rename fails after the temp file is written.
        let target = dir.path().join("t");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "k").unwrap();
        let err = write_atomic(dir.path(), &target, b"x", "t")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot write t"), "{err}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "the temp file was removed");
        assert_eq!(std::fs::read_to_string(target.join("keep")).unwrap(), "k");
    }
}
