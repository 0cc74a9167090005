//! The `task` tool: what the model reads about it (the agent types with their descriptions,
//! held to [`LISTING_BUDGET`]), its arguments, and its run. It is an ordinary tool: the agent
//! definitions and the delegation (how many run at once, the session's sub-agents) are given
//! when it is made; the sub-agent itself, made from the calling agent, and the turn its events
//! and questions go to come over the call's line ([`CallLine`]).

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::background::StepSink;
use super::relay::ChildApprover;
use super::spawn::ChildOrder;
use super::{Delegation, Link, new_agent_id};
use crate::agent::call_line::CallLine;
use crate::agent::listing::within_budget;
use crate::agent::{Agent, AgentError, RunEnd, RunResult, SubagentKind};
use crate::config::extensions::Extensions;
use crate::llm::Usage;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const TASK: &str = "task";
pub const GENERAL_PURPOSE: &str = "general-purpose";
pub const GENERAL_DESCRIPTION: &str =
    "researches a question or does a multi-step task with every tool you have";
/// The bytes the agent types may take in the tool's description.
pub const LISTING_BUDGET: usize = 500;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    /// The task in 3 to 5 words, for the user.
    #[serde(default)]
    pub description: String,
    /// What the sub-agent is to do, with everything it needs: it does not see this
    /// conversation. Its final answer is all you get back.
    pub prompt: String,
    /// The agent type (default "general-purpose").
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// The agent id of an earlier sub-agent of this session, to continue its conversation.
    #[serde(default)]
    pub resume: Option<String>,
    /// Run it in the background: the call returns at once and you go on; its final answer
    /// comes to you as a message when it ends.
    #[serde(default)]
    pub run_in_background: bool,
}

pub struct TaskTool {
    description: String,
    /// The agent definitions `subagent_type` names.
    extensions: Arc<Extensions>,
    delegation: Arc<Delegation>,
}

/// The agent types `task` offers, (name, description): the builtin general-purpose one, then
/// the definitions.
fn agent_types(extensions: &Extensions) -> Vec<(String, String)> {
    let mut types = vec![(GENERAL_PURPOSE.to_string(), GENERAL_DESCRIPTION.to_string())];
    for def in &extensions.agents {
        types.push((def.name.clone(), def.description.clone()));
    }
    types
}

impl TaskTool {
    pub fn new(extensions: Arc<Extensions>, delegation: Arc<Delegation>) -> Self {
        let types = agent_types(&extensions);
        let entries: Vec<(&str, &str)> = types
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_str()))
            .collect();
        let listed = within_budget(&entries, LISTING_BUDGET, "the names are the types");
        Self {
            description: format!(
                "Run a sub-agent on a task, with a fresh context of its own; only its final \
                 answer comes back. Use it for searches and self-contained work that would \
                 fill your context. Several calls in one response run at once; with \
                 run_in_background you go on at once and its answer comes as a message when it \
                 ends. Agent types:\n\
                 {listed}"
            ),
            extensions,
            delegation,
        }
    }

    /// The sub-agent `args` ask for, run by the call `call_id`: its definition, and a new
    /// conversation or the one `resume` continues.
    fn order(&self, args: &TaskArgs, call_id: &str) -> Result<ChildOrder, ToolError> {
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
                    let types: Vec<String> = agent_types(&self.extensions)
                        .into_iter()
                        .map(|(n, _)| n)
                        .collect();
                    return Err(ToolError::failed(format!(
                        "no agent type {name:?}; the types are: {}",
                        types.join(", ")
                    )));
                }
            },
        };
        let (agent_id, history) = match args.resume.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => match self.delegation.lock_children().get(id) {
                Some(found) if found.agent == agent_type => {
                    (id.to_string(), found.messages.clone())
                }
                Some(found) => {
                    return Err(ToolError::failed(format!(
                        "agent {id} is a {} agent; resume it with subagent_type {:?}",
                        found.agent, found.agent
                    )));
                }
                None => {
                    return Err(ToolError::failed(format!(
                        "no sub-agent {id} in this session to resume"
                    )));
                }
            },
            _ => (new_agent_id(), Vec::new()),
        };
        let link = Link {
            agent_id,
            agent: agent_type,
            parent_tool_use_id: call_id.to_string(),
        };
        Ok(ChildOrder { def, link, history })
    }
}

#[async_trait]
impl Tool for TaskTool {
    fn name(&self) -> &str {
        TASK
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        args_schema::<TaskArgs>()
    }

