//! Reaching a file the file tools checked, without following a symlink on the way. A tool
//! resolves its `path` (every symlink of it resolved, so the checked path has none) and checks
//! it against the project root and the permission rules; between that check and the read or
//! write, a command running meanwhile could swap a directory on the path for a symlink to
//! `/etc` or into `.git`. So the file is reached from the project root's descriptor one
//! component at a time, each opened with `O_NOFOLLOW` (a directory with `O_DIRECTORY` too), the
//! new file is made with `O_EXCL` in the directory found that way, and renamed within it: a
//! symlink that appears anywhere on the path makes the call fail (`ELOOP`/`ENOTDIR`), never
//! reach where it points.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{Mode, SFlag, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// A directory reached beneath a base without following a symlink.
pub struct Dir {
    fd: OwnedFd,
}

/// Where `path` (absolute, already checked) lies: beneath `root` when it is inside it, else
/// beneath `/` (a file tool outside the project, in `bypass` mode). Returns the base and the
/// path's components below it.
fn split<'a>(root: &'a Path, path: &'a Path) -> (&'a Path, &'a Path) {
    match path.strip_prefix(root) {
        Ok(rel) => (root, rel),
        Err(_) => (Path::new("/"), path.strip_prefix("/").unwrap_or(path)),
    }
}

fn io(errno: Errno) -> io::Error {
    io::Error::from(errno)
}

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

impl Dir {
    /// The parent directory of `path`, reached from `root` (the canonical project root) one
    /// component at a time; with `create`, missing directories are made on the way.
    pub fn parent_of<'a>(
        root: &'a Path,
        path: &'a Path,
        create: bool,
    ) -> io::Result<(Self, &'a OsStr)> {
        let (base, rel) = split(root, path);
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
        let mut dir = Self {
            fd: openat(nix::fcntl::AT_FDCWD, base, DIR_FLAGS, Mode::empty()).map_err(io)?,
        };
        for component in rel.parent().into_iter().flat_map(Path::components) {
            let Component::Normal(part) = component else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the path has a `..` or `.` component",
                ));
            };
            dir = dir.child(part, create)?;
        }
        Ok((dir, name))
    }

    fn child(&self, name: &OsStr, create: bool) -> io::Result<Self> {
        match openat(&self.fd, name, DIR_FLAGS, Mode::empty()) {
            Err(Errno::ENOENT) if create => {
                match mkdirat(&self.fd, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io(e)),
                }
                openat(&self.fd, name, DIR_FLAGS, Mode::empty())
                    .map(|fd| Self { fd })
                    .map_err(io)
            }
            other => other.map(|fd| Self { fd }).map_err(io),
        }
    }

    /// Opens `name` here for reading; a symlink is refused, and a FIFO does not block the open
    /// (the caller checks the file type on the descriptor).
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        openat(&self.fd, name, flags, Mode::empty())
            .map(File::from)
            .map_err(io)
    }

    /// Creates `name` here, which must not exist yet.
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        openat(&self.fd, name, flags, Mode::from_bits_truncate(0o666))
            .map(File::from)
            .map_err(io)
    }

    /// Renames `from` to `to`, both in this directory (a symlink at `to` is replaced, not
    /// followed).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        renameat(&self.fd, from, &self.fd, to).map_err(io)
    }

    /// Refuses `name` here when it is a symlink (`ELOOP`, as opening it would); a missing
    /// `name` is fine. For a write another program makes, which would follow the link.
    pub fn refuse_symlink(&self, name: &OsStr) -> io::Result<()> {
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat)
                if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK =>
            {
                Err(io(Errno::ELOOP))
            }
            Ok(_) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(io(e)),
        }
    }

    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir).map_err(io)
    }
}

/// Whether an error is what a symlink met on the way gives.
pub fn is_symlink_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::ELOOP | Errno::ENOTDIR)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_symlink_anywhere_on_the_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/f"), "inside").unwrap();
        std::fs::write(outside.path().join("f"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f"), root.join("real/g")).unwrap();

        let (f, g) = (root.join("real/f"), root.join("real/g"));
        let (parent, name) = Dir::parent_of(&root, &f, false).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut parent.open_read(name).unwrap(), &mut text).unwrap();
        assert_eq!(text, "inside");
        // A directory that is a symlink, for reading and for making folders beneath it.
        for create in [false, true] {
            let err = Dir::parent_of(&root, &root.join("link/new/f"), create)
                .err()
                .unwrap();
            assert!(is_symlink_refusal(&err), "{err}");
        }
        // The file itself a symlink.
        let (parent, name) = Dir::parent_of(&root, &g, false).unwrap();
        let err = parent.open_read(name).unwrap_err();
        assert!(is_symlink_refusal(&err), "{err}");
        let mut made = Dir::parent_of(&root, &root.join("a/b/c"), true)
            .unwrap()
            .0
            .create_new(OsStr::new("c"))
            .unwrap();
        made.write_all(b"x").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("a/b/c")).unwrap(), "x");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            1,
            "nothing was made outside"
        );
    }
}
