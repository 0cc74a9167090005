//! `--output-format stream-json`: the agent's events as Claude Code's messages
//! ([`super::messages`]), one per line on stdout. A model response becomes one
//! `assistant` message per content block (its text, then each tool call with the input the tool
//! will really run, after PreToolUse hooks), each tool's result a `user` message; builtin tools
//! go by Claude Code's names (`Bash`, `Read`) with Claude's field names beside Ling's, as hooks
//! from a Claude file see them. With `--include-partial-messages` the text also streams as
//! Anthropic `stream_event`s. What Ling's own lines say beyond that is kept: hook outcomes as
//! `system/hook_response`, MCP status changes as `system/mcp_status`, compactions as
//! `system/compact_boundary`, retries as `system/api_retry`, permission denials as
//! `system/permission_denied` (and in the result's `permission_denials`). Warnings stay on stderr.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::messages::{self, stream_event, system};
use crate::front::print::{json_line, side_channel};
use crate::hooks::claude::{claude_tool_name, tool_response, with_claude_fields};
use crate::llm::Usage;
use crate::session::{AgentEvent, EventSink};
use crate::ui::style::Style;

/// A tool's name as a Claude Code program knows it.
pub fn claude_name(tool: &str) -> String {
    claude_tool_name(tool).unwrap_or(tool).to_string()
}

/// What the run's `result` reports beyond the agent's own counts: time spent waiting for the
/// model, and the calls the permission rules refused.
#[derive(Debug, Default)]
pub struct RunStats {
    api_time: Duration,
    request_started: Option<Instant>,
    /// The input of each call begun, by id, and the id of the last call begun of each tool.
    calls: HashMap<String, (String, Value)>,
    last_of_tool: HashMap<String, String>,
    denials: Vec<Value>,
}

impl RunStats {
    /// Takes what one event says; returns the denial it recorded, if any.
    pub fn observe(&mut self, event: &AgentEvent) -> Option<Value> {
        match event {
            AgentEvent::RequestStarted { .. } => self.request_started = Some(Instant::now()),
            AgentEvent::AssistantMessage { .. } => {
                if let Some(started) = self.request_started.take() {
                    self.api_time += started.elapsed();
                }
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                self.calls.insert(id.clone(), (name.clone(), input.clone()));
                self.last_of_tool.insert(name.clone(), id.clone());
            }
            AgentEvent::PermissionDenied { tool, .. } => {
                let id = self.last_of_tool.get(tool).cloned().unwrap_or_default();
                let input = self
                    .calls
                    .get(&id)
                    .map(|(_, input)| with_claude_fields(tool, input))
                    .unwrap_or_else(|| json!({}));
                let denial = json!({
                    "tool_name": claude_name(tool),
                    "tool_use_id": id,
                    "tool_input": input,
                });
                self.denials.push(denial.clone());
                return Some(denial);
            }
            _ => {}
        }
        None
    }

    /// The tool call of this id, when it was begun.
    fn call(&self, id: &str) -> Option<&(String, Value)> {
        self.calls.get(id)
    }

    /// Model time in milliseconds and the denials since the last call; starts over.
    pub fn take(&mut self) -> (u64, Vec<Value>) {
        let api_ms = u64::try_from(self.api_time.as_millis()).unwrap_or(u64::MAX);
        let denials = std::mem::take(&mut self.denials);
        *self = Self::default();
        (api_ms, denials)
    }
}

/// The content block a partial message has open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
}

#[derive(Debug, Default)]
struct State {
    stats: RunStats,
    /// `message.id` of the model response being streamed.
    message_id: String,
    /// The partial content block open, and the index the next one gets.
    open: Option<(usize, Block)>,
    next_index: usize,
    /// The usage of the last complete model response.
    usage: Usage,
}

/// The sink of `--output-format stream-json`.
pub struct ClaudeStream {
    session_id: String,
    /// The project root, for the `filePath`s of tool results.
    root: std::path::PathBuf,
    model: Mutex<String>,
    partial: bool,
    verbose: bool,
    max_retries: u32,
    state: Mutex<State>,
}

