//! The agent's side of a goal (`--until CMD`, `/goal CMD`): the check run as a `bash` command
//! is (the same sandbox of the current mode, environment and supervisor, its output capped the
//! same way), but without hooks or a permission question, since the user gave it; and the
//! next round counted on in the run's requests, so `--max-turns` bounds all rounds together.
//! The loop itself is the session host's (`session/goal.rs`).

use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::tools::Shells;
use crate::tools::bash::{MAX_TIMEOUT_MS, run_check};

/// What one run of the check came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// Its output and status line (`Exit code: 1`), or why it could not run.
    pub output: String,
    pub passed: bool,
}

impl Agent {
    /// Runs the check `command` in the project root, for at most bash's longest timeout.
    pub async fn run_check(&self, command: &str, cancel: &CancellationToken) -> CheckRun {
        let ctx = self.host.tool_context(&self.options, &self.llm, cancel);
        match run_check(command, &ctx, MAX_TIMEOUT_MS).await {
            Ok((output, passed)) => CheckRun { output, passed },
            Err(e) => CheckRun {
                output: e.to_string(),
                passed: false,
            },
        }
    }

    /// The next run is one more round of this one: its requests count on.
    pub fn carry_request_count(&self) {
        self.requests.carry_once();
    }

    /// The session's background commands.
    pub fn shells(&self) -> &Shells {
        &self.host.shells
    }
}
