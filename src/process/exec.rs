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

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::process::Command;

use super::sandbox::{Policy, SandboxMode};

/// The hidden first argument of the trampoline. No prompt or subcommand looks like it, and
/// `main` takes it before clap sees anything.
pub const MARKER: &str = "__ling-exec";

/// The name of the small trampoline binary installed beside `ling` (`src/bin/ling-exec.rs`).
pub const HELPER: &str = "ling-exec";

/// Ends the options; what follows is the program and its arguments, passed on untouched.
const END_OF_OPTIONS: &str = "--";

/// The prefix under which Ling hands the trampoline the variables the dynamic loader would act
/// on (`LING_EXEC_PASS_LD_PRELOAD=./x.so`): inert for the trampoline, which sets them under
/// their own names for the program only ([`super::env::ChildEnv::spawn`]).
pub const PASS_PREFIX: &str = "LING_EXEC_PASS_";

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

/// Why the trampoline did not become the program. The exit codes follow `env` and `timeout`:
/// 125 the trampoline itself failed, 126 the program could not be run, 127 it was not found.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{MARKER} {0}; this entry point is Ling's own way of starting programs, not a command")]
    Usage(String),
    #[error("{0}")]
    Setup(String),
    #[error("cannot set up the shell sandbox ({0}); run with --sandbox off to go without it")]
    Sandbox(String),
    #[error("Ling (pid {parent}) exited before `{program}` could start; not starting it")]
    ParentGone { parent: u32, program: String },
    #[error("cannot run `{program}`: {source}")]
    Exec { program: String, source: io::Error },
}

impl ExecError {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::Setup(_) | Self::Sandbox(_) | Self::ParentGone { .. } => 125,
            Self::Exec { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            Self::Exec { .. } => 126,
        }
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

/// The variables handed over for the program ([`PASS_PREFIX`]), under their own names. An
/// error when the trampoline itself was started with one of the variables the loader acts on:
/// then it has loaded what they name, which Ling never lets happen.
fn passed(
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, ExecError> {
    let mut env = Vec::new();
    for (name, value) in vars {
        if let Some(own) = name.as_bytes().strip_prefix(PASS_PREFIX.as_bytes()) {
            env.push((OsStr::from_bytes(own).to_os_string(), value));
        } else if super::code_vars::read_at_start(&name.to_string_lossy()) {
            return Err(ExecError::Usage(format!(
                "was started with {} set, which only the program it starts may get",
                name.to_string_lossy()
            )));
        }
    }
    Ok(env)
}

/// Sets the handed-over variables for the program under their own names, and not under the
/// prefix.
pub(super) fn set_passed(cmd: &mut std::process::Command, env: &[(OsString, OsString)]) {
    for (name, value) in env {
        let mut passed = OsString::from(PASS_PREFIX);
        passed.push(name);
        cmd.env_remove(passed).env(name, value);
    }
}

/// A parsed trampoline command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The pid the trampoline must find as its parent.
    pub parent: u32,
    /// `--setsid`: a session of its own, so the program has no controlling terminal.
    pub setsid: bool,
    /// `--supervise`: stay as the program's parent and subreaper ([`super::supervise`]).
    pub supervise: bool,
    /// `--report`: say how the program ended on stdin (a pipe to Ling); implies `--supervise`.
    pub report: bool,
    /// `--hold` with its `--protect` and `--hide` paths: become the sandbox's namespace holder
    /// ([`super::sandbox::Holder`]) instead of a program.
    pub hold: Option<(Vec<PathBuf>, Vec<PathBuf>)>,
    /// `--sandbox MODE` with its `--network`, `--write`, `--protect` and `--join` options.
    pub sandbox: Option<Policy>,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Variables for the program only, set just before it starts ([`PASS_PREFIX`]).
    pub env: Vec<(OsString, OsString)>,
}

impl Request {
    /// Parses what follows [`MARKER`].
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, ExecError> {
        let mut args = args.into_iter();
        let mut parent = None;
        let (mut setsid, mut supervise, mut report, mut hold) = (false, false, false, false);
        let mut join = None;
        let mut mode = None;
        let (mut network, mut write, mut protect) = (false, Vec::new(), Vec::new());
        let (mut hide, mut sockets, mut closed) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            let Some(option) = args.next() else {
                return Err(ExecError::Usage(format!(
                    "needs `{END_OF_OPTIONS} PROGRAM [ARGS...]`"
                )));
            };
            if option == END_OF_OPTIONS {
                break;
            }
            let flag = match option.to_str() {
                Some("--setsid") => Some(&mut setsid),
                Some("--supervise") => Some(&mut supervise),
                Some("--report") => Some(&mut report),
                Some("--hold") => Some(&mut hold),
                _ => None,
            };
            if let Some(flag) = flag {
                *flag = true;
                continue;
            }
            let name = option.to_string_lossy().into_owned();
            let Some(value) = args.next() else {
                return Err(ExecError::Usage(format!("{name} needs a value")));
            };
            match name.as_str() {
                "--parent" => {
                    let pid = value.to_str().and_then(|v| v.parse::<u32>().ok());
                    parent = Some(pid.ok_or_else(|| {
                        ExecError::Usage(format!("--parent {value:?} is not a pid"))
                    })?);
                }
                "--sandbox" => {
                    mode = Some(
                        value
                            .to_str()
                            .and_then(SandboxMode::parse)
                            .filter(|m| *m != SandboxMode::Off)
                            .ok_or_else(|| {
                                ExecError::Usage(format!(
                                    "--sandbox {value:?} is not workspace-write or read-only"
                                ))
                            })?,
                    );
                }
                "--network" => network = value == "on",
                "--write" => write.push(PathBuf::from(value)),
                "--protect" => protect.push(PathBuf::from(value)),
                "--hide" => hide.push(PathBuf::from(value)),
                "--closed" => closed.push(PathBuf::from(value)),
                "--allow-socket" => sockets.push(PathBuf::from(value)),
                "--join" => {
                    let pid = value.to_str().and_then(|v| v.parse::<u32>().ok());
                    join = Some(pid.ok_or_else(|| {
                        ExecError::Usage(format!("--join {value:?} is not a pid"))
                    })?);
                }
                _ => {
                    return Err(ExecError::Usage(format!(
                        "does not know the option {option:?}"
                    )));
                }
            }
        }
        let parent = parent.ok_or_else(|| ExecError::Usage("needs --parent PID".into()))?;
        if hold {
            return Ok(Self {
                parent,
                setsid,
                supervise: false,
                report: false,
                hold: Some((protect, hide)),
                sandbox: None,
                program: OsString::new(),
                args: Vec::new(),
                env: Vec::new(),
            });
        }
        let program = args
            .next()
            .ok_or_else(|| ExecError::Usage(format!("needs a program after `{END_OF_OPTIONS}`")))?;
        Ok(Self {
            parent,
            setsid,
            supervise: supervise || report,
            report,
            hold: None,
            sandbox: mode.map(|mode| Policy {
                mode,
                network,
                write,
                protect,
                closed,
                hide,
                unix_sockets: sockets,
                join,
            }),
            program,
            args: args.collect(),
            env: Vec::new(),
        })
    }

