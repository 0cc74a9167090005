//! The three outputs of `ling -p`: `text` (the answer streams to stdout, everything else to
//! stderr), `json` (one result object at the end) and `stream-json` (one object per line). Each
//! is an [`EventSink`] over the agent's one event stream.

use std::io::Write;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::output::{exit_on_broken_pipe, stderr_line};
use super::render::{tool_begin_line, tool_end_line};
use super::style::Style;
use crate::agent::{AgentEvent, EventSink, HookNotice};

/// Lines for stderr shared by the text and json outputs: what the user should know about but
/// that must never reach stdout.
fn side_channel(event: &AgentEvent, style: Style, verbose: bool, tools: bool) -> Option<String> {
    match event {
        AgentEvent::ToolCallBegin { name, input, .. } if tools => {
            Some(tool_begin_line(style, name, input))
        }
        AgentEvent::ToolCallEnd {
            content,
            is_error,
            display,
            ..
        } if tools => {
            let mut line = tool_end_line(style, content, *is_error);
            if let (Some(display), true) = (display, verbose) {
                line.push('\n');
                line.push_str(&super::render::styled_display(style, display));
            }
            Some(line)
        }
        AgentEvent::PermissionDenied { tool, message } => Some(format!(
            "{} {tool}: {message}",
            style.yellow("permission denied:")
        )),
        AgentEvent::Hook(notice) => Some(hook_line(style, notice)),
        AgentEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } => Some(style.dim(&format!(
            "retrying model request (attempt {attempt}) in {delay_ms} ms: {reason}"
        ))),
        AgentEvent::Warning(text) => Some(format!("{} {text}", style.yellow("warning:"))),
        AgentEvent::McpStatus {
            server,
            status,
            detail,
        } if verbose || status == "failed" => Some(match detail {
            Some(detail) => format!("mcp {server}: {status}: {detail}"),
            None => format!("mcp {server}: {status}"),
        }),
        AgentEvent::ReasoningDelta(text) if verbose => Some(style.dim(text)),
        _ => None,
    }
}

pub fn hook_line(style: Style, notice: &HookNotice) -> String {
    let subject = match &notice.tool {
        Some(tool) => format!("{} hook ({tool})", notice.event),
        None => format!("{} hook", notice.event),
    };
    let verdict = match notice.decision.as_str() {
        "block" | "deny" | "error" | "timeout" => style.red(&notice.decision),
        _ => style.yellow(&notice.decision),
    };
    format!("{subject}: {verdict}: {}", notice.message)
}

/// `--output-format text`: answer text to stdout as it streams, the rest to stderr.
pub struct TextOutput {
    verbose: bool,
    err_style: Style,
    /// Whether stdout has text not yet ended by a newline, and whether anything was written.
    state: Mutex<(bool, bool)>,
}

impl TextOutput {
    pub fn new(verbose: bool) -> Self {
        Self {
            verbose,
            err_style: Style::for_stderr(),
            state: Mutex::new((false, false)),
        }
    }

    fn write_stdout(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            exit_on_broken_pipe(&e);
        }
    }

    /// Ends the answer with a newline so the shell prompt starts on its own line.
    pub fn finish(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 {
            self.write_stdout("\n");
            state.0 = false;
        }
    }
}

impl EventSink for TextOutput {
    fn emit(&self, event: AgentEvent) {
        match &event {
            AgentEvent::TextDelta(text) if !text.is_empty() => {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                self.write_stdout(text);
                state.0 = !text.ends_with('\n');
                state.1 = true;
            }
            AgentEvent::AssistantMessage { text } if !text.is_empty() => {
                // Separate the texts of successive model responses.
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if state.0 {
                    self.write_stdout("\n");
                    state.0 = false;
                }
            }
            _ => {
                if let Some(line) = side_channel(&event, self.err_style, self.verbose, true) {
                    stderr_line(&line);
                }
            }
        }
    }
}

/// `--output-format json`: nothing on stdout until the result; stderr as in text mode, with tool
/// activity only when `--verbose`.
pub struct JsonOutput {
    verbose: bool,
    err_style: Style,
}

impl JsonOutput {
    pub fn new(verbose: bool) -> Self {
        Self {
            verbose,
            err_style: Style::for_stderr(),
        }
    }
}

impl EventSink for JsonOutput {
    fn emit(&self, event: AgentEvent) {
        if let Some(line) = side_channel(&event, self.err_style, self.verbose, self.verbose) {
            stderr_line(&line);
        }
    }
}

/// `--output-format stream-json`: one JSON object per line on stdout.
pub struct StreamJsonOutput {
    verbose: bool,
}

impl StreamJsonOutput {
    pub fn new(verbose: bool) -> Self {
        Self { verbose }
    }
}

/// Writes one JSON object as a line on stdout.
pub fn json_line(value: &Value) {
    let mut out = std::io::stdout().lock();
    let result = serde_json::to_writer(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = result {
        exit_on_broken_pipe(&e);
    }
}

impl EventSink for StreamJsonOutput {
    fn emit(&self, event: AgentEvent) {
        let value = match &event {
            AgentEvent::AssistantMessage { text } if !text.is_empty() => {
                json!({"type": "assistant", "text": text})
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            AgentEvent::ToolCallEnd {
                id,
                content,
                is_error,
                ..
            } => json!({
                "type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error
            }),
            AgentEvent::Hook(notice) => {
                let mut value = json!({
                    "type": "hook", "event": notice.event, "decision": notice.decision,
                    "message": notice.message,
                });
                if let Some(tool) = &notice.tool {
                    value["tool"] = json!(tool);
                }
                value
            }
            AgentEvent::McpStatus {
                server,
                status,
                detail,
            } => {
                let mut value = json!({"type": "system", "subtype": "mcp_status", "name": server, "status": status});
                if let Some(detail) = detail {
                    value["error"] = json!(detail);
                }
                value
            }
            _ => {
                if let Some(line) = side_channel(&event, Style::for_stderr(), self.verbose, false) {
                    stderr_line(&line);
                }
                return;
            }
        };
        json_line(&value);
    }
}
