//! One `tools/call` of `ling mcp serve`: a builtin tool through the agent's dispatch point
//! ([`crate::agent::Agent::call_tool_directly`]), or with `--agent` a whole run of the agent on
//! the prompt (a new session, or one continued by `session_id`, kept open for the next call).
//! Progress goes to the client as `notifications/progress` when it asked for it; a permission
//! question goes to the user as a form elicitation when the client can show one.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Server;
use super::tools::AGENT_TOOL;
use super::wire::{AgentOutcome, CallResult, TextContent};
use crate::config::Paths;
use crate::rpc::{Peer, RequestError, RequestId, RpcError};
use crate::session::{
    AgentEvent, Approval, ApprovalRequest, Approver, EventSink, NonInteractive, RunEnd,
};
use crate::session::{Command, EndReason, Host, Io, Reply, Resume, Start};
use crate::trust::ProjectConfig;

/// Agent sessions kept open for a `session_id` to continue; the oldest idle one is closed past
/// this many.
const MAX_LIVE_SESSIONS: usize = 8;

/// Sends a call's events as `notifications/progress` (when the request gave a token).
struct Progress<'a> {
    peer: &'a Peer,
    token: Option<Value>,
    count: AtomicU64,
}

impl Progress<'_> {
    fn report(&self, message: String) {
        let Some(token) = &self.token else { return };
        let progress = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        self.peer.notify(
            "notifications/progress",
            super::wire::value(&super::wire::ProgressParams {
                progress_token: token,
                progress,
                message: &message,
            }),
        );
    }
}

impl EventSink for Progress<'_> {
    fn emit(&self, event: AgentEvent) {
        match event {
            AgentEvent::ToolCallBegin { name, input, .. } => {
                self.report(format!("{name} {}", summary(&input)));
            }
            AgentEvent::ToolProgress { message, .. } => self.report(message),
            AgentEvent::ToolOutputLine { line, .. } => self.report(line),
            AgentEvent::PermissionDenied { tool, message } => {
                tracing::info!("mcp serve: {tool} denied: {message}");
            }
            _ => {}
        }
    }
}

/// The argument that says most about a call (its path, command or pattern), on one line.
fn summary(input: &Value) -> String {
    let text = ["path", "command", "pattern", "uri", "query", "prompt"]
        .iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str))
        .unwrap_or_default();
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(100).collect()
}

/// Puts a permission question to the user through the client (`elicitation/create`, a form with
/// one choice: once, always for this session, or no).
struct ElicitApprover<'a> {
    peer: &'a Peer,
    cancel: &'a CancellationToken,
}

#[async_trait]
impl Approver for ElicitApprover<'_> {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let mut message = format!(
            "Ling asks before running {}: {}",
            request.tool,
            serde_json::to_string(&request.input).unwrap_or_default()
        );
        if let Some(reason) = &request.reason {
            message.push_str(&format!("\n{reason}"));
        }
        if let Some(preview) = &request.preview {
            message.push_str(&format!("\n\n{preview}"));
        }
        let params = super::wire::value(&super::wire::DecisionRequest::new(
            message,
            &request.session_rule,
        ));
        let answer = self
            .peer
            .request(
                "elicitation/create",
                params,
                None,
                Some((self.cancel, "notifications/cancelled")),
            )
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(RequestError::Cancelled(_)) => return Some(Approval::Deny),
            Err(e) => {
                tracing::warn!("mcp serve: the permission question failed: {e}");
                return None;
            }
        };
        let decision = match answer["action"].as_str() {
            Some("accept") => answer["content"]["decision"].as_str().unwrap_or("no"),
            _ => "no",
        };
        Some(match decision {
            "once" => Approval::Once,
            "always" => Approval::Always,
            _ => Approval::Deny,
        })
    }
}

