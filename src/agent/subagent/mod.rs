//! Sub-agents: the `task` tool runs a child [`Agent`] on a prompt, with a context of its own. The
//! child has its own system prompt (its definition's body, or the builtin general-purpose one), the
//! tools its definition allows but never more than its parent has (no `task`: a child does not
//! spawn children; a command's or skill's `allowed-tools` binds it as it binds the parent), the
//! parent's permission mode or a stricter one (following the parent's as it changes), a share of
//! the run's `--max-turns` requests, and the same sandbox, hooks, MCP servers and trust. Several
//! `task` calls of one response run at once, at most settings `maxParallelAgents` of them; the
//! parent sees only each child's final answer and its usage. The child's events reach the parent's
//! sink tagged with the call, its questions reach the user named by it (`relay.rs`), the
//! parent's cancel stops it, and its messages go to the parent's transcript linked to the call,
//! so `--resume` restores them and `task` can continue the child (`resume`). `task` is an
//! ordinary tool (`tool.rs`); the child is made from the calling agent (`spawn.rs`), which it
//! asks for over the call's line. This file holds what a run shares with its sub-agents
//! ([`Delegation`]) and what an agent knows of being one.

mod background;
mod deliver;
mod launch;
mod relay;
mod spawn;
mod tool;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use super::Agent;
use super::turn::Turn;
use crate::hooks::HookInput;
use crate::llm::{Message, Usage};

pub use super::session::{ChildTranscript, Link};
pub use background::{AgentRow, Inbox, Notice, Registry};
pub use spawn::{ChildOrder, SpawnError};
pub use tool::{GENERAL_PURPOSE, TASK, TaskTool};

/// The system prompt of the builtin general-purpose agent, before the environment.
const GENERAL_PROMPT: &str = include_str!("../../prompts/subagent.md");

/// What a run shares with its sub-agents, and what a sub-agent is.
pub struct Delegation {
    /// At most this many sub-agents run at once.
    pub permits: Arc<Semaphore>,
    /// `modelAliases` of the settings.
    pub aliases: Arc<BTreeMap<String, String>>,
    /// Every sub-agent of the session so far, by agent id (what `resume` continues).
    pub children: Arc<Mutex<BTreeMap<String, ChildTranscript>>>,
    /// Tokens the sub-agents of the current calls used, added to the run's usage after them.
    pub child_usage: Mutex<Usage>,
    /// The sub-agents running in the whole tree (`/agents`).
    pub registry: Arc<Registry>,
    /// What this agent's background children left for it.
    pub inbox: Arc<Inbox>,
    /// How deep the agent holding this is: 0 for the main agent, 1 for its children, ...
    pub depth: usize,
    /// How deep sub-agents may go (settings `maxAgentDepth`): 1, children of the main agent only.
    pub max_depth: usize,
    /// Settings `worktreeDir`: where children with `isolation: worktree` get theirs.
    pub worktree_dir: Option<std::path::PathBuf>,
    /// A sub-agent's own slot, lent to one of its children at a time: a sub-agent that waits
    /// for its children holds a slot of the tree, so without it a tree as deep as
    /// `maxParallelAgents` is wide would wait for itself.
    lent: Arc<tokio::sync::Mutex<()>>,
}

