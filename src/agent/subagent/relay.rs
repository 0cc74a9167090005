//! A running sub-agent's side of its parent's turn, over the `task` call's line: its events
//! reach the parent's sink tagged with the call ([`ChildSink`], which also counts its tool
//! calls), and its questions reach the user naming it ([`ChildApprover`]).

use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;

use super::Link;
use crate::agent::ask_user::{QuestionAnswer, QuestionRequest};
use crate::agent::call_line::CallLine;
use crate::agent::{
    AgentEvent, Approval, ApprovalRequest, Approver, EventSink, SubagentEvent, SubagentKind,
};

/// Forwards a sub-agent's events to the parent's turn, tagged with its call; counts its calls.
pub(super) struct ChildSink<'a> {
    line: &'a CallLine,
    link: &'a Link,
    tool_calls: AtomicU32,
}

impl<'a> ChildSink<'a> {
    pub fn new(line: &'a CallLine, link: &'a Link) -> Self {
        Self {
            line,
            link,
            tool_calls: AtomicU32::new(0),
        }
    }

    /// Tells the parent's turn `kind`, about this sub-agent.
    pub fn tell(&self, kind: SubagentKind) {
        self.line.emit(AgentEvent::Subagent(SubagentEvent {
            call_id: self.link.parent_tool_use_id.clone(),
            agent: self.link.agent.clone(),
            agent_id: self.link.agent_id.clone(),
            kind,
        }));
    }

    /// The tool calls the sub-agent began so far.
    pub fn tool_calls(&self) -> u32 {
        self.tool_calls.load(Ordering::Relaxed)
    }
}

impl EventSink for ChildSink<'_> {
    fn emit(&self, event: AgentEvent) {
        if matches!(event, AgentEvent::ToolCallBegin { .. }) {
            self.tool_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.tell(SubagentKind::Event(Box::new(event)));
    }
}

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
