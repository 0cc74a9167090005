//! The holder's mount namespace (`holder.rs`): in a user namespace mapping this user to itself,
//! a private copy of the mounts in which each protected path is a read-only bind of itself,
//! each hidden path is covered by an empty placeholder nobody may read, `/dev/pts` is a devpts
//! instance of its own (ptys made inside work, the user's terminals are not there) and
//! `/dev/shm` a tmpfs of its own. Commands join it (`apply::enter`); with
//! `sandbox.allowUnixSockets`, each command first covers every Unix socket bound outside the
//! allowed paths ([`cover_sockets`]).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};

use super::error::EnforceError;

const NONE: Option<&str> = None;

/// The holder's side: the namespaces with the binds, kept alive until stdin closes.
// Its stdout is a pipe to Ling, never the terminal.
#[allow(clippy::disallowed_methods)]
pub(super) fn hold(protect: &[PathBuf], hide: &[PathBuf]) -> Result<(), EnforceError> {
    use std::io::{Read, Write};
    enter_namespaces()?;
    bind_read_only(protect)?;
    private_devices(hide)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|()| out.flush())
        .map_err(EnforceError::file("stdout"))?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().lock().read_to_end(&mut sink);
    Ok(())
}

/// A user namespace mapping this user to itself, and a mount namespace whose mounts no longer
/// propagate either way.
fn enter_namespaces() -> Result<(), EnforceError> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(EnforceError::call("unshare"))?;
    let write =
        |file: &str, text: String| std::fs::write(file, text).map_err(EnforceError::file(file));
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE)
        .map_err(EnforceError::call("mount --make-rprivate /"))
}

/// Each path a read-only bind of itself (symlinks are the grants' to keep). Each folder on the
/// way to a protected path first becomes a mount point of itself (still writable), so that it
/// cannot be renamed away to put another file at the protected path (a mount point cannot be
/// renamed or removed): `mv hooks x && mkdir hooks` would otherwise replace a protected
/// `hooks/guard.sh`.
fn bind_read_only(protect: &[PathBuf]) -> Result<(), EnforceError> {
    for dir in ancestors(protect) {
        bind(&dir, &dir, false)?;
    }
    for path in protect {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) {
            continue;
        }
        bind(path, path, true)?;
    }
    Ok(())
}

/// The folders above the protected paths (not `/`), each once, outermost first.
fn ancestors(protect: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = protect
        .iter()
        .flat_map(|p| p.ancestors().skip(1))
        .filter(|d| d.parent().is_some())
        .map(Path::to_path_buf)
        .collect();
    dirs.sort_by_key(|d| d.components().count());
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let new = !seen.contains(d);
        if new {
            seen.push(d.clone());
        }
        new
    });
    dirs
}

