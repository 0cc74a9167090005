//! `bash`: runs `bash -c COMMAND` in the project root, in its own session, with stdout and
//! stderr captured in order through one pipe, the output capped (head and tail kept), and
//! everything the command started ended on timeout or interrupt (its process group:
//! `bash_group.rs`). The shell starts without the API key variable under Ling's supervising
//! trampoline ([`ChildEnv::session_command`]), which reports how it ended and what it left
//! running in the background; that ends with Ling, even on SIGKILL, double-forked and `setsid`
//! processes too.
//!
//! [`ChildEnv::session_command`]: crate::process::ChildEnv::session_command

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::Signal;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use super::bash_start::{Started, start};
use super::output::CappedOutput;
use super::{
    HostedCommand, ShellHost, Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema,
    parse_args,
};
use crate::process::sandbox::{Blocked, Policy, SandboxMode, created_git_note, find_blocked};
use crate::process::supervise::Report;

pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
use super::bash_start::OUTPUT_CAP;
/// After the shell exits, output still arriving is read this long; a background child that keeps
/// the pipe open past that is stopped so the call cannot hang.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

const DESCRIPTION: &str = "Runs a command with `bash -c` in the project root and returns its \
combined stdout and stderr (in order) followed by `Exit code: N`. Each call starts a fresh shell: \
`cd` and variables do not carry over, so chain dependent steps with `&&`. stdin is closed, so \
interactive commands fail: pass flags like `-y`. Output over 30000 characters is cut in the middle. \
The default timeout is 120000 ms; set `timeout_ms` (up to 600000) for slow builds or tests. On \
timeout the command and all its children are killed. For a server, a watcher or anything that \
does not end, set `run_in_background: true`: the call returns at once with the command's id; \
read what it printed with bash_output and end it with kill_shell (it also ends with the \
session). A process put in the background with `cmd &` must redirect its output (`cmd > log.txt \
2>&1 &`), otherwise it is stopped when the command ends. Prefer read_file, grep and glob over \
cat, grep and find.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The bash command to run
    command: String,
    /// Timeout in milliseconds (default 120000, max 600000)
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_TIMEOUT_MS))]
    timeout_ms: Option<u64>,
    /// A few words on what the command does (shown to hooks; optional)
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    /// Run it in the background and return at once with its id (see bash_output, kill_shell)
    #[serde(default)]
    run_in_background: Option<bool>,
}

pub struct Bash;

#[async_trait]
impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), input)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::failed(
                "command is empty; give a bash command to run",
            ));
        }
        if args.run_in_background == Some(true) {
            return super::background::start(&args.command, ctx);
        }
        let mut notes = Vec::new();
        let timeout_ms = match args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS) {
            0 => return Err(ToolError::failed("timeout_ms must be at least 1")),
            ms if ms > MAX_TIMEOUT_MS => {
                notes.push(format!(
                    "(timeout_ms {ms} is over the maximum; used {MAX_TIMEOUT_MS})"
                ));
                MAX_TIMEOUT_MS
            }
            ms => ms,
        };
        let links = ctx
            .sandbox
            .as_ref()
            .map(protected_links)
            .unwrap_or_default();
        let run = match &ctx.shell_host {
            Some(host) => hosted(host.as_ref(), &args.command, ctx, timeout_ms).await?,
            None => run(&args.command, ctx, timeout_ms).await?,
        };
        let total_lines = run.output.total_lines();
        let mut content = notes.join("\n");
        if !content.is_empty() {
            content.push('\n');
        }
        let text = run.output.finish();
        content.push_str(if text.is_empty() {
            "(no output)"
        } else {
            &text
        });
        if !content.ends_with('\n') {
            content.push('\n');
        }
        if run.stopped_background {
            content.push_str(
                "(background processes still holding the output were stopped; redirect their \
                 output, e.g. `cmd > log.txt 2>&1 &`, to keep them running)\n",
            );
        } else if !run.background.is_empty() {
            let listed: Vec<String> = run
                .background
                .iter()
                .map(|(pid, command)| format!("{pid} `{command}`"))
                .collect();
            content.push_str(&format!(
                "(still running in the background: {}; they end when Ling exits)\n",
                listed.join(", ")
            ));
        }
        for note in restore_links(&links) {
            content.push_str(&note);
            content.push('\n');
        }
        if ctx.sandbox.is_some()
            && let Some(note) = created_git_note(&ctx.root, run.git_existed)
        {
            content.push_str(&note);
            content.push('\n');
        }
        let blocked = match &ctx.sandbox {
            Some(policy) if !run.status.success() => find_blocked(&content, policy, &ctx.root),
            _ => None,
        };
        content.push_str(&status_line(run.status));
        let mut output = ToolOutput::text(content);
        output.total_lines = Some(total_lines);
        if let (Some(blocked), Some(policy)) = (blocked, &ctx.sandbox) {
            output.content.push_str(&blocked_note(&blocked, policy));
            output.sandbox_blocked = Some(blocked.to_string());
        }
        Ok(output)
    }
}

