//! The stdio transport: the server is a child process in its own process group, spoken to with
//! one JSON message per line. Reading what it writes (stdout as messages, bounded by
//! [`MAX_LINE`]; stderr into its log) is `stdio_output.rs`. A write that blocks too long or is
//! abandoned halfway kills the server. Shutdown closes stdin, waits a short grace
//! (`SHUTDOWN_GRACE`, 100 ms), then SIGTERMs and finally SIGKILLs the group, and ends whatever
//! the server left running in it. The server starts without the API key variable unless its own
//! `env` passes it, and dies with Ling, even on SIGKILL ([`ChildEnv::tied_command`]).
//!
//! [`ChildEnv::tied_command`]: crate::process::ChildEnv::tied_command

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, mpsc, watch};

use super::stdio_output::{drain_stderr, read_stdout};
use super::{Connection, Transport, TransportError};
use crate::config::code_check::{CodeCheck, hardened_env};
use crate::mcp::jsonrpc::Message;
use crate::mcp::log::ServerLog;
use crate::process::ChildEnv;
use crate::process::lookup::check_program;
use crate::process::sandbox::Policy;

pub use super::stdio_output::MAX_LINE;

/// How long a server may take to exit once its stdin is closed before it gets SIGTERM. Well
/// behaved servers exit within milliseconds of stdin closing; some (server-everything once roots
/// are declared) keep timers alive and only go on SIGTERM, so this grace is short: it is what a
/// one-shot run with such a server pays on top of its work.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(100);
/// How long a server may take to exit on SIGTERM before it gets SIGKILL (and how long what it
/// left in its process group may take on SIGTERM).
const TERM_WAIT: Duration = Duration::from_millis(500);
/// How long a server may take to exit on SIGTERM in a prompt shutdown
/// ([`super::Shutdown::Prompt`]) before it gets SIGKILL.
const PROMPT_TERM_WAIT: Duration = Duration::from_millis(50);
/// How long one write to the server's stdin may block. A server reads what it is sent at once;
/// one that does not for this long has stopped reading and is killed.
const WRITE_LIMIT: Duration = Duration::from_secs(30);
/// How often [`end_group`] checks whether the process group is empty.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// What to start: the entry's program, arguments, environment (added to `child_env`'s) and
/// folder, and the check of the files it runs, whose hardening it gets (`PYTHONSAFEPATH=1`,
/// no inherited `BASH_ENV` or `ENV`, unless `env` sets them).
pub struct Start<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    pub code: Option<&'a CodeCheck>,
}

impl Start<'_> {
    fn cannot_start(&self, source: std::io::Error) -> TransportError {
        TransportError::Spawn {
            command: self.command.to_string(),
            cwd: self.cwd.to_path_buf(),
            source,
        }
    }
}

/// Starts the server and connects to it.
pub async fn spawn(
    start: &Start<'_>,
    log: Arc<ServerLog>,
    child_env: &ChildEnv,
    sandbox: Option<&Policy>,
) -> Result<Connection, TransportError> {
    let Start { command, args, .. } = *start;
    let mut cmd = server_command(start, child_env, sandbox)?;
    // Spawned in this async task, on a runtime thread that lives as long as Ling: the
    // parent-death signal follows the spawning thread, so never move this to a blocking one.
    let mut child = child_env
        .spawn(&mut cmd)
        .map_err(|e| start.cannot_start(e))?;
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(TransportError::Pipes(command.to_string()));
    };
    log.line(
        "ling",
        &format!("started `{command}` {args:?} (pid {pid:?})"),
    );

    let (exit_tx, exit_rx) = watch::channel(None::<String>);
    tokio::spawn(async move {
        let status = match child.wait().await {
            Ok(status) => status.to_string(),
            Err(e) => format!("unknown status ({e})"),
        };
        let _ = exit_tx.send(Some(status));
    });
    let stderr_done = drain_stderr(stderr, log.clone());
    let (events_tx, events_rx) = mpsc::channel(256);
    tokio::spawn(read_stdout(
        BufReader::with_capacity(64 * 1024, stdout),
        events_tx,
        log.clone(),
        command.to_string(),
        exit_rx.clone(),
        stderr_done,
    ));

    let transport = StdioTransport {
        stdin: Mutex::new(Some(stdin)),
        pid,
        exited: exit_rx,
        log,
    };
    Ok(Connection {
        transport: Arc::new(transport),
        events: events_rx,
    })
}

