//! A sub-agent made from its parent: its model (its definition's, through `modelAliases`), its
//! system prompt (its definition's body, or the general-purpose one), the tools it may use
//! (never more than the parent has now, `task` only above settings `maxAgentDepth`, and
//! whatever narrows the parent), its mode (the parent's of the moment or stricter), its share
//! of the run's requests, and the parent's hooks, MCP servers, files, terminals and
//! checkpoints. SubagentStart fires before it runs, its context going into the child's system
//! prompt.

use super::{GENERAL_PROMPT, Link, TASK, resolve_model};
use crate::agent::filter::ToolFilter;
use crate::agent::turn::Turn;
use crate::agent::{ASK_USER, EXIT_PLAN_MODE};
use crate::agent::{Agent, AgentEvent};
use crate::config::PermissionMode;
use crate::config::extensions::AgentDef;
use crate::hooks::HookInput;
use crate::llm::{LlmClient, LlmError, Message};
use crate::process::worktree::{Worktree, WorktreeError};

/// Why a sub-agent could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("its worktree (isolation: worktree) could not be made: {0}")]
    Worktree(#[from] WorktreeError),
    #[error("isolation {0:?} is not one Ling knows; write `isolation: worktree` or leave it out")]
    Isolation(String),
    #[error("a WorktreeCreate hook refused its worktree: {0}")]
    Refused(String),
}

/// The sub-agent a `task` call asks its agent for.
pub struct ChildOrder {
    /// Its definition; `None`: the builtin general-purpose agent.
    pub def: Option<AgentDef>,
    pub link: Link,
    /// The conversation it continues (`resume`); empty for a new one.
    pub history: Vec<Message>,
}

impl Agent {
    /// The child `order` describes, ready to run: made, its history given back, SubagentStart
    /// fired (in `turn`, with this agent's hooks). A warning about its model goes to the turn.
    pub(in crate::agent) async fn child_for(
        &self,
        order: ChildOrder,
        turn: &Turn<'_>,
    ) -> Result<Agent, SpawnError> {
        let ChildOrder { def, link, history } = order;
        let (agent_id, agent_type) = (link.agent_id.clone(), link.agent.clone());
        let worktree = self.child_worktree(def.as_ref(), &agent_id, turn).await?;
        let (mut child, warning) = self.spawn_child(def.as_ref(), link, worktree)?;
        if let Some(warning) = warning {
            turn.emit(AgentEvent::Warning(format!(
                "agent {agent_type}: {warning}"
            )));
        }
        if !history.is_empty() {
            child.resume(history);
        }
        let start = self
            .fire_in(
                HookInput::SubagentStart {
                    agent_id,
                    agent_type,
                },
                turn,
            )
            .await;
        if !start.additional_context.is_empty() {
            child.conversation.session_context = start.additional_context;
            child.rebuild_system_prompt();
        }
        Ok(child)
    }

    /// The worktree of a child whose definition says `isolation: worktree`: the one a
    /// WorktreeCreate hook made (the path it printed), else git's, `agent-AGENT_ID`.
    async fn child_worktree(
        &self,
        def: Option<&AgentDef>,
        agent_id: &str,
        turn: &Turn<'_>,
    ) -> Result<Option<Worktree>, SpawnError> {
        match def.and_then(|d| d.isolation.as_deref()).map(str::trim) {
            None | Some("" | "none") => return Ok(None),
            Some("worktree") => {}
            Some(other) => return Err(SpawnError::Isolation(other.to_string())),
        }
        let name = format!("agent-{agent_id}");
        let made = self
            .fire_in(HookInput::WorktreeCreate { name: name.clone() }, turn)
            .await;
        if made.is_blocked() {
            return Err(SpawnError::Refused(made.reason.unwrap_or_default()));
        }
        if let Some(path) = made.additional_context.last() {
            return Ok(Some(Worktree::by_hook(&self.options.root, &name, path)));
        }
        Ok(Some(Worktree::create(
            &self.options.root,
            &name,
            self.host.delegation.worktree_dir.as_deref(),
        )?))
    }

    /// Fires WorktreeRemove when a child's worktree went; its lines for the parent.
    pub(super) async fn end_worktree(
        worktree: Option<Worktree>,
        child: &Agent,
        sink: &dyn crate::agent::EventSink,
    ) -> Option<String> {
        let worktree = worktree?;
        let finish = worktree.finish(true);
        if finish.removed {
            child
                .fire(
                    HookInput::WorktreeRemove {
                        worktree_path: worktree.path.clone(),
                    },
                    sink,
                )
                .await;
        }
        Some(finish.lines.join("\n"))
    }

