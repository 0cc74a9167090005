//! `--output-format codex-json` (`ling exec --json`, Codex's `--experimental-json`): the JSONL
//! events of `codex exec --json`, which the published `@openai/codex-sdk` reads:
//! `thread.started` (the session's id is the thread's), `turn.started`,
//! `item.started`/`item.updated`/`item.completed` and `turn.completed` with the turn's usage, or
//! `turn.failed`. Ling's events map to Codex's items: an answer is an `agent_message`, reasoning
//! a `reasoning`, `bash` a `command_execution`, `write_file`/`edit_file` a `file_change`, an MCP
//! tool an `mcp_tool_call`, `web_search` a `web_search`, a to-do list a `todo_list`, a denial or
//! a warning an `error` item. Reads and searches have no Codex item and are left out; the rest
//! goes to stderr as in text mode.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::{json_line, side_channel};
use crate::llm::Usage;
use crate::session::{AgentEvent, EventSink};
use crate::ui::output::stderr_line;
use crate::ui::style::Style;

/// Codex's JSONL events over the agent's event stream.
pub struct CodexJsonl {
    root: PathBuf,
    verbose: bool,
    /// With `--output-schema`, the last answer waits for the end of the run: it is sent as
    /// checked (compact JSON), or replaced by the answer asked again.
    hold_answer: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next: u64,
    reasoning: String,
    /// Ling's call id → the item it opened.
    open: HashMap<String, Value>,
    held: Option<Value>,
    todo: Option<Value>,
}

impl State {
    fn item_id(&mut self) -> String {
        let id = format!("item_{}", self.next);
        self.next += 1;
        id
    }

    fn flush_reasoning(&mut self) {
        let text = std::mem::take(&mut self.reasoning);
        if !text.trim().is_empty() {
            let id = self.item_id();
            completed(json!({"id": id, "type": "reasoning", "text": text}));
        }
    }

    fn flush_held(&mut self) {
        if let Some(item) = self.held.take() {
            completed(item);
        }
    }
}

fn line(kind: &str, item: &Value) {
    json_line(&json!({"type": kind, "item": item}));
}

fn completed(item: Value) {
    line("item.completed", &item);
}