struct Run {
    output: CappedOutput,
    status: ExitStatus,
    stopped_background: bool,
    /// What the command left running (pid, command line), as its supervisor reported.
    background: Vec<(u32, String)>,
    /// Whether the project root had a `.git` before the command.
    git_existed: bool,
}

async fn run(command: &str, ctx: &ToolContext, timeout_ms: u64) -> Result<Run, ToolError> {
    let git_existed = std::fs::symlink_metadata(ctx.root.join(".git")).is_ok();
    let started = start(command, ctx)?;
    watch(started, ctx, command, timeout_ms, git_existed).await
}

/// Runs `command` as a `bash` call does, to its end or `timeout_ms` (the `--until` check):
/// its output capped as a call's, and whether it exited 0.
pub async fn run_check(
    command: &str,
    ctx: &ToolContext,
    timeout_ms: u64,
) -> Result<(String, bool), ToolError> {
    let run = run(command, ctx, timeout_ms).await?;
    let mut text = run.output.finish();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&status_line(run.status));
    Ok((text, run.status.success()))
}

/// Reads the shell's output until it exits and its output ends (or, once it exited, until
/// [`DRAIN_AFTER_EXIT`] passed: what still holds the pipe is stopped), within `timeout_ms`;
/// a cancel or the timeout ends its process group.
async fn watch(
    started: Started,
    ctx: &ToolContext,
    command: &str,
    timeout_ms: u64,
    git_existed: bool,
) -> Result<Run, ToolError> {
    let Started {
        mut child,
        output: mut reader,
        report: mut report_pipe,
        mut group,
    } = started;
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    let mut output = CappedOutput::new(OUTPUT_CAP);
    let mut tail = LastLine::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut report_text = Vec::new();
    let mut report_buf = [0u8; 4096];
    let mut status: Option<ExitStatus> = None;
    let mut background = Vec::new();
    // Whether the trampoline (or shell) itself was waited for; until then a terminate reaps it.
    let mut reaped = false;
    let mut eof = false;
    let mut drain_deadline = deadline;
    loop {
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => {
                group.terminate((!reaped).then_some(&mut child)).await;
                return Err(ToolError::Interrupted);
            }
            () = tokio::time::sleep_until(deadline), if status.is_none() => {
                // The REPL may keep it running in the background instead.
                if super::background::keep_on_timeout(ctx, command).await {
                    let started = Started { child, output: reader, report: report_pipe, group };
                    let moved = super::background::adopt(ctx, command, started, output.finish())?;
                    return Err(ToolError::Failed(moved));
                }
                group.terminate(Some(&mut child)).await;
                return Err(timed_out(timeout_ms, output));
            }
            read = reader.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    output.push(&buf[..n]);
                    tail.push(&buf[..n], ctx);
                }
            },
            // The supervisor's report: how the shell ended, as soon as it did.
            read = read_some(report_pipe.as_mut(), &mut report_buf), if report_pipe.is_some() && status.is_none() => {
                match read {
                    Ok(n) if n > 0 => report_text.extend_from_slice(&report_buf[..n]),
                    _ => {
                        report_pipe = None;
                        let report = Report::parse(&String::from_utf8_lossy(&report_text));
                        background = report.background;
                        status = match report.status {
                            Some(Ok(code)) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
                            Some(Err(signal)) => Some(ExitStatus::from_raw(signal & 0x7f)),
                            // It said nothing (it failed before the shell ran): its own status.
                            None => {
                                reaped = true;
                                Some(child.wait().await.map_err(|e| ToolError::failed(format!("cannot wait for bash: {e}")))?)
                            }
                        };
                        drain_deadline = Instant::now() + DRAIN_AFTER_EXIT;
                    }
                }
            }
            waited = child.wait(), if status.is_none() && report_pipe.is_none() => {
                let exited = waited.map_err(|e| ToolError::failed(format!("cannot wait for bash: {e}")))?;
                reaped = true;
                status = Some(exited);
                drain_deadline = Instant::now() + DRAIN_AFTER_EXIT;
            }
            () = tokio::time::sleep_until(drain_deadline), if status.is_some() && !eof => {
                group.terminate((!reaped).then_some(&mut child)).await;
                let status = status.unwrap_or_default();
                return Ok(Run { output, status, stopped_background: true, background: Vec::new(), git_existed });
            }
        }
        if let (Some(status), true) = (status, eof) {
            // Children that redirected their output elsewhere are meant to keep running; their
            // supervisor stays with them (and is reaped by the runtime when it exits).
            group.release();
            return Ok(Run {
                output,
                status,
                stopped_background: false,
                background,
                git_existed,
            });
        }
    }
}

