//! Enforcing a [`Policy`] on this (single-threaded, about to exec) process: the read-only binds
//! of the protected paths, the Landlock ruleset, the seccomp filter. Each step is safe code over
//! `nix`, `landlock` and `seccompiler`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::{MIN_LANDLOCK_ABI, Policy};

/// The ABI whose rights the sandbox handles (file rights through `IoctlDev`, TCP, scopes).
const ABI_USED: ABI = ABI::V6;

/// Device files every sandboxed command may write, as without a sandbox.
const DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
];

/// Whether this kernel enforces the rights the sandbox needs: creates a ruleset that handles
/// them, as a hard requirement, and drops it.
pub(super) fn probe() -> Result<(), String> {
    let required = ABI::from(MIN_LANDLOCK_ABI);
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(required))
        .and_then(|r| r.handle_access(AccessNet::from_all(required)))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|e| format!("Landlock says: {e}"))
}

pub(super) fn apply(policy: &Policy) -> Result<(), String> {
    let bound = || {
        policy.join.is_some_and(|pid| join(pid).is_ok()) || bind_read_only(&policy.protect).is_ok()
    };
    let write = if policy.needs_binds() && !bound() {
        // No user namespace here: grant the writable roots entry by entry around the protected.
        grants_around(&policy.write, &policy.protect)
    } else {
        policy.write.clone()
    };
    restrict_files_and_tcp(policy, &write)?;
    if !policy.network {
        filter_sockets()?;
    }
    Ok(())
}

/// Joins the user and mount namespaces of the holder `pid` (made by [`hold`]), keeping the
/// working directory (joining a mount namespace resets it to its root).
fn join(pid: u32) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cwd: {e}"))?;
    for (ns, flag) in [
        ("user", CloneFlags::CLONE_NEWUSER),
        ("mnt", CloneFlags::CLONE_NEWNS),
    ] {
        let path = format!("/proc/{pid}/ns/{ns}");
        let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
        nix::sched::setns(file, flag).map_err(|e| format!("setns {path}: {e}"))?;
    }
    std::env::set_current_dir(&cwd).map_err(|e| format!("cwd {}: {e}", cwd.display()))
}

/// The holder's side: the namespaces with the read-only binds, kept alive until stdin closes.
// Its stdout is a pipe to Ling, never the terminal.
#[allow(clippy::disallowed_methods)]
pub(super) fn hold(protect: &[PathBuf]) -> Result<(), String> {
    use std::io::{Read, Write};
    bind_read_only(protect)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|()| out.flush())
        .map_err(|e| format!("stdout: {e}"))?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().lock().read_to_end(&mut sink);
    Ok(())
}

/// A private mount namespace (in a user namespace mapping this user to itself) in which each
/// protected path is a read-only bind of itself.
fn bind_read_only(protect: &[PathBuf]) -> Result<(), String> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("unshare: {e}"))?;
    let write =
        |file: &str, text: String| std::fs::write(file, text).map_err(|e| format!("{file}: {e}"));
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(|e| format!("mount --make-rprivate /: {e}"))?;
    // Each folder on the way to a protected path becomes a mount point of itself (still
    // writable), so it cannot be renamed away to put another file at the protected path.
    for dir in ancestors(protect) {
        mount(
            Some(&dir),
            &dir,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(|e| format!("bind {}: {e}", dir.display()))?;
    }
    for path in protect {
        mount(
            Some(path),
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(|e| format!("bind {}: {e}", path.display()))?;
        // The flags the kernel locked on the mount beneath must be kept, or the remount fails.
        let locked = nix::sys::statvfs::statvfs(path)
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
            none,
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | locked,
            none,
        )
        .map_err(|e| format!("remount {} read-only: {e}", path.display()))?;
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
    dirs.dedup();
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let new = !seen.contains(d);
        seen.push(d.clone());
        new
    });
    dirs
}

/// The writable paths with the protected ones cut out, for Landlock alone: a root with a
/// protected path beneath it is replaced by its entries (recursively along the way to the
/// protected path), so the root directory itself gets no right to make new entries.
fn grants_around(write: &[PathBuf], protect: &[PathBuf]) -> Vec<PathBuf> {
    fn around(dir: &Path, protect: &[PathBuf], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // A symlink would grant where it points.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() || protect.contains(&path) {
                continue;
            }
            if meta.is_dir() && protect.iter().any(|p| p.starts_with(&path)) {
                around(&path, protect, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for root in write {
        if protect.iter().any(|p| p.starts_with(root)) {
            around(root, protect, &mut out);
        } else {
            out.push(root.clone());
        }
    }
    out
}

fn restrict_files_and_tcp(policy: &Policy, write: &[PathBuf]) -> Result<(), String> {
    let err = |e: landlock::RulesetError| format!("Landlock: {e}");
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    let mut ruleset = Ruleset::default().handle_access(all).map_err(err)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_USED))
            .map_err(err)?
            .scope(Scope::AbstractUnixSocket)
            .map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    created = created
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| e.to_string())?,
            read,
        ))
        .map_err(err)?;
    let devices = DEVICES.iter().map(PathBuf::from);
    for path in write.iter().cloned().chain(devices) {
        // A path that does not exist (yet) grants nothing.
        let Ok(fd) = PathFd::new(&path) else { continue };
        let access: BitFlags<AccessFs> = if path.is_dir() {
            all
        } else {
            all & AccessFs::from_file(ABI_USED)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock is not enforced by this kernel".into());
    }
    Ok(())
}

/// Refuses (EACCES) the sockets Landlock's TCP rules do not cover: every family but Unix,
/// IPv4/IPv6 and netlink; for IPv4/IPv6 every type but a TCP stream. And `io_uring`, whose
/// socket operations do not pass through seccomp.
fn filter_sockets() -> Result<(), String> {
    fn err(e: impl std::fmt::Display) -> String {
        format!("seccomp: {e}")
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let cond = |arg: u8, op: SeccompCmpOp, value: i32| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value as u64).map_err(err)
    };
    let mut rules = vec![
        SeccompRule::new(vec![
            cond(0, SeccompCmpOp::Ne, libc::AF_UNIX)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_INET)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_INET6)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_NETLINK)?,
        ])
        .map_err(err)?,
    ];
    for family in [libc::AF_INET, libc::AF_INET6] {
        for kind in [
            libc::SOCK_DGRAM,
            libc::SOCK_RAW,
            libc::SOCK_RDM,
            libc::SOCK_SEQPACKET,
            // SOCK_PACKET, the obsolete packet socket type.
            10,
        ] {
            rules.push(
                SeccompRule::new(vec![
                    cond(0, SeccompCmpOp::Eq, family)?,
                    cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?,
                ])
                .map_err(err)?,
            );
        }
        // A stream of another protocol (SCTP, MPTCP).
        rules.push(
            SeccompRule::new(vec![
                cond(0, SeccompCmpOp::Eq, family)?,
                cond(2, SeccompCmpOp::Ne, 0)?,
                cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
            ])
            .map_err(err)?,
        );
    }
    let map: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, rules),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into();
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(err)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(err)?;
    seccompiler::apply_filter(&program).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_around_leave_out_the_protected_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [".git/hooks", "src", "deep/.ling"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        let protect = [root.join(".git"), root.join("deep/.ling")];
        let mut got = grants_around(&[root.clone(), PathBuf::from("/x")], &protect);
        got.sort();
        assert_eq!(
            got,
            [
                root.join("Cargo.toml"),
                root.join("src"),
                PathBuf::from("/x")
            ]
        );
    }
}
