//! The agent's side of hooks: firing an event with the session's context, showing every notice
//! and message to the user, and the fast path that costs nothing when no hook matches.

use tokio_util::sync::CancellationToken;

use super::turn::Turn;
use super::{Agent, AgentEvent, EventSink, HookNotice, NoticeDecision};
use crate::hooks::{HookContext, HookInput, HookOutcome};

impl Agent {
    pub(super) fn hook_context(&self) -> HookContext {
        HookContext {
            session_id: self.session.id.clone(),
            transcript_path: self.session.transcript_path.clone(),
            cwd: self.options.root.clone(),
            permission_mode: self.permission_mode().hook_name().to_string(),
            agent: self
                .session
                .link()
                .map(|link| (link.agent_id.clone(), link.agent.clone())),
        }
    }

    /// Runs the hooks of `input`'s event and reports what they did. With no matching handler
    /// this returns at once, without spawning or allocating.
    pub(super) async fn fire(&self, input: HookInput, sink: &dyn EventSink) -> HookOutcome {
        self.fire_cancellable(input, sink, &CancellationToken::new())
            .await
    }

    /// [`Agent::fire_cancellable`] within a run: its sink, its cancel.
    pub(super) async fn fire_in(&self, input: HookInput, turn: &Turn<'_>) -> HookOutcome {
        self.fire_cancellable(input, turn.sink, turn.cancel).await
    }

    /// [`Agent::fire`] that Ctrl-C interrupts: the handlers are killed (dropping the run kills
    /// their process groups) and the outcome is "nothing decided".
    pub(super) async fn fire_cancellable(
        &self,
        input: HookInput,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        if !self.hooks.has_handlers(input.event(), input.match_value()) {
            self.report_async_notices(sink);
            return HookOutcome::default();
        }
        let ctx = self.hook_context();
        let outcome = tokio::select! {
            outcome = self.hooks.run(&input, &ctx) => outcome,
            () = cancel.cancelled() => return HookOutcome::default(),
        };
        let tool = is_tool_event(&input).then(|| input.match_value()).flatten();
        report(&outcome, input.event().to_string(), tool, sink);
        self.report_async_notices(sink);
        outcome
    }

    /// What `async` handlers that finished since the last call did. Also drained when no hook
    /// matches and at exit, or the error of a lone async hook would never be shown.
    fn report_async_notices(&self, sink: &dyn EventSink) {
        for notice in self.hooks.take_async_notices() {
            sink.emit(AgentEvent::Hook(notice_event(&notice, None)));
        }
    }

    /// SessionStart: its context becomes part of the system prompt. Returns the reason when a
    /// hook said `continue: false`.
    pub async fn fire_session_start(
        &mut self,
        source: &str,
        sink: &dyn EventSink,
    ) -> Option<String> {
        let outcome = self
            .fire(
                HookInput::SessionStart {
                    source: source.to_string(),
                },
                sink,
            )
            .await;
        self.session_context = outcome.additional_context.clone();
        self.rebuild_system_prompt();
        outcome.stop
    }

    /// SessionEnd, then a short bounded wait for async handlers still running.
    pub async fn end_session(&self, reason: &str, sink: &dyn EventSink) {
        self.fire(
            HookInput::SessionEnd {
                reason: reason.to_string(),
            },
            sink,
        )
        .await;
        self.hooks.wait_async(ASYNC_GRACE).await;
        self.report_async_notices(sink);
    }
}

/// How long the program waits at exit for `async: true` handlers before killing them.
const ASYNC_GRACE: std::time::Duration = std::time::Duration::from_millis(1500);

fn is_tool_event(input: &HookInput) -> bool {
    matches!(
        input,
        HookInput::PreToolUse { .. }
            | HookInput::PostToolUse { .. }
            | HookInput::PostToolUseFailure { .. }
    )
}

fn report(outcome: &HookOutcome, event: String, tool: Option<&str>, sink: &dyn EventSink) {
    for notice in &outcome.notices {
        sink.emit(AgentEvent::Hook(notice_event(notice, tool)));
    }
    for message in &outcome.system_messages {
        sink.emit(AgentEvent::Hook(HookNotice {
            event: event.clone(),
            decision: NoticeDecision::Message,
            message: message.clone(),
            tool: tool.map(str::to_string),
        }));
    }
}

fn notice_event(notice: &crate::hooks::HookNotice, tool: Option<&str>) -> HookNotice {
    HookNotice {
        event: notice.event.to_string(),
        decision: notice.kind.into(),
        message: format!("{}: {}", notice.handler, notice.message),
        tool: tool.map(str::to_string),
    }
}
