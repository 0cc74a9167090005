//! The trampoline's side: its command line parsed into a [`Request`] (options before `--`, an
//! unknown one an error, never a guess), and [`Request::run`], which ties the process to Ling,
//! applies the sandbox and becomes the program, or supervises it, or holds the sandbox's
//! namespaces.

use std::ffi::OsString;
use std::path::PathBuf;

use super::protocol::{END_OF_OPTIONS, ExecError, set_passed};
use crate::process::sandbox::{Policy, SandboxMode};
use crate::process::supervise;

/// A parsed trampoline command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The pid the trampoline must find as its parent.
    pub parent: u32,
    /// `--setsid`: a session of its own, so the program has no controlling terminal.
    pub setsid: bool,
    /// `--supervise`: stay as the program's parent and subreaper ([`crate::process::supervise`]).
    pub supervise: bool,
    /// `--report`: say how the program ended on stdin (a pipe to Ling); implies `--supervise`.
    pub report: bool,
    /// `--hold` with its `--protect` and `--hide` paths: become the sandbox's namespace holder
    /// ([`crate::process::sandbox::Holder`]) instead of a program.
    pub hold: Option<(Vec<PathBuf>, Vec<PathBuf>)>,
    /// `--sandbox MODE` with its `--network`, `--write`, `--protect` and `--join` options.
    pub sandbox: Option<Policy>,
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Variables for the program only, set just before it starts ([`PASS_PREFIX`](super::protocol::PASS_PREFIX)).
    pub env: Vec<(OsString, OsString)>,
}

impl Request {
    /// Parses what follows [`MARKER`](super::MARKER).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, ExecError> {
        let mut args = args.into_iter();
        let options = Options::read(&mut args)?;
        let parent = options
            .parent
            .ok_or_else(|| ExecError::Usage("needs --parent PID".into()))?;
        if options.hold {
            return Ok(Self {
                parent,
                setsid: options.setsid,
                supervise: false,
                report: false,
                hold: Some((options.protect, options.hide)),
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
            setsid: options.setsid,
            supervise: options.supervise || options.report,
            report: options.report,
            hold: None,
            sandbox: options.mode.map(|mode| Policy {
                mode,
                network: options.network,
                write: options.write,
                protect: options.protect,
                closed: options.closed,
                hide: options.hide,
                unix_sockets: options.sockets,
                join: options.join,
            }),
            program,
            args: args.collect(),
            env: Vec::new(),
        })
    }

    /// With `env` for the program (see [`PASS_PREFIX`](super::protocol::PASS_PREFIX)).
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
            match supervise::prepare() {
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
            return supervise::run(
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

/// The options before `--`, as they are read.
#[derive(Default)]
struct Options {
    parent: Option<u32>,
    setsid: bool,
    supervise: bool,
    report: bool,
    hold: bool,
    join: Option<u32>,
    mode: Option<SandboxMode>,
    network: bool,
    write: Vec<PathBuf>,
    protect: Vec<PathBuf>,
    hide: Vec<PathBuf>,
    sockets: Vec<PathBuf>,
    closed: Vec<PathBuf>,
}

impl Options {
    /// Reads options up to and with `--`; running out before it is an error.
    fn read(args: &mut impl Iterator<Item = OsString>) -> Result<Self, ExecError> {
        let mut options = Self::default();
        loop {
            let Some(option) = args.next() else {
                return Err(ExecError::Usage(format!(
                    "needs `{END_OF_OPTIONS} PROGRAM [ARGS...]`"
                )));
            };
            if option == END_OF_OPTIONS {
                return Ok(options);
            }
            if let Some(flag) = options.flag(&option) {
                *flag = true;
                continue;
            }
            let name = option.to_string_lossy().into_owned();
            let Some(value) = args.next() else {
                return Err(ExecError::Usage(format!("{name} needs a value")));
            };
            options.set(&option, &name, value)?;
        }
    }

    /// The flag `option` turns on, when it is one (`--setsid`, `--supervise`, `--report`,
    /// `--hold`).
    fn flag(&mut self, option: &OsString) -> Option<&mut bool> {
        match option.to_str() {
            Some("--setsid") => Some(&mut self.setsid),
            Some("--supervise") => Some(&mut self.supervise),
            Some("--report") => Some(&mut self.report),
            Some("--hold") => Some(&mut self.hold),
            _ => None,
        }
    }

    /// Takes the option `name` with its `value`; an unknown option is an error.
    fn set(&mut self, option: &OsString, name: &str, value: OsString) -> Result<(), ExecError> {
        let pid = |value: &OsString| value.to_str().and_then(|v| v.parse::<u32>().ok());
        match name {
            "--parent" => {
                self.parent =
                    Some(pid(&value).ok_or_else(|| {
                        ExecError::Usage(format!("--parent {value:?} is not a pid"))
                    })?);
            }
            "--sandbox" => {
                self.mode = Some(
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
            "--network" => self.network = value == "on",
            "--write" => self.write.push(PathBuf::from(value)),
            "--protect" => self.protect.push(PathBuf::from(value)),
            "--hide" => self.hide.push(PathBuf::from(value)),
            "--closed" => self.closed.push(PathBuf::from(value)),
            "--allow-socket" => self.sockets.push(PathBuf::from(value)),
            "--join" => {
                self.join =
                    Some(pid(&value).ok_or_else(|| {
                        ExecError::Usage(format!("--join {value:?} is not a pid"))
                    })?);
            }
            _ => {
                return Err(ExecError::Usage(format!(
                    "does not know the option {option:?}"
                )));
            }
        }
        Ok(())
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
}
