//! The shell sandbox of `docs/tools.md` ("The shell sandbox"): what a sandboxed child may
//! read, write and reach, decided in Ling ([`decide`], [`Decision::effective`],
//! [`Decision::policy`]) and enforced in the child by the trampoline just before it starts the
//! program (`apply.rs`, `seccomp.rs`), so Ling itself is never restricted.
//!
//! Files are Landlock's: read (and execute) everywhere but `/dev` (of which only the harmless
//! devices), write only beneath the policy's writable paths. Landlock only adds rights, so a
//! hole (the read-only `.git/`, a hidden `~/.ssh`) cannot be cut into a granted directory by one
//! ruleset; the run's namespace holder ([`Holder`], `mounts.rs`) therefore keeps a private mount
//! namespace (in an unprivileged user namespace) in which protected paths are read-only binds of
//! themselves, hidden ones are covered by unreadable empty placeholders and `/dev/pts` is a
//! private instance, and every command joins it. Where user namespaces are refused, the same
//! holes are cut by granting each entry around them instead (`scope.rs`). A Landlock-restricted
//! process can no longer change mounts, so nothing inside can undo them. Landlock's scopes keep
//! signals and abstract Unix sockets inside the command's own domain; the seccomp filter
//! refuses the sockets, ioctls and system calls Landlock does not see (`seccomp.rs`); every
//! capability is dropped.

#[cfg(target_os = "linux")]
mod apply;
mod blocked;
mod error;
mod holder;
#[cfg(target_os = "linux")]
mod mounts;
mod scope;
#[cfg(target_os = "linux")]
mod seccomp;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use crate::config::SandboxMode;
use crate::config::{PermissionMode, SandboxSettings};
pub use blocked::{Blocked, find_blocked};
pub use error::EnforceError;
pub use holder::Holder;
pub use scope::{DEFAULT_DENY_READ, Scope, created_git_note};

/// Set to `1`, makes [`availability`] report that the kernel has no Landlock: a test hook for
/// the fallback path on machines that have it.
pub const FORCE_UNAVAILABLE_VAR: &str = "LING_SANDBOX_FORCE_UNAVAILABLE";

/// Set to `1`, makes the sandbox go without its namespace holder, as where user namespaces are
/// refused: a test hook for that path.
pub const FORCE_NO_NAMESPACES_VAR: &str = "LING_SANDBOX_FORCE_NO_NAMESPACES";

/// The lowest Landlock ABI the sandbox needs: 4 (Linux 6.7) brings the TCP rules. Signals and
/// abstract Unix sockets are contained from ABI 6 (Linux 6.12) on; below it Ling says so at
/// start.
pub const MIN_LANDLOCK_ABI: i32 = 4;

/// What a sandboxed child may do: the arguments the trampoline enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Never [`SandboxMode::Off`].
    pub mode: SandboxMode,
    pub network: bool,
    /// Directories (and files) the child may write beneath.
    pub write: Vec<PathBuf>,
    /// Paths beneath `write` that stay read-only: the project's `.git` and `.ling`, nested
    /// repositories found at start, home's dot-entries when the project is home, and whatever a
    /// caller adds ([`Decision::read_only`]). A plain list: extend it before the command starts.
    pub protect: Vec<PathBuf>,
    /// Paths the child cannot read at all (settings `sandbox.denyRead` and its defaults).
    pub hide: Vec<PathBuf>,
    /// Folders in which no new entry can be made directly (their existing entries are
    /// writable): the home directory when it lies in a writable root, so no new dotfile
    /// appears in it.
    pub closed: Vec<PathBuf>,
    /// Unix sockets, or directories of them, the child may reach (`sandbox.allowUnixSockets`).
    /// Empty: the child makes no Unix socket at all (`socketpair` still works).
    pub unix_sockets: Vec<PathBuf>,
    /// The pid of a [`Holder`] whose namespaces already have `protect` read-only and `hide`
    /// covered: joining them costs less than making new ones per command. `None`: no
    /// namespaces, the holes are cut into the Landlock grants instead.
    pub join: Option<u32>,
}

