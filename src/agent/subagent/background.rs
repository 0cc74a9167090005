//! The sub-agents of a session that are running now, and what background ones leave for their
//! parent. [`Registry`] is shared by the whole tree of agents (what `/agents` lists and stops,
//! foreground and background alike, with each one's last step); [`Inbox`] belongs to one
//! agent: the answers of its background children that ended, and their events, which the
//! agent takes at its next step (or, once its turn is over, the session host delivers as a new
//! turn). A background child's answer is written to its parent as Claude Code writes it, a
//! `<task-notification>` message.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::Link;
use crate::agent::{AgentEvent, EventSink, SubagentEvent, SubagentKind};
use crate::llm::Usage;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One sub-agent at work, as `/agents` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    pub agent_id: String,
    /// Its type: `general-purpose` or a definition's name.
    pub agent: String,
    pub description: String,
    /// It runs in the background (its parent went on).
    pub background: bool,
    /// 1 for a child of the main agent, 2 for its child, ...
    pub depth: usize,
    /// What it did last (`bash: cargo test`, `answering`, `waiting for a slot`).
    pub last_step: String,
    pub seconds: u64,
}

struct Running {
    row: AgentRow,
    started: Instant,
    cancel: CancellationToken,
    /// Set by [`Registry::stop`]: the user ended it.
    stopped: bool,
}

/// The sub-agents running in a session's tree of agents.
#[derive(Default)]
pub struct Registry {
    running: Mutex<BTreeMap<String, Running>>,
}

impl Registry {
    /// A sub-agent starts; `cancel` ends it when the user stops it.
    pub(super) fn enter(&self, row: AgentRow, cancel: CancellationToken) {
        lock(&self.running).insert(
            row.agent_id.clone(),
            Running {
                row,
                started: Instant::now(),
                cancel,
                stopped: false,
            },
        );
    }

    /// Its last step is now `step`.
    pub(super) fn step(&self, agent_id: &str, step: String) {
        if let Some(running) = lock(&self.running).get_mut(agent_id) {
            running.row.last_step = step;
        }
    }

    /// Whether the user stopped it.
    pub(super) fn was_stopped(&self, agent_id: &str) -> bool {
        lock(&self.running)
            .get(agent_id)
            .is_some_and(|running| running.stopped)
    }

    /// It ended; true when the user had stopped it.
    pub(super) fn leave(&self, agent_id: &str) -> bool {
        lock(&self.running)
            .remove(agent_id)
            .is_some_and(|running| running.stopped)
    }

    /// The sub-agents running now, oldest first.
    pub fn list(&self) -> Vec<AgentRow> {
        let running = lock(&self.running);
        let mut rows: Vec<(Instant, AgentRow)> = running
            .values()
            .map(|r| {
                let mut row = r.row.clone();
                row.seconds = r.started.elapsed().as_secs();
                (r.started, row)
            })
            .collect();
        rows.sort_by_key(|(started, _)| *started);
        rows.into_iter().map(|(_, row)| row).collect()
    }

    /// Stops the sub-agent `agent_id` (its calls end within their grace); false when none of
    /// that id runs.
    pub fn stop(&self, agent_id: &str) -> bool {
        let mut running = lock(&self.running);
        let Some(found) = running.get_mut(agent_id.trim()) else {
            return false;
        };
        found.stopped = true;
        found.cancel.cancel();
        true
    }

    /// Stops every sub-agent (the session ends).
    pub fn stop_all(&self) {
        for running in lock(&self.running).values_mut() {
            running.stopped = true;
            running.cancel.cancel();
        }
    }
}

/// A background child's end, for its parent.
#[derive(Debug, Clone)]
pub struct Notice {
    pub link: Link,
    pub description: String,
    /// `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// Its answer, or why it has none.
    pub text: String,
    pub usage: Usage,
}

impl Notice {
    /// The message the parent's model reads.
    pub fn message(&self) -> String {
        format!(
            "<task-notification>\n<task-id>{id}</task-id>\n<agent-type>{agent}</agent-type>\n\
             <status>{status}</status>\n<summary>The background agent \"{description}\" \
             {status}</summary>\n<result>\n{text}\n</result>\n</task-notification>\n\
             [task resume={id:?} continues this agent]",
            id = self.link.agent_id,
            agent = self.link.agent,
            status = self.status,
            description = self.description,
            text = self.text.trim_end(),
        )
    }
}

/// What an agent's background children left for it.
#[derive(Default)]
pub struct Inbox {
    state: Mutex<InboxState>,
    changed: Notify,
}

#[derive(Default)]
struct InboxState {
    /// Background children running now.
    running: usize,
    notices: Vec<Notice>,
    /// Their events, for the parent's sink at its next step.
    events: Vec<AgentEvent>,
}

impl Inbox {
    pub(super) fn started(&self) {
        lock(&self.state).running += 1;
    }

    pub(super) fn event(&self, event: AgentEvent) {
        lock(&self.state).events.push(event);
    }

