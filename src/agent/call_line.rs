//! A tool call's line back to the agent and the turn it runs in, for the agent's own tools
//! (`task`, `skill`). Tools know nothing of the agent, so the line reaches them in
//! [`ToolContext::caller`], which only the agent's own tools look at; the dispatch point opens
//! one for every call and serves it while the call runs ([`Agent::serve_line`]): events for the
//! turn's sink, questions for its approver (a call's approval, a plan, the model's own
//! questions), the turn declined or stopped, a narrowing of the run, a sub-agent made from the
//! agent, and the session's to-do list. Requests still queued when the call ends are served
//! before its result is reported, so nothing a tool sent is lost or shown after its end.
//!
//! [`ToolContext::caller`]: crate::tools::ToolContext

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::asks::{PlanAnswer, PlanRequest, QuestionAnswer, QuestionRequest, Todo};
use super::filter::ToolFilter;
use super::subagent::ChildOrder;
use super::subagent::SpawnError;
use super::turn::Turn;
use super::{Agent, AgentEvent, Approval, ApprovalRequest};
use crate::tools::ToolContext;

/// What a tool asks of its agent and turn.
pub(super) enum Request {
    /// For the turn's sink (a sub-agent's events, tagged with the call).
    Event(AgentEvent),
    /// For the turn's approver; the answer goes back.
    Ask(ApprovalRequest, oneshot::Sender<Option<Approval>>),
    /// The user said no to a call the tool made: the turn ends after this response's calls.
    Decline,
    /// A hook said `continue: false` inside the tool's work: the run stops after these calls.
    Stop(String),
    /// The rest of the run may use only what this admits (a loaded skill's `allowed-tools`).
    Narrow(ToolFilter),
    /// A sub-agent of the calling agent, ready to run (SubagentStart fired).
    Child(ChildOrder, oneshot::Sender<Result<Agent, SpawnError>>),
    /// The session's to-do list is now this (`todo_write`).
    Todos(Vec<Todo>),
    /// A plan for the turn's approver (`exit_plan_mode`); the answer goes back.
    Plan(PlanRequest, oneshot::Sender<Option<PlanAnswer>>),
    /// Questions for the turn's approver (`ask_user`); `forwarded`: a sub-agent's, already
    /// holding the question turn. The answer goes back.
    Questions {
        request: QuestionRequest,
        forwarded: bool,
        answer: oneshot::Sender<Option<QuestionAnswer>>,
    },
}

/// The tool's end of the line.
#[derive(Clone)]
pub(super) struct CallLine {
    tx: mpsc::UnboundedSender<Request>,
    /// Whether the turn's approver can ask anybody.
    can_ask: bool,
    /// Whether it orders its questions itself ([`Approver::orders_questions`](crate::agent::Approver::orders_questions)).
    orders_questions: bool,
    /// Set while an agent of the tool's own runs (a sub-agent): at a cancel the call is then
    /// waited for, since that agent stops its own calls within their grace.
    runs_agent: Arc<AtomicBool>,
}

/// While it lives, the call runs an agent of its own ([`CallLine::running_agent`]).
pub(super) struct RunningAgent(Arc<AtomicBool>);

impl Drop for RunningAgent {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

impl CallLine {
    /// A line for a call of a turn whose approver `can_ask` (and `orders_questions`), and the
    /// end the dispatch point serves.
    pub fn open(can_ask: bool, orders_questions: bool) -> (Self, mpsc::UnboundedReceiver<Request>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let line = Self {
            tx,
            can_ask,
            orders_questions,
            runs_agent: Arc::default(),
        };
        (line, rx)
    }

    /// The line the agent lent the call `ctx` is of; `None` outside an agent's dispatch point
    /// (a tool called directly).
    pub fn of(ctx: &ToolContext) -> Option<&Self> {
        ctx.caller.as_ref()?.downcast_ref()
    }

    pub fn emit(&self, event: AgentEvent) {
        let _ = self.tx.send(Request::Event(event));
    }

    /// The turn's approver's answer; `None` when nobody answers (or the call has ended).
    pub async fn ask(&self, request: ApprovalRequest) -> Option<Approval> {
        let (answer, answered) = oneshot::channel();
        self.tx.send(Request::Ask(request, answer)).ok()?;
        answered.await.ok().flatten()
    }