impl Policy {
    /// The trampoline options that carry this policy (see `exec::Request::parse`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--sandbox".into(), self.mode.as_str().into()];
        if self.network {
            args.extend(["--network".into(), "on".into()]);
        }
        for (flag, paths) in [
            ("--write", &self.write),
            ("--protect", &self.protect),
            ("--hide", &self.hide),
            ("--closed", &self.closed),
            ("--allow-socket", &self.unix_sockets),
        ] {
            for path in paths {
                args.extend([flag.into(), path.clone().into_os_string()]);
            }
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
        beneath(&self.write) && !beneath(&self.protect) && !beneath(&self.hide)
    }

    /// Whether reading `path` is allowed by this policy.
    pub fn allows_read(&self, path: &Path) -> bool {
        !self.hide.iter().any(|h| path.starts_with(h)) && !scope::is_denied_device(path)
    }

    /// Whether a Unix socket at `path` may be reached.
    pub fn allows_socket(&self, path: &Path) -> bool {
        self.unix_sockets.iter().any(|s| path.starts_with(s))
    }

    /// Becomes the [`Holder`] of namespaces in which `protect` is read-only and `hide` covered:
    /// says `ready` on stdout, then waits for stdin to close and exits. Linux only.
    pub fn hold(protect: &[PathBuf], hide: &[PathBuf]) -> Result<(), EnforceError> {
        #[cfg(target_os = "linux")]
        {
            mounts::hold(protect, hide)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (protect, hide);
            Err(EnforceError::NotLinux)
        }
    }

    /// Joins the holder's namespaces (or, without one, nothing): the part of the sandbox that
    /// needs a single-threaded process. Linux only.
    pub fn enter(&self) -> Result<(), EnforceError> {
        #[cfg(target_os = "linux")]
        {
            apply::enter(self)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(EnforceError::NotLinux)
        }
    }

