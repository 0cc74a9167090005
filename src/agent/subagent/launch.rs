//! A `task` call with `run_in_background`: the child is made while the call runs (SubagentStart
//! fires in the parent's turn), then runs on its own task and the call returns at once. The
//! child waits for a slot like any (`maxParallelAgents` counts the whole tree), asks nobody
//! (what would need a question is denied, as in a `-p` run: Claude Code's background agents
//! work with the permissions they were given), and is stopped only by `/agents` or the end of
//! the session. Its events and, at its end, its answer go to the parent's [`Inbox`](super::background::Inbox), which the
//! parent takes at its next step.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::background::{Notice, StepSink};
use super::{ChildOrder, Delegation};
use crate::agent::call_line::CallLine;
use crate::agent::{Agent, AgentError, NonInteractive, RunEnd, RunResult, SubagentKind};
use crate::tools::{ToolError, ToolOutput};

/// Starts the child `order` describes in the background; what the parent's model reads now.
pub(super) async fn launch(
    delegation: &Arc<Delegation>,
    line: &CallLine,
    order: ChildOrder,
    description: String,
    prompt: String,
) -> Result<ToolOutput, ToolError> {
    let link = order.link.clone();
    let Some(made) = line.child(order).await else {
        return Err(ToolError::Interrupted);
    };
    let mut child = made.map_err(|e| ToolError::failed(e.to_string()))?;
    let cancel = CancellationToken::new();
    delegation
        .registry
        .enter(delegation.row(&link, &description, true), cancel.clone());
    delegation.inbox.started();
    // Its start is shown in the parent's turn now; the rest at the parent's steps.
    let forward = |event| line.emit(event);
    StepSink::new(&delegation.registry, &link, &forward).tell(SubagentKind::Started {
        description: description.clone(),
        model: child.model().to_string(),
    });
    let answer = format!(
        "The {} agent {} started in the background on {description:?}. Go on with your work; \
         its answer comes to you as a message when it ends (the user sees it under /agents).",
        link.agent, link.agent_id
    );
    let delegation = delegation.clone();
    tokio::spawn(async move {
        let registry = delegation.registry.clone();
        let inbox = delegation.inbox.clone();
        let forward = |event| inbox.event(event);
        let sink = StepSink::new(&registry, &link, &forward);
        let permit = delegation.slot(&cancel).await;
        let result = match permit {
            Some(_) => child.run(&prompt, &sink, &NonInteractive, &cancel).await,
            None => Ok(RunResult {
                end: RunEnd::Interrupted,
                text: String::new(),
                num_turns: 0,
                requests: 0,
            }),
        };
        let usage = child.usage();
        delegation.remember(&link, child.history().to_vec());
        sink.tell(SubagentKind::Finished {
            usage,
            num_turns: result.as_ref().map_or(0, |r| r.num_turns),
            tool_calls: sink.tool_calls(),
            ok: matches!(&result, Ok(run) if run.end == RunEnd::Completed),
        });
        let agent_id = link.agent_id.clone();
        let stopped = registry.was_stopped(&agent_id);
        let (status, mut text) = ended(result, stopped, child.requests.exhausted());
        let worktree = child.host.worktree.take();
        if let Some(lines) = Agent::end_worktree(worktree, &child, &sink).await {
            text.push_str(&format!("\n{lines}"));
        }
        inbox.ended(Notice {
            link,
            description,
            status,
            text,
            usage,
        });
        // Gone from `/agents` only once its answer waits for the parent.
        registry.leave(&agent_id);
    });
    Ok(ToolOutput::text(answer))
}

/// How a background child ended, for its notice: (status, its answer or why it has none).
fn ended(
    result: Result<RunResult, AgentError>,
    stopped: bool,
    exhausted: bool,
) -> (&'static str, String) {
    let run = match result {
        Ok(run) => run,
        Err(e) => return ("failed", format!("it failed: {e}")),
    };
    match run.end {
        RunEnd::Completed => ("completed", run.text),
        RunEnd::Interrupted if stopped => (
            "stopped",
            format!(
                "the user stopped it (/agents); its last words: {}",
                run.text
            ),
        ),
        RunEnd::Interrupted => ("stopped", "the session stopped it".into()),
        RunEnd::MaxTurns if exhausted => (
            "failed",
            format!(
                "the run reached its limit of model requests (--max-turns, which counts every \
                 agent's); its last words: {}",
                run.text
            ),
        ),
        RunEnd::MaxTurns => (
            "failed",
            format!(
                "it reached its turn limit before it finished; its last words: {}",
                run.text
            ),
        ),
        RunEnd::Declined => ("failed", "a call it needed was refused".into()),
        RunEnd::MaxBudget(reason) => ("failed", format!("the spend cap stopped it: {reason}")),
        RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
            ("failed", format!("a hook stopped it: {reason}"))
        }
    }
}