    pub fn can_ask(&self) -> bool {
        self.can_ask
    }

    pub fn orders_questions(&self) -> bool {
        self.orders_questions
    }

    pub fn decline(&self) {
        let _ = self.tx.send(Request::Decline);
    }

    pub fn stop(&self, reason: String) {
        let _ = self.tx.send(Request::Stop(reason));
    }

    pub fn narrow(&self, filter: ToolFilter) {
        let _ = self.tx.send(Request::Narrow(filter));
    }

    /// A sub-agent of the calling agent as `order` describes it; `None` when the call has
    /// ended meanwhile.
    pub async fn child(&self, order: ChildOrder) -> Option<Result<Agent, SpawnError>> {
        let (made, ready) = oneshot::channel();
        self.tx.send(Request::Child(order, made)).ok()?;
        ready.await.ok()
    }

    pub fn todos(&self, todos: Vec<Todo>) {
        let _ = self.tx.send(Request::Todos(todos));
    }

    /// The user's answer to a plan; `None` when nobody answers (or the call has ended).
    pub async fn plan(&self, request: PlanRequest) -> Option<PlanAnswer> {
        let (answer, answered) = oneshot::channel();
        self.tx.send(Request::Plan(request, answer)).ok()?;
        answered.await.ok().flatten()
    }

    /// The user's answers; `None` when nobody answers (or the call has ended). `forwarded`:
    /// a sub-agent's questions passed up, already holding the question turn.
    pub async fn questions(
        &self,
        request: QuestionRequest,
        forwarded: bool,
    ) -> Option<QuestionAnswer> {
        let (answer, answered) = oneshot::channel();
        self.tx
            .send(Request::Questions {
                request,
                forwarded,
                answer,
            })
            .ok()?;
        answered.await.ok().flatten()
    }

    /// Marks the call as running an agent of its own until the guard is dropped.
    pub fn running_agent(&self) -> RunningAgent {
        self.runs_agent.store(true, Ordering::Relaxed);
        RunningAgent(self.runs_agent.clone())
    }

    pub fn runs_agent(&self) -> bool {
        self.runs_agent.load(Ordering::Relaxed)
    }
}

impl Agent {
    /// Does what a call's tool asked of this agent and `turn`.
    pub(super) async fn serve_line(&self, request: Request, turn: &Turn<'_>) {
        match request {
            Request::Event(event) => turn.emit(event),
            // Nobody waits for the answer any more (the call was dropped): nothing is asked.
            Request::Ask(_, answer) if answer.is_closed() => {}
            Request::Ask(request, answer) => {
                let _ = answer.send(turn.approver.approve(&request).await);
            }
            Request::Decline => turn.decline(),
            Request::Stop(reason) => turn.request_stop(reason),
            Request::Narrow(filter) => self.host.lock_narrowing().push(filter),
            Request::Child(_, made) if made.is_closed() => {}
            Request::Child(order, made) => {
                let _ = made.send(self.child_for(order, turn).await);
            }
            Request::Todos(todos) => {
                self.conversation.session.set_todos(&todos);
                turn.emit(AgentEvent::Todos(todos));
            }
            Request::Plan(_, answer) if answer.is_closed() => {}
            Request::Plan(request, answer) => {
                let _ = answer.send(self.plan_answer(&request, turn).await);
            }
            Request::Questions { answer, .. } if answer.is_closed() => {}
            Request::Questions {
                request,
                forwarded,
                answer,
            } => {
                // A sub-agent's questions come up holding the question turn already.
                let _asking = match forwarded {
                    false => Some(self.host.approval_turn.lock().await),
                    true => None,
                };
                let _ = answer.send(turn.approver.ask_questions(&request).await);
            }
        }
    }
}

impl Agent {
    /// The approver's answer to a plan; an approval sets the mode (the session's handle, which
    /// every front end and the status read) and says so.
    async fn plan_answer(&self, request: &PlanRequest, turn: &Turn<'_>) -> Option<PlanAnswer> {
        let answer = {
            let _asking = self.host.approval_turn.lock().await;
            turn.approver.approve_plan(request).await
        };
        if let Some(PlanAnswer::Approve(mode)) = &answer {
            self.host.mode.set(*mode);
            turn.emit(AgentEvent::ModeChanged(*mode));
        }
        answer
    }
}