    /// With `env` for the program (see [`PASS_PREFIX`]).
    pub fn with_env(mut self, env: Vec<(OsString, OsString)>) -> Self {
        self.env = env;
        self
    }

    /// Ties this process to its parent, restricts it, and becomes the program (or, with
    /// `--supervise`, starts and watches it); returns only on failure.
    pub fn run(self) -> ExecError {
        use std::os::unix::process::CommandExt;
        let program = self.program.to_string_lossy().into_owned();
        // First, so that the process leaves Ling's group (and terminal) as early as it can.
        if self.setsid
            && let Err(e) = nix::unistd::setsid()
        {
            return ExecError::Setup(format!("setsid: {e}"));
        }
        // A supervisor takes its signals from a signalfd, Ling's death among them (SIGTERM), so
        // it can end what it watches first; it is blocked before anything can send it.
        let signals = if self.supervise {
            // Nothing of the same user may trace it or read its memory either.
            let _ = nix::sys::prctl::set_dumpable(false);
            match super::supervise::prepare() {
                Ok(fd) => Some(fd),
                Err(e) => return e,
            }
        } else {
            None
        };
        #[cfg(target_os = "linux")]
        {
            use nix::sys::signal::Signal;
            let death = if signals.is_some() {
                Signal::SIGTERM
            } else {
                Signal::SIGKILL
            };
            if let Err(e) = nix::sys::prctl::set_pdeathsig(death) {
                return ExecError::Setup(format!("cannot ask for a parent-death signal: {e}"));
            }
            // Reparented already: the parent died before the request above, which will never fire.
            if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(self.parent) {
                return ExecError::ParentGone {
                    parent: self.parent,
                    program,
                };
            }
        }
        if let Some((protect, hide)) = &self.hold {
            return match Policy::hold(protect, hide) {
                Ok(()) => std::process::exit(0),
                Err(e) => ExecError::Sandbox(e),
            };
        }
        // Joining namespaces needs a single-threaded process: before any thread.
        if let Some(policy) = &self.sandbox
            && let Err(e) = policy.enter()
        {
            return ExecError::Sandbox(e);
        }
        if let Some(signals) = signals {
            return super::supervise::run(
                signals,
                &self.program,
                &self.args,
                &self.env,
                self.sandbox.as_ref(),
                self.report,
            );
        }
        if let Some(policy) = &self.sandbox
            && let Err(e) = policy.restrict()
        {
            return ExecError::Sandbox(e);
        }
        // std's exec also resets the signal mask and SIGPIPE (which this Rust binary ignores) to
        // their defaults, so the program starts as if Ling had spawned it directly.
        let mut command = std::process::Command::new(&self.program);
        command.args(&self.args);
        set_passed(&mut command, &self.env);
        let source = command.exec();
        ExecError::Exec { program, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Request, ExecError> {
        Request::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn parses_the_parent_and_passes_the_program_line_on_untouched() {
        let request = parse(&["--parent", "42", "--", "bash", "-c", "--parent 7 --"]).unwrap();
        assert_eq!(
            request,
            Request {
                parent: 42,
                setsid: false,
                supervise: false,
                report: false,
                hold: None,
                sandbox: None,
                program: "bash".into(),
                args: vec!["-c".into(), "--parent 7 --".into()],
                env: Vec::new(),
            }
        );
    }

    #[test]
    fn loader_variables_come_only_handed_over() {
        let vars = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect::<Vec<_>>()
                .into_iter()
        };
        let env = passed(vars(&[
            ("PATH", "/usr/bin"),
            ("LING_EXEC_PASS_LD_PRELOAD", "./x.so"),
        ]))
        .unwrap();
        assert_eq!(env, [("LD_PRELOAD".into(), "./x.so".into())]);
        let err = passed(vars(&[("LD_PRELOAD", "./x.so")])).unwrap_err();
        assert!(
            err.to_string().contains("started with LD_PRELOAD set"),
            "{err}"
        );
        let mut cmd = std::process::Command::new("true");
        set_passed(&mut cmd, &env);
        let set: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            set,
            [
                (OsStr::new("LD_PRELOAD"), Some(OsStr::new("./x.so"))),
                (OsStr::new("LING_EXEC_PASS_LD_PRELOAD"), None)
            ]
        );
    }

    #[test]
    fn sandbox_and_holder_options_are_parsed() {
        let request = parse(&[
            "--parent",
            "1",
            "--setsid",
            "--sandbox",
            "workspace-write",
            "--write",
            "/p",
            "--protect",
            "/p/.git",
            "--join",
            "9",
            "--",
            "bash",
        ])
        .unwrap();
        assert!(request.setsid && request.hold.is_none());
        let policy = request.sandbox.unwrap();
        assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
        assert!(!policy.network);
        assert_eq!(policy.join, Some(9));
        assert_eq!(policy.write, [PathBuf::from("/p")]);
        assert_eq!(policy.to_args().len(), 8);
        let hold = parse(&[
            "--parent",
            "1",
            "--hold",
            "--protect",
            "/p/.git",
            "--hide",
            "/h/.ssh",
            "--",
        ])
        .unwrap();
        assert_eq!(
            hold.hold,
            Some((
                vec![PathBuf::from("/p/.git")],
                vec![PathBuf::from("/h/.ssh")]
            ))
        );
        let report = parse(&["--parent", "1", "--report", "--", "bash"]).unwrap();
        assert!(report.report && report.supervise);
        assert!(parse(&["--parent", "1", "--join", "x", "--", "sh"]).is_err());
    }

    #[test]
    fn a_malformed_line_is_an_error_never_a_guess() {
        for (args, needle) in [
            (&["--", "bash"][..], "needs --parent"),
            (&["--parent", "x", "--", "bash"][..], "is not a pid"),
            (&["--parent"][..], "--parent needs a value"),
            (
                &["--parent", "1", "--sandbox", "on", "--", "sh"][..],
                "is not workspace-write or read-only",
            ),
            (
                &["--parent", "1", "--color", "on", "--", "sh"][..],
                "\"--color\"",
            ),
            (&["--parent", "1"][..], "needs `-- PROGRAM"),
            (&["--parent", "1", "--"][..], "needs a program"),
        ] {
            let err = parse(args).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(needle), "{args:?}: {err}");
            assert!(err.contains("not a command"), "{err}");
        }
    }

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

    #[test]
    fn exit_codes_follow_env() {
        let exec = |kind| ExecError::Exec {
            program: "x".into(),
            source: io::Error::from(kind),
        };
        assert_eq!(exec(io::ErrorKind::NotFound).exit_code(), 127);
        assert_eq!(exec(io::ErrorKind::PermissionDenied).exit_code(), 126);
        assert_eq!(ExecError::Usage("x".into()).exit_code(), 125);
    }
}