/// The protected paths that are symlinks (a `.git` pointing elsewhere), with their targets: the
/// binds keep the targets read-only, but the link itself could be replaced.
fn protected_links(policy: &Policy) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    policy
        .protect
        .iter()
        .filter_map(|p| Some((p.clone(), std::fs::read_link(p).ok()?)))
        .collect()
}

/// After a command: each protected link it replaced is put back (what it made instead is moved
/// aside), and said.
fn restore_links(links: &[(std::path::PathBuf, std::path::PathBuf)]) -> Vec<String> {
    let mut notes = Vec::new();
    for (path, target) in links {
        if std::fs::read_link(path).ok().as_ref() == Some(target) {
            continue;
        }
        let mut aside = path.clone().into_os_string();
        aside.push(".replaced-in-sandbox");
        let aside = std::path::PathBuf::from(aside);
        let moved =
            std::fs::symlink_metadata(path).is_ok() && std::fs::rename(path, &aside).is_ok();
        let restored = std::os::unix::fs::symlink(target, path).is_ok();
        notes.push(format!(
            "(Blocked by the sandbox: replacing {} (a link to {}); {}{})",
            path.display(),
            target.display(),
            if restored {
                "Ling put it back"
            } else {
                "Ling could not put it back"
            },
            if moved {
                format!(
                    " and moved what the command made there to {}",
                    aside.display()
                )
            } else {
                String::new()
            }
        ));
    }
    notes
}