    /// The child agent for `def` (`None`: general-purpose), and a warning about its model.
    fn spawn_child(
        &self,
        def: Option<&AgentDef>,
        link: Link,
        worktree: Option<Worktree>,
    ) -> Result<(Agent, Option<String>), SpawnError> {
        let (model, warning) = resolve_model(
            def.and_then(|d| d.model.as_deref()),
            self.model(),
            &self.host.delegation.aliases,
        );
        let mut config = self.llm.config().clone();
        config.model = model;
        // The same constructor as the parent's client (and its checks).
        let llm = LlmClient::new(config)?;
        let agent = &link.agent;
        let origin = format!("the {agent} agent's tools");
        // Never more than the parent has now; `task` only above settings `maxAgentDepth`.
        let nests = self.host.delegation.child_may_nest();
        let (allowed, wanted) = self.child_tools(def, agent, nests);
        let mut builtins = self.host.builtins.clone();
        builtins.retain(|tool| tool.name() != TASK);
        let permissions = self.host.lock_permissions().clone();
        let asked = def
            .and_then(|d| d.permission_mode.as_deref())
            .and_then(PermissionMode::parse);
        let mut options = self.options.clone();
        // Its own limit; the run's (`--max-turns`) binds it through the shared count.
        options.max_turns = def.and_then(|d| d.max_turns);
        options.prompt.replace = Some(match def {
            Some(def) if !def.prompt.trim().is_empty() => def.prompt.clone(),
            _ => GENERAL_PROMPT.trim_end().to_string(),
        });
        options.prompt.append = None;
        let mut permissions = permissions;
        if let Some(worktree) = &worktree {
            // Its project is its worktree: the file tools' root and the sandbox's writable one.
            options.root = worktree.path.clone();
            options.child_env = options
                .child_env
                .clone()
                .with_sandbox(self.sandbox().clone(), worktree.path.clone());
            permissions = permissions.rooted_at(&worktree.path);
        }
        let session = self.conversation.session.child(link);
        let mut child = Agent::new(llm, builtins, permissions, options, session)
            .with_hooks(self.host.hooks.clone());
        // Its mode is the parent's of the moment (or stricter), its requests the run's.
        child.host.mode = child.host.mode.following(self.host.mode.clone(), asked);
        child.requests = self.requests.for_child();
        child.spend = self.spend.for_child();
        child.host.tool_search = self.host.tool_search.fresh();
        child.host.mcp = self.host.mcp.clone();
        child.host.extensions = self.host.extensions.clone();
        if nests {
            // Its own children share the tree's slots and registry, one level deeper.
            child.host.delegation = std::sync::Arc::new(self.host.delegation.for_child());
            child.offer_task();
        }
        child.host.approval_turn = self.host.approval_turn.clone();
        // The front end's files and terminals (an ACP editor's buffers), as the parent's.
        child.host.files = self.host.files.clone();
        child.host.shell_host = self.host.shell_host.clone();
        // Its calls are recorded among the parent's (a rewind of the parent's turn undoes them).
        child.host.checkpoints = self.host.checkpoints.clone();
        if worktree.is_some() {
            // Its writes are in its worktree, which the parent's checkpoints do not cover.
            child.host.checkpoints = None;
        }
        child.host.worktree = worktree;
        child.host.images = self.host.images.clone();
        // The session's background commands: what a sub-agent starts outlives it, for the
        // parent to read or end (docs/tools.md).
        child.host.shells = self.host.shells.clone();
        // What narrows the parent narrows the child: its own filters and the run's (a
        // command's or a loaded skill's `allowed-tools`, with their argument rules).
        let mut filters = self.host.tool_filters.clone();
        filters.extend(self.host.lock_narrowing().iter().cloned());
        filters.push(ToolFilter::names(allowed, origin));
        filters.extend(wanted);
        child.host.tool_filters = filters;
        // The instruction files were read (and warned about) for the parent already.
        child.conversation.warnings.clear();
        Ok((child, warning))
    }

    /// The tools the child may call: the parent's of now (`task` only where it may nest) as its
    /// definition narrows them, and that narrowing as a filter of its own.
    fn child_tools(
        &self,
        def: Option<&AgentDef>,
        agent: &str,
        nests: bool,
    ) -> (Vec<String>, Option<ToolFilter>) {
        let parent_tools: Vec<String> = self
            .host
            .tool_specs()
            .into_iter()
            .map(|spec| spec.name)
            .filter(|name| nests || name != TASK)
            .collect();
        let wanted = def
            .and_then(|d| d.tools.as_ref())
            .map(|tools| ToolFilter::new(tools, format!("the {agent} agent's tools")));
        // The user's own questions only where the definition names them; a plan to approve
        // never (its mode follows the parent's, so it cannot leave plan mode).
        let named = |tool: &str| {
            def.and_then(|d| d.tools.as_ref())
                .is_some_and(|tools| tools.iter().any(|t| t == tool))
        };
        let allowed: Vec<String> = parent_tools
            .into_iter()
            .filter(|name| wanted.as_ref().is_none_or(|w| w.admits(name)))
            .filter(|name| name != EXIT_PLAN_MODE)
            .filter(|name| name != ASK_USER || named(ASK_USER) || named("AskUserQuestion"))
            .collect();
        (allowed, wanted)
    }
}
