//! A running foreground sub-agent's questions, over the `task` call's line: they reach the
//! user naming it ([`ChildApprover`]). Its events go the same way, tagged with the call
//! (`background.rs`'s `StepSink`, which also keeps its last step for `/agents`).

use async_trait::async_trait;

use crate::agent::asks::{QuestionAnswer, QuestionRequest};
use crate::agent::call_line::CallLine;
use crate::agent::{Approval, ApprovalRequest, Approver};

/// Asks the parent's approver, naming the sub-agent that asks.
pub(super) struct ChildApprover<'a> {
    pub line: &'a CallLine,
    /// `reviewer: find the bug`.
    pub label: String,
}

#[async_trait]
impl Approver for ChildApprover<'_> {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let mut request = request.clone();
        request.agent = Some(self.label.clone());
        self.line.ask(request).await
    }

    fn can_ask(&self) -> bool {
        self.line.can_ask()
    }

    fn orders_questions(&self) -> bool {
        self.line.orders_questions()
    }

    /// A sub-agent whose definition names `ask_user`: its questions go up to the user.
    async fn ask_questions(&self, request: &QuestionRequest) -> Option<QuestionAnswer> {
        self.line.questions(request.clone(), true).await
    }
}
