//! The agent's side of hooks: firing an event with the session's context, showing every notice
//! and message to the user, and the fast path that costs nothing when no hook matches.

use tokio_util::sync::CancellationToken;

use super::turn::Turn;
use super::{Agent, AgentEvent, EventSink, HookNotice, NoticeDecision};
use crate::hooks::{ConditionMatcher, HookContext, HookInput, HookOutcome};
use crate::permissions::Condition;

impl Agent {
    pub(super) fn hook_context(&self) -> HookContext {
        HookContext {
            session_id: self.conversation.session.id.clone(),
            transcript_path: self.conversation.session.transcript_path.clone(),
            cwd: self.options.root.clone(),
            permission_mode: self.permission_mode().hook_name().to_string(),
            agent: self.subagent_info(),
        }
    }

    /// Tells Notification hooks that Ling waits for the user (`notification_type`:
    /// `permission_prompt`, `idle_prompt`, `elicitation_dialog`). They run in the background:
    /// nobody waits for them.
    pub fn notify(&self, notification_type: &str, message: String) {
        self.notifier().notify(notification_type, message);
    }

    /// What announces to Notification hooks that Ling waits, for other parts of the run (the
    /// MCP host's questions, the idle prompt): the hooks with the session as it is now.
    pub fn notifier(&self) -> Notifier {
        Notifier {
            hooks: self.host.hooks.clone(),
            ctx: self.hook_context(),
        }
    }

    /// Until the returned guard is dropped (input came), waits `idleNotifyMs` and then tells
    /// Notification hooks `idle_prompt`: the REPL waits at its prompt.
    pub fn idle_notice(&self) -> IdleNotice {
        if !self.host.hooks.has_handlers(
            crate::hooks::HookEventName::Notification,
            Some("idle_prompt"),
        ) {
            return IdleNotice(None);
        }
        let notifier = self.notifier();
        let after = self.options.idle_notify_after;
        IdleNotice(Some(tokio::spawn(async move {
            tokio::time::sleep(after).await;
            notifier.notify("idle_prompt", "Ling is waiting for your input".into());
        })))
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
        if !self
            .host
            .hooks
            .has_handlers(input.event(), input.match_value())
        {
            self.report_async_notices(sink);
            return HookOutcome::default();
        }
        let ctx = self.hook_context();
        let outcome = tokio::select! {
            outcome = self.host.hooks.run(&input, &ctx) => outcome,
            () = cancel.cancelled() => return HookOutcome::default(),
        };
        let tool = is_tool_event(&input).then(|| input.match_value()).flatten();
        report(&outcome, input.event().to_string(), tool, sink);
        self.report_async_notices(sink);
        outcome
    }

    /// What `async` handlers that finished since the last call did. Also drained when no hook
    /// matches and at exit, or the error of a lone async hook would never be shown.
    pub(super) fn report_async_notices(&self, sink: &dyn EventSink) {
        for notice in self.host.hooks.take_async_notices() {
            sink.emit(AgentEvent::Hook(notice_event(&notice, None)));
        }
    }
}

/// Announces to Notification hooks that Ling waits for the user.
#[derive(Clone)]
pub struct Notifier {
    hooks: crate::hooks::HookEngine,
    ctx: HookContext,
}

impl Notifier {
    pub fn notify(&self, notification_type: &str, message: String) {
        let input = HookInput::Notification {
            message,
            title: Some("Ling".into()),
            notification_type: notification_type.to_string(),
        };
        if self.hooks.has_handlers(input.event(), input.match_value()) {
            self.hooks.notify(&input, &self.ctx);
        }
    }
}

/// The pending idle notification of [`Agent::idle_notice`]; dropping it cancels it.
pub struct IdleNotice(Option<tokio::task::JoinHandle<()>>);

impl Drop for IdleNotice {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

/// Hook handlers' `if` rules, matched by the permission rules' matcher (each rule parsed once).
pub struct RuleConditions {
    paths: crate::config::Paths,
    parsed: std::sync::Mutex<std::collections::HashMap<String, Option<Condition>>>,
}

impl RuleConditions {
    pub fn new(paths: &crate::config::Paths) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self {
            paths: paths.clone(),
            parsed: Default::default(),
        })
    }
}

impl ConditionMatcher for RuleConditions {
    fn matches(&self, rule: &str, tool: &str, input: &serde_json::Value) -> bool {
        let mut parsed = self
            .parsed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let condition = parsed
            .entry(rule.to_string())
            .or_insert_with(|| Condition::parse(rule, &self.paths).ok());
        // A rule that does not parse was refused at load; should one slip through, the handler
        // runs (a guard that runs too often is the safe side).
        condition.as_ref().is_none_or(|c| c.matches(tool, input))
    }
}

/// Every handler's `if` must be a valid permission rule: a bad one stops the run with its file,
/// line and column, as any other mistake in a hooks file does.
pub fn check_hook_conditions(
    hooks: &crate::hooks::HookEngine,
    paths: &crate::config::Paths,
) -> Result<(), crate::config::ConfigError> {
    for (rule, path, line, column) in hooks.conditions() {
        if let Err(e) = Condition::parse(&rule, paths) {
            return Err(crate::config::ConfigError::Syntax {
                path,
                line,
                column,
                message: format!("`if`: {e}"),
            });
        }
    }
    Ok(())
}

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
