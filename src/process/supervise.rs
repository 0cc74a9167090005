//! The supervising trampoline (`--supervise`): instead of becoming the program, the trampoline
//! stays as its parent and as the child subreaper of everything it starts, so that nothing the
//! program starts can get away from it, not by a double fork nor by `setsid`: orphans are
//! reparented to it. It ends all of them when it is told to (SIGTERM, SIGINT, SIGHUP, SIGQUIT:
//! Ling's timeout or interrupt) and when Ling dies (its parent-death signal is SIGTERM), first
//! with SIGTERM, then, after a short grace (300 ms), SIGKILL.
//!
//! The program is started from a thread of its own which alone is restricted by the sandbox,
//! so the supervisor stays outside the program's Landlock domain: the program can neither
//! signal nor trace it (Landlock's scopes), and cannot end it to let its children go.
//!
//! With `--report` (the `bash` tool), the supervisor's stdin is a pipe to Ling on which it says
//! how the program ended as soon as it does, followed by the processes it left running, and the
//! program's own stdin is `/dev/null`: the call returns while background processes go on, and
//! the supervisor stays until they end. Without it (stdio MCP servers, sandboxed hooks), what is
//! left when the program exits is ended and the supervisor exits with the program's status.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::exec::protocol::{ExecError, set_passed};
use super::sandbox::Policy;

/// How long what is left gets between SIGTERM and SIGKILL (less than the half second Ling
/// waits before it signals the supervisor's group with SIGKILL itself).
const GRACE: Duration = Duration::from_millis(300);

/// How many characters of a background process's command line the report keeps.
const COMMAND_CHARS: usize = 120;

/// The signals the supervisor takes through its signalfd.
fn signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        set.add(signal);
    }
    set
}

/// Blocks the signals the supervisor reads (before anything can send them) and opens the fd it
/// reads them on.
pub(crate) fn prepare() -> Result<SignalFd, ExecError> {
    let setup = |what: &str, e: Errno| ExecError::Setup(format!("{what}: {e}"));
    signals()
        .thread_block()
        .map_err(|e| setup("blocking signals", e))?;
    SignalFd::with_flags(&signals(), SfdFlags::SFD_CLOEXEC).map_err(|e| setup("signalfd", e))
}

/// Starts the program (restricted by `policy` when given, with the handed-over `env`) and
/// supervises it; never returns but with an error from before the program started.
pub(crate) fn run(
    signal_fd: SignalFd,
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    policy: Option<&Policy>,
    report: bool,
) -> ExecError {
    let name = program.to_string_lossy().into_owned();
    let setup = |what: &str, e: Errno| ExecError::Setup(format!("{what}: {e}"));
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        return setup("child subreaper", e);
    }
    let report_fd = if report {
        match std::io::stdin().as_fd().try_clone_to_owned() {
            Ok(fd) => Some(fd),
            Err(e) => return ExecError::Setup(format!("the report pipe: {e}")),
        }
    } else {
        None
    };
    let spawned = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if let Some(policy) = policy {
                    policy.restrict().map_err(ExecError::Sandbox)?;
                }
                // The program inherits this thread's mask, and std does not reset it: unblock
                // here, for the few microseconds this thread lives (a SIGTERM meanwhile ends the
                // supervisor, whose group Ling then ends).
                let _ = signals().thread_unblock();
                let stdin = if report {
                    Stdio::null()
                } else {
                    Stdio::inherit()
                };
                let mut command = std::process::Command::new(program);
                set_passed(&mut command, env);
                command
                    .args(args)
                    .stdin(stdin)
                    .spawn()
                    .map_err(|source| ExecError::Exec {
                        program: name.clone(),
                        source,
                    })
            })
            .join()
    });
    let child = match spawned {
        Ok(Ok(child)) => child,
        Ok(Err(e)) => return e,
        Err(_) => return ExecError::Setup("the thread starting the program panicked".into()),
    };
    // The program has its own copies; the supervisor's must not keep pipes open.
    if let Ok(null) = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    Supervisor {
        signal_fd,
        program: pid,
        reports: report,
        report: report_fd,
    }
    .watch()
}

struct Supervisor {
    signal_fd: SignalFd,
    program: Pid,
    /// Whether it reports (and so lets background processes run on).
    reports: bool,
    /// The report pipe, until the report is sent.
    report: Option<OwnedFd>,
}

/// What reaping found.
struct Reaped {
    program: Option<WaitStatus>,
    children_left: bool,
}

impl Supervisor {
    fn watch(mut self) -> ! {
        let mut status = None;
        loop {
            let reaped = reap(self.program);
            status = status.or(reaped.program);
            if let Some(ended) = status {
                if !reaped.children_left {
                    self.finish(ended);
                }
                if !self.reports {
                    self.end_all();
                    self.finish(ended);
                }
                if self.report.is_some() {
                    let left = background(own_pid());
                    self.send_report(ended, &left);
                }
            }
            match self.next_signal(None) {
                Some(Signal::SIGCHLD) | None => {}
                Some(_) => {
                    self.end_all();
                    let ended = status
                        .or_else(|| reap(self.program).program)
                        .unwrap_or(WaitStatus::Signaled(self.program, Signal::SIGTERM, false));
                    self.finish(ended);
                }
            }
        }
    }