    /// Restricts the calling thread (and what it starts) as the policy says: no capabilities,
    /// `no_new_privs`, Landlock, seccomp. The caller starts the program right after. Linux only.
    pub fn restrict(&self) -> Result<(), EnforceError> {
        #[cfg(target_os = "linux")]
        {
            apply::restrict(self)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(EnforceError::NotLinux)
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
        apply::probe().map_err(|e| Unavailable(format!("Landlock says: {e}")))
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

/// The sandbox of a run: the mode the `bash` tool's commands get, what it hides and lets
/// through, and the warning to show when the default could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub mode: SandboxMode,
    pub network: bool,
    pub writable_roots: Vec<PathBuf>,
    pub hooks: bool,
    /// What no sandboxed command may read: the default list and `sandbox.denyRead`, less
    /// `sandbox.allowRead`.
    pub hidden: Vec<PathBuf>,
    /// `sandbox.allowUnixSockets`.
    pub unix_sockets: Vec<PathBuf>,
    /// More paths kept read-only in `workspace-write` besides `.git` and `.ling`: the files
    /// trusted hooks and servers run (`trust::guard`), added before the run starts.
    pub read_only: Vec<PathBuf>,
    /// Why the sandbox is off though it was wanted (one line, for the REPL's start and stderr).
    pub warning: Option<String>,
}

/// What a command gets now: the one answer `/status`, the stream-json `init` line and the
/// process layer all ask [`Decision::effective`] for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effective {
    pub mode: SandboxMode,
    /// Whether a `bash` command reaches the network (always, without a sandbox).
    pub network: bool,
}

impl Decision {
    /// No sandbox at all (library users, tests).
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: true,
            writable_roots: Vec::new(),
            hooks: false,
            hidden: Vec::new(),
            unix_sockets: Vec::new(),
            read_only: Vec::new(),
            warning: None,
        }
    }

    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// The sandbox a `bash` command gets under `permission`: none when the run has none,
    /// `read-only` in plan mode, else the run's mode.
    pub fn effective(&self, permission: PermissionMode) -> Effective {
        if !self.is_on() {
            return Effective {
                mode: SandboxMode::Off,
                network: true,
            };
        }
        Effective {
            mode: if permission.meaning().sandbox_read_only {
                SandboxMode::ReadOnly
            } else {
                self.mode
            },
            network: self.network,
        }
    }

    /// The policy of a command run in `mode` (from [`Decision::effective`], or a server's own)
    /// within `scope`; `None` when off.
    pub fn policy(&self, mode: SandboxMode, scope: &Scope) -> Option<Policy> {
        if mode == SandboxMode::Off {
            return None;
        }
        let mut write = Vec::new();
        let mut protect = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            let mut add = |p: &Path| {
                let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                if !write.contains(&p) {
                    write.push(p);
                }
            };
            if !scope.root_is_system() {
                add(&scope.root);
            }
            add(&std::env::temp_dir());
            add(Path::new("/dev/shm"));
            for extra in &self.writable_roots {
                add(extra);
            }
            // Outside the writable roots everything is read-only already.
            protect = scope
                .protect
                .iter()
                .filter(|p| write.iter().any(|w| p.starts_with(w)))
                .cloned()
                .collect();
        }
        // Home, wherever it lies beneath a writable root: no new dotfile can appear in it.
        let closed = match &scope.home {
            Some(home) if write.iter().any(|w| home.starts_with(w)) => vec![home.clone()],
            _ => Vec::new(),
        };
        Some(Policy {
            mode,
            network: self.network,
            write,
            protect,
            closed,
            hide: scope.hide.clone(),
            unix_sockets: self.unix_sockets.clone(),
            join: None,
        })
    }

    /// The paths of this run that a sandbox protects and hides, found now (a bounded walk of
    /// the project for nested repositories): once per run, at the first command.
    pub fn scope(&self, root: &Path) -> Scope {
        Scope::find(
            root,
            &self.writable_roots,
            home_dir().as_deref(),
            &self.read_only,
            &self.hidden,
        )
    }
}

