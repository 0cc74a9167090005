//! [`EnforceError`]: why the trampoline could not put a command in the sandbox, or become the
//! holder of its namespaces. Each variant names the step that failed and keeps the system's own
//! error; the trampoline reports it as it exits, before the program starts.

use std::path::PathBuf;

/// A step of enforcing the sandbox that failed.
#[derive(Debug, thiserror::Error)]
pub enum EnforceError {
    #[error("the shell sandbox needs Linux (Landlock)")]
    NotLinux,
    /// A system call of the step was refused (`unshare`, a bind mount, `setns`...).
    #[error("{step}: {source}")]
    Call {
        step: String,
        source: nix::errno::Errno,
    },
    /// A file the step reads or writes (`/proc/self/uid_map`, the working directory...).
    #[error("{step}: {source}")]
    File {
        step: String,
        source: std::io::Error,
    },
    /// No directory to mount the placeholders of the hidden paths on.
    #[error("no directory for the placeholders")]
    NoScratch,
    #[error("cannot clear the {set} capabilities: {source}")]
    Capabilities {
        set: &'static str,
        source: caps::errors::CapsError,
    },
    #[cfg(target_os = "linux")]
    #[error("Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("Landlock is not enforced by this kernel")]
    NotEnforced,
    /// Building the seccomp filter.
    #[cfg(target_os = "linux")]
    #[error("seccomp: {0}")]
    Filter(#[from] seccompiler::BackendError),
    /// Installing it.
    #[cfg(target_os = "linux")]
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
    /// The namespace holder could not be started.
    #[error("cannot start {}: {source}", exe.display())]
    HolderSpawn {
        exe: PathBuf,
        source: std::io::Error,
    },
    /// The namespace holder exited instead of saying `ready`, with what it said on stderr.
    #[error("the namespace holder did not start: {0}")]
    HolderFailed(String),
}

// Only the Linux steps (`apply.rs`, `mounts.rs`) name a call or a file.
#[cfg(target_os = "linux")]
impl EnforceError {
    /// The refusal of the system call of `step`, for `map_err`.
    pub(super) fn call(step: impl Into<String>) -> impl FnOnce(nix::errno::Errno) -> Self {
        let step = step.into();
        move |source| Self::Call { step, source }
    }

    /// The failure on the file of `step`, for `map_err`.
    pub(super) fn file(step: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let step = step.into();
        move |source| Self::File { step, source }
    }
}
