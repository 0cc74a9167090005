//! The shell sandbox of `docs/tools.md` ("The shell sandbox"): what a sandboxed child may write
//! and reach, decided in Ling ([`Policy::for_project`], [`decide`]) and enforced in the child by
//! the trampoline just before it execs the program (`apply.rs`), so Ling itself is never
//! restricted.
//!
//! Files are Landlock's: read (and execute) everywhere, write only beneath the policy's
//! writable paths. Landlock only adds rights, so a read-only hole (the project's `.git/` and
//! `.ling/`) cannot be cut into a writable root by one ruleset; the child first tries a private
//! mount namespace (an unprivileged user namespace) in which those directories are bind-mounted
//! read-only onto themselves, and where that is refused it grants write on each entry of the
//! writable root except the protected ones instead (then new entries directly in that root
//! cannot be made). A Landlock-restricted process can no longer change mounts, so the
//! read-only binds cannot be undone from inside. The network, when off, is Landlock's TCP
//! rules (no bind, no connect) plus a seccomp filter for the sockets Landlock does not cover
//! (UDP, raw, packet and the other families but Unix and netlink; `io_uring`, which could make
//! sockets past seccomp).

#[cfg(target_os = "linux")]
mod apply;
mod blocked;
mod holder;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use crate::config::SandboxMode;
use crate::config::SandboxSettings;
pub use blocked::{Blocked, find_blocked};
pub use holder::Holder;

/// Set to `1`, makes [`availability`] report that the kernel has no Landlock: a test hook for
/// the fallback path on machines that have it.
pub const FORCE_UNAVAILABLE_VAR: &str = "LING_SANDBOX_FORCE_UNAVAILABLE";

/// The lowest Landlock ABI the sandbox needs: 4 (Linux 6.7) brings the TCP rules.
pub const MIN_LANDLOCK_ABI: i32 = 4;

/// What a sandboxed child may do: the arguments the trampoline enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Never [`SandboxMode::Off`].
    pub mode: SandboxMode,
    pub network: bool,
    /// Directories (and files) the child may write beneath.
    pub write: Vec<PathBuf>,
    /// Paths beneath `write` that stay read-only.
    pub protect: Vec<PathBuf>,
    /// The pid of a [`Holder`] whose namespaces already have `protect` read-only: joining them
    /// costs less than making new ones per command.
    pub join: Option<u32>,
}

impl Policy {
    /// The policy for commands run in `root`: in `workspace-write` the root (its `.git` and
    /// `.ling` protected), the temp dir, `/dev/shm` and `writable_roots`; in `read-only` nothing.
    pub fn for_project(
        mode: SandboxMode,
        network: bool,
        writable_roots: &[PathBuf],
        root: &Path,
    ) -> Self {
        let mut write = Vec::new();
        let mut protect = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            let mut add = |p: PathBuf| {
                let p = p.canonicalize().unwrap_or(p);
                if !write.contains(&p) {
                    write.push(p);
                }
            };
            add(root.to_path_buf());
            add(std::env::temp_dir());
            add(PathBuf::from("/dev/shm"));
            for extra in writable_roots {
                add(extra.clone());
            }
            let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            for name in [".git", ".ling"] {
                let path = root.join(name);
                // A `.git` that is a symlink protects where it points.
                if let Ok(real) = path.canonicalize()
                    && !protect.contains(&real)
                {
                    protect.push(real);
                }
            }
        }
        Self {
            mode,
            network,
            write,
            protect,
            join: None,
        }
    }

    /// Also keeps `paths` read-only (the files trusted hooks and servers run, from the trust
    /// decision): each that exists and lies beneath a writable path.
    pub fn protect_also(&mut self, paths: &[PathBuf]) {
        for path in paths {
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if self.write.iter().any(|w| real.starts_with(w)) && !self.protect.contains(&real) {
                self.protect.push(real);
            }
        }
    }

    /// Whether the child needs the read-only binds (see the module doc).
    pub fn needs_binds(&self) -> bool {
        self.mode == SandboxMode::WorkspaceWrite && !self.protect.is_empty()
    }

    /// The trampoline options that carry this policy (see `exec::Request::parse`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--sandbox".into(), self.mode.as_str().into()];
        if self.network {
            args.extend(["--network".into(), "on".into()]);
        }
        for path in &self.write {
            args.extend(["--write".into(), path.clone().into_os_string()]);
        }
        for path in &self.protect {
            args.extend(["--protect".into(), path.clone().into_os_string()]);
        }
        if let Some(pid) = self.join {
            args.extend(["--join".into(), pid.to_string().into()]);
        }
        args
    }

    /// Whether writing `path` is allowed by this policy (for naming what a failed command was
    /// refused).
    pub fn allows_write(&self, path: &Path) -> bool {
        let beneath = |roots: &[PathBuf]| roots.iter().any(|r| path.starts_with(r));
        beneath(&self.write) && !beneath(&self.protect)
    }

    /// Becomes the [`Holder`] of namespaces in which `protect` is read-only: says `ready` on
    /// stdout, then waits for stdin to close and exits. Linux only.
    pub fn hold(protect: &[PathBuf]) -> Result<(), String> {
        #[cfg(target_os = "linux")]
        {
            apply::hold(protect)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = protect;
            Err("the shell sandbox needs Linux (Landlock)".into())
        }
    }

    /// Restricts this process as the policy says; the caller execs right after. Linux only.
    pub fn apply(&self) -> Result<(), String> {
        #[cfg(target_os = "linux")]
        {
            apply::apply(self)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err("the shell sandbox needs Linux (Landlock)".into())
        }
    }
}