    /// The next signal, waiting at most `timeout` (`None`: as long as it takes).
    fn next_signal(&self, timeout: Option<Duration>) -> Option<Signal> {
        let timeout = match timeout {
            Some(t) => PollTimeout::try_from(t).unwrap_or(PollTimeout::MAX),
            None => PollTimeout::NONE,
        };
        let mut fds = [PollFd::new(self.signal_fd.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(n) if n > 0 => {}
            _ => return None,
        }
        let info = self.signal_fd.read_signal().ok()??;
        Signal::try_from(i32::try_from(info.ssi_signo).ok()?).ok()
    }

    /// Ends every descendant: SIGTERM, up to [`GRACE`] for them to exit, then SIGKILL until
    /// none is left.
    fn end_all(&mut self) {
        let me = own_pid();
        for pid in descendants(me) {
            let _ = kill(pid, Signal::SIGTERM);
        }
        let until = Instant::now() + GRACE;
        while reap(self.program).children_left {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.next_signal(Some(left.min(Duration::from_millis(20))));
        }
        // Killed processes cannot fork any more; their orphans come here, so a few rounds end
        // even a fork bomb.
        for _ in 0..100 {
            let left = descendants(me);
            if left.is_empty() && !reap(self.program).children_left {
                break;
            }
            for pid in left {
                let _ = kill(pid, Signal::SIGKILL);
            }
            self.next_signal(Some(Duration::from_millis(10)));
            reap(self.program);
        }
    }

    /// Says how the program ended and what it left running, once.
    fn send_report(&mut self, ended: WaitStatus, left: &[(Pid, String)]) {
        let Some(fd) = self.report.take() else {
            return;
        };
        let mut text = status_line(ended);
        for (pid, command) in left {
            text.push_str(&format!("bg {pid} {command}\n"));
        }
        let _ = std::fs::File::from(fd).write_all(text.as_bytes());
    }

    fn finish(&mut self, ended: WaitStatus) -> ! {
        self.send_report(ended, &[]);
        match ended {
            WaitStatus::Exited(_, code) => std::process::exit(code),
            WaitStatus::Signaled(_, signal, _) => {
                let mut set = SigSet::empty();
                set.add(signal);
                let _ = set.thread_unblock();
                let _ = nix::sys::signal::raise(signal);
                std::process::exit(128 + signal as i32)
            }
            _ => std::process::exit(1),
        }
    }
}

/// The report's first line: `exit CODE` or `signal NUMBER`.
fn status_line(ended: WaitStatus) -> String {
    match ended {
        WaitStatus::Signaled(_, signal, _) => format!("signal {}\n", signal as i32),
        WaitStatus::Exited(_, code) => format!("exit {code}\n"),
        _ => "exit 1\n".into(),
    }
}

/// Reaps every child that has exited; the program's status when it was among them.
fn reap(program: Pid) -> Reaped {
    let mut found = None;
    loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {
                return Reaped {
                    program: found,
                    children_left: true,
                };
            }
            Ok(status) => {
                if status.pid() == Some(program)
                    && matches!(status, WaitStatus::Exited(..) | WaitStatus::Signaled(..))
                {
                    found = Some(status);
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => {
                return Reaped {
                    program: found,
                    children_left: false,
                };
            }
        }
    }
}

fn own_pid() -> Pid {
    nix::unistd::getpid()
}

/// Every process below `root`, from `/proc` (parents first).
fn descendants(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(ppid) = ppid {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut queue = vec![root.as_raw()];
    while let Some(pid) = queue.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            out.push(Pid::from_raw(child));
            queue.push(child);
        }
    }
    out
}

/// The descendants still running, with their command lines.
fn background(root: Pid) -> Vec<(Pid, String)> {
    descendants(root)
        .into_iter()
        .map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let line: String = String::from_utf8_lossy(&raw)
                .split('\0')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(COMMAND_CHARS)
                .collect();
            (pid, line)
        })
        .collect()
}

/// A parsed report: how the program ended, and what it left running.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// `Ok(code)` or `Err(signal)`; `None` when the supervisor said nothing (it failed first).
    pub status: Option<Result<i32, i32>>,
    pub background: Vec<(u32, String)>,
}

impl Report {
    pub fn parse(text: &str) -> Self {
        let mut report = Self::default();
        for line in text.lines() {
            if let Some(code) = line.strip_prefix("exit ").and_then(|c| c.parse().ok()) {
                report.status = Some(Ok(code));
            } else if let Some(sig) = line.strip_prefix("signal ").and_then(|c| c.parse().ok()) {
                report.status = Some(Err(sig));
            } else if let Some((pid, command)) = line
                .strip_prefix("bg ")
                .and_then(|rest| rest.split_once(' ').or(Some((rest, ""))))
                && let Ok(pid) = pid.parse()
            {
                report.background.push((pid, command.to_string()));
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_parsed_back() {
        let text = format!(
            "{}bg 12 sleep 100\nbg 13 \n",
            status_line(WaitStatus::Exited(Pid::from_raw(1), 3))
        );
        assert_eq!(
            Report::parse(&text),
            Report {
                status: Some(Ok(3)),
                background: vec![(12, "sleep 100".into()), (13, String::new())],
            }
        );
        let killed = status_line(WaitStatus::Signaled(
            Pid::from_raw(1),
            Signal::SIGSEGV,
            false,
        ));
        assert_eq!(Report::parse(&killed).status, Some(Err(11)));
        assert_eq!(Report::parse("").status, None);
    }
}