/// `$HOME`, when set.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The run's sandbox from its settings and what the kernel can do (`available`, from
/// [`availability`]); `ling_home` and `home` place the default `denyRead` list.
pub fn decide(
    settings: &SandboxSettings,
    available: Result<(), Unavailable>,
    ling_home: &Path,
    home: Option<&Path>,
) -> Result<Decision, SandboxError> {
    let mut decision = Decision {
        mode: settings.mode.unwrap_or(SandboxMode::WorkspaceWrite),
        network: settings.network,
        writable_roots: settings.writable_roots.clone(),
        hooks: settings.hooks,
        // Resolved, as the file tools compare what they read with it.
        hidden: scope::hidden(settings, ling_home, home)
            .into_iter()
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect(),
        unix_sockets: settings.allow_unix_sockets.clone(),
        read_only: Vec::new(),
        warning: None,
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

/// What Ling says at start about the sandbox of a run in `root`: the project root is the
/// home directory or `/`, or the kernel lacks Landlock's scopes. `None` when nothing needs
/// saying.
pub fn start_notice(decision: &Decision, root: &Path) -> Option<String> {
    if !decision.is_on() {
        return None;
    }
    let mut notes = Vec::new();
    if let Some(note) = scope::root_notice(root, home_dir().as_deref()) {
        notes.push(note);
    }
    #[cfg(target_os = "linux")]
    if !apply::has_scopes() {
        notes.push(
            "this kernel's Landlock predates ABI 6 (Linux 6.12): sandboxed commands can signal \
             your other processes and reach abstract Unix sockets"
                .to_string(),
        );
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_falls_back_with_a_warning_an_explicit_mode_fails() {
        let none = || Err(Unavailable("no".into()));
        let default = SandboxSettings::default();
        let d = decide(&default, none(), Path::new("/l"), None).unwrap();
        assert_eq!(d.mode, SandboxMode::Off);
        assert!(d.warning.unwrap().contains("every command asks"));
        assert_eq!(
            decide(&default, Ok(()), Path::new("/l"), None)
                .unwrap()
                .mode,
            SandboxMode::WorkspaceWrite
        );
        let explicit = SandboxSettings {
            mode: Some(SandboxMode::ReadOnly),
            explicit: true,
            ..SandboxSettings::default()
        };
        let err = decide(&explicit, none(), Path::new("/l"), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--sandbox read-only cannot be enforced"),
            "{err}"
        );
        assert!(err.contains("\"required\": false"), "{err}");
        let lenient = SandboxSettings {
            required: false,
            ..explicit.clone()
        };
        assert_eq!(
            decide(&lenient, none(), Path::new("/l"), None)
                .unwrap()
                .mode,
            SandboxMode::Off
        );
        let off = SandboxSettings {
            mode: Some(SandboxMode::Off),
            explicit: true,
            ..SandboxSettings::default()
        };
        assert_eq!(
            decide(&off, none(), Path::new("/l"), None).unwrap().warning,
            None
        );
    }

    #[test]
    fn workspace_write_protects_git_and_ling_of_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let mut decision =
            decide(&SandboxSettings::default(), Ok(()), Path::new("/l"), None).unwrap();
        decision.read_only.push(root.join("hooks.sh"));
        std::fs::write(root.join("hooks.sh"), "").unwrap();
        let scope = decision.scope(&root);
        let p = decision
            .policy(SandboxMode::WorkspaceWrite, &scope)
            .unwrap();
        assert_eq!(p.write[0], root);
        assert_eq!(p.protect, [root.join(".git"), root.join("hooks.sh")]);
        assert!(p.allows_write(&root.join("src/a")));
        assert!(!p.allows_write(&root.join(".git/hooks/x")));
        assert!(!p.allows_write(Path::new("/etc/passwd")));
        decision.network = true;
        let ro = decision.policy(SandboxMode::ReadOnly, &scope).unwrap();
        assert!(ro.write.is_empty() && ro.protect.is_empty());
        assert!(!ro.allows_write(&root.join("a")));
        let args = ro.to_args();
        assert_eq!(args[..4], ["--sandbox", "read-only", "--network", "on"]);
        assert_eq!(decision.policy(SandboxMode::Off, &scope), None);
    }

    #[test]
    fn slash_as_the_root_is_not_writable_and_home_is_closed() {
        let decision = decide(&SandboxSettings::default(), Ok(()), Path::new("/l"), None).unwrap();
        let scope = decision.scope(Path::new("/"));
        let p = decision
            .policy(SandboxMode::WorkspaceWrite, &scope)
            .unwrap();
        assert!(!p.write.contains(&PathBuf::from("/")), "{:?}", p.write);
        assert!(!p.allows_write(Path::new("/etc/passwd")));
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let scope = Scope::find(&home, &[], Some(&home), &[], &[]);
        let p = decision
            .policy(SandboxMode::WorkspaceWrite, &scope)
            .unwrap();
        assert_eq!(p.closed, [home]);
    }

    #[test]
    fn one_answer_for_plan_mode_and_off() {
        let decision = decide(&SandboxSettings::default(), Ok(()), Path::new("/l"), None).unwrap();
        let plan = decision.effective(PermissionMode::Plan);
        assert_eq!(
            plan,
            Effective {
                mode: SandboxMode::ReadOnly,
                network: false
            }
        );
        let default = decision.effective(PermissionMode::Default);
        assert_eq!(default.mode, SandboxMode::WorkspaceWrite);
        let off = Decision::off().effective(PermissionMode::Plan);
        assert_eq!(
            off,
            Effective {
                mode: SandboxMode::Off,
                network: true
            }
        );
    }
}
