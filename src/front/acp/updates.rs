//! The agent's events as ACP `session/update` notifications: the answer and the model's
//! reasoning as message and thought chunks, each tool call as a `tool_call` (title, kind,
//! locations, the diff of an edit) followed by `tool_call_update`s (running, its output, how it
//! ended), warnings and hook notices as `notice`s when the client shows those, compaction, the
//! to-do list as a `plan`, a mode changed by an approved plan as `current_mode_update`, and
//! the context's fill after each turn. It also keeps the calls still open, so a permission
//! question can name the call it is about and an editor terminal can stay with its call.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use agent_client_protocol_schema::v1::{
    Content, ContentBlock, ContentChunk, CurrentModeUpdate, Notice, NoticeSeverity, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionId, SessionNotification, SessionUpdate,
    Terminal, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    UsageUpdate,
};
use serde_json::{Value, json};

use super::tool_view::{CallView, diff_content, view};
use crate::mcp::ServerState;
use crate::rpc::Peer;
use crate::session::{AgentEvent, EventSink, SubagentKind, Todo, TodoStatus};

/// A call that has begun and not yet ended.
struct OpenCall {
    name: String,
    input: Value,
    view: CallView,
    /// A permission question already named it.
    asked: bool,
    /// The editor terminal its command runs in.
    terminal: Option<String>,
}

/// Sends one session's updates; an [`EventSink`] for its runs.
pub(super) struct UpdateSink {
    peer: Peer,
    session_id: SessionId,
    root: PathBuf,
    /// The client shows `notice` updates (`session.notices`).
    notices: bool,
    calls: Mutex<HashMap<String, OpenCall>>,
}

impl UpdateSink {
    pub(super) fn new(peer: Peer, session_id: &str, root: PathBuf, notices: bool) -> Self {
        Self {
            peer,
            session_id: SessionId::new(session_id),
            root,
            notices,
            calls: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn send(&self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.session_id.clone(), update);
        match serde_json::to_value(&notification) {
            Ok(params) => self.peer.notify("session/update", params),
            Err(e) => tracing::warn!("acp: cannot encode a session update: {e}"),
        }
    }

    /// Text the user should read that is not part of the answer: a `notice` where the client
    /// shows them, else only the log.
    pub(super) fn notice(&self, severity: NoticeSeverity, title: &str, detail: Option<&str>) {
        tracing::info!(
            "acp: {title}{}",
            detail.map(|d| format!(": {d}")).unwrap_or_default()
        );
        if self.notices {
            self.send(SessionUpdate::Notice(
                Notice::new(severity, title).description(detail.map(str::to_string)),
            ));
        }
    }

    /// The open call of `tool` with exactly this input that no question has named yet (the one
    /// a permission request is about): its id and what the client was shown of it.
    pub(super) fn call_for(&self, tool: &str, input: &Value) -> Option<(String, CallView)> {
        let mut calls = self.lock();
        let (id, call) = calls
            .iter_mut()
            .filter(|(_, c)| !c.asked && c.name == tool && &c.input == input)
            .min_by(|a, b| a.0.cmp(b.0))?;
        call.asked = true;
        Some((id.clone(), call.view.clone()))
    }

    /// The call may run now (it was allowed): the editor shows it as running.
    pub(super) fn running(&self, call_id: &str) {
        if let Some(call) = self.lock().get_mut(call_id) {
            call.asked = false;
        }
        self.update(
            call_id,
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        );
    }

    /// The command of `call_id` runs in the editor's terminal `terminal_id`: shown with the call.
    pub(super) fn terminal(&self, call_id: &str, terminal_id: &str) {
        if let Some(call) = self.lock().get_mut(call_id) {
            call.terminal = Some(terminal_id.to_string());
        }
        let content = vec![ToolCallContent::Terminal(Terminal::new(
            terminal_id.to_string(),
        ))];
        self.update(
            call_id,
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(content),
        );
    }

    fn update(&self, call_id: &str, fields: ToolCallUpdateFields) {
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_string(),
            fields,
        )));
    }

    fn begin(&self, id: &str, name: &str, input: &Value) {
        let shown = view(name, input, &self.root);
        let call = ToolCall::new(id.to_string(), shown.title.clone())
            .kind(shown.kind)
            .status(ToolCallStatus::Pending)
            .locations(shown.locations.clone())
            .content(diff_content(&shown))
            .raw_input(input.clone());
        self.lock().insert(
            id.to_string(),
            OpenCall {
                name: name.to_string(),
                input: input.clone(),
                view: shown,
                asked: false,
                terminal: None,
            },
        );
        self.send(SessionUpdate::ToolCall(call));
    }

    fn end(&self, id: &str, content: &str, is_error: bool) {
        let call = self.lock().remove(id);
        let mut shown = Vec::new();
        if let Some(terminal) = call.as_ref().and_then(|c| c.terminal.as_deref()) {
            shown.push(ToolCallContent::Terminal(Terminal::new(
                terminal.to_string(),
            )));
        }
        if let (Some(call), false) = (&call, is_error) {
            shown.extend(diff_content(&call.view));
        }
        if shown.is_empty() || is_error {
            shown.push(text_content(content));
        }
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        self.update(
            id,
            ToolCallUpdateFields::new()
                .status(status)
                .content(shown)
                .raw_output(json!({ "content": content, "isError": is_error })),
        );
    }

    fn progress(&self, id: &str, message: &str) {
        let has_terminal = self
            .lock()
            .get(id)
            .is_some_and(|call| call.terminal.is_some());
        // A terminal shows the output itself; replacing it with one line would hide it.
        if !has_terminal {
            self.update(
                id,
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![text_content(message)]),
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenCall>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The context's fill, as the client shows it.
    pub(super) fn usage(&self, used: u64, window: u64) {
        self.send(SessionUpdate::UsageUpdate(UsageUpdate::new(used, window)));
    }
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::from(text.to_string())))
}