/// `tools/call`; `can_ask`: the client takes form elicitations.
pub(super) async fn tools_call(
    server: &Server,
    params: &Value,
    id: &RequestId,
    can_ask: bool,
    cancel: &CancellationToken,
) -> Result<CallResult, RpcError> {
    let name = params["name"]
        .as_str()
        .ok_or_else(|| RpcError::invalid_params("tools/call needs the tool's \"name\""))?;
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if !arguments.is_object() {
        return Err(RpcError::invalid_params("\"arguments\" must be an object"));
    }
    let progress = Progress {
        peer: &server.peer,
        token: params["_meta"].get("progressToken").cloned(),
        count: AtomicU64::new(0),
    };
    let asker = ElicitApprover {
        peer: &server.peer,
        cancel,
    };
    let approver: &dyn Approver = if can_ask { &asker } else { &NonInteractive };
    if server.options.agent {
        if name != AGENT_TOOL {
            return Err(unknown_tool(name, &[AGENT_TOOL.to_string()]));
        }
        return agent_call(server, arguments, &progress, approver, cancel).await;
    }
    let host = &server.host;
    if host.tools().get(name).is_none() || !super::tools::served(name) {
        let served: Vec<String> = host
            .tools()
            .names()
            .into_iter()
            .filter(|n| super::tools::served(n))
            .collect();
        return Err(unknown_tool(name, &served));
    }
    let call_id = format!("mcp-{id}");
    let io = Io {
        sink: &progress,
        approver,
        cancel,
        trust: None,
    };
    let result = host.call_tool(&call_id, name, &arguments, &io).await;
    Ok(CallResult::text(result.content, result.is_error))
}

