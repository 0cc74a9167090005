//! Files and folders that are the user's alone: everything Ling writes under `LING_HOME`
//! (sessions, logs, history, saved tool output, `mcp.json` of `--scope user`, `trust.json`).
//! Folders are created 0700 and files 0600, whatever the umask; one that already exists with
//! group or other bits (an older Ling, a `cp -r`) is tightened when Ling writes into it. Whole
//! files are written atomically: a private temporary file beside the target, renamed over it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode of a private folder.
pub const DIR_MODE: u32 = 0o700;
/// The mode of a private file.
pub const FILE_MODE: u32 = 0o600;
/// The bits that let anyone but the owner in.
const OTHERS: u32 = 0o077;

/// Creates `dir` and its missing parents as 0700; an existing `dir` loses its group and other
/// bits.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    tighten(dir)
}

/// Opens `path` for appending (its folder made with [`create_dir`]); a new file is 0600, an
/// existing one loses its group and other bits.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = parent(path) {
        create_dir(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    tighten_file(&file)?;
    Ok(file)
}

/// Writes `contents` to `path` as a 0600 file, atomically: a reader sees the old file or the
/// new one, never half of it. The folder is made with [`create_dir`].
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = parent(path) {
        create_dir(dir)?;
    }
    let tmp = temp_path(path);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&tmp)?;
        tighten_file(&file)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Takes the group and other bits off `path` (a file or a folder), if it has any. A path that
/// does not exist is left alone.
pub fn tighten(path: &Path) -> std::io::Result<()> {
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if mode & OTHERS == 0 {
        return Ok(());
    }
    std::fs::set_permissions(
        path,
        std::fs::Permissions::from_mode(mode & !OTHERS & 0o7777),
    )
}

/// [`tighten`] on an open file, so the mode changed is the file's that was opened.
fn tighten_file(file: &File) -> std::io::Result<()> {
    let mode = file.metadata()?.permissions().mode();
    if mode & OTHERS == 0 {
        return Ok(());
    }
    file.set_permissions(std::fs::Permissions::from_mode(mode & !OTHERS & 0o7777))
}

fn parent(path: &Path) -> Option<&Path> {
    path.parent().filter(|dir| !dir.as_os_str().is_empty())
}

/// `.NAME.tmp-PID-RANDOM` beside `path`.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    path.with_file_name(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        &unique[..8]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn new_folders_and_files_are_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let log = home.join("logs").join("a.log");
        let mut file = open_append(&log).unwrap();
        file.write_all(b"line\n").unwrap();
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&home.join("logs")), 0o700);
        assert_eq!(mode(&log), 0o600);

        let spill = home.join("tool-output").join("x.txt");
        write_atomic(&spill, b"all of it").unwrap();
        assert_eq!(mode(&spill), 0o600);
        assert_eq!(mode(&home.join("tool-output")), 0o700);
        assert_eq!(
            std::fs::read(&spill).ok().as_deref(),
            Some(&b"all of it"[..])
        );
    }

    #[test]
    fn existing_loose_folders_and_files_are_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        set_mode(&dir, 0o755);
        let file = dir.join("s.jsonl");
        std::fs::write(&file, "old\n").unwrap();
        set_mode(&file, 0o644);
        drop(open_append(&file).unwrap());
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&file), 0o600);

        let over = dir.join("mcp.json");
        std::fs::write(&over, "{}").unwrap();
        set_mode(&over, 0o666);
        write_atomic(&over, b"{\"a\":1}").unwrap();
        assert_eq!(mode(&over), 0o600);
        // Only the file itself is left: the temporary one was renamed over it.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn tightening_keeps_the_owner_bits() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("ro");
        std::fs::write(&file, "x").unwrap();
        set_mode(&file, 0o444);
        tighten(&file).unwrap();
        assert_eq!(mode(&file), 0o400);
        assert!(tighten(&tmp.path().join("missing")).is_ok());
    }
}