/// Binds `source` onto `target`, read-only when asked, keeping the flags the kernel locked on
/// the mount beneath (the remount fails without them).
fn bind(source: &Path, target: &Path, read_only: bool) -> Result<(), EnforceError> {
    mount(
        Some(source),
        target,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(EnforceError::call(format!("bind {}", target.display())))?;
    if !read_only {
        return Ok(());
    }
    let locked = nix::sys::statvfs::statvfs(target)
        .map(|s| {
            use nix::sys::statvfs::FsFlags;
            let mut flags = MsFlags::empty();
            for (fs, ms) in [
                (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
                (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
                (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
                (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
                (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
                (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
            ] {
                if s.flags().contains(fs) {
                    flags |= ms;
                }
            }
            flags
        })
        .unwrap_or(MsFlags::empty());
    mount(
        NONE,
        target,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | locked,
        NONE,
    )
    .map_err(EnforceError::call(format!(
        "remount {} read-only",
        target.display()
    )))
}

/// Covers each hidden path with an unreadable placeholder (a directory or an empty file, mode
/// 000, read-only), gives `/dev/pts` and `/dev/shm` instances of their own, and, where devpts
/// cannot be had, covers the user's terminals instead.
fn private_devices(hide: &[PathBuf]) -> Result<(), EnforceError> {
    let (dir, file, scratch) = placeholders(hide)?;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC;
    let devpts = mount(
        Some("devpts"),
        "/dev/pts",
        Some("devpts"),
        flags,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .map_err(EnforceError::call("devpts"))
    .and_then(|()| bind(Path::new("/dev/pts/ptmx"), Path::new("/dev/ptmx"), false));
    if devpts.is_err() {
        bind(&dir, Path::new("/dev/pts"), true)?;
        bind(&file, Path::new("/dev/ptmx"), true)?;
    }
    mount(
        Some("tmpfs"),
        "/dev/shm",
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=1777"),
    )
    .map_err(EnforceError::call("/dev/shm"))?;
    for path in hide {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let source = if meta.is_dir() { &dir } else { &file };
        bind(source, path, true)?;
    }
    // The placeholders live on in their binds.
    umount2(&scratch, MntFlags::MNT_DETACH).map_err(EnforceError::call("umount scratch"))
}

/// A scratch tmpfs with the two placeholders, on a directory no hidden path is beneath.
fn placeholders(hide: &[PathBuf]) -> Result<(PathBuf, PathBuf, PathBuf), EnforceError> {
    let candidates = [
        "/mnt",
        "/media",
        "/srv",
        "/opt",
        "/var/empty",
        "/run",
        "/tmp",
    ];
    let scratch = candidates
        .iter()
        .map(PathBuf::from)
        .chain([std::env::temp_dir()])
        .find(|c| c.is_dir() && !hide.iter().any(|h| h.starts_with(c)))
        .ok_or(EnforceError::NoScratch)?;
    mount(
        Some("tmpfs"),
        &scratch,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("size=16k,mode=0700"),
    )
    .map_err(EnforceError::call(format!(
        "scratch tmpfs on {}",
        scratch.display()
    )))?;
    let dir = scratch.join("dir");
    let file = scratch.join("file");
    let none = std::fs::Permissions::from_mode(0o000);
    std::fs::create_dir(&dir)
        .and_then(|()| std::fs::write(&file, ""))
        .and_then(|()| std::fs::set_permissions(&dir, none.clone()))
        .and_then(|()| std::fs::set_permissions(&file, none))
        .map_err(EnforceError::file("placeholders"))?;
    Ok((dir, file, scratch))
}

/// Covers every pathname Unix socket bound on this host (`/proc/net/unix`) that is not beneath
/// one of `allowed` with `/dev/null`, where a connection is refused. Run by each command before
/// it is restricted, in the holder's mount namespace, so a socket bound since the last command
/// is covered too; one already covered is no socket any more and is left alone.
pub(super) fn cover_sockets(allowed: &[PathBuf]) -> Result<(), EnforceError> {
    let table =
        std::fs::read_to_string("/proc/net/unix").map_err(EnforceError::file("/proc/net/unix"))?;
    for path in socket_paths(&table) {
        if allowed.iter().any(|a| path.starts_with(a)) {
            continue;
        }
        let is_socket = std::fs::symlink_metadata(&path).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_socket()
        });
        if is_socket {
            bind(Path::new("/dev/null"), &path, true)?;
        }
    }
    Ok(())
}

/// The paths of `/proc/net/unix` (its last column, absolute: abstract names start with `@`).
fn socket_paths(table: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in table.lines().skip(1) {
        let Some(path) = line.split_whitespace().nth(7) else {
            continue;
        };
        let path = PathBuf::from(path);
        if path.is_absolute() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_paths_are_the_named_ones() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
                     0000: 00000002 00000000 00010000 0001 01 1234 /tmp/tmux-0/default\n\
                     0000: 00000002 00000000 00010000 0001 01 1235 @/tmp/.X11-unix/X0\n\
                     0000: 00000003 00000000 00000000 0001 03 1236\n\
                     0000: 00000003 00000000 00000000 0001 03 1237 /tmp/tmux-0/default\n";
        assert_eq!(socket_paths(table), [PathBuf::from("/tmp/tmux-0/default")]);
    }
}