/// The server's command: its program found (outside the sandbox never on a `PATH` folder a
/// sandboxed command writes) and checked, in the sandbox when its entry asks, with the hardened
/// environment plus its own, in its folder, its stdio piped and in a process group of its own.
fn server_command(
    start: &Start<'_>,
    child_env: &ChildEnv,
    sandbox: Option<&Policy>,
) -> Result<tokio::process::Command, TransportError> {
    let Start {
        command,
        args,
        env,
        cwd,
        code,
    } = *start;
    // The server's own `PATH`, else the one children get.
    let own_path = env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| std::ffi::OsString::from(value));
    let mut cmd = match sandbox {
        Some(policy) => {
            if child_env.is_tied() {
                // Through the trampoline a missing program would only show as an exit status 127.
                let path = own_path.clone().or_else(|| std::env::var_os("PATH"));
                check_program(command.as_ref(), path.as_deref(), cwd)
                    .map_err(|e| start.cannot_start(e))?;
            }
            child_env
                .sandboxed_command(command, policy)
                .map_err(|e| TransportError::Sandbox(e.to_string()))?
        }
        None => {
            // Outside the sandbox: never a program a sandboxed command could have put on PATH.
            let program = child_env
                .find_outside(command.as_ref(), own_path.as_deref())
                .map_err(|e| start.cannot_start(e))?;
            if child_env.is_tied() {
                check_program(program.as_os_str(), None, cwd).map_err(|e| start.cannot_start(e))?;
            }
            child_env
                .tied_command(program)
                .map_err(|e| TransportError::CodeChanged(e.to_string()))?
        }
    };
    let (set, removed) = hardened_env(code);
    for var in removed {
        cmd.env_remove(var);
    }
    cmd.args(args).envs(set);
    for (name, value) in env {
        match name.as_str() {
            // Outside the sandbox, its own PATH without the folders a sandboxed command writes.
            "PATH" if sandbox.is_none() => cmd.env(name, child_env.outside_path(value.as_ref())),
            _ => cmd.env(name, value),
        };
    }
    cmd.current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a Ctrl-C in the terminal does not reach it and shutdown can signal
        // everything it started (npx → node, sh -c → ...).
        .process_group(0)
        .kill_on_drop(true);
    Ok(cmd)
}

struct StdioTransport {
    stdin: Mutex<Option<ChildStdin>>,
    pid: Option<i32>,
    exited: watch::Receiver<Option<String>>,
    log: Arc<ServerLog>,
}

