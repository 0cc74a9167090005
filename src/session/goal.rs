//! Work until a check passes (`ling -p --until CMD`, the REPL's `/goal CMD`): after each final
//! answer the session runs the check as a `bash` command is run (sandboxed), and while it
//! fails its output goes back to the model as the next user message, which goes on. The rounds
//! are one run for `--max-turns` (their requests count together) and at most settings
//! `maxStopHookBlocks` checks fail in a row, as a blocking Stop hook is bounded: this is the
//! same loop without a script. The reply says how many rounds it took and whether it passed.

use super::{AgentError, AgentEvent, Host, Io, RunEnd, RunResult};

const FAILED: &str = include_str!("../prompts/goal_failed.md");

/// How a goal went, in a prompt's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalOutcome {
    pub command: String,
    /// Answers the check ran after.
    pub rounds: u32,
    pub passed: bool,
}

/// How a front end says one check's result, e.g. ``check `cargo test` failed (round 1: Exit
/// code: 101); its output goes back to the model``.
pub fn check_line(command: &str, round: u32, passed: bool, output: &str) -> String {
    if passed {
        return format!("check `{command}` passed (round {round})");
    }
    let status = output.trim_end().lines().last().unwrap_or("no output");
    format!("check `{command}` failed (round {round}: {status})")
}

impl Host {
    /// After the first round's `result`: the check, and the rounds that follow while it fails
    /// and the run may go on. `result` ends as the last round's, its requests the rounds' sum.
    pub(super) async fn pursue(
        &mut self,
        command: &str,
        result: &mut Result<RunResult, AgentError>,
        io: &Io<'_>,
    ) -> GoalOutcome {
        let limit = self.setup.settings.max_stop_hook_blocks;
        let mut outcome = GoalOutcome {
            command: command.to_string(),
            rounds: 0,
            passed: false,
        };
        let mut turns = 0;
        loop {
            let answered = matches!(result, Ok(run) if run.end == RunEnd::Completed);
            if let Ok(run) = result.as_mut() {
                turns += run.num_turns;
                run.num_turns = turns;
            }
            if !answered || io.cancel.is_cancelled() {
                return outcome;
            }
            outcome.rounds += 1;
            let check = self.setup.agent.run_check(command, io.cancel).await;
            io.sink.emit(AgentEvent::GoalCheck {
                command: command.to_string(),
                round: outcome.rounds,
                passed: check.passed,
                output: check.output.clone(),
            });
            if check.passed {
                outcome.passed = true;
                return outcome;
            }
            if outcome.rounds >= limit || io.cancel.is_cancelled() {
                return outcome;
            }
            let message = FAILED
                .replace("{command}", command)
                .replace("{round}", &outcome.rounds.to_string())
                .replace("{output}", check.output.trim_end());
            self.setup.agent.carry_request_count();
            *result = self
                .setup
                .agent
                .run(message.trim_end(), io.sink, io.approver, io.cancel)
                .await;
        }
    }
}
