//! The control channel of `--input-format stream-json`: requests Ling sends to its driver (the
//! Claude Agent SDK) on stdout and the answers it reads back on stdin, matched by `request_id`,
//! and the permission prompt built on it (`--permission-prompt-tool stdio`): a call that needs
//! approval is a `can_use_tool` request, answered by the SDK's `canUseTool` callback; so are
//! a plan to approve (`ExitPlanMode`) and the model's questions (`AskUserQuestion`, answered in
//! `updatedInput.answers`), as Claude Code asks them.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::PermissionMode;
use crate::front::print::claude::claude_name;
use crate::front::print::json_line;
use crate::hooks::claude::{to_ling_update, with_claude_fields};
use crate::pending::{Pending, Waited};
use crate::session::{
    ASK_USER, Approval, ApprovalRequest, Approver, EXIT_PLAN_MODE, PlanAnswer, PlanRequest,
    QuestionAnswer, QuestionRequest,
};

/// What came back for a request: the `response` of a success, or the `error`.
type Answer = Result<Value, String>;

/// Requests waiting for their answer, by `request_id`.
#[derive(Default)]
pub struct Control {
    pending: Pending<String, Answer>,
}

impl Control {
    /// Sends `request` (an object with its `subtype`) and waits for the answer; `None` when
    /// `cancel` fired first (the driver is told with a `control_cancel_request`).
    pub async fn request(&self, request: Value, cancel: &CancellationToken) -> Option<Answer> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let Ok(answer) = self.pending.register(id.clone()) else {
            return Some(Err("stdin is closed, so nobody can answer".into()));
        };
        json_line(&json!({"type": "control_request", "request_id": id, "request": request}));
        match self.pending.wait(&id, answer, None, Some(cancel)).await {
            Waited::Answer(answer) => Some(answer),
            Waited::Closed => Some(Err("stdin closed before the answer came".into())),
            Waited::Cancelled | Waited::TimedOut(_) => {
                json_line(&json!({"type": "control_cancel_request", "request_id": id}));
                None
            }
        }
    }

    /// A `control_response` read from stdin: hands its answer to whoever waits for it. An
    /// answer nobody waits for (a cancelled request) is dropped.
    pub fn deliver(&self, response: &Value) {
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            return;
        };
        let answer = match response.get("subtype").and_then(Value::as_str) {
            Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Null)),
            _ => Err(response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the request failed")
                .to_string()),
        };
        self.pending.complete(&id.to_string(), answer);
    }

    /// Stdin ended: every request waiting fails, and later ones fail at once.
    pub fn close(&self) {
        self.pending.close("stdin closed");
    }
}

/// The program's hook callbacks and in-process MCP servers are asked over this channel; such
/// a request is never given up by Ling (its own timeout bounds it).
#[async_trait]
impl crate::program::ProgramChannel for Control {
    async fn request(&self, request: Value) -> Result<Value, String> {
        let never = CancellationToken::new();
        Control::request(self, request, &never)
            .await
            .unwrap_or_else(|| Err("the request was cancelled".into()))
    }
}

/// Answers a request the driver sent: `Ok` is a success with that `response`, `Err` an error.
/// Answers a control request with a typed answer (serialised) or the error.
pub fn answer<T: serde::Serialize>(request_id: &str, answer: Result<T, String>) {
    respond(
        request_id,
        answer.and_then(|a| serde_json::to_value(a).map_err(|e| e.to_string())),
    );
}

pub fn respond(request_id: &str, answer: Answer) {
    let response = match answer {
        Ok(response) => {
            json!({"subtype": "success", "request_id": request_id, "response": response})
        }
        Err(error) => json!({"subtype": "error", "request_id": request_id, "error": error}),
    };
    json_line(&json!({"type": "control_response", "response": response}));
}

/// `--permission-prompt-tool stdio`: every question goes to the driver as `can_use_tool`, with
/// the tool in Claude Code's name and fields; its `updatedInput` may use either spelling.
pub struct StdioApprover {
    control: Arc<Control>,
    /// The turn being run: an interrupt cancels the question with it.
    cancel: CancellationToken,
}

impl StdioApprover {
    pub fn new(control: Arc<Control>, cancel: CancellationToken) -> Self {
        Self { control, cancel }
    }
}

