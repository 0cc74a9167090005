//! The model's own questions to the person at the editor, through `session/request_permission`
//! (stable ACP has no form to fill in): a plan to approve (`exit_plan_mode`: approve and go on
//! in default mode, approve and accept edits, or keep planning; the mode an approval sets
//! reaches the editor as a `current_mode_update`), and each of `ask_user`'s questions as one
//! request whose options are the question's choices, plus one to decline. An editor's
//! permission prompt can pick one option and type nothing, so a multi-select is answered with
//! one choice, and "other" is not offered. No answer (the turn cancelled, the request failed)
//! declines.

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use super::asking::{ClientApprover, ask, text};
use crate::config::PermissionMode;
use crate::session::{PlanAnswer, PlanRequest, QuestionAnswer, QuestionRequest};

const APPROVE: &str = "approve_default";
const APPROVE_EDITS: &str = "approve_accept_edits";
const KEEP_PLANNING: &str = "keep_planning";
const DECLINE: &str = "decline";

/// The option id of a question's choice `index`.
fn choice_id(index: usize) -> String {
    format!("choice_{}", index + 1)
}

/// The plan put to the editor as a question about its `exit_plan_mode` call.
pub(super) async fn ask_plan(approver: &ClientApprover<'_>, request: &PlanRequest) -> PlanAnswer {
    let tool_call = ToolCallUpdate::new(
        request.tool_use_id.clone(),
        ToolCallUpdateFields::new()
            .title("Approve the plan?".to_string())
            .status(ToolCallStatus::Pending)
            .content(vec![text(request.plan.clone())]),
    );
    let options = vec![
        PermissionOption::new(
            APPROVE,
            "Yes, and go on in default mode (edits ask)",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            APPROVE_EDITS,
            "Yes, and accept edits",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            KEEP_PLANNING,
            "No, keep planning",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    let answer = ask(
        approver.peer,
        approver.session_id,
        tool_call,
        options,
        approver.cancel,
    )
    .await;
    match answer.as_deref() {
        Some(APPROVE) => PlanAnswer::Approve(PermissionMode::Default),
        Some(APPROVE_EDITS) => PlanAnswer::Approve(PermissionMode::AcceptEdits),
        _ => PlanAnswer::KeepPlanning(None),
    }
}

/// Each question as one request about the `ask_user` call; declining one declines them all.
pub(super) async fn ask_questions(
    approver: &ClientApprover<'_>,
    request: &QuestionRequest,
) -> QuestionAnswer {
    let mut answers = Vec::new();
    for q in &request.questions {
        let mut content = vec![text(q.question.clone())];
        for option in q
            .options
            .iter()
            .filter(|o| !o.description.trim().is_empty())
        {
            content.push(text(format!("{}: {}", option.label, option.description)));
        }
        let title = if q.header.trim().is_empty() {
            q.question.clone()
        } else {
            format!("{}: {}", q.header, q.question)
        };
        let tool_call = ToolCallUpdate::new(
            request.tool_use_id.clone(),
            ToolCallUpdateFields::new()
                .title(title)
                .status(ToolCallStatus::Pending)
                .content(content),
        );
        let mut options: Vec<PermissionOption> = q
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                PermissionOption::new(
                    choice_id(i),
                    o.label.clone(),
                    PermissionOptionKind::AllowOnce,
                )
            })
            .collect();
        options.push(PermissionOption::new(
            DECLINE,
            "Decline to answer",
            PermissionOptionKind::RejectOnce,
        ));
        let answer = ask(
            approver.peer,
            approver.session_id,
            tool_call,
            options,
            approver.cancel,
        )
        .await;
        let chosen = answer.and_then(|id| {
            q.options
                .iter()
                .enumerate()
                .find(|(i, _)| choice_id(*i) == id)
                .map(|(_, o)| o.label.clone())
        });
        match chosen {
            Some(label) => answers.push((q.question.clone(), label)),
            None => return QuestionAnswer::Declined,
        }
    }
    QuestionAnswer::Answered(answers)
}
