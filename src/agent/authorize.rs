//! The permission step of a tool call. A deny rule always wins; a PreToolUse hook's `allow` skips
//! the question and its `ask` forces it; otherwise the rules, then the mode. "Ask" goes to the
//! run's approver, and with nobody to ask it is a denial that says which flag or rule would
//! allow the call. An answer that changes the call is checked again before it runs.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::dispatch::{CallError, PreHook};
use super::turn::Turn;
use super::{Agent, AgentEvent, Approval, ApprovalRequest};
use crate::hooks::Decision;
use crate::permissions::{Check, Evaluation, Suggestion};
use crate::tools::Tool;

/// How many times one call may be changed by the approver's answers and asked about again.
const MAX_CHANGES: usize = 3;

/// What one round of the permission step decided, when it did not refuse.
enum Verdict {
    Run,
    /// The approver allowed the call with this input instead.
    Changed(Value),
}

impl Agent {
    /// `Ok` when the call may run: with the input PreToolUse left (`pre`), or with the one the
    /// approver gave instead (`Some`). A changed input (a driver's `updatedInput`) goes through
    /// the check again, as a hook's does: a deny rule or the mode refuses it, and what asks in
    /// every mode (a protected path, an ask rule) is asked about again, with the new input.
    pub(super) async fn authorize(
        &self,
        tool: &dyn Tool,
        call_id: &str,
        pre: &PreHook,
        turn: &Turn<'_>,
    ) -> Result<Option<Value>, CallError> {
        let mut changed: Option<Value> = None;
        for _ in 0..=MAX_CHANGES {
            let input = changed.as_ref().unwrap_or(&pre.input);
            match self
                .authorize_input(tool, call_id, input, pre, changed.is_some(), turn)
                .await?
            {
                Verdict::Run => return Ok(changed),
                Verdict::Changed(input) => changed = Some(input),
            }
        }
        let why = format!(
            "the permission prompt changed this {} call {MAX_CHANGES} times in a row, each \
             needing another question",
            tool.name()
        );
        Err(CallError::Denied(denied(tool, why, turn)))
    }

    /// One round: `input` judged by the rules and the mode, and asked about if it must be.
    /// `changed`: the approver gave `input` in place of the call it was asked about.
    async fn authorize_input(
        &self,
        tool: &dyn Tool,
        call_id: &str,
        input: &Value,
        pre: &PreHook,
        changed: bool,
        turn: &Turn<'_>,
    ) -> Result<Verdict, CallError> {
        let Evaluation {
            check,
            denied_by_rule,
            session_rule,
        } = self.host.lock_permissions().evaluate(tool, input);
        if let Some(reason) = denied_by_rule {
            return Err(CallError::Denied(denied(tool, reason, turn)));
        }
        // The hook decided about the input it saw, not about the approver's change.
        let hook = if changed { None } else { pre.decision };
        let suggestion = match (check, hook) {
            (Check::Deny { reason }, _) => {
                return Err(CallError::Denied(denied(tool, reason, turn)));
            }
            (_, Some(Decision::Allow)) | (Check::Allow, None) => return Ok(Verdict::Run),
            // The approver's answer settled the ordinary question about its own change; only
            // what asks whatever the mode and rules say (`why`) is asked about again.
            (Check::Ask { suggestion }, _) if changed && suggestion.why.is_none() => {
                return Ok(Verdict::Run);
            }
            (Check::Ask { suggestion }, _) => Some(suggestion),
            (Check::Allow, _) => None,
        };
        // A call bound to fail is refused before anybody is asked about it.
        let ctx = self
            .host
            .tool_context(&self.options, &self.llm, &CancellationToken::new());
        tool.precheck(input, &ctx).await.map_err(CallError::Tool)?;
        let reason = match &suggestion {
            Some(s) if changed => s.why.clone(),
            _ => pre.reason.clone(),
        };
        let request = ApprovalRequest {
            tool: tool.name().to_string(),
            tool_use_id: call_id.to_string(),
            input: input.clone(),
            session_rule,
            reason,
            // Only worth a file read when somebody will see it.
            preview: if self.asks() && turn.approver.can_ask() {
                tool.preview(input, &ctx).await
            } else {
                None
            },
            agent: None,
        };
        match self.ask(&request, turn).await {
            Some(Approval::Once) => Ok(Verdict::Run),
            Some(Approval::Edited(input)) => Ok(Verdict::Changed(input)),
            Some(Approval::Always) => {
                self.host
                    .lock_permissions()
                    .allow_for_session(request.session_rule.clone());
                Ok(Verdict::Run)
            }
            Some(Approval::Deny) => {
                turn.decline();
                Err(CallError::UserDenied(tool.name().to_string()))
            }
            Some(Approval::Instead(words)) => Err(CallError::UserInstead {
                tool: tool.name().to_string(),
                words,
            }),
            None => {
                let nobody = if self.asks() {
                    "this run is non-interactive"
                } else if self.options.never_ask {
                    "this run asks nothing (--ask-for-approval never)"
                } else {
                    "the permission mode is dont-ask, which asks nothing"
                };
                let why = nobody_to_ask(tool.name(), suggestion.as_ref(), pre, nobody);
                Err(CallError::NobodyToAsk(denied(tool, why, turn)))
            }
        }
    }

