//! Where the agent records checkpoints (`crate::checkpoint`): a look at the writable folders
//! before each user message, and before and after each tool call that can write (the whole
//! call: its hooks, the tool, an editor's write through `fs/write_text_file`, a sub-agent's
//! calls, which share the parent's checkpoints). What the looks find is warned about on the
//! turn's events.

use std::future::Future;

use super::call_result::CallResult;
use super::turn::Turn;
use super::{Agent, AgentEvent};
use crate::checkpoint::Checkpoints;
use crate::llm::{Message, ToolCall};
use crate::tools::ToolKind;

impl Agent {
    /// Records the writable folders before each turn and each call that can write.
    pub fn set_checkpoints(&mut self, checkpoints: Option<Checkpoints>) {
        self.host.checkpoints = checkpoints;
    }

    pub fn checkpoints(&self) -> Option<&Checkpoints> {
        self.host.checkpoints.as_ref()
    }

    /// `run` (one call through every step) between a look before it and one after it, when
    /// its tool can write.
    pub(super) async fn checkpointed(
        &self,
        call: &ToolCall,
        turn: &Turn<'_>,
        run: impl Future<Output = CallResult>,
    ) -> CallResult {
        let writes = self
            .host
            .tools
            .get(call.name())
            .is_some_and(|tool| tool.kind() != ToolKind::Read);
        let Some(checkpoints) = self.host.checkpoints.clone().filter(|_| writes) else {
            return run.await;
        };
        let before = checkpoints.look().await;
        // The turn's first call that writes: the turn begins in the state before it.
        let unrecorded = self
            .conversation
            .unrecorded_turn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let (Some(offset), Some(state)) = (unrecorded, before) {
            checkpoints.turn(offset, state).await;
        }
        let result = run.await;
        checkpoints.call_done(call.name(), &call.id, before).await;
        warn(&checkpoints, turn);
        result
    }

    /// The state a turn begins in: the one a custom command looked at before its shell
    /// lines, else a look now; none while the folders were never looked at (a one-shot run:
    /// its first call that writes records the turn, [`Agent::checkpointed`]). Sub-agents
    /// record no turns of their own.
    pub(super) async fn checkpoint_turn(&mut self, turn: &Turn<'_>) -> Option<u32> {
        if self.options.subagent.is_some() {
            return None;
        }
        if let Some(state) = self.conversation.turn_checkpoint.take() {
            return Some(state);
        }
        if self.host.checkpoints.as_ref().is_some_and(|c| !c.looked()) {
            return None;
        }
        let state = self.checkpoint_look().await;
        if let Some(checkpoints) = &self.host.checkpoints {
            warn(checkpoints, turn);
        }
        state
    }

    /// A look at the folders now (what changed since the last was someone else's).
    pub(super) async fn checkpoint_look(&self) -> Option<u32> {
        if self.options.subagent.is_some() {
            return None;
        }
        self.host.checkpoints.as_ref()?.look().await
    }

    /// The user's message of a turn into the history and the transcript, and the turn into
    /// the checkpoints with the state `before` it.
    pub(super) async fn push_prompt(&mut self, message: Message, before: Option<u32>) {
        let offset = self.conversation.session.record_prompt(&message);
        self.conversation.history.push(message);
        match (&self.host.checkpoints, offset, before) {
            (Some(checkpoints), Some(offset), Some(state)) => checkpoints.turn(offset, state).await,
            // Recorded at the turn's first call that writes, if it makes one.
            (Some(_), Some(offset), None) if self.options.subagent.is_none() => {
                *self
                    .conversation
                    .unrecorded_turn
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(offset);
            }
            _ => {}
        }
    }
}

fn warn(checkpoints: &Checkpoints, turn: &Turn<'_>) {
    for warning in checkpoints.take_warnings() {
        turn.emit(AgentEvent::Warning(warning));
    }
}
