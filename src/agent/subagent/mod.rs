//! Sub-agents: the `task` tool runs a child [`Agent`] on a prompt, with a context of its own. The
//! child has its own system prompt (its definition's body, or the builtin general-purpose one), the
//! tools its definition allows but never more than its parent has (no `task`: a child does not
//! spawn children; a command's or skill's `allowed-tools` binds it as it binds the parent), the
//! parent's permission mode or a stricter one (following the parent's as it changes), a share of
//! the run's `--max-turns` requests, and the same sandbox, hooks, MCP servers and trust. Several
//! `task` calls of one response run at once, at most settings `maxParallelAgents` of them; the
//! parent sees only each child's final answer and its usage. The child's events reach the parent's
//! sink tagged with the call (`ChildSink`), its questions reach the user named by it
//! (`ChildApprover`), the parent's cancel stops it, and its messages go to the parent's transcript
//! linked to the call, so `--resume` restores them and `task` can continue the child (`resume`).

mod tool;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Semaphore;

use super::dispatch::{CallError, CallResult};
use super::filter::ToolFilter;
use super::turn::Turn;
use super::{
    Agent, AgentEvent, Approval, ApprovalRequest, Approver, EventSink, RunEnd, SubagentEvent,
    SubagentKind,
};
use crate::config::PermissionMode;
use crate::config::extensions::AgentDef;
use crate::hooks::HookInput;
use crate::llm::{LlmClient, Message, ToolCall, Usage};
use crate::tools::{ToolError, parse_args};

pub use super::session::{ChildTranscript, Link};
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
}

impl Default for Delegation {
    fn default() -> Self {
        Self::new(crate::config::DEFAULT_MAX_PARALLEL_AGENTS, BTreeMap::new())
    }
}

impl Delegation {
    pub fn new(max_parallel: usize, aliases: BTreeMap<String, String>) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(max_parallel.max(1))),
            aliases: Arc::new(aliases),
            children: Arc::default(),
            child_usage: Mutex::default(),
        }
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

/// Forwards a sub-agent's events to the parent's sink, tagged with its call; counts its calls.
struct ChildSink<'a> {
    parent: &'a dyn EventSink,
    link: Link,
    tool_calls: AtomicU32,
}

impl ChildSink<'_> {
    fn tagged(&self, kind: SubagentKind) -> AgentEvent {
        AgentEvent::Subagent(SubagentEvent {
            call_id: self.link.parent_tool_use_id.clone(),
            agent: self.link.agent.clone(),
            agent_id: self.link.agent_id.clone(),
            kind,
        })
    }
}

impl EventSink for ChildSink<'_> {
    fn emit(&self, event: AgentEvent) {
        if matches!(event, AgentEvent::ToolCallBegin { .. }) {
            self.tool_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.parent
            .emit(self.tagged(SubagentKind::Event(Box::new(event))));
    }
}

/// Asks the parent's approver, naming the sub-agent that asks.
struct ChildApprover<'a> {
    parent: &'a dyn Approver,
    label: String,
}

#[async_trait]
impl Approver for ChildApprover<'_> {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let mut request = request.clone();
        request.agent = Some(self.label.clone());
        self.parent.approve(&request).await
    }

    fn can_ask(&self) -> bool {
        self.parent.can_ask()
    }
}

/// How a finished sub-agent is reported to the parent's model.
fn report(text: &str, link: &Link, usage: Usage, turns: u32) -> String {
    format!(
        "{}\n\n[{} agent {}: {turns} requests, {} in / {} out tokens; task resume={:?} continues \
         it]",
        text.trim_end(),
        link.agent,
        link.agent_id,
        usage.prompt_tokens,
        usage.completion_tokens,
        link.agent_id
    )
}

impl Agent {
    /// This agent is a sub-agent (its session is linked to a parent's call).
    pub fn is_subagent(&self) -> bool {
        self.session.link().is_some()
    }

    /// The sub-agents' conversations of this session, by agent id.
    pub fn children(&self) -> BTreeMap<String, ChildTranscript> {
        self.delegation.lock_children().clone()
    }

    /// Restores the sub-agents of a resumed session (`--resume`, `/resume`), so `task` can
    /// continue them.
    pub fn restore_children(&mut self, children: Vec<(String, ChildTranscript)>) {
        let mut map = self.delegation.lock_children();
        map.clear();
        map.extend(children);
    }