    /// The approver's answer to `request`; `None` when nobody may be asked.
    async fn ask(&self, request: &ApprovalRequest, turn: &Turn<'_>) -> Option<Approval> {
        if !self.asks() {
            return None;
        }
        let _asking = self.question_turn(turn).await;
        if turn.approver.can_ask() {
            self.notify(
                "permission_prompt",
                format!("Ling needs your permission to use {}", request.tool),
            );
        }
        turn.approver.approve(request).await
    }

    /// One question at a time in the agent and its sub-agents, even when calls run
    /// concurrently: held until the guard goes, unless the approver orders them itself.
    pub(super) async fn question_turn(
        &self,
        turn: &Turn<'_>,
    ) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        if turn.approver.orders_questions() {
            return None;
        }
        Some(self.host.approval_turn.lock().await)
    }

    /// Whether a call that needs approval may be asked about at all.
    fn asks(&self) -> bool {
        !self.options.never_ask && self.permission_mode().asks()
    }
}

/// Tells the user the call was refused, and why; returns the reason.
fn denied(tool: &dyn Tool, reason: String, turn: &Turn<'_>) -> String {
    turn.emit(AgentEvent::PermissionDenied {
        tool: tool.name().to_string(),
        message: reason.clone(),
    });
    reason
}

/// Why a call that needed a question was denied with nobody to ask (`nobody` says why, e.g.
/// "this run is non-interactive"), and how to allow it.
fn nobody_to_ask(
    tool: &str,
    suggestion: Option<&Suggestion>,
    pre: &PreHook,
    nobody: &str,
) -> String {
    let hook_reason = pre.reason.as_deref();
    let Some(s) = suggestion else {
        return format!(
            "a PreToolUse hook asked for confirmation of {tool} ({}), and {nobody}, so it was \
             denied",
            hook_reason.unwrap_or("no reason given")
        );
    };
    let mut hint = format!("rerun with {}", s.flag);
    if let Some(mode) = &s.mode_hint {
        hint.push_str(&format!(" or {mode}"));
    }
    let mut asked = match &s.why {
        Some(why) => format!(" ({why})"),
        None => String::new(),
    };
    if let (Some(Decision::Ask), Some(reason)) = (pre.decision, hook_reason) {
        asked.push_str(&format!(" (a PreToolUse hook asked too: {reason})"));
    }
    format!("{tool} needs approval{asked}, and {nobody}, so it was denied; to allow it, {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::Value;

    fn pre(decision: Option<Decision>, reason: Option<&str>) -> PreHook {
        PreHook {
            input: Value::Null,
            decision,
            reason: reason.map(str::to_string),
            context: Vec::new(),
        }
    }

    #[test]
    fn a_denial_without_anybody_to_ask_names_the_flag_and_the_hook() {
        let suggestion = Suggestion {
            rule: "bash(git push*)".into(),
            flag: "--allowed-tools 'bash(git push*)'".into(),
            mode_hint: None,
            why: Some("it leaves the project".into()),
        };
        assert_eq!(
            nobody_to_ask(
                "bash",
                Some(&suggestion),
                &pre(Some(Decision::Ask), Some("pushes are reviewed")),
                "this run is non-interactive"
            ),
            "bash needs approval (it leaves the project) (a PreToolUse hook asked too: pushes \
             are reviewed), and this run is non-interactive, so it was denied; to allow it, \
             rerun with --allowed-tools 'bash(git push*)'"
        );
        assert_eq!(
            nobody_to_ask(
                "bash",
                None,
                &pre(Some(Decision::Ask), None),
                "this run is non-interactive"
            ),
            "a PreToolUse hook asked for confirmation of bash (no reason given), and this run \
             is non-interactive, so it was denied"
        );
        assert_eq!(
            CallError::NobodyToAsk("x".into()).to_string(),
            "permission denied: x. Tell the user what you wanted to do instead of retrying."
        );
    }
}
