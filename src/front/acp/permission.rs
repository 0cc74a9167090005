//! Questions for the person at the editor, through `session/request_permission`: Ling's approval
//! of a tool call (once, always for the session with the rule it names, or no, which ends the
//! turn), the workspace-trust question of an untrusted project, and an MCP server's sampling
//! request (the model's own plan and questions: `questions.rs`). Each names a tool call the editor was shown first; a question still open when the
//! turn is cancelled is withdrawn (`$/cancel_request`) and counts as no.

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, SessionUpdate, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::asking::{ClientApprover, ask, text};
use super::tool_view::diff_content;
use super::updates::UpdateSink;
use crate::mcp::{ElicitAnswer, Form, SamplingRequest};
use crate::rpc::Peer;
use crate::session::{
    Approval, ApprovalRequest, Approver, McpAsker, PlanAnswer, PlanRequest, QuestionAnswer,
    QuestionRequest,
};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT: &str = "reject_once";

#[async_trait]
impl Approver for ClientApprover<'_> {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let (call_id, shown) = match self.sink.call_for(&request.tool, &request.input) {
            Some(found) => found,
            // Every call is shown before it is asked about; one that was not gets no question.
            None => {
                tracing::warn!("acp: a question about {} names no open call", request.tool);
                return Some(Approval::Deny);
            }
        };
        let mut content = diff_content(&shown);
        if content.is_empty()
            && let Some(preview) = &request.preview
        {
            content.push(text(preview.clone()));
        }
        if let Some(reason) = &request.reason {
            content.push(text(reason.clone()));
        }
        let tool_call = ToolCallUpdate::new(
            call_id.clone(),
            ToolCallUpdateFields::new()
                .title(shown.title.clone())
                .kind(shown.kind)
                .status(ToolCallStatus::Pending)
                .content(content)
                .raw_input(request.input.clone()),
        );
        let options = vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {} in this session", request.session_rule),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                REJECT,
                "No, and stop to tell Ling what to do",
                PermissionOptionKind::RejectOnce,
            ),
        ];
        let answer = ask(self.peer, self.session_id, tool_call, options, self.cancel).await;
        let approval = match answer.as_deref() {
            Some(ALLOW_ONCE) => Approval::Once,
            Some(ALLOW_ALWAYS) => Approval::Always,
            _ => Approval::Deny,
        };
        if approval != Approval::Deny {
            self.sink.running(&call_id);
        }
        Some(approval)
    }

    async fn approve_plan(&self, request: &PlanRequest) -> Option<PlanAnswer> {
        Some(super::questions::ask_plan(self, request).await)
    }

    async fn ask_questions(&self, request: &QuestionRequest) -> Option<QuestionAnswer> {
        Some(super::questions::ask_questions(self, request).await)
    }
}

/// The workspace-trust question of an untrusted project, shown as a call of its own. True when
/// the user trusts the folder.
pub(super) async fn ask_trust(
    peer: &Peer,
    session_id: &str,
    sink: &UpdateSink,
    description: &str,
    cancel: &CancellationToken,
) -> bool {
    let call_id = format!("ling-trust-{}", uuid::Uuid::new_v4().simple());
    let title = "Trust this folder's project config?";
    sink.send(SessionUpdate::ToolCall(
        ToolCall::new(call_id.clone(), title)
            .kind(ToolKind::Other)
            .status(ToolCallStatus::Pending)
            .content(vec![text(description)]),
    ));
    let options = vec![
        PermissionOption::new(
            ALLOW_ALWAYS,
            "Trust this folder",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Open without it", PermissionOptionKind::RejectOnce),
    ];
    let tool_call = ToolCallUpdate::new(
        call_id.clone(),
        ToolCallUpdateFields::new()
            .title(title.to_string())
            .content(vec![text(description)]),
    );
    let trusted = ask(peer, session_id, tool_call, options, cancel)
        .await
        .as_deref()
        == Some(ALLOW_ALWAYS);
    let outcome = if trusted {
        "Trusted: the project's config is used from now on."
    } else {
        "Not trusted: Ling runs without the project's config (`ling trust` trusts it later)."
    };
    sink.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id,
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Completed)
            .content(vec![text(outcome)]),
    )));
    trusted
}

/// Answers the MCP servers' questions of one session: a sampling request is put to the editor
/// as a permission question; forms and URLs, which ACP has no stable way to show, are declined.
pub(super) struct SessionAsker {
    pub peer: Peer,
    pub session_id: String,
    pub sink: std::sync::Arc<UpdateSink>,
}

#[async_trait]
impl McpAsker for SessionAsker {
    async fn approve_sampling(&self, server: &str, request: &SamplingRequest) -> bool {
        let call_id = format!("ling-sampling-{}", uuid::Uuid::new_v4().simple());
        let title = format!("MCP server {server} asks the model a question");
        let mut shown = String::new();
        if let Some(system) = &request.system_prompt {
            shown.push_str(&format!("System prompt: {system}\n\n"));
        }
        for message in &request.messages {
            shown.push_str(&message.text);
            shown.push('\n');
        }
        self.sink.send(SessionUpdate::ToolCall(
            ToolCall::new(call_id.clone(), title.clone())
                .kind(ToolKind::Other)
                .status(ToolCallStatus::Pending)
                .content(vec![text(shown)]),
        ));
        let options = vec![
            PermissionOption::new(
                ALLOW_ONCE,
                "Send it to the model",
                PermissionOptionKind::AllowOnce,
            ),
            PermissionOption::new(REJECT, "Refuse", PermissionOptionKind::RejectOnce),
        ];
        let tool_call =
            ToolCallUpdate::new(call_id.clone(), ToolCallUpdateFields::new().title(title));
        let never = CancellationToken::new();
        let allowed = ask(&self.peer, &self.session_id, tool_call, options, &never)
            .await
            .as_deref()
            == Some(ALLOW_ONCE);
        let status = if allowed {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        };
        self.sink
            .send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id,
                ToolCallUpdateFields::new().status(status),
            )));
        allowed
    }

    async fn fill_form(&self, server: &str, _form: &Form) -> ElicitAnswer {
        tracing::info!("acp: declined a form of MCP server {server} (ACP shows no MCP forms)");
        ElicitAnswer::Decline
    }

    async fn show_url(&self, server: &str, _message: &str, url: &str) -> ElicitAnswer {
        tracing::info!("acp: declined MCP server {server}'s URL {url} (ACP shows no MCP URLs)");
        ElicitAnswer::Decline
    }
}