/// A slot a sub-agent runs in: one of the tree's, or its parent's own, lent.
pub(super) enum Slot {
    Tree(#[allow(dead_code)] tokio::sync::OwnedSemaphorePermit),
    Lent(#[allow(dead_code)] tokio::sync::OwnedMutexGuard<()>),
}

impl Default for Delegation {
    fn default() -> Self {
        Self::new(
            crate::config::DEFAULT_MAX_PARALLEL_AGENTS,
            crate::config::DEFAULT_MAX_AGENT_DEPTH,
            BTreeMap::new(),
        )
    }
}

impl Delegation {
    pub fn new(max_parallel: usize, max_depth: usize, aliases: BTreeMap<String, String>) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(max_parallel.max(1))),
            aliases: Arc::new(aliases),
            children: Arc::default(),
            child_usage: Mutex::default(),
            registry: Arc::default(),
            inbox: Arc::default(),
            depth: 0,
            max_depth: max_depth.max(1),
            worktree_dir: None,
            lent: Arc::default(),
        }
    }

    /// Waits for a slot for a child of this agent: one of the tree's, or (when this agent is a
    /// sub-agent) its own, whichever is free first. `None` when `cancel` fires first.
    pub(super) async fn slot(&self, cancel: &tokio_util::sync::CancellationToken) -> Option<Slot> {
        let tree = self.permits.clone().acquire_owned();
        let lent = async {
            if self.depth == 0 {
                std::future::pending::<()>().await;
            }
            self.lent.clone().lock_owned().await
        };
        tokio::select! {
            permit = tree => permit.ok().map(Slot::Tree),
            guard = lent => Some(Slot::Lent(guard)),
            () = cancel.cancelled() => None,
        }
    }

    /// The delegation of a child that may start children of its own: the tree's slots
    /// (`maxParallelAgents` counts every agent of it), aliases and registry; its own
    /// sub-agents, usage and inbox, one level deeper.
    pub(super) fn for_child(&self) -> Self {
        Self {
            permits: self.permits.clone(),
            aliases: self.aliases.clone(),
            children: Arc::default(),
            child_usage: Mutex::default(),
            registry: self.registry.clone(),
            inbox: Arc::default(),
            depth: self.depth + 1,
            max_depth: self.max_depth,
            worktree_dir: self.worktree_dir.clone(),
            lent: Arc::default(),
        }
    }

    /// How `/agents` shows a child of this agent starting on `description`.
    pub(super) fn row(&self, link: &Link, description: &str, background: bool) -> AgentRow {
        AgentRow {
            agent_id: link.agent_id.clone(),
            agent: link.agent.clone(),
            description: description.to_string(),
            background,
            depth: self.depth + 1,
            last_step: "starting".into(),
            seconds: 0,
        }
    }

    /// Whether a child of this agent may start children of its own (`maxAgentDepth`).
    pub(super) fn child_may_nest(&self) -> bool {
        self.depth + 2 <= self.max_depth
    }

    /// Adds what a sub-agent used, for the run's usage after the calls.
    pub(super) fn add_usage(&self, usage: Usage) {
        *self
            .child_usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) += usage;
    }

    /// What the sub-agents of the last calls used, taken.
    pub(super) fn take_usage(&self) -> Usage {
        std::mem::take(
            &mut *self
                .child_usage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Keeps the conversation of the sub-agent `link` names, so `resume` can continue it.
    pub(super) fn remember(&self, link: &Link, messages: Vec<Message>) {
        let mut children = self.lock_children();
        let entry = children
            .entry(link.agent_id.clone())
            .or_insert_with(|| ChildTranscript {
                agent: link.agent.clone(),
                calls: Vec::new(),
                messages: Vec::new(),
            });
        if !entry.calls.contains(&link.parent_tool_use_id) {
            entry.calls.push(link.parent_tool_use_id.clone());
        }
        entry.messages = messages;
    }

    pub(in crate::agent) fn lock_children(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<String, ChildTranscript>> {
        self.children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The model a sub-agent runs on: `inherit` (or nothing) is the parent's, an alias of
/// `modelAliases` its model, Claude Code's own aliases without an entry the parent's (with a
/// warning: they name no model of an OpenAI-compatible server), anything else as written.
pub fn resolve_model(
    asked: Option<&str>,
    parent: &str,
    aliases: &BTreeMap<String, String>,
) -> (String, Option<String>) {
    let asked = asked.map(str::trim).filter(|m| !m.is_empty());
    match asked {
        None | Some("inherit") => (parent.to_string(), None),
        Some(name) => match aliases.get(name) {
            Some(model) => (model.clone(), None),
            None if matches!(name, "sonnet" | "opus" | "haiku") => (
                parent.to_string(),
                Some(format!(
                    "model `{name}` has no entry in settings `modelAliases`; using {parent}"
                )),
            ),
            None => (name.to_string(), None),
        },
    }
}

impl Agent {
    /// This agent is a sub-agent (its session is linked to a parent's call).
    pub fn is_subagent(&self) -> bool {
        self.conversation.session.link().is_some()
    }

    /// The sub-agents' conversations of this session, by agent id.
    pub fn children(&self) -> BTreeMap<String, ChildTranscript> {
        self.host.delegation.lock_children().clone()
    }

    /// Restores the sub-agents of a resumed session (`--resume`, `/resume`), so `task` can
    /// continue them.
    pub fn restore_children(&mut self, children: Vec<(String, ChildTranscript)>) {
        let mut map = self.host.delegation.lock_children();
        map.clear();
        map.extend(children);
    }

    /// UserPromptSubmit for the user's prompt; a sub-agent's prompt is the parent's words, and
    /// fires nothing (as in Claude Code).
    pub(super) async fn prompt_hooks(
        &self,
        prompt: &str,
        turn: &Turn<'_>,
    ) -> crate::hooks::HookOutcome {
        if self.is_subagent() {
            return crate::hooks::HookOutcome::default();
        }
        self.fire_in(
            HookInput::UserPromptSubmit {
                prompt: prompt.to_string(),
            },
            turn,
        )
        .await
    }

    /// What fires when the model would end its turn: Stop, or SubagentStop in a sub-agent.
    pub(super) fn stop_input(&self, stop_hook_active: bool, last: &str) -> HookInput {
        match self.subagent_info() {
            Some(agent) => HookInput::SubagentStop {
                stop_hook_active,
                last_assistant_message: last.to_string(),
                agent_id: agent.agent_id,
                agent_type: agent.agent_type,
                agent_transcript_path: self.conversation.session.transcript_path.clone(),
            },
            None => HookInput::Stop {
                stop_hook_active,
                last_assistant_message: last.to_string(),
            },
        }
    }

    /// Which sub-agent this agent is, for its hooks: the one its options name, else the one its
    /// session is linked to by a `task` call; `None` for the main agent.
    pub(super) fn subagent_info(&self) -> Option<crate::hooks::SubagentInfo> {
        self.options.subagent.clone().or_else(|| {
            self.conversation
                .session
                .link()
                .map(|link| crate::hooks::SubagentInfo {
                    agent_id: link.agent_id.clone(),
                    agent_type: link.agent.clone(),
                })
        })
    }

    /// Adds what sub-agents used to the run's usage (after the calls that ran them).
    pub(super) fn take_child_usage(&mut self) {
        self.conversation.usage += self.host.delegation.take_usage();
    }
}

/// A short id for a new sub-agent (`agent_id` of hooks and `resume`).
pub(super) fn new_agent_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("a{}", &id[..11])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_resolve_through_the_aliases_and_claude_names_fall_back() {
        let aliases = BTreeMap::from([("fast".to_string(), "gpt-4o-mini".to_string())]);
        assert_eq!(resolve_model(None, "p", &aliases), ("p".into(), None));
        assert_eq!(resolve_model(Some("inherit"), "p", &aliases).0, "p");
        assert_eq!(resolve_model(Some("fast"), "p", &aliases).0, "gpt-4o-mini");
        let (model, warning) = resolve_model(Some("sonnet"), "p", &aliases);
        assert_eq!(model, "p");
        assert!(warning.is_some_and(|w| w.contains("modelAliases")));
        assert_eq!(resolve_model(Some("gpt-4.1"), "p", &aliases).0, "gpt-4.1");
    }
}