impl CodexJsonl {
    pub fn new(root: PathBuf, verbose: bool, hold_answer: bool) -> Self {
        Self {
            root,
            verbose,
            hold_answer,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `thread.started` and `turn.started`: the run begins.
    pub fn start(&self, thread_id: &str) {
        json_line(&json!({"type": "thread.started", "thread_id": thread_id}));
        json_line(&json!({"type": "turn.started"}));
    }

    /// The end of the turn: the answer held back (as `answer` says, when the run succeeded),
    /// the to-do list completed, then `turn.completed` with `usage`, or `turn.failed`.
    pub fn finish(&self, result: Result<&str, &str>, usage: Usage) {
        let mut state = self.state();
        state.flush_reasoning();
        if let (Some(item), Ok(answer)) = (state.held.as_mut(), result) {
            item["text"] = Value::from(answer);
        }
        state.flush_held();
        if let Some(todo) = state.todo.take() {
            completed(todo);
        }
        match result {
            Ok(_) => json_line(&json!({
                "type": "turn.completed",
                "usage": {
                    "input_tokens": usage.prompt_tokens,
                    "cached_input_tokens": usage.cache_read_tokens,
                    "cache_write_input_tokens": usage.cache_write_tokens,
                    "output_tokens": usage.completion_tokens,
                    "reasoning_output_tokens": usage.reasoning_tokens,
                }
            })),
            // As Codex's exec: the fatal error, then the turn that failed of it.
            Err(message) => {
                json_line(&json!({"type": "error", "message": message}));
                json_line(&json!({"type": "turn.failed", "error": {"message": message}}));
            }
        }
    }

    fn begin(&self, state: &mut State, call: &str, name: &str, input: &Value) {
        let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
        let item = match name {
            "bash" => json!({
                "type": "command_execution",
                "command": text("command"),
                "aggregated_output": "",
                "status": "in_progress",
            }),
            "web_search" => json!({"type": "web_search", "query": text("query")}),
            "write_file" | "edit_file" => {
                let path = text("path");
                let exists = !path.is_empty() && self.root.join(path).exists();
                let kind = if exists { "update" } else { "add" };
                // Emitted once the edit is done, as Codex emits a patch.
                let item =
                    json!({"type": "file_change", "changes": [{"path": path, "kind": kind}]});
                state.open.insert(call.to_string(), item);
                return;
            }
            "todo_write" | "TodoWrite" => {
                let items: Vec<Value> = input
                    .get("todos")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        json!({
                            "text": t.get("content").and_then(Value::as_str).unwrap_or_default(),
                            "completed": t.get("status").and_then(Value::as_str) == Some("completed"),
                        })
                    })
                    .collect();
                let (kind, id) = match &state.todo {
                    Some(todo) => ("item.updated", todo["id"].clone()),
                    None => ("item.started", Value::from(state.item_id())),
                };
                let todo = json!({"id": id, "type": "todo_list", "items": items});
                line(kind, &todo);
                state.todo = Some(todo);
                return;
            }
            _ => match name.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
                Some((server, tool)) => json!({
                    "type": "mcp_tool_call",
                    "server": server,
                    "tool": tool,
                    "arguments": input,
                    "status": "in_progress",
                }),
                None => return,
            },
        };
        let mut item = item;
        item["id"] = Value::from(state.item_id());
        line("item.started", &item);
        state.open.insert(call.to_string(), item);
    }

    fn end(state: &mut State, call: &str, content: &str, is_error: bool) {
        let Some(mut item) = state.open.remove(call) else {
            return;
        };
        match item["type"].as_str() {
            Some("command_execution") => {
                let (output, code) = split_exit_code(content);
                item["aggregated_output"] = Value::from(output);
                if let Some(code) = code {
                    item["exit_code"] = Value::from(code);
                }
                let ok = !is_error && code.unwrap_or(0) == 0;
                item["status"] = Value::from(if ok { "completed" } else { "failed" });
            }
            Some("mcp_tool_call") if is_error => {
                item["error"] = json!({"message": content});
                item["status"] = Value::from("failed");
            }
            Some("mcp_tool_call") => {
                item["result"] = json!({
                    "content": [{"type": "text", "text": content}],
                    "structured_content": null,
                });
                item["status"] = Value::from("completed");
            }
            Some("file_change") => {
                item["id"] = Value::from(state.item_id());
                item["status"] = Value::from(if is_error { "failed" } else { "completed" });
            }
            _ => {}
        }
        completed(item);
    }

    fn error_item(state: &mut State, message: String) {
        let id = state.item_id();
        completed(json!({"id": id, "type": "error", "message": message}));
    }
}

/// A `bash` result's output and the exit code of its last line (`Exit code: N`).
fn split_exit_code(content: &str) -> (&str, Option<i64>) {
    let (head, last) = content.rsplit_once('\n').unwrap_or(("", content));
    match last
        .strip_prefix("Exit code: ")
        .and_then(|c| c.trim().parse().ok())
    {
        Some(code) => (head, Some(code)),
        None => (content, None),
    }
}

impl EventSink for CodexJsonl {
    fn emit(&self, event: AgentEvent) {
        let mut state = self.state();
        match event {
            AgentEvent::ReasoningDelta(text) => state.reasoning.push_str(&text),
            AgentEvent::AssistantMessage { text, .. } => {
                state.flush_reasoning();
                state.flush_held();
                if !text.is_empty() {
                    let id = state.item_id();
                    let item = json!({"id": id, "type": "agent_message", "text": text});
                    if self.hold_answer {
                        state.held = Some(item);
                    } else {
                        completed(item);
                    }
                }
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                state.flush_reasoning();
                state.flush_held();
                self.begin(&mut state, &id, &name, &input);
            }
            AgentEvent::ToolCallEnd {
                id,
                content,
                is_error,
                ..
            } => Self::end(&mut state, &id, &content, is_error),
            AgentEvent::PermissionDenied { tool, message } => {
                Self::error_item(&mut state, format!("{tool}: {message}"));
            }
            AgentEvent::Warning(text) => Self::error_item(&mut state, text),
            other => {
                if let Some(line) = side_channel(&other, Style::for_stderr(), self.verbose) {
                    stderr_line(line);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bash_result_splits_into_output_and_exit_code() {
        assert_eq!(split_exit_code("a\nb\nExit code: 2"), ("a\nb", Some(2)));
        assert_eq!(split_exit_code("Exit code: 0"), ("", Some(0)));
        assert_eq!(split_exit_code("timed out"), ("timed out", None));
    }
}