#[async_trait]
impl Approver for StdioApprover {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let sent = with_claude_fields(&request.tool, &request.input);
        let (rule_tool, rule_content) = match request.session_rule.split_once('(') {
            Some((tool, rest)) => (tool.to_string(), rest.strip_suffix(')').map(str::to_string)),
            None => (request.session_rule.clone(), None),
        };
        let mut rule = json!({"toolName": claude_name(&rule_tool)});
        if let Some(content) = rule_content {
            rule["ruleContent"] = json!(content);
        }
        let mut question = json!({
            "subtype": "can_use_tool",
            "tool_name": claude_name(&request.tool),
            "input": sent,
            "tool_use_id": request.tool_use_id,
            "permission_suggestions": [{
                "type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session",
            }],
        });
        if let Some(reason) = &request.reason {
            question["decision_reason"] = json!(reason);
        }
        match self.control.request(question, &self.cancel).await {
            None => Some(Approval::Deny),
            Some(Err(error)) => Some(Approval::Instead(format!(
                "the permission prompt (the program driving Ling) failed: {error}"
            ))),
            Some(Ok(answer)) => Some(read_answer(&request.tool, &sent, &answer)),
        }
    }

    async fn approve_plan(&self, request: &PlanRequest) -> Option<PlanAnswer> {
        let input = json!({"plan": request.plan});
        let answer = self
            .ask_driver(EXIT_PLAN_MODE, input, &request.tool_use_id)
            .await?;
        Some(plan_answer(&answer))
    }

    async fn ask_questions(&self, request: &QuestionRequest) -> Option<QuestionAnswer> {
        let input = json!({"questions": request.questions});
        let answer = self
            .ask_driver(ASK_USER, input, &request.tool_use_id)
            .await?;
        Some(question_answer(request, &answer))
    }
}

impl StdioApprover {
    /// A `can_use_tool` request for one of the model's own questions to the user (Claude
    /// Code's `ExitPlanMode`, `AskUserQuestion`); `None` when it was cancelled or failed.
    async fn ask_driver(&self, tool: &str, input: Value, tool_use_id: &str) -> Option<Value> {
        let question = json!({
            "subtype": "can_use_tool",
            "tool_name": claude_name(tool),
            "input": input,
            "tool_use_id": tool_use_id,
            "permission_suggestions": [],
        });
        match self.control.request(question, &self.cancel).await? {
            Ok(answer) => Some(answer),
            Err(error) => {
                tracing::warn!("the driver's answer to {tool} failed: {error}");
                None
            }
        }
    }
}

/// The driver's answer to a plan: allow approves it (in the mode an `updatedPermissions`
/// `setMode` names, else `default`); deny keeps planning with its message as the feedback
/// (`interrupt: true`, or no message: the turn ends).
fn plan_answer(answer: &Value) -> PlanAnswer {
    if answer.get("behavior").and_then(Value::as_str) == Some("allow") {
        let mode = answer
            .get("updatedPermissions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|u| u.get("type").and_then(Value::as_str) == Some("setMode"))
            .find_map(|u| {
                u.get("mode")
                    .and_then(Value::as_str)
                    .and_then(PermissionMode::parse)
            })
            .filter(|mode| *mode != PermissionMode::Plan)
            .unwrap_or(PermissionMode::Default);
        return PlanAnswer::Approve(mode);
    }
    let message = answer
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty());
    match message {
        Some(m) if answer.get("interrupt").and_then(Value::as_bool) != Some(true) => {
            PlanAnswer::KeepPlanning(Some(m.to_string()))
        }
        _ => PlanAnswer::KeepPlanning(None),
    }
}

/// The driver's answers, as Claude Code reads them: allowed with `updatedInput.answers` (the
/// question's text → the chosen label(s) or the user's words); a deny, or no answers, is a
/// decline. A question left out of `answers` is answered `[No preference]`, as Claude's.
fn question_answer(request: &QuestionRequest, answer: &Value) -> QuestionAnswer {
    let answers = answer
        .get("updatedInput")
        .and_then(|u| u.get("answers"))
        .and_then(Value::as_object);
    match (answer.get("behavior").and_then(Value::as_str), answers) {
        (Some("allow"), Some(answers)) if !answers.is_empty() => QuestionAnswer::Answered(
            request
                .questions
                .iter()
                .map(|q| {
                    let text = match answers.get(&q.question) {
                        Some(Value::String(text)) => text.clone(),
                        Some(Value::Array(labels)) => labels
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", "),
                        _ => "[No preference]".to_string(),
                    };
                    (q.question.clone(), text)
                })
                .collect(),
        ),
        _ => QuestionAnswer::Declined,
    }
}

