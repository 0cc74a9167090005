//! Finding the program a child runs. Inside the sandbox a program is looked up on the child's
//! `PATH` as it is ([`check_program`] only says early that it is missing). Outside the sandbox
//! (hooks, stdio MCP servers, Ling's own helpers, a `bash` command the user let run outside), a
//! `PATH` folder where a sandboxed command can write ([`Writable`]: the project root, the temp
//! dir, `/dev/shm`, the writable roots), or a relative one, is never used to find the program
//! Ling starts ([`Writable::find`]); hooks, servers and helpers also get their `PATH` without
//! such folders ([`Writable::path`]), so a program planted there is not what they run either.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The places a sandboxed command can write, canonical.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writable {
    dirs: Vec<PathBuf>,
}

impl Writable {
    /// `dirs` as they are (the caller resolved them: `trust::code::Areas`).
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Self { dirs }
    }

    /// The project root `root`, the temp dir and `/dev/shm`: what a run without settings can
    /// write in its sandbox.
    pub fn around(root: &Path) -> Self {
        let dirs = [root.to_path_buf(), std::env::temp_dir(), "/dev/shm".into()]
            .iter()
            .map(|d| resolved(d))
            .collect();
        Self { dirs }
    }

    /// Whether a program in `dir` (a `PATH` entry) could have been put there by a sandboxed
    /// command: `dir` is relative (to a working folder that is the project's, as a rule) or
    /// lies in one of the places, before or after its symlinks are followed.
    pub fn holds(&self, dir: &Path) -> bool {
        if !dir.is_absolute() {
            return true;
        }
        let lexical = normal(dir);
        let real = resolved(&lexical);
        self.dirs
            .iter()
            .any(|d| lexical.starts_with(d) || real.starts_with(d))
    }

    /// `path` without the folders a sandboxed command can write (and relative ones): the `PATH`
    /// of a child that runs outside the sandbox.
    pub fn path(&self, path: &OsStr) -> OsString {
        let kept: Vec<&[u8]> = path
            .as_bytes()
            .split(|b| *b == b':')
            .filter(|dir| !self.holds(Path::new(OsStr::from_bytes(dir))))
            .collect();
        OsString::from(std::ffi::OsStr::from_bytes(&kept.join(&b':')))
    }

    /// The program a child outside the sandbox runs: a name without `/` is looked up in `path`
    /// (the child's `PATH`; `None`: as `execvp` would, so left to it) with the folders a
    /// sandboxed command can write skipped; a path is left as it is (the files a hook or server
    /// runs by path are `trust::guard`'s). An error when it is found nowhere, or only in a
    /// skipped folder (saying which).
    pub fn find(&self, program: &OsStr, path: Option<&OsStr>) -> io::Result<PathBuf> {
        if program.as_bytes().contains(&b'/') {
            return Ok(PathBuf::from(program));
        }
        let Some(path) = path else {
            return Ok(PathBuf::from(program));
        };
        let mut denied = false;
        let mut skipped = None;
        for dir in std::env::split_paths(path) {
            let candidate = dir.join(program);
            match std::fs::metadata(&candidate) {
                Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {
                    if !self.holds(&dir) {
                        return Ok(candidate);
                    }
                    skipped.get_or_insert(dir);
                }
                Ok(_) => denied = true,
                Err(_) => {}
            }
        }
        if let Some(dir) = skipped {
            let dir = if dir.as_os_str().is_empty() {
                ".".into()
            } else {
                dir.display().to_string()
            };
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "`{}` is found only in {dir}, a PATH folder where a sandboxed command can \
                     write (or a relative one), and Ling does not run a program from there \
                     outside the sandbox; name it by its full path, or install it elsewhere",
                    program.to_string_lossy()
                ),
            ));
        }
        Err(missing(denied))
    }
}

/// Checks that `program` can be found before it is started through the trampoline, so that a
/// missing command is a spawn error naming it, as with a direct spawn, instead of a child that
/// exits 127. A name without `/` is looked up in `path` (the child's `PATH`); a path is checked
/// relative to `cwd`. With no `PATH` at all the exec decides.
pub fn check_program(program: &OsStr, path: Option<&OsStr>, cwd: &Path) -> io::Result<()> {
    if program.as_bytes().contains(&b'/') {
        return std::fs::metadata(cwd.join(program)).map(drop);
    }
    let Some(path) = path else {
        return Ok(());
    };
    let mut denied = false;
    for dir in std::env::split_paths(path) {
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        match std::fs::metadata(dir.join(program)) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => return Ok(()),
            Ok(_) => denied = true,
            Err(_) => {}
        }
    }
    Err(missing(denied))
}

/// The errors a direct spawn reports, worded the same: "No such file or directory (os error 2)".
fn missing(denied: bool) -> io::Error {
    io::Error::from(if denied {
        nix::errno::Errno::EACCES
    } else {
        nix::errno::Errno::ENOENT
    })
}

/// `path` without `.` and `..` (lexically).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` with the symlinks of its existing part followed.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn outside_a_program_in_a_writable_or_relative_folder_is_never_found() {
        let project = tempfile::tempdir().unwrap();
        let system = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        let writable = Writable::new(vec![root.clone()]);
        executable(&root.join("bin/tool"));
        executable(&root.join("bin/only-here"));
        executable(&system.path().join("tool"));
        let path = std::env::join_paths([
            root.join("bin").as_os_str(),
            OsStr::new("./bin"),
            system.path().as_os_str(),
        ])
        .unwrap();
        assert_eq!(
            writable.find(OsStr::new("tool"), Some(&path)).unwrap(),
            system.path().join("tool")
        );
        let err = writable
            .find(OsStr::new("only-here"), Some(&path))
            .unwrap_err();
        assert!(err.to_string().contains("found only in"), "{err}");
        assert_eq!(
            writable
                .find(OsStr::new("missing"), Some(&path))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
        // By path: as given.
        assert_eq!(
            writable.find(OsStr::new("bin/tool"), Some(&path)).unwrap(),
            PathBuf::from("bin/tool")
        );
        // The PATH an outside child gets keeps only the system folder.
        assert_eq!(writable.path(&path), system.path().as_os_str());
        // Through a symlink leading into the project, and a folder not made yet.
        let link = system.path().join("link");
        std::os::unix::fs::symlink(root.join("bin"), &link).unwrap();
        assert!(writable.holds(&link));
        assert!(writable.holds(&root.join("later/bin")));
        assert!(writable.holds(Path::new("")));
        assert!(!writable.holds(system.path()));
    }

    #[test]
    fn programs_are_found_on_the_path_or_relative_to_the_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        executable(&bin.join("tool"));
        std::fs::write(bin.join("plain"), "").unwrap();
        let path = std::env::join_paths(["/nonexistent", bin.to_str().unwrap()]).unwrap();
        let check = |name: &str| check_program(OsStr::new(name), Some(&path), dir.path());
        assert!(check("tool").is_ok());
        assert_eq!(
            check("missing").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(
            check("plain").unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
        assert!(check("bin/tool").is_ok());
        assert!(check("./bin/missing").is_err());
        assert!(check_program(OsStr::new("x"), None, dir.path()).is_ok());
    }
}
