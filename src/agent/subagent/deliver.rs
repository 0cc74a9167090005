//! What an agent does with its background children's ends: at each step their events go to
//! the turn's sink and their answers into the conversation, as user messages (Claude Code's
//! `<task-notification>`), their usage into the agent's; once the turn is over the session host
//! waits for the next to end and runs a turn on it ([`Agent::run_background`]).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Registry;
use crate::agent::turn::Turn;
use crate::agent::{Agent, AgentError, Approver, EventSink, RunResult};
use crate::llm::Message;

impl Agent {
    /// Takes what background children left: their events to the turn, their answers into the
    /// conversation. True when an answer was taken.
    pub(in crate::agent) fn take_background(&mut self, turn: &Turn<'_>) -> bool {
        let (events, notices) = self.host.delegation.inbox.take();
        for event in events {
            turn.emit(event);
        }
        let delivered = !notices.is_empty();
        for notice in notices {
            self.conversation.usage += notice.usage;
            self.conversation.push(Message::user(notice.message()));
        }
        delivered
    }

    /// Whether background children of this agent run or ended unheard.
    pub fn has_background(&self) -> bool {
        !self.host.delegation.inbox.is_empty()
    }

    /// Whether a background child of this agent ended and was not heard yet.
    pub fn background_ready(&self) -> bool {
        self.host.delegation.inbox.has_notices()
    }

    /// Waits until a background child of this agent has ended (true), or none runs (false),
    /// or `cancel`.
    pub async fn wait_background(&self, cancel: &CancellationToken) -> bool {
        let inbox = self.host.delegation.inbox.clone();
        inbox.wait(cancel).await
    }

    /// A turn on what background children left, after the turn that started them ended (the
    /// session host runs it when [`Agent::wait_background`] says one ended).
    pub async fn run_background(
        &mut self,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> Result<RunResult, AgentError> {
        self.run_turn(None, sink, approver, cancel).await
    }

    /// The sub-agents running in this agent's tree (`/agents`).
    pub fn agents(&self) -> Arc<Registry> {
        self.host.delegation.registry.clone()
    }
}
