//! Asking the user before a risky tool call, and the model's own questions to the user (a plan
//! to approve, multiple-choice questions). The REPL asks on the terminal; a non-interactive run
//! has nobody to ask, so every question is a denial that says which flag would allow it.

use async_trait::async_trait;
use serde_json::Value;

use super::asks::{PlanAnswer, PlanRequest, QuestionAnswer, QuestionRequest};

#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub tool: String,
    /// The call's id (the model's `tool_call_id`).
    pub tool_use_id: String,
    pub input: Value,
    /// The rule "always for this session" would add, e.g. `bash(git status*)`.
    pub session_rule: String,
    /// Why we ask (a hook's `ask` reason), when there is one.
    pub reason: Option<String>,
    /// What the call would change (an edit's diff), to see before answering.
    pub preview: Option<String>,
    /// The sub-agent that asks (`reviewer (task call_1)`); `None` for the main agent.
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    Once,
    /// Once, with this input instead (a program's permission prompt may change it).
    Edited(Value),
    Always,
    /// No: the call is not run and the run ends, back to the user.
    Deny,
    /// Not this: the user's words are the call's result, and the model goes on with them.
    Instead(String),
}

#[async_trait]
pub trait Approver: Send + Sync {
    /// None means nobody can be asked (non-interactive): the agent denies with a hint.
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval>;
    /// Whether anybody is there to ask; when not, nothing is prepared for the question.
    fn can_ask(&self) -> bool {
        true
    }
    /// Whether the approver itself asks one question at a time, in the order they come (the
    /// REPL, which says how many wait): the agents then send every question at once instead of
    /// holding all but one back, so that the approver sees the ones waiting.
    fn orders_questions(&self) -> bool {
        false
    }
    /// The user's decision on the plan `exit_plan_mode` hands over; `None`: nobody can be
    /// asked (the call is refused and the run stays in plan mode).
    async fn approve_plan(&self, _request: &PlanRequest) -> Option<PlanAnswer> {
        None
    }
    /// The user's answers to the model's questions (`ask_user`); `None`: nobody can be asked.
    async fn ask_questions(&self, _request: &QuestionRequest) -> Option<QuestionAnswer> {
        None
    }
}

/// The approver of `-p` runs: nobody to ask.
pub struct NonInteractive;

#[async_trait]
impl Approver for NonInteractive {
    async fn approve(&self, _request: &ApprovalRequest) -> Option<Approval> {
        None
    }

    fn can_ask(&self) -> bool {
        false
    }
}