/// Why this kernel cannot enforce the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the shell sandbox needs Linux 6.7 or newer with Landlock enabled (Landlock ABI \
     {MIN_LANDLOCK_ABI}); {0}"
)]
pub struct Unavailable(pub String);

/// Whether the kernel can enforce the sandbox (creates, and drops, a Landlock ruleset).
pub fn availability() -> Result<(), Unavailable> {
    if std::env::var_os(FORCE_UNAVAILABLE_VAR).is_some_and(|v| v == "1") {
        return Err(Unavailable(format!(
            "{FORCE_UNAVAILABLE_VAR}=1 says this kernel has none"
        )));
    }
    #[cfg(target_os = "linux")]
    {
        apply::probe().map_err(Unavailable)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(Unavailable("this system is not Linux".into()))
    }
}

/// A sandbox that cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "--sandbox {mode} cannot be enforced: {reason}. Use --sandbox off (every command then \
         asks), or set \"sandbox\": {{\"required\": false}} in settings to fall back to that"
    )]
    Required { mode: SandboxMode, reason: String },
}

/// The sandbox of a run: the mode the `bash` tool's commands get, and the warning to show when
/// the default could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub mode: SandboxMode,
    pub network: bool,
    pub writable_roots: Vec<PathBuf>,
    pub hooks: bool,
    /// Why the sandbox is off though it was wanted (one line, for the REPL's start and stderr).
    pub warning: Option<String>,
    /// More paths kept read-only: the files trusted hooks and servers run (`trust::guard`).
    pub protect: Vec<PathBuf>,
}

impl Decision {
    /// No sandbox at all (library users, tests).
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: true,
            writable_roots: Vec::new(),
            hooks: false,
            warning: None,
            protect: Vec::new(),
        }
    }

    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// The policy of a command run in `root` in `mode` (the run's own, or `read-only` in plan
    /// mode); `None` when off.
    pub fn policy(&self, mode: SandboxMode, root: &Path) -> Option<Policy> {
        (mode != SandboxMode::Off).then(|| {
            let mut policy = Policy::for_project(mode, self.network, &self.writable_roots, root);
            policy.protect_also(&self.protect);
            policy
        })
    }
}

/// The run's sandbox from its settings and what the kernel can do (`available`, from
/// [`availability`]).
pub fn decide(
    settings: &SandboxSettings,
    available: Result<(), Unavailable>,
) -> Result<Decision, SandboxError> {
    let mut decision = Decision {
        mode: settings.mode.unwrap_or(SandboxMode::WorkspaceWrite),
        network: settings.network,
        writable_roots: settings.writable_roots.clone(),
        hooks: settings.hooks,
        warning: None,
        protect: Vec::new(),
    };
    if decision.mode == SandboxMode::Off {
        return Ok(decision);
    }
    if let Err(unavailable) = available {
        let reason = unavailable.to_string();
        if settings.explicit && settings.required {
            return Err(SandboxError::Required {
                mode: decision.mode,
                reason,
            });
        }
        decision.warning = Some(format!("no shell sandbox ({reason}); every command asks"));
        decision.mode = SandboxMode::Off;
    }
    Ok(decision)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_falls_back_with_a_warning_an_explicit_mode_fails() {
        let none = || Err(Unavailable("no".into()));
        let default = SandboxSettings::default();
        let d = decide(&default, none()).unwrap();
        assert_eq!(d.mode, SandboxMode::Off);
        assert!(d.warning.unwrap().contains("every command asks"));
        assert_eq!(
            decide(&default, Ok(())).unwrap().mode,
            SandboxMode::WorkspaceWrite
        );
        let explicit = SandboxSettings {
            mode: Some(SandboxMode::ReadOnly),
            explicit: true,
            ..SandboxSettings::default()
        };
        let err = decide(&explicit, none()).unwrap_err().to_string();
        assert!(
            err.contains("--sandbox read-only cannot be enforced"),
            "{err}"
        );
        assert!(err.contains("\"required\": false"), "{err}");
        let lenient = SandboxSettings {
            required: false,
            ..explicit.clone()
        };
        assert_eq!(decide(&lenient, none()).unwrap().mode, SandboxMode::Off);
        let off = SandboxSettings {
            mode: Some(SandboxMode::Off),
            explicit: true,
            ..SandboxSettings::default()
        };
        assert_eq!(decide(&off, none()).unwrap().warning, None);
    }

    #[test]
    fn workspace_write_protects_git_and_ling_of_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let p = Policy::for_project(SandboxMode::WorkspaceWrite, false, &[], &root);
        assert_eq!(p.write[0], root);
        assert_eq!(p.protect, [root.join(".git")]);
        assert!(p.allows_write(&root.join("src/a")));
        assert!(!p.allows_write(&root.join(".git/hooks/x")));
        assert!(!p.allows_write(Path::new("/etc/passwd")));
        let ro = Policy::for_project(SandboxMode::ReadOnly, true, &[], &root);
        assert!(ro.write.is_empty() && ro.protect.is_empty());
        assert!(!ro.allows_write(&root.join("a")));
        let args = ro.to_args();
        assert_eq!(args, ["--sandbox", "read-only", "--network", "on"]);
    }
}