#[async_trait]
impl Transport for StdioTransport {
    async fn send(&self, message: Message) -> Result<(), TransportError> {
        let mut line = message.to_line().into_bytes();
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(TransportError::Closed(
                "the server connection is closed".into(),
            ));
        };
        // A half-written line leaves the stream unusable, so a write that is abandoned (the
        // caller's timeout or Ctrl-C dropped this future) or stuck past the deadline (the server
        // stopped reading its stdin) ends the server.
        let mut stuck = StuckWrite {
            pid: self.pid,
            log: &self.log,
            armed: true,
        };
        let written = tokio::time::timeout(WRITE_LIMIT, pipe.write_all(&line)).await;
        match written {
            Ok(Ok(())) => {
                stuck.armed = false;
                Ok(())
            }
            Ok(Err(source)) => {
                stuck.armed = false;
                Err(TransportError::Write {
                    source,
                    stderr_tail: self.log.stderr_tail(),
                })
            }
            Err(_) => Err(TransportError::Closed(self.log.with_tail(&format!(
                "the server stopped reading its stdin (a write was stuck for {}s); killed it",
                WRITE_LIMIT.as_secs()
            )))),
        }
    }

    async fn close(&self, how: super::Shutdown) {
        let (grace, term_wait) = match how {
            super::Shutdown::Graceful => (SHUTDOWN_GRACE, TERM_WAIT),
            super::Shutdown::Prompt => (Duration::ZERO, PROMPT_TERM_WAIT),
        };
        // Closing stdin is the polite request; most servers exit within milliseconds. A writer
        // stuck on a full pipe holds the lock: then go straight to the signals.
        let began = tokio::time::Instant::now();
        match tokio::time::timeout(SHUTDOWN_GRACE, self.stdin.lock()).await {
            Ok(mut stdin) => {
                if let Some(mut pipe) = stdin.take() {
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, pipe.shutdown()).await;
                }
            }
            Err(_) => self
                .log
                .line("ling", "a write to the server is stuck; not waiting for it"),
        }
        let Some(pid) = self.pid else {
            return;
        };
        // The grace counts from the start of the close, the stdin steps included.
        let steps = [
            (
                None,
                (began + grace).saturating_duration_since(tokio::time::Instant::now()),
            ),
            (Some(Signal::SIGTERM), term_wait),
            (Some(Signal::SIGKILL), TERM_WAIT),
        ];
        for (signal, wait) in steps {
            if let Some(signal) = signal {
                if self.exited.borrow().is_some() {
                    break;
                }
                let _ = killpg(Pid::from_raw(pid), signal);
                self.log.line(
                    "ling",
                    &format!("sent {signal} to the server's process group"),
                );
            }
            let mut exited = self.exited.clone();
            let wait_for_exit = exited.wait_for(|status| status.is_some());
            if tokio::time::timeout(wait, wait_for_exit).await.is_ok() {
                break;
            }
        }
        end_group(pid, &self.log, term_wait).await;
    }
}

/// Ends what the server left behind in its process group once it exited itself (`sh -c 'helper
/// & exec server'`): SIGTERM, then SIGKILL if anything is still there after a moment.
async fn end_group(pid: i32, log: &ServerLog, term_wait: Duration) {
    let group = Pid::from_raw(pid);
    let has_members = || killpg(group, None).is_ok();
    if !has_members() {
        return;
    }
    let _ = killpg(group, Signal::SIGTERM);
    log.line(
        "ling",
        "sent SIGTERM to what is left of the server's process group",
    );
    let until = tokio::time::Instant::now() + term_wait;
    while has_members() && tokio::time::Instant::now() < until {
        tokio::time::sleep(GROUP_POLL).await;
    }
    if has_members() {
        // Members that exited but are not reaped yet still count; SIGKILL is harmless to them.
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// Kills the server's process group when dropped armed: a write that did not finish.
struct StuckWrite<'a> {
    pid: Option<i32>,
    log: &'a ServerLog,
    armed: bool,
}

impl Drop for StuckWrite<'_> {
    fn drop(&mut self) {
        if let (true, Some(pid)) = (self.armed, self.pid) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            self.log.line(
                "ling",
                "a write to the server did not finish; sent SIGKILL to its process group",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_program_that_cannot_start_keeps_its_io_error() {
        let cwd = std::env::temp_dir();
        let log = Arc::new(ServerLog::discard());
        let child_env = ChildEnv::without(Vec::<String>::new());
        let start = Start {
            command: "/nonexistent/ling-server",
            args: &[],
            env: &[],
            cwd: &cwd,
            code: None,
        };
        let Err(error) = spawn(&start, log, &child_env, None).await else {
            panic!("a missing program started");
        };
        let source = std::error::Error::source(&error)
            .and_then(|e| e.downcast_ref::<std::io::Error>())
            .expect("the io::Error is the source");
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(
            error.to_string(),
            format!(
                "cannot start `/nonexistent/ling-server` in {}: No such file or directory (os \
                 error 2)",
                cwd.display()
            )
        );
    }
}
