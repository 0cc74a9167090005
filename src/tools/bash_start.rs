//! Starting `bash -c COMMAND` as the `bash` tool runs it, for a call in the foreground
//! (`bash.rs`, which watches it to its end) and for one in the background (`background/`,
//! whose watcher keeps its output): in the project root, a session of its own, in the sandbox
//! when there is one, stdout and stderr on one pipe.

use std::process::Stdio;

use tokio::process::Child;

use super::ToolContext;
use super::ToolError;
use super::bash_group::Group;

/// Characters of output kept (half from the start, half from the end).
pub const OUTPUT_CAP: usize = 30_000;

/// The shell started, with the read end of its output and its supervisor's report pipe.
pub(super) struct Started {
    pub child: Child,
    pub output: tokio::net::unix::pipe::Receiver,
    pub report: Option<tokio::net::unix::pipe::Receiver>,
    pub group: Group,
}

/// Starts `bash -c command` in the project root, its stdout and stderr on one pipe.
pub(super) fn start(command: &str, ctx: &ToolContext) -> Result<Started, ToolError> {
    let spawn_error = |e: std::io::Error| ToolError::failed(format!("cannot run bash: {e}"));
    // One pipe for both streams keeps stdout and stderr in the order they were written.
    let (writer, reader) = tokio::net::unix::pipe::pipe().map_err(spawn_error)?;
    let stdout = writer.into_blocking_fd().map_err(spawn_error)?;
    let stderr = stdout.try_clone().map_err(spawn_error)?;
    // Spawned right here in the tool's async task, on a runtime thread that lives as long as Ling:
    // the parent-death signal follows the spawning thread, so never move this to a blocking one.
    // A session of its own (so its pid is its group, and it has no controlling terminal), in
    // the sandbox when there is one.
    let session = ctx
        .child_env
        .session_command("bash", ctx.sandbox.as_ref())
        .map_err(|e| ToolError::failed(e.to_string()))?;
    let mut cmd = session.command;
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.root)
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    let child = ctx.child_env.spawn(&mut cmd).map_err(spawn_error)?;
    // The command holds our copies of the write ends; they must close for the readers to see EOF.
    drop(cmd);
    let pid = child
        .id()
        .ok_or_else(|| ToolError::failed("bash exited before it started"))?;
    let group = Group::new(pid, session.report.is_some());
    Ok(Started {
        child,
        output: reader,
        report: session.report,
        group,
    })
}