    /// A background child ended with `notice`.
    pub(super) fn ended(&self, notice: Notice) {
        {
            let mut state = lock(&self.state);
            state.running = state.running.saturating_sub(1);
            state.notices.push(notice);
        }
        self.changed.notify_waiters();
    }

    /// The events and the ended children's notices so far, taken.
    pub fn take(&self) -> (Vec<AgentEvent>, Vec<Notice>) {
        let mut state = lock(&self.state);
        (
            std::mem::take(&mut state.events),
            std::mem::take(&mut state.notices),
        )
    }

    /// Background children running or ended and not yet delivered.
    pub fn is_empty(&self) -> bool {
        let state = lock(&self.state);
        state.running == 0 && state.notices.is_empty()
    }

    pub fn has_notices(&self) -> bool {
        !lock(&self.state).notices.is_empty()
    }

    /// Waits until a background child's notice is there (true), or none runs any more (false),
    /// or `cancel`.
    pub async fn wait(&self, cancel: &CancellationToken) -> bool {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let state = lock(&self.state);
                if !state.notices.is_empty() {
                    return true;
                }
                if state.running == 0 {
                    return false;
                }
            }
            tokio::select! {
                () = changed => {}
                () = cancel.cancelled() => return false,
            }
        }
    }
}

/// A running child's events: kept for its parent (a background child's, in the parent's inbox)
/// and its last step for `/agents`.
pub(super) struct StepSink<'a> {
    registry: &'a Registry,
    link: &'a Link,
    /// Where the tagged event goes.
    forward: &'a (dyn Fn(AgentEvent) + Send + Sync),
    tool_calls: std::sync::atomic::AtomicU32,
}

impl<'a> StepSink<'a> {
    pub fn new(
        registry: &'a Registry,
        link: &'a Link,
        forward: &'a (dyn Fn(AgentEvent) + Send + Sync),
    ) -> Self {
        Self {
            registry,
            link,
            forward,
            tool_calls: std::sync::atomic::AtomicU32::new(0),
        }
    }

    pub fn tell(&self, kind: SubagentKind) {
        (self.forward)(AgentEvent::Subagent(SubagentEvent {
            call_id: self.link.parent_tool_use_id.clone(),
            agent: self.link.agent.clone(),
            agent_id: self.link.agent_id.clone(),
            kind,
        }));
    }

    pub fn tool_calls(&self) -> u32 {
        self.tool_calls.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl EventSink for StepSink<'_> {
    fn emit(&self, event: AgentEvent) {
        if let Some(step) = step_of(&event) {
            self.registry.step(&self.link.agent_id, step);
        }
        if matches!(event, AgentEvent::ToolCallBegin { .. }) {
            self.tool_calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.tell(SubagentKind::Event(Box::new(event)));
    }
}

/// What `/agents` says a child is doing after `event`.
fn step_of(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::ToolCallBegin { name, input, .. } => {
            let input = input.to_string();
            Some(format!("{name} {}", crate::agent::cap_middle(&input, 60)))
        }
        AgentEvent::RequestStarted { turn } => Some(format!("model request {turn}")),
        AgentEvent::AssistantMessage { text, .. } if !text.trim().is_empty() => {
            let line = text.lines().next().unwrap_or_default();
            Some(format!("said: {}", crate::agent::cap_middle(line, 60)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> AgentRow {
        AgentRow {
            agent_id: id.into(),
            agent: "general-purpose".into(),
            description: "d".into(),
            background: true,
            depth: 1,
            last_step: String::new(),
            seconds: 0,
        }
    }

    #[test]
    fn a_stopped_agent_is_cancelled_and_says_so_when_it_leaves() {
        let registry = Registry::default();
        let cancel = CancellationToken::new();
        registry.enter(row("a1"), cancel.clone());
        registry.enter(row("a2"), CancellationToken::new());
        registry.step("a1", "bash ls".into());
        assert_eq!(registry.list()[0].last_step, "bash ls");
        assert!(!registry.stop("nope"));
        assert!(registry.stop("a1"));
        assert!(cancel.is_cancelled());
        assert!(registry.leave("a1"));
        assert!(!registry.leave("a2"));
        assert!(registry.list().is_empty());
    }

    #[tokio::test]
    async fn the_inbox_wakes_its_waiter_with_a_notice_and_not_when_idle() {
        let inbox = std::sync::Arc::new(Inbox::default());
        let cancel = CancellationToken::new();
        assert!(!inbox.wait(&cancel).await, "nothing runs: no wait");
        inbox.started();
        let waiter = {
            let inbox = inbox.clone();
            tokio::spawn(async move { inbox.wait(&CancellationToken::new()).await })
        };
        inbox.ended(Notice {
            link: Link {
                agent_id: "a1".into(),
                agent: "general-purpose".into(),
                parent_tool_use_id: "c1".into(),
            },
            description: "d".into(),
            status: "completed",
            text: "the answer".into(),
            usage: Usage::default(),
        });
        assert!(waiter.await.unwrap());
        let (_, notices) = inbox.take();
        assert!(
            notices[0]
                .message()
                .contains("<result>\nthe answer\n</result>")
        );
        assert!(inbox.is_empty());
    }
}
