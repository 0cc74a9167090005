//! The `ling __ling-exec` trampoline: the one place where code of Ling's runs inside a child it
//! starts (the `bash` tool's shell, a stdio MCP server) before the child's program does, without
//! an `unsafe` `pre_exec` hook. Ling spawns its own executable as
//!
//! ```text
//! ling __ling-exec --parent PID -- PROGRAM ARGS...
//! ```
//!
//! and `main` recognises the first argument before clap and the async runtime exist, so the
//! detour costs one exec of a binary that does almost nothing ([`run_if_requested`]). There the
//! child asks the kernel for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`), checks that its
//! parent is still Ling (it may have died before the request, which would then never fire), and
//! execs PROGRAM. The pid, the process group the parent set (`process_group(0)`), stdio, working
//! directory and environment all carry over the exec, so killing the group keeps working. A child
//! started this way dies with Ling even when Ling is killed with SIGKILL.
//!
//! The format is options before `--`, each `--name value` (or a flag: `--setsid`,
//! `--supervise`, `--report`, `--hold`), then the program and its arguments untouched; an option
//! this binary does not know is an error, never a guess. `--setsid` gives the program a session
//! of its own (no controlling terminal; its pid is its process group), and `--sandbox MODE` with
//! `--network`, `--write PATH`, `--protect PATH`, `--hide PATH`, `--allow-socket PATH` and
//! `--join PID` restricts it ([`super::sandbox`]) in [`Request::run`]. `--supervise` keeps the
//! trampoline as the program's parent and subreaper, ending everything the program started when
//! it is told to or Ling dies ([`super::supervise`]); `--report` makes its stdin the pipe on
//! which it says how the program ended. The same
//! entry point is the small `ling-exec` binary ([`HELPER`]), which Ling prefers because it
//! starts faster than the whole `ling`.
//!
//! The trampoline runs outside the sandbox it applies, so it never starts with a variable the
//! dynamic loader acts on (`LD_PRELOAD`, `LD_LIBRARY_PATH`...: [`super::code_vars`]): Ling hands
//! those over under [`PASS_PREFIX`], and the trampoline sets them for the program only, just
//! before it starts, after the sandbox is applied. Started with one, it refuses to go on.
//!
//! Linux caveat: the parent-death signal fires when the *thread* that spawned the child exits,
//! not the process. Tokio's worker threads and the main thread live as long as Ling, but
//! `spawn_blocking` threads end when idle, so tied children must be spawned from async code,
//! never from a blocking-pool thread. The signal reaches only the direct child (the shell, the
//! server); what it started itself is not signalled by the kernel, though a stdio server's pipes
//! still close with Ling.

pub(crate) mod protocol;
mod request;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::process::Command;

use protocol::END_OF_OPTIONS;
use protocol::passed;
pub use protocol::{ExecError, MARKER, PASS_PREFIX};
pub use request::Request;

/// The name of the small trampoline binary installed beside `ling` (`src/bin/ling-exec.rs`).
pub const HELPER: &str = "ling-exec";

/// How a child is started through the trampoline: the `ling` executable and the pid the child
/// must find as its parent. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trampoline {
    exe: Arc<Path>,
    parent: u32,
}

impl Trampoline {
    /// The trampoline for this process: the small `ling-exec` helper beside this executable
    /// when there is one (it starts in a fraction of the time `ling` takes), else this
    /// process's own executable (`ling __ling-exec`). `None` (logged) when this platform cannot
    /// tie a child to its parent or no executable can be found; children then start directly.
    /// Only the `ling` binary, whose `main` calls [`run_if_requested`], may start children
    /// through itself.
    pub fn current() -> Option<Self> {
        if !cfg!(target_os = "linux") {
            tracing::debug!(
                "process: no parent-death signal on this platform; children start directly"
            );
            return None;
        }
        let current = std::env::current_exe().ok();
        if let Some(helper) = current
            .as_deref()
            .and_then(Path::parent)
            .map(|dir| dir.join(HELPER))
            && helper.is_file()
        {
            return Some(Self::with_exe(helper));
        }
        // `/proc/self/exe` still runs this very binary after an upgrade replaced or deleted it,
        // so the trampoline always speaks the format of the Ling that spawns it.
        let proc_exe = Path::new("/proc/self/exe");
        let exe = if proc_exe.exists() {
            proc_exe.to_path_buf()
        } else {
            match current {
                Some(exe) => exe,
                None => {
                    tracing::debug!(
                        "process: cannot find Ling's own executable; children start \
                         directly, without a parent-death signal"
                    );
                    return None;
                }
            }
        };
        Some(Self::with_exe(exe))
    }

    /// A trampoline through the given `ling` executable (benchmarks, tests).
    pub fn with_exe(exe: impl Into<PathBuf>) -> Self {
        Self {
            exe: Arc::from(exe.into()),
            parent: std::process::id(),
        }
    }

    /// The executable the trampoline runs.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// `ling __ling-exec --parent PID -- PROGRAM`; the caller adds PROGRAM's arguments, stdio,
    /// working directory and environment as for a direct spawn.
    pub fn command(&self, program: &OsStr) -> Command {
        self.command_with(program, &[])
    }

    /// Like [`Trampoline::command`], with more options before the program (`--setsid`, the
    /// sandbox's).
    pub fn command_with(&self, program: &OsStr, options: &[OsString]) -> Command {
        let mut cmd = Command::new(&*self.exe);
        cmd.arg(MARKER)
            .arg("--parent")
            .arg(self.parent.to_string())
            .args(options)
            .arg(END_OF_OPTIONS)
            .arg(program);
        cmd
    }
}

/// Called first thing in `main`: when the process was started as the trampoline, ties itself to
/// its parent and execs the program, so this only returns on failure (the error to print and
/// exit with). `None` for every ordinary run of `ling`.
pub fn run_if_requested() -> Option<ExecError> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != MARKER {
        return None;
    }
    let request = Request::parse(args)
        .and_then(|request| passed(std::env::vars_os()).map(|env| request.with_env(env)));
    Some(match request {
        Ok(request) => request.run(),
        Err(e) => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_puts_the_options_before_the_program() {
        let trampoline = Trampoline::with_exe("/opt/ling");
        let cmd = trampoline.command(OsStr::new("bash"));
        let std = cmd.as_std();
        assert_eq!(std.get_program(), "/opt/ling");
        let args: Vec<_> = std.get_args().collect();
        let parent = std::process::id().to_string();
        assert_eq!(
            args,
            vec![MARKER, "--parent", parent.as_str(), "--", "bash"]
        );
    }
}