impl ClaudeStream {
    /// `partial`: `--include-partial-messages`.
    pub fn new(
        session_id: &str,
        root: &std::path::Path,
        model: &str,
        partial: bool,
        verbose: bool,
        max_retries: u32,
    ) -> Self {
        Self {
            session_id: session_id.to_string(),
            root: root.to_path_buf(),
            model: Mutex::new(model.to_string()),
            partial,
            verbose,
            max_retries,
            state: Mutex::new(State::default()),
        }
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The model the next responses come from (`set_model`).
    pub fn set_model(&self, model: &str) {
        *lock(&self.model) = model.to_string();
    }

    /// Model time and denials of the run so far, for its `result`; starts over.
    pub fn take_stats(&self) -> (u64, Vec<Value>) {
        lock(&self.state).stats.take()
    }

    /// Writes one message (an `init`, a `result`, a control message).
    pub fn write(&self, message: &Value) {
        json_line(message);
    }

    fn system(&self, subtype: &str, fields: Value) {
        json_line(&system(&self.session_id, subtype, fields));
    }

    fn event(&self, event: Value) {
        json_line(&stream_event(&self.session_id, event));
    }

    fn assistant(&self, message_id: &str, block: Value, usage: Usage) {
        let model = lock(&self.model).clone();
        json_line(&messages::assistant(
            &self.session_id,
            message_id,
            &model,
            block,
            usage,
        ));
    }

    /// A delta of `kind` for the partial message, opening its block first when needed.
    fn delta(&self, state: &mut State, kind: Block, text: &str) {
        if !self.partial || text.is_empty() {
            return;
        }
        let index = match state.open {
            Some((index, open)) if open == kind => index,
            other => {
                if let Some((index, _)) = other {
                    self.event(json!({"type": "content_block_stop", "index": index}));
                }
                let index = state.next_index;
                state.next_index += 1;
                state.open = Some((index, kind));
                let block = match kind {
                    Block::Text => json!({"type": "text", "text": ""}),
                    Block::Thinking => json!({"type": "thinking", "thinking": ""}),
                };
                self.event(
                    json!({"type": "content_block_start", "index": index, "content_block": block}),
                );
                index
            }
        };
        let delta = match kind {
            Block::Text => json!({"type": "text_delta", "text": text}),
            Block::Thinking => json!({"type": "thinking_delta", "thinking": text}),
        };
        self.event(json!({"type": "content_block_delta", "index": index, "delta": delta}));
    }

    fn message_start(&self, state: &mut State) {
        state.message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        state.open = None;
        state.next_index = 0;
        if self.partial {
            let model = lock(&self.model).clone();
            self.event(json!({
                "type": "message_start",
                "message": {
                    "id": state.message_id, "type": "message", "role": "assistant",
                    "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            }));
        }
    }

    fn message_stop(&self, state: &mut State) {
        if !self.partial {
            return;
        }
        if let Some((index, _)) = state.open.take() {
            self.event(json!({"type": "content_block_stop", "index": index}));
        }
        self.event(json!({
            "type": "message_delta",
            "delta": {"stop_reason": null, "stop_sequence": null},
            "usage": {"output_tokens": 0},
        }));
        self.event(json!({"type": "message_stop"}));
    }
}

impl EventSink for ClaudeStream {
    fn emit(&self, event: AgentEvent) {
        let mut state = lock(&self.state);
        let denial = state.stats.observe(&event);
        match &event {
            AgentEvent::RequestStarted { .. } => self.message_start(&mut state),
            AgentEvent::TextDelta(text) => self.delta(&mut state, Block::Text, text),
            AgentEvent::ReasoningDelta(text) => {
                self.delta(&mut state, Block::Thinking, text);
                if self.verbose {
                    self.side(&event);
                }
            }
            AgentEvent::AssistantMessage { text, usage } => {
                self.message_stop(&mut state);
                // Each block message of the response carries its usage, as Claude Code's do
                // (programs sum it by `message.id`).
                state.usage = usage.unwrap_or_default();
                if !text.is_empty() {
                    let id = state.message_id.clone();
                    self.assistant(&id, json!({"type": "text", "text": text}), state.usage);
                }
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                let message_id = state.message_id.clone();
                self.assistant(
                    &message_id,
                    json!({
                        "type": "tool_use",
                        "id": id,
                        "name": claude_name(name),
                        "input": with_claude_fields(name, input),
                    }),
                    state.usage,
                );
            }
            AgentEvent::ToolCallEnd {
                id,
                name,
                content,
                is_error,
                ..
            } => {
                let structured = match state.stats.call(id) {
                    Some((_, input)) if !is_error => {
                        tool_response(name, input, content, &self.root)
                    }
                    _ => Value::String(content.clone()),
                };
                json_line(&messages::tool_result(
                    &self.session_id,
                    id,
                    content,
                    *is_error || command_failed(name, content),
                    structured,
                ));
            }
            AgentEvent::PermissionDenied { message, .. } => {
                if let Some(denial) = denial {
                    self.system(
                        "permission_denied",
                        json!({
                            "tool_name": denial["tool_name"],
                            "tool_use_id": denial["tool_use_id"],
                            "message": message,
                        }),
                    );
                }
                self.side(&event);
            }
            AgentEvent::Hook(notice) => {
                let hook_name = match &notice.tool {
                    Some(tool) => format!("{}:{}", notice.event, claude_name(tool)),
                    None => notice.event.clone(),
                };
                let failed = matches!(
                    notice.decision,
                    crate::session::NoticeDecision::Error | crate::session::NoticeDecision::Timeout
                );
                self.system(
                    "hook_response",
                    json!({
                        "hook_id": messages::uuid(),
                        "hook_name": hook_name,
                        "hook_event": notice.event,
                        "output": notice.message,
                        "stdout": "",
                        "stderr": "",
                        "outcome": if failed { "error" } else { "success" },
                        "decision": notice.decision,
                        "message": notice.message,
                        "tool": notice.tool,
                    }),
                );
            }
            AgentEvent::Compacted {
                trigger,
                pre_tokens,
                post_tokens,
            } => self.system(
                "compact_boundary",
                json!({"compact_metadata": {
                    "trigger": trigger, "pre_tokens": pre_tokens, "post_tokens": post_tokens,
                }}),
            ),
            // A server gone from the config: its last status says so.
            AgentEvent::McpReloaded { removed, .. } => {
                for name in removed {
                    let (status, _) = crate::mcp::ServerState::Disabled.report();
                    self.system("mcp_status", json!({"name": name, "status": status}));
                }
            }
            AgentEvent::McpStatus { server, state } => {
                let (status, error) = state.report();
                let mut fields = json!({"name": server, "status": status});
                if let Some(error) = error {
                    fields["error"] = json!(error);
                }
                self.system("mcp_status", fields);
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.system(
                    "api_retry",
                    json!({
                        "attempt": attempt,
                        "max_retries": self.max_retries,
                        "retry_delay_ms": delay_ms,
                        "error_status": null,
                        "error": "unknown",
                        "reason": reason,
                    }),
                );
                self.side(&event);
            }
            AgentEvent::Subagent(sub) => {
                self.subagent(sub);
                self.side(&event);
            }
            _ => self.side(&event),
        }
    }
}

impl ClaudeStream {
    /// A sub-agent's tool calls, their results and its answer, as Claude Code writes a Task's:
    /// the same messages with `parent_tool_use_id` naming the parent's `task` call.
    fn subagent(&self, sub: &crate::session::SubagentEvent) {
        let crate::session::SubagentKind::Event(inner) = &sub.kind else {
            return;
        };
        let model = lock(&self.model).clone();
        let message = match inner.as_ref() {
            AgentEvent::ToolCallBegin { id, name, input } => messages::assistant(
                &self.session_id,
                &messages::uuid(),
                &model,
                json!({
                    "type": "tool_use",
                    "id": id,
                    "name": claude_name(name),
                    "input": with_claude_fields(name, input),
                }),
                Usage::default(),
            ),
            AgentEvent::ToolCallEnd {
                id,
                name,
                content,
                is_error,
                ..
            } => messages::tool_result(
                &self.session_id,
                id,
                content,
                *is_error || command_failed(name, content),
                Value::String(content.clone()),
            ),
            AgentEvent::AssistantMessage { text, usage } if !text.is_empty() => {
                messages::assistant(
                    &self.session_id,
                    &messages::uuid(),
                    &model,
                    json!({"type": "text", "text": text}),
                    usage.unwrap_or_default(),
                )
            }
            _ => return,
        };
        let mut message = message;
        message["parent_tool_use_id"] = json!(sub.call_id);
        json_line(&message);
    }

    /// What goes to stderr, as in the other outputs.
    fn side(&self, event: &AgentEvent) {
        if let Some(line) = side_channel(event, Style::for_stderr(), self.verbose) {
            crate::ui::output::stderr_line(line);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A command that ran and failed (a non-zero exit, a signal, the sandbox) is an error result
/// in Claude Code's stream-json, as Claude Code marks its own: programs count failures by it.
fn command_failed(name: &str, content: &str) -> bool {
    name == "bash"
        && crate::ui::render::Finished {
            name,
            content,
            is_error: false,
            display: None,
            total_lines: None,
        }
        .failed()
}
