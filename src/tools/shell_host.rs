//! Where the `bash` tool's command runs when it is not Ling's own child: a front end that offers
//! terminals of its own (an ACP editor's `terminal/*` methods, so the user watches the command in
//! the editor). The tool still decides the command, its sandbox, its timeout and how its output
//! reads; the host only runs it and hands back what it printed and how it ended.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::ToolError;
use crate::process::sandbox::Policy;

/// One command for a [`ShellHost`] to run: `bash -c command` in `cwd`, inside `sandbox` when
/// there is one, without the environment variables `remove_env` names (the API key).
#[derive(Debug, Clone)]
pub struct HostedCommand {
    /// The tool call it runs for, so the host can show its terminal with that call.
    pub call_id: Option<String>,
    pub command: String,
    pub cwd: PathBuf,
    pub sandbox: Option<Policy>,
    pub remove_env: Vec<String>,
    /// Bytes of output the host keeps (it drops the start of longer output).
    pub output_limit: usize,
    pub timeout: Duration,
}

/// How a hosted command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedRun {
    pub output: String,
    /// The host dropped the start of the output to keep within the limit.
    pub truncated: bool,
    pub exit_code: Option<u32>,
    /// The signal that ended it, by name (`SIGKILL`), when one did.
    pub signal: Option<String>,
    /// The timeout passed and the command was killed.
    pub timed_out: bool,
}

/// Runs `bash` commands somewhere other than Ling's own process tree.
#[async_trait]
pub trait ShellHost: Send + Sync {
    /// Runs the command to its end, its timeout, or `cancel` (then it is killed and the call
    /// is [`ToolError::Interrupted`]).
    async fn run(
        &self,
        command: HostedCommand,
        cancel: &CancellationToken,
    ) -> Result<HostedRun, ToolError>;
}

impl HostedRun {
    /// The wait status of the run, as a local child's would read (for the tool's status line).
    pub fn status(&self) -> std::process::ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        match (self.exit_code, self.signal.as_deref()) {
            (Some(code), _) => std::process::ExitStatus::from_raw(((code & 0xff) << 8) as i32),
            (None, Some(name)) => {
                let number = name
                    .parse::<nix::sys::signal::Signal>()
                    .map(|s| s as i32)
                    .unwrap_or(libc::SIGKILL);
                std::process::ExitStatus::from_raw(number)
            }
            (None, None) => std::process::ExitStatus::from_raw(0xff << 8),
        }
    }
}
