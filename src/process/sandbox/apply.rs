//! Enforcing a [`Policy`] in the trampoline: [`enter`] joins the holder's namespaces (the
//! process must still be single-threaded), [`restrict`] then empties the calling thread's
//! capability sets and gives it the Landlock ruleset and the seccomp filter, which what it
//! starts inherits. Each step is safe code over `nix`, `caps`, `landlock` and `seccompiler`.

use std::path::{Path, PathBuf};

use caps::CapSet;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::sched::CloneFlags;

use super::error::EnforceError;
use super::scope::{DEVICES, grants_around};
use super::{MIN_LANDLOCK_ABI, Policy};

/// The ABI whose rights the sandbox handles (file rights through `IoctlDev`, TCP, scopes).
const ABI_USED: ABI = ABI::V6;

/// Whether this kernel enforces the rights the sandbox needs: creates a ruleset that handles
/// them, as a hard requirement, and drops it.
pub(super) fn probe() -> Result<(), landlock::RulesetError> {
    let required = ABI::from(MIN_LANDLOCK_ABI);
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(required))
        .and_then(|r| r.handle_access(AccessNet::from_all(required)))
        .and_then(|r| r.create())
        .map(drop)
}

/// Whether this kernel has Landlock's scopes (ABI 6): signals and abstract Unix sockets.
pub(super) fn has_scopes() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::from_all(ABI::V6))
        .and_then(|r| r.create())
        .is_ok()
}

/// Joins the user and mount namespaces of the holder `policy.join` (made by `mounts::hold`),
/// keeping the working directory (joining a mount namespace resets it to its root). Without a
/// holder, nothing: the holes are cut into the grants instead.
pub(super) fn enter(policy: &Policy) -> Result<(), EnforceError> {
    let Some(pid) = policy.join else {
        return Ok(());
    };
    let cwd = std::env::current_dir().map_err(EnforceError::file("cwd"))?;
    for (ns, flag) in [
        ("user", CloneFlags::CLONE_NEWUSER),
        ("mnt", CloneFlags::CLONE_NEWNS),
    ] {
        let path = format!("/proc/{pid}/ns/{ns}");
        let file = std::fs::File::open(&path).map_err(EnforceError::file(&path))?;
        nix::sched::setns(file, flag).map_err(EnforceError::call(format!("setns {path}")))?;
    }
    std::env::set_current_dir(&cwd)
        .map_err(EnforceError::file(format!("cwd {}", cwd.display())))?;
    if !policy.unix_sockets.is_empty() {
        super::mounts::cover_sockets(&policy.unix_sockets)?;
    }
    Ok(())
}

/// No capabilities, `no_new_privs`, the Landlock ruleset and the seccomp filter, on the calling
/// thread.
pub(super) fn restrict(policy: &Policy) -> Result<(), EnforceError> {
    drop_capabilities()?;
    restrict_files_and_network(policy)?;
    // Named sockets can only be let through where the others are covered (`mounts.rs`).
    let unix_sockets = !policy.unix_sockets.is_empty() && policy.join.is_some();
    super::seccomp::apply(policy.network, unix_sockets)
}

/// Empties every capability set of this thread. The bounding set can only be emptied with
/// `CAP_SETPCAP` (root, or anyone inside the holder's user namespace); without it there is
/// nothing to gain from it anyway, as `no_new_privs` (set with the ruleset) keeps an exec from
/// adding capabilities.
fn drop_capabilities() -> Result<(), EnforceError> {
    let err = |set, source| EnforceError::Capabilities { set, source };
    caps::clear(None, CapSet::Ambient).map_err(|e| err("ambient", e))?;
    if caps::has_cap(None, CapSet::Effective, caps::Capability::CAP_SETPCAP).unwrap_or(false) {
        caps::clear(None, CapSet::Bounding).map_err(|e| err("bounding", e))?;
    }
    for (name, set) in [
        ("inheritable", CapSet::Inheritable),
        ("effective", CapSet::Effective),
        ("permitted", CapSet::Permitted),
    ] {
        caps::clear(None, set).map_err(|e| err(name, e))?;
    }
    Ok(())
}

fn restrict_files_and_network(policy: &Policy) -> Result<(), EnforceError> {
    let all = AccessFs::from_all(ABI_USED);
    let read = AccessFs::from_read(ABI_USED);
    // Devices are made by nobody inside, whatever the directory.
    let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut ruleset = Ruleset::default()
        .handle_access(all)?
        .scope(Scope::from_all(ABI_USED))?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_USED))?;
    }
    let mut created = ruleset.create()?;
    let namespaced = policy.join.is_some();
    // Read everywhere but /dev (and, without the holder's covers, around what is hidden).
    let mut read_holes = vec![PathBuf::from("/dev")];
    let mut write_holes: Vec<PathBuf> = Vec::new();
    if !namespaced {
        read_holes.extend(policy.hide.iter().cloned());
        write_holes.extend(policy.protect.iter().cloned());
        write_holes.extend(policy.hide.iter().cloned());
    }
    let mut rules = grants_around(&[(PathBuf::from("/"), read)], &read_holes);
    // A closed directory (home in a writable root) gets its entries granted, not itself: no
    // new entry can be made directly in it.
    let mut writable: Vec<(PathBuf, _)> = policy.write.iter().map(|r| (r.clone(), write)).collect();
    write_holes.extend(policy.closed.iter().cloned());
    for closed in &policy.closed {
        for entry in std::fs::read_dir(closed).into_iter().flatten().flatten() {
            let path = entry.path();
            if !is_symlink(&path) && !policy.protect.contains(&path) {
                writable.push((path, write));
            }
        }
    }
    rules.extend(grants_around(&writable, &write_holes));
    rules.extend(DEVICES.iter().map(|d| (PathBuf::from(d), write)));
    if namespaced {
        // The holder's own devpts: ptys made inside work, the user's terminals are not there.
        rules.extend(["/dev/ptmx", "/dev/pts"].map(|d| (PathBuf::from(d), write)));
    }
    for (path, access) in rules {
        // A path that does not exist (yet) grants nothing.
        let Ok(fd) = PathFd::new(&path) else { continue };
        let access: BitFlags<AccessFs> = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(ABI_USED)
        };
        created = created.add_rule(PathBeneath::new(fd, access))?;
    }
    let status = created.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(EnforceError::NotEnforced);
    }
    Ok(())
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink())
}