/// A text chunk of the answer or the reasoning.
pub(super) fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_string()))
}

/// The to-do list as an ACP plan: every entry with its status (priority is not Ling's: all
/// `medium`); each update replaces the editor's whole plan.
pub(super) fn plan(todos: &[Todo]) -> Plan {
    let entries = todos
        .iter()
        .map(|todo| {
            let status = match todo.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    Plan::new(entries)
}

impl EventSink for UpdateSink {
    fn emit(&self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta(text) if !text.is_empty() => {
                self.send(SessionUpdate::AgentMessageChunk(chunk(&text)));
            }
            AgentEvent::ReasoningDelta(text) if !text.is_empty() => {
                self.send(SessionUpdate::AgentThoughtChunk(chunk(&text)));
            }
            AgentEvent::ToolCallBegin { id, name, input } => self.begin(&id, &name, &input),
            AgentEvent::ToolCallEnd {
                id,
                content,
                is_error,
                ..
            } => self.end(&id, &content, is_error),
            AgentEvent::ToolProgress { id, message } => self.progress(&id, &message),
            AgentEvent::ToolOutputLine { id, line } => self.progress(&id, &line),
            AgentEvent::Warning(text) => self.notice(NoticeSeverity::Warning, &text, None),
            AgentEvent::McpReloaded { .. } => {}
            AgentEvent::GoalCheck {
                command,
                round,
                passed,
                output,
            } => self.notice(
                NoticeSeverity::Info,
                &crate::session::check_line(&command, round, passed, &output),
                None,
            ),
            AgentEvent::Retrying {
                attempt, reason, ..
            } => self.notice(
                NoticeSeverity::Info,
                &format!("retrying the model request (attempt {attempt})"),
                Some(&reason),
            ),
            AgentEvent::Hook(notice) => {
                let severity = if notice.decision.is_alarm() {
                    NoticeSeverity::Warning
                } else {
                    NoticeSeverity::Info
                };
                let subject = match &notice.tool {
                    Some(tool) => format!(
                        "{} hook ({tool}): {}",
                        notice.event,
                        notice.decision.as_str()
                    ),
                    None => format!("{} hook: {}", notice.event, notice.decision.as_str()),
                };
                self.notice(severity, &subject, Some(&notice.message));
            }
            AgentEvent::McpStatus { server, state } => {
                if let ServerState::Failed(_) | ServerState::NeedsAuth(_) = &state {
                    let (status, detail) = state.report();
                    self.notice(
                        NoticeSeverity::Warning,
                        &format!("MCP server {server}: {status}"),
                        detail,
                    );
                }
            }
            AgentEvent::Compacted {
                pre_tokens,
                post_tokens,
                trigger,
            } => self.notice(
                NoticeSeverity::Info,
                &format!("conversation compacted ({trigger})"),
                Some(&format!("{pre_tokens} -> {post_tokens} tokens")),
            ),
            AgentEvent::PermissionDenied { tool, message } => {
                tracing::info!("acp: permission denied: {tool}: {message}");
            }
            // A sub-agent's work shows on its parent's `task` call, one line per step.
            AgentEvent::Subagent(sub) => match &sub.kind {
                SubagentKind::Started { description, .. } => {
                    self.progress(&sub.call_id, &format!("{}: {description}", sub.agent));
                }
                SubagentKind::Event(event) => {
                    if let AgentEvent::ToolCallBegin { name, .. } = event.as_ref() {
                        self.progress(&sub.call_id, &format!("{}: {name}", sub.agent));
                    }
                }
                SubagentKind::Finished { .. } => {}
            },
            AgentEvent::Todos(todos) => self.send(SessionUpdate::Plan(plan(&todos))),
            AgentEvent::ModeChanged(mode) => self.send(SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(mode.as_str()),
            )),
            AgentEvent::RequestStarted { .. }
            | AgentEvent::TextDelta(_)
            | AgentEvent::ReasoningDelta(_)
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::CompactStarted { .. }
            | AgentEvent::TurnFinished { .. } => {}
        }
    }
}