    /// The agent types `task` offers: the builtin general-purpose one and the definitions.
    pub fn agent_types(&self) -> Vec<(String, String)> {
        let mut types = vec![(
            GENERAL_PURPOSE.to_string(),
            tool::GENERAL_DESCRIPTION.to_string(),
        )];
        for def in &self.extensions.agents {
            types.push((def.name.clone(), def.description.clone()));
        }
        types
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
                agent_transcript_path: self.session.transcript_path.clone(),
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
            self.session.link().map(|link| crate::hooks::SubagentInfo {
                agent_id: link.agent_id.clone(),
                agent_type: link.agent.clone(),
            })
        })
    }

    /// Adds what sub-agents used to the run's usage (after the calls that ran them).
    pub(super) fn take_child_usage(&mut self) {
        let used = std::mem::take(
            &mut *self
                .delegation
                .child_usage
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        self.usage += used;
    }

    /// One `task` call: runs the sub-agent and returns what the parent's model reads. Boxed
    /// (and `Send` by its signature): the child's run is this same future, one level down.
    pub(super) fn run_task<'a>(
        &'a self,
        call: &'a ToolCall,
        input: Value,
        turn: &'a Turn<'_>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = CallResult> + Send + 'a>> {
        Box::pin(self.task_run(call, input, turn))
    }

    async fn task_run(&self, call: &ToolCall, input: Value, turn: &Turn<'_>) -> CallResult {
        let args: tool::TaskArgs = match parse_args(TASK, input) {
            Ok(args) => args,
            Err(e) => return CallError::Tool(e).into(),
        };
        let failed =
            |message: String| CallResult::from(CallError::Tool(ToolError::Failed(message)));
        let agent_type = args
            .subagent_type
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or(GENERAL_PURPOSE)
            .to_string();
        let def = match agent_type.as_str() {
            GENERAL_PURPOSE => None,
            name => match self.extensions.agent(name) {
                Some(def) => Some(def.clone()),
                None => {
                    let types: Vec<String> =
                        self.agent_types().into_iter().map(|(n, _)| n).collect();
                    return failed(format!(
                        "no agent type {name:?}; the types are: {}",
                        types.join(", ")
                    ));
                }
            },
        };
        let (agent_id, history) = match args.resume.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => match self.delegation.lock_children().get(id) {
                Some(found) if found.agent == agent_type => {
                    (id.to_string(), found.messages.clone())
                }
                Some(found) => {
                    return failed(format!(
                        "agent {id} is a {} agent; resume it with subagent_type {:?}",
                        found.agent, found.agent
                    ));
                }
                None => return failed(format!("no sub-agent {id} in this session to resume")),
            },
            _ => (new_agent_id(), Vec::new()),
        };
        // Waits for a free slot; Ctrl-C ends the wait.
        let permit = tokio::select! {
            permit = self.delegation.permits.clone().acquire_owned() => permit.ok(),
            () = turn.cancel.cancelled() => None,
        };
        if permit.is_none() {
            return CallError::Tool(ToolError::Interrupted).into();
        }
        let link = Link {
            agent_id: agent_id.clone(),
            agent: agent_type.clone(),
            parent_tool_use_id: call.id.clone(),
        };
        let (mut child, warning) = match self.spawn_child(def.as_ref(), link.clone()) {
            Ok(made) => made,
            Err(message) => return failed(message),
        };
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
                    agent_id: agent_id.clone(),
                    agent_type: agent_type.clone(),
                },
                turn,
            )
            .await;
        if !start.additional_context.is_empty() {
            child.session_context = start.additional_context.clone();
            child.rebuild_system_prompt();
        }
        let sink = ChildSink {
            parent: turn.sink,
            link: link.clone(),
            tool_calls: AtomicU32::new(0),
        };
        sink.parent.emit(sink.tagged(SubagentKind::Started {
            description: args.description.clone(),
            model: child.model().to_string(),
        }));
        let approver = ChildApprover {
            parent: turn.approver,
            label: format!("{agent_type} (task {})", call.id),
        };
        let result = child.run(&args.prompt, &sink, &approver, turn.cancel).await;
        drop(permit);
        let usage = child.usage();
        *self
            .delegation
            .child_usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) += usage;
        self.remember_child(&link, child.history().to_vec());
        let ok = matches!(&result, Ok(run) if run.end == RunEnd::Completed);
        let turns = result.as_ref().map_or(0, |r| r.num_turns);
        sink.parent.emit(sink.tagged(SubagentKind::Finished {
            usage,
            num_turns: turns,
            tool_calls: sink.tool_calls.load(Ordering::Relaxed),
            ok,
        }));
        match result {
            Ok(run) => match run.end {
                RunEnd::Completed => CallResult {
                    content: report(&run.text, &link, usage, turns),
                    is_error: false,
                    display: None,
                    total_lines: None,
                    told: None,
                    images: Vec::new(),
                },
                RunEnd::Interrupted => CallError::Tool(ToolError::Interrupted).into(),
                RunEnd::Declined => {
                    // The user said no to the child: the parent's turn ends too.
                    turn.decline();
                    failed(format!(
                        "the user declined a call of the {agent_type} agent and ended this turn"
                    ))
                }
                RunEnd::MaxTurns if self.requests.exhausted() => failed(format!(
                    "the {agent_type} agent stopped after {turns} model requests: the run \
                     reached its limit (--max-turns), which counts every agent's requests; its \
                     last words: {}",
                    run.text
                )),
                RunEnd::MaxTurns => failed(format!(
                    "the {agent_type} agent stopped after {turns} model requests (its turn \
                     limit) before it finished; its last words: {}",
                    run.text
                )),
                RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
                    turn.request_stop(reason.clone());
                    failed(format!(
                        "the {agent_type} agent was stopped by a hook: {reason}"
                    ))
                }
            },
            Err(e) => failed(format!("the {agent_type} agent failed: {e}")),
        }
    }

    fn remember_child(&self, link: &Link, messages: Vec<Message>) {
        let mut children = self.delegation.lock_children();
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

    /// The child agent for `def` (`None`: general-purpose): its model, tools, mode, prompt.
    fn spawn_child(
        &self,
        def: Option<&AgentDef>,
        link: Link,
    ) -> Result<(Agent, Option<String>), String> {
        let parent_model = self.model().to_string();
        let (model, warning) = resolve_model(
            def.and_then(|d| d.model.as_deref()),
            &parent_model,
            &self.delegation.aliases,
        );
        let mut config = self.llm.config().clone();
        config.model = model;
        // The same constructor as the parent's client (and its checks).
        let llm = LlmClient::new(config).map_err(|e| e.to_string())?;
        let agent = &link.agent;
        let origin = format!("the {agent} agent's tools");
        // Never more than the parent has now, never `task`.
        let parent_tools: Vec<String> = self
            .tool_specs()
            .into_iter()
            .map(|spec| spec.name)
            .filter(|name| name != TASK)
            .collect();
        let wanted = def
            .and_then(|d| d.tools.as_ref())
            .map(|tools| ToolFilter::new(tools, format!("the {agent} agent's tools")));
        let allowed: Vec<String> = parent_tools
            .into_iter()
            .filter(|name| wanted.as_ref().is_none_or(|w| w.admits(name)))
            .collect();
        let mut builtins = self.builtins.clone();
        builtins.retain(|tool| tool.name() != TASK);
        let permissions = self.lock_permissions().clone();
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
        let session = self.session.child(link);
        let mut child =
            Agent::new(llm, builtins, permissions, options, session).with_hooks(self.hooks.clone());
        // Its mode is the parent's of the moment (or stricter), its requests the run's.
        child.mode = child.mode.following(self.mode.clone(), asked);
        child.requests = self.requests.for_child();
        child.tool_search = self.tool_search.fresh();
        child.mcp = self.mcp.clone();
        child.extensions = self.extensions.clone();
        child.approval_turn = self.approval_turn.clone();
        // The front end's files and terminals (an ACP editor's buffers), as the parent's.
        child.files = self.files.clone();
        child.shell_host = self.shell_host.clone();
        // Its calls are recorded among the parent's (a rewind of the parent's turn undoes them).
        child.checkpoints = self.checkpoints.clone();
        child.images = self.images.clone();
        // What narrows the parent narrows the child: its own filters and the run's (a
        // command's or a loaded skill's `allowed-tools`, with their argument rules).
        let mut filters = self.tool_filters.clone();
        filters.extend(self.lock_narrowing().iter().cloned());
        filters.push(ToolFilter::names(allowed, origin));
        filters.extend(wanted);
        child.tool_filters = filters;
        // The instruction files were read (and warned about) for the parent already.
        child.warnings.clear();
        Ok((child, warning))
    }
}

/// A short id for a new sub-agent (`agent_id` of hooks and `resume`).
fn new_agent_id() -> String {
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
