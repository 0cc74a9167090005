//! One turn of the stream-json session: the prompt through the session host, and, when the
//! run has a schema (`--json-schema`, `initialize`'s `jsonSchema`), the answer checked against
//! it and asked again while it does not match; then the turn's `result`.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::Session;
use super::control::StdioApprover;
use super::wire::UserInput;
use crate::front::print::claude::ClaudeStream;
use crate::front::print::ending::Ending;
use crate::front::print::schema::Next;
use crate::session::{Approver, Command, Io, NonInteractive, Reply};
use crate::ui::RunOutcome;

impl Session {
    /// One turn: the prompt through the session, then its `result`. MCP config files edited
    /// since the last turn are reloaded first; nobody can be asked, so a changed project file
    /// whose trust lapsed is left out (its servers stop) until `ling trust`.
    pub(super) async fn turn(
        &mut self,
        input: &UserInput,
        stream: &Arc<ClaudeStream>,
        cancel: &CancellationToken,
    ) {
        let started = Instant::now();
        if let Err(why) = self.attach_images(&input.images) {
            // Refused whole: the prompt does not go without a picture it was sent with.
            let ending = Ending::error(why, RunOutcome::Failed, self.host.total_turns());
            self.write_result(stream, &ending, started, Default::default())
                .await;
            self.outcome = ending.outcome;
            return;
        }
        let token = cancel.child_token();
        let approver: Box<dyn Approver> = if self.options.stdio_prompt {
            Box::new(StdioApprover::new(self.control.clone(), token.clone()))
        } else {
            Box::new(NonInteractive)
        };
        let io = Io {
            sink: stream.as_ref(),
            approver: approver.as_ref(),
            cancel: &token,
            trust: None,
        };
        let (mut ending, mut usage) = self.ask(&input.text, &io, cancel).await;
        if let Some(schema) = self.options.output_schema.clone() {
            // A mismatch goes back to the model, saying what is wrong, a bounded number of times.
            let mut retries = 0;
            // The turns are every attempt's, not the last one's.
            let mut turns = ending.num_turns;
            ending = loop {
                match schema.judge(ending, retries) {
                    Next::Done(done) => {
                        break Ending {
                            num_turns: turns,
                            ..done
                        };
                    }
                    Next::Again(prompt) => {
                        retries += 1;
                        let (next, more) = self.ask(&prompt, &io, cancel).await;
                        usage += more;
                        turns += next.num_turns;
                        ending = next;
                    }
                }
            };
        }
        if ending.is_error() {
            ending.text = crate::redact::scrub(&ending.text);
        }
        self.write_result(stream, &ending, started, usage).await;
        self.outcome = ending.outcome;
    }

    /// `prompt` through the session: how it ended, and the tokens it took.
    async fn ask(
        &mut self,
        prompt: &str,
        io: &Io<'_>,
        cancel: &CancellationToken,
    ) -> (Ending, crate::llm::Usage) {
        let reply = self
            .host
            .submit(Command::Prompt(prompt.to_string()), io)
            .await;
        let default_limit = self.host.settings().max_turns.is_none();
        let by_signal = cancel.is_cancelled();
        let total = self.host.total_turns();
        match reply {
            Ok(Reply::Turn { result, usage, .. }) => (
                Ending::of(result, default_limit, total, |turns| {
                    if by_signal {
                        Ending::interrupted(turns)
                    } else {
                        // Asked for: the turn ends, the session goes on, and it is no failure.
                        Ending::error("interrupted by the driver", RunOutcome::Success, turns)
                    }
                }),
                usage,
            ),
            Ok(Reply::Stopped(reason)) => (
                Ending::error(
                    format!("stopped by hook: {reason}"),
                    RunOutcome::Failed,
                    total,
                ),
                Default::default(),
            ),
            Ok(_) => (
                Ending::error("the prompt did not run", RunOutcome::Failed, total),
                Default::default(),
            ),
            Err(e) => (
                Ending::error(e.to_string(), RunOutcome::Failed, total),
                Default::default(),
            ),
        }
    }
}
