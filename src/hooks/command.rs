//! Runs a `command` handler: `sh -c <command>` (not a login shell, so profile `echo`s cannot
//! pollute stdout) in the project root, the input JSON on stdin, in its own process group so that a
//! timeout, or the caller giving up, kills everything the hook started and not just `sh`. It
//! starts without the API key variable (the engine's [`ChildEnv`]), without an inherited
//! `BASH_ENV`/`ENV` and with `PYTHONSAFEPATH=1`, and only when the files it runs are still the
//! ones its [`CodeCheck`] took.
//!
//! [`ChildEnv`]: crate::process::ChildEnv

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::time::Instant;

use super::input::HookContext;
use super::output::RunResult;
use crate::config::code_check::{CodeCheck, hardened_env};
use crate::process::ChildEnv;

/// The most of a handler's stdout or stderr kept; the rest is read and dropped so it never blocks.
const STDOUT_CAP: usize = 1 << 20;
const STDERR_CAP: usize = 64 << 10;
/// After `sh` exits, how long its pipes may stay open (a background child holding them) before
/// the output read so far is taken as the whole.
const PIPE_GRACE: Duration = Duration::from_millis(500);

pub(crate) async fn run_command(
    command: &str,
    payload: &[u8],
    ctx: &HookContext,
    timeout: Duration,
    child_env: &ChildEnv,
    code: Option<&CodeCheck>,
) -> RunResult {
    // The files it runs are still the ones trusted (or seen when the session started).
    if let Some(Err(why)) = code.map(CodeCheck::verify) {
        return RunResult::Failed(why.to_string());
    }
    let mut cmd = match hook_command(command, ctx, child_env, code) {
        Ok(cmd) => cmd,
        Err(failed) => return failed,
    };
    let mut child = match child_env.spawn(&mut cmd) {
        Ok(child) => child,
        Err(e) => {
            return RunResult::Failed(format!(
                "cannot start `sh -c` in {}: {e}",
                ctx.cwd.display()
            ));
        }
    };
    // Declared after `child` so it drops first: a cancelled run kills the group before the child.
    let mut group = GroupGuard(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return RunResult::Failed("the hook's pipes could not be opened".into());
    };
    let pipes = Pipes {
        stdin,
        stdout,
        stderr,
    };
    let (status, out, err) = match converse(&mut child, &mut group, pipes, payload, timeout).await {
        Ok(ended) => ended,
        Err(result) => return result,
    };
    // `sh` has exited and been reaped: its process group id may be reused, so never signal it.
    group.disarm();
    let status = status.map_or((None, None), |s| (s.code(), s.signal()));
    RunResult::Exited {
        code: status.0,
        signal: status.1,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// `sh -c <command>` in the project root, in the run's sandbox with settings `sandbox.hooks`,
/// with the hardened environment and the session's variables, its stdio piped, in a process
/// group of its own; or the run's failure when it cannot be had.
fn hook_command(
    command: &str,
    ctx: &HookContext,
    child_env: &ChildEnv,
    code: Option<&CodeCheck>,
) -> Result<tokio::process::Command, RunResult> {
    let cmd = match child_env.hook_policy() {
        Some(policy) => child_env.sandboxed_command("sh", &policy),
        None => child_env.command("sh"),
    };
    let mut cmd = cmd.map_err(|e| RunResult::Failed(e.to_string()))?;
    let (set, removed) = hardened_env(code);
    for var in removed {
        cmd.env_remove(var);
    }
    cmd.envs(set);
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.cwd)
        .env("LING_PROJECT_DIR", &ctx.cwd)
        .env("CLAUDE_PROJECT_DIR", &ctx.cwd)
        .env("LING_SESSION_ID", &ctx.session_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    Ok(cmd)
}

/// The hook's three pipes.
struct Pipes {
    stdin: ChildStdin,
    stdout: ChildStdout,
    stderr: ChildStderr,
}

/// Writes `payload` to the hook and reads its output until it exits and its pipes close (at
/// most [`PIPE_GRACE`] after the exit), all within `timeout`: its exit status and output, or the
/// result of a run that timed out (its group killed) or could not be waited for.
async fn converse(
    child: &mut Child,
    group: &mut GroupGuard,
    pipes: Pipes,
    payload: &[u8],
    timeout: Duration,
) -> Result<(Option<ExitStatus>, Vec<u8>, Vec<u8>), RunResult> {
    let Pipes {
        mut stdin,
        mut stdout,
        mut stderr,
    } = pipes;
    let deadline = Instant::now() + timeout;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut status = None;
    {
        let io = async {
            let write = async {
                // A hook that never reads its input closes the pipe; that is its right.
                let _ = stdin.write_all(payload).await;
                drop(stdin);
            };
            tokio::join!(
                write,
                read_capped(&mut stdout, &mut out, STDOUT_CAP),
                read_capped(&mut stderr, &mut err, STDERR_CAP),
            );
        };
        let mut io = std::pin::pin!(io);
        let mut io_done = false;
        let mut pipe_deadline = deadline;
        while status.is_none() || !io_done {
            tokio::select! {
                exit = child.wait(), if status.is_none() => {
                    match exit {
                        Ok(exit) => status = Some(exit),
                        Err(e) => return Err(RunResult::Failed(format!("cannot wait for the hook: {e}"))),
                    }
                    pipe_deadline = deadline.min(Instant::now() + PIPE_GRACE);
                }
                () = &mut io, if !io_done => io_done = true,
                () = tokio::time::sleep_until(pipe_deadline), if status.is_some() => break,
                () = tokio::time::sleep_until(deadline), if status.is_none() => {
                    group.kill();
                    let _ = child.wait().await;
                    return Err(RunResult::TimedOut(timeout));
                }
            }
        }
    }
    Ok((status, out, err))
}

/// Reads to the end, keeping at most `cap` bytes.
async fn read_capped(pipe: &mut (impl AsyncRead + Unpin), into: &mut Vec<u8>, cap: usize) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let room = cap.saturating_sub(into.len());
                into.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Kills a hook's whole process group when dropped, unless disarmed after a normal exit.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            // The group may already be gone; there is nothing left to do then.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