/// A `PermissionResult`: `{"behavior": "allow", "updatedInput", "updatedPermissions"}` or
/// `{"behavior": "deny", "message", "interrupt"}`.
fn read_answer(tool: &str, sent: &Value, answer: &Value) -> Approval {
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let always = answer
                .get("updatedPermissions")
                .and_then(Value::as_array)
                .is_some_and(|updates| {
                    updates.iter().any(|u| {
                        u.get("type").and_then(Value::as_str) == Some("addRules")
                            && u.get("behavior").and_then(Value::as_str) == Some("allow")
                    })
                });
            match answer.get("updatedInput").and_then(Value::as_object) {
                Some(update) if Value::Object(update.clone()) != *sent => {
                    Approval::Edited(Value::Object(to_ling_update(tool, sent, update.clone())))
                }
                _ if always => Approval::Always,
                _ => Approval::Once,
            }
        }
        Some("deny") => {
            let message = answer
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("denied by the permission prompt");
            if answer.get("interrupt").and_then(Value::as_bool) == Some(true) {
                Approval::Deny
            } else {
                Approval::Instead(message.to_string())
            }
        }
        _ => Approval::Instead(format!(
            "the permission prompt answered neither allow nor deny: {}",
            crate::session::cap_middle(&answer.to_string(), 300)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::Map;

    fn object(value: &Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn answers_become_approvals() {
        let sent = with_claude_fields("write_file", &json!({"path": "a", "content": "x"}));
        let allow = |extra: Value| {
            let mut answer = json!({"behavior": "allow"});
            for (k, v) in object(&extra) {
                answer[k] = v;
            }
            read_answer("write_file", &sent, &answer)
        };
        assert_eq!(allow(json!({})), Approval::Once);
        assert_eq!(allow(json!({"updatedInput": sent.clone()})), Approval::Once);
        assert_eq!(
            allow(json!({"updatedInput": {"file_path": "b", "content": "x"}})),
            Approval::Edited(json!({"path": "b", "content": "x"}))
        );
        assert_eq!(
            allow(
                json!({"updatedPermissions": [{"type": "addRules", "behavior": "allow",
                "rules": [{"toolName": "Write"}], "destination": "session"}]})
            ),
            Approval::Always
        );
        assert_eq!(
            read_answer(
                "write_file",
                &sent,
                &json!({"behavior": "deny", "message": "no"})
            ),
            Approval::Instead("no".into())
        );
        assert_eq!(
            read_answer(
                "write_file",
                &sent,
                &json!({"behavior": "deny", "message": "no", "interrupt": true})
            ),
            Approval::Deny
        );
    }

    #[test]
    fn plan_and_question_answers_read_as_claude_code_s() {
        assert_eq!(
            plan_answer(&json!({"behavior": "allow"})),
            PlanAnswer::Approve(PermissionMode::Default)
        );
        assert_eq!(
            plan_answer(&json!({"behavior": "allow", "updatedPermissions": [
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]})),
            PlanAnswer::Approve(PermissionMode::AcceptEdits)
        );
        assert_eq!(
            plan_answer(&json!({"behavior": "deny", "message": "add tests"})),
            PlanAnswer::KeepPlanning(Some("add tests".into()))
        );
        assert_eq!(
            plan_answer(&json!({"behavior": "deny", "message": "x", "interrupt": true})),
            PlanAnswer::KeepPlanning(None)
        );
        let request = QuestionRequest {
            questions: serde_json::from_value(json!([
                {"question": "A?", "options": [{"label": "x"}, {"label": "y"}]},
                {"question": "B?", "options": [{"label": "x"}, {"label": "y"}]}
            ]))
            .unwrap_or_default(),
            tool_use_id: "c".into(),
        };
        assert_eq!(
            question_answer(
                &request,
                &json!({"behavior": "allow", "updatedInput": {"answers": {"A?": "x"}}})
            ),
            QuestionAnswer::Answered(vec![
                ("A?".into(), "x".into()),
                ("B?".into(), "[No preference]".into())
            ])
        );
        assert_eq!(
            question_answer(&request, &json!({"behavior": "allow", "updatedInput": {}})),
            QuestionAnswer::Declined
        );
        assert_eq!(
            question_answer(&request, &json!({"behavior": "deny", "message": "no"})),
            QuestionAnswer::Declined
        );
    }

    #[tokio::test]
    async fn an_answer_reaches_its_request_and_a_closed_stdin_fails_the_rest() {
        let control = Arc::new(Control::default());
        let cancel = CancellationToken::new();
        let waiting = {
            let control = control.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { control.request(json!({"subtype": "x"}), &cancel).await })
        };
        // The id is only on stdout; deliver to whatever waits.
        let id = loop {
            if let Some(id) = control.pending.ids().pop() {
                break id;
            }
            tokio::task::yield_now().await;
        };
        control.deliver(&json!({"subtype": "success", "request_id": id, "response": {"a": 1}}));
        assert_eq!(waiting.await.ok().flatten(), Some(Ok(json!({"a": 1}))));
        control.close();
        assert!(matches!(
            control.request(json!({}), &cancel).await,
            Some(Err(_))
        ));
    }
}