/// One read from the report pipe (never called without one).
async fn read_some(
    pipe: Option<&mut tokio::net::unix::pipe::Receiver>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// The command run by the front end's [`ShellHost`] (an editor's terminal) instead of a child of
/// Ling: the same sandbox, environment and timeout, its output read the same way.
async fn hosted(
    host: &dyn ShellHost,
    command: &str,
    ctx: &ToolContext,
    timeout_ms: u64,
) -> Result<Run, ToolError> {
    let git_existed = std::fs::symlink_metadata(ctx.root.join(".git")).is_ok();
    let request = HostedCommand {
        call_id: ctx.call_id.clone(),
        command: command.to_string(),
        cwd: ctx.root.clone(),
        sandbox: ctx.sandbox.clone(),
        remove_env: ctx.child_env.removed().to_vec(),
        output_limit: OUTPUT_CAP * 4,
        timeout: Duration::from_millis(timeout_ms),
    };
    let hosted = host.run(request, &ctx.cancel).await?;
    let mut output = CappedOutput::new(OUTPUT_CAP);
    if hosted.truncated {
        output.push(b"[earlier output dropped by the terminal]\n");
    }
    output.push(hosted.output.as_bytes());
    if hosted.timed_out {
        return Err(timed_out(timeout_ms, output));
    }
    Ok(Run {
        output,
        status: hosted.status(),
        stopped_background: false,
        background: Vec::new(),
        git_existed,
    })
}

/// What the model reads after a command the sandbox stopped: what was refused, what the mode
/// allows, and how the user can widen it.
fn blocked_note(blocked: &Blocked, policy: &Policy) -> String {
    if let Blocked::Read(_) = blocked {
        return format!(
            "\nBlocked by the sandbox: {blocked}. The sandbox hides secrets (settings \
             sandbox.denyRead and its defaults: keys, tokens, credentials) and terminals from \
             commands; it stops no other read. Do not work around it; if it is needed, the user \
             can allow it: run Ling with --sandbox off, or add the path to settings \
             sandbox.allowRead."
        );
    }
    let allows = match policy.mode {
        SandboxMode::ReadOnly => "writes nothing",
        _ => {
            "writes only in the project root (not its .git/ and .ling/), the temp dir and \
              settings sandbox.writableRoots"
        }
    };
    let network = if policy.network {
        ""
    } else {
        ", and the network is off"
    };
    format!(
        "\nBlocked by the sandbox: {blocked}. The {} sandbox {allows}{network}. Do not work \
         around it; if it is needed, the user can allow it: run Ling with --sandbox off, or add \
         the directory to settings sandbox.writableRoots (sandbox.network: true for the network).",
        policy.mode
    )
}

/// How often the last output line is reported at most.
const LAST_LINE_EVERY: Duration = Duration::from_millis(200);

/// The last complete line of the output, sent to [`ToolContext::output_line`] at most every
/// [`LAST_LINE_EVERY`].
#[derive(Default)]
struct LastLine {
    sent: Option<Instant>,
}

impl LastLine {
    fn push(&mut self, bytes: &[u8], ctx: &ToolContext) {
        let Some(report) = &ctx.output_line else {
            return;
        };
        if self.sent.is_some_and(|at| at.elapsed() < LAST_LINE_EVERY) {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        if let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            let line: String = line.trim().chars().take(200).collect();
            report(line);
            self.sent = Some(Instant::now());
        }
    }
}

fn timed_out(timeout_ms: u64, output: CappedOutput) -> ToolError {
    let text = output.finish();
    let mut message = format!(
        "command timed out after {timeout_ms} ms and was stopped (with all its child processes). \
         If it needs longer, set timeout_ms (up to {MAX_TIMEOUT_MS}); for a server or watcher, run it \
         in the background with its output redirected to a file."
    );
    if !text.is_empty() {
        message.push_str("\nOutput before the timeout:\n");
        message.push_str(&text);
    }
    ToolError::failed(message)
}

fn status_line(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("Exit code: {code}"),
        (None, Some(signal)) => match Signal::try_from(signal) {
            Ok(signal) => format!("Killed by signal {}", signal.as_str()),
            Err(_) => format!("Killed by signal {signal}"),
        },
        (None, None) => "Exit status unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn bash(command: &str) -> Result<ToolOutput, ToolError> {
        let dir = tempfile::tempdir().unwrap();
        Bash.call(
            json!({"command": command}),
            &ToolContext::new(dir.path().to_path_buf()),
        )
        .await
    }

    #[tokio::test]
    async fn reports_output_and_exit_code() {
        let out = bash("echo hi; exit 3").await.unwrap();
        assert_eq!(out.content, "hi\nExit code: 3");
    }

    #[tokio::test]
    async fn a_signal_is_reported_by_name() {
        let out = bash("kill -SEGV $$").await.unwrap();
        assert_eq!(out.content, "(no output)\nKilled by signal SIGSEGV");
    }

    #[tokio::test]
    async fn a_large_timeout_is_clamped_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        let out = Bash
            .call(json!({"command": "true", "timeout_ms": 9_000_000}), &ctx)
            .await
            .unwrap();
        assert!(
            out.content
                .starts_with("(timeout_ms 9000000 is over the maximum; used 600000)")
        );
    }

    #[tokio::test]
    async fn a_background_child_holding_the_pipe_does_not_hang_the_call() {
        let started = std::time::Instant::now();
        let out = bash("sleep 30 & echo started").await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            out.content.starts_with("started\n(background processes"),
            "{}",
            out.content
        );
        assert!(out.content.ends_with("Exit code: 0"));
    }
}