fn unknown_tool(name: &str, known: &[String]) -> RpcError {
    RpcError::invalid_params(format!(
        "unknown tool {name:?}; this server has {}",
        known.join(", ")
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentArgs {
    prompt: String,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// One agent session of `--agent`, between calls.
struct AgentRun {
    host: Host,
}

/// The agent sessions kept open, most recently used last.
#[derive(Default)]
pub(crate) struct AgentSessions {
    live: RefCell<Vec<(String, Rc<tokio::sync::Mutex<AgentRun>>)>>,
}

impl AgentSessions {
    fn get(&self, id: &str) -> Option<Rc<tokio::sync::Mutex<AgentRun>>> {
        let mut live = self.live.borrow_mut();
        let at = live.iter().position(|(key, _)| key == id)?;
        let entry = live.remove(at);
        let run = entry.1.clone();
        live.push(entry);
        Some(run)
    }

    async fn keep(&self, id: String, run: Rc<tokio::sync::Mutex<AgentRun>>) {
        let evicted = {
            let mut live = self.live.borrow_mut();
            live.push((id, run));
            if live.len() > MAX_LIVE_SESSIONS {
                live.iter()
                    .position(|(_, r)| r.try_lock().is_ok())
                    .map(|at| live.remove(at))
            } else {
                None
            }
        };
        if let Some((_, run)) = evicted {
            close(&run).await;
        }
    }

    pub(crate) async fn close_all(&self) {
        let live = std::mem::take(&mut *self.live.borrow_mut());
        for (_, run) in live {
            close(&run).await;
        }
    }
}

async fn close(run: &Rc<tokio::sync::Mutex<AgentRun>>) {
    let mut run = run.lock().await;
    let cancel = CancellationToken::new();
    let io = Io::unattended(&Nobody, &cancel);
    let _ = run.host.submit(Command::End(EndReason::Other), &io).await;
}

/// Events nobody reads (SessionEnd at shutdown).
pub(super) struct Nobody;

impl EventSink for Nobody {
    fn emit(&self, _event: AgentEvent) {}
}

async fn agent_call(
    server: &Server,
    arguments: Value,
    progress: &Progress<'_>,
    approver: &dyn Approver,
    cancel: &CancellationToken,
) -> Result<CallResult, RpcError> {
    let args: AgentArgs = serde_json::from_value(arguments)
        .map_err(|e| RpcError::invalid_params(format!("invalid arguments for ling: {e}")))?;
    if args.prompt.trim().is_empty() {
        return Err(RpcError::invalid_params(
            "the prompt is empty; give the task",
        ));
    }
    let run = match &args.session_id {
        Some(id) => match server.sessions.get(id) {
            Some(run) => run,
            None => open(server, Resume::Id(id.clone())).await?,
        },
        None => open(server, Resume::New).await?,
    };
    let mut guard = run.lock().await;
    let this = &mut *guard;
    let session_id = this.host.session_id().to_string();
    if let Some(model) = args.model {
        let cancel = CancellationToken::new();
        let io = Io::unattended(&Nobody, &cancel);
        if let Err(e) = this.host.submit(Command::SetModel(model), &io).await {
            return Err(RpcError::invalid_params(e.to_string()));
        }
    }
    let (text, is_error, turns) = drive(this, &args.prompt, progress, approver, cancel).await;
    drop(guard);
    if server.sessions.get(&session_id).is_none() {
        server.sessions.keep(session_id.clone(), run).await;
    }
    Ok(CallResult {
        content: vec![TextContent::new(text.clone())],
        structured_content: Some(AgentOutcome {
            session_id,
            result: text,
            num_turns: turns,
        }),
        is_error,
        result_type: None,
    })
}

/// A new session, or an earlier one found again by id.
async fn open(
    server: &Server,
    resume: Resume,
) -> Result<Rc<tokio::sync::Mutex<AgentRun>>, RpcError> {
    let paths = Paths::new(server.options.root.clone());
    let project = ProjectConfig::read(&paths).map_err(|e| RpcError::internal(e.to_string()))?;
    let mut options = server.options.run.clone();
    options.resume = resume;
    let start = Start {
        options,
        paths,
        project,
        interactive: false,
    };
    let host = Host::start(start, &|warning: &str| {
        tracing::warn!("mcp serve: {warning}");
    })
    .await
    .map_err(|e| RpcError::invalid_params(e.to_string()))?;
    Ok(Rc::new(tokio::sync::Mutex::new(AgentRun { host })))
}

/// Runs the prompt: (the answer or why it failed, whether it failed, model requests made).
async fn drive(
    run: &mut AgentRun,
    prompt: &str,
    progress: &Progress<'_>,
    approver: &dyn Approver,
    cancel: &CancellationToken,
) -> (String, bool, u32) {
    if !run.host.wait_for_servers(cancel).await {
        return ("interrupted".into(), true, 0);
    }
    let io = Io {
        sink: progress,
        approver,
        cancel,
        trust: None,
    };
    let result = match run
        .host
        .submit(Command::Prompt(prompt.to_string()), &io)
        .await
    {
        Ok(Reply::Turn { result, .. }) => result,
        Ok(Reply::Stopped(reason)) => {
            return (format!("stopped by a SessionStart hook: {reason}"), true, 0);
        }
        Ok(_) => return ("the prompt did not run".into(), true, 0),
        Err(e) => return (crate::redact::scrub(&e.to_string()), true, 0),
    };
    match result {
        Ok(result) => match result.end {
            RunEnd::Completed => (result.text, false, result.num_turns),
            RunEnd::MaxTurns => (
                format!(
                    "stopped after {} model requests before the task was done; raise the limit \
                     with --max-turns",
                    result.num_turns
                ),
                true,
                result.num_turns,
            ),
            RunEnd::MaxBudget(reason) => (reason, true, result.num_turns),
            RunEnd::Interrupted => ("interrupted".into(), true, result.num_turns),
            RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => (
                format!("stopped by a hook: {reason}"),
                true,
                result.num_turns,
            ),
            RunEnd::Declined => (
                "a tool call was declined; the run ended".into(),
                true,
                result.num_turns,
            ),
        },
        Err(e) => (crate::redact::scrub(&e.to_string()), true, 0),
    }
}