    /// Allowed in every mode, run at once with the other reads of a response: what the
    /// sub-agent does is checked call by call, under the parent's mode or a stricter one.
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    /// Runs the sub-agent, its events and questions relayed to the parent's turn; returns its
    /// final answer with what it used. In the background it returns at once, and the answer
    /// reaches the parent as a message when the sub-agent ends (`launch.rs`).
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(line) = CallLine::of(ctx) else {
            return Err(ToolError::failed(
                "task runs only inside an agent, which dispatches it itself",
            ));
        };
        let args: TaskArgs = parse_args(TASK, input)?;
        let order = self.order(&args, ctx.call_id.as_deref().unwrap_or_default())?;
        if args.run_in_background {
            return super::launch::launch(
                &self.delegation,
                line,
                order,
                args.description,
                args.prompt,
            )
            .await;
        }
        // Waits for a free slot; Ctrl-C ends the wait.
        let Some(permit) = self.delegation.slot(&ctx.cancel).await else {
            return Err(ToolError::Interrupted);
        };
        let link = order.link.clone();
        let Some(made) = line.child(order).await else {
            return Err(ToolError::Interrupted);
        };
        let mut child = made.map_err(|e| ToolError::failed(e.to_string()))?;
        let registry = &self.delegation.registry;
        // Its own cancel, under the parent's: `/agents` can stop it alone.
        let cancel = ctx.cancel.child_token();
        registry.enter(
            self.delegation.row(&link, &args.description, false),
            cancel.clone(),
        );
        let forward = |event| line.emit(event);
        let sink = StepSink::new(registry, &link, &forward);
        sink.tell(SubagentKind::Started {
            description: args.description.clone(),
            model: child.model().to_string(),
        });
        let approver = ChildApprover {
            line,
            // Named as the user reads it: the agent and its description, not the call's id.
            label: format!("{}: {}", link.agent, args.description),
        };
        let span = crate::telemetry::Span::start("ling.subagent", || {
            vec![
                opentelemetry::KeyValue::new("ling.agent.type", link.agent.clone()),
                opentelemetry::KeyValue::new("gen_ai.request.model", child.model().to_string()),
            ]
        });
        let result = {
            let _running = line.running_agent();
            span.run(child.run(&args.prompt, &sink, &approver, &cancel))
                .await
        };
        super::super::telemetry_glue::run_outcome(&span, &result);
        drop(span);
        drop(permit);
        let stopped = registry.leave(&link.agent_id) && !ctx.cancel.is_cancelled();
        let usage = child.usage();
        self.delegation.add_usage(usage);
        self.delegation.remember(&link, child.history().to_vec());
        let turns = result.as_ref().map_or(0, |r| r.num_turns);
        sink.tell(SubagentKind::Finished {
            usage,
            num_turns: turns,
            tool_calls: sink.tool_calls(),
            ok: matches!(&result, Ok(run) if run.end == RunEnd::Completed),
        });
        if stopped {
            let said = result.map(|r| r.text).unwrap_or_default();
            return Err(ToolError::Failed(format!(
                "the user stopped the {} agent (/agents) before it finished; its last words: {said}",
                link.agent
            )));
        }
        let exhausted = child.requests.exhausted();
        let worktree = child.host.worktree.take();
        let worktree = Agent::end_worktree(worktree, &child, &sink).await;
        let mut answer = outcome(result, &link, usage, exhausted, line)?;
        if let Some(lines) = worktree {
            // What it changed and where: its worktree, kept when it holds changes.
            answer.content.push_str(&format!("\n{lines}"));
        }
        Ok(answer)
    }
}

/// What the parent's model reads of a sub-agent's run: its answer, or why it has none. A
/// decline or a hook's stop inside it ends the parent's turn too. `exhausted`: the run's
/// `--max-turns` requests are all made.
fn outcome(
    result: Result<RunResult, AgentError>,
    link: &Link,
    usage: Usage,
    exhausted: bool,
    line: &CallLine,
) -> Result<ToolOutput, ToolError> {
    let agent_type = &link.agent;
    let run = match result {
        Ok(run) => run,
        Err(e) => {
            return Err(ToolError::failed(format!(
                "the {agent_type} agent failed: {e}"
            )));
        }
    };
    let turns = run.num_turns;
    let failed = |message: String| Err(ToolError::Failed(message));
    match run.end {
        RunEnd::Completed => Ok(ToolOutput::text(report(&run.text, link, usage, turns))),
        RunEnd::Interrupted => Err(ToolError::Interrupted),
        RunEnd::Declined => {
            // The user said no to the child: the parent's turn ends too.
            line.decline();
            failed(format!(
                "the user declined a call of the {agent_type} agent and ended this turn"
            ))
        }
        RunEnd::MaxTurns if exhausted => failed(format!(
            "the {agent_type} agent stopped after {turns} model requests: the run reached its \
             limit (--max-turns), which counts every agent's requests; its last words: {}",
            run.text
        )),
        RunEnd::MaxTurns => failed(format!(
            "the {agent_type} agent stopped after {turns} model requests (its turn limit) \
             before it finished; its last words: {}",
            run.text
        )),
        // The budget is the run's: the parent meets it at its own next request.
        RunEnd::MaxBudget(reason) => failed(format!("the {agent_type} agent stopped: {reason}")),
        RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
            line.stop(reason.clone());
            failed(format!(
                "the {agent_type} agent was stopped by a hook: {reason}"
            ))
        }
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
