//! The three outputs of `ling -p`: `text` (the answer streams to stdout, everything else to
//! stderr), `json` (one result object at the end) and `stream-json` (one object per line). Each
//! is an [`EventSink`] over the agent's one event stream.

use std::io::Write;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::output::{stderr_line, write_stdout};
use super::render::{ToolLines, styled_display};
use super::style::Style;
use crate::agent::{AgentEvent, EventSink, HookNotice};

/// Lines for stderr shared by the outputs: what the user should know about but that must never
/// reach stdout. Tool calls are handled by [`StderrLog`], which keeps each on one line.
fn side_channel(event: &AgentEvent, style: Style, verbose: bool) -> Option<String> {
    match event {
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
        AgentEvent::ToolProgress { message, .. } if verbose => Some(style.dim(message)),
        AgentEvent::ReasoningDelta(text) if verbose => Some(style.dim(text)),
        _ => None,
    }
}

/// Everything the text and json outputs write to stderr: tool calls (one line each, when
/// `tools`), and the side channel.
struct StderrLog {
    style: Style,
    verbose: bool,
    tools: bool,
    lines: Mutex<ToolLines>,
}

impl StderrLog {
    fn new(verbose: bool, tools: bool) -> Self {
        Self {
            style: Style::for_stderr(),
            verbose,
            tools,
            lines: Mutex::new(ToolLines::default()),
        }
    }

    /// Every line is scrubbed of secrets (`crate::redact`), as all of stderr is.
    fn emit(&self, event: &AgentEvent) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        match event {
            AgentEvent::ToolCallBegin { id, name, input } if self.tools => {
                if let Some(newline) = lines.interrupt() {
                    let _ = err.write_all(newline.as_bytes());
                }
                let line = lines.begin(self.style, id, name, input);
                let _ = err.write_all(crate::redact::scrub(&line).as_bytes());
            }
            AgentEvent::ToolCallEnd {
                id,
                content,
                is_error,
                display,
                ..
            } if self.tools => {
                let line = lines.end(self.style, id, content, *is_error);
                let _ = err.write_all(crate::redact::scrub(&line).as_bytes());
                if let (Some(display), true) = (display, self.verbose) {
                    let _ = writeln!(err, "{}", styled_display(self.style, display));
                }
            }
            _ => {
                if let Some(line) = side_channel(event, self.style, self.verbose) {
                    if let Some(newline) = lines.interrupt() {
                        let _ = err.write_all(newline.as_bytes());
                    }
                    let _ = writeln!(err, "{}", crate::redact::scrub(&line));
                }
            }
        }
        let _ = err.flush();
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
    stderr: StderrLog,
    /// Whether stdout has text not yet ended by a newline, and whether anything was written.
    state: Mutex<(bool, bool)>,
}

impl TextOutput {
    pub fn new(verbose: bool) -> Self {
        Self {
            stderr: StderrLog::new(verbose, true),
            state: Mutex::new((false, false)),
        }
    }

    fn write_stdout(&self, text: &str) {
        write_stdout(text.as_bytes());
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
            _ => self.stderr.emit(&event),
        }
    }
}

/// `--output-format json`: nothing on stdout until the result; stderr as in text mode, with tool
/// activity only when `--verbose`.
pub struct JsonOutput {
    stderr: StderrLog,
}

impl JsonOutput {
    pub fn new(verbose: bool) -> Self {
        Self {
            stderr: StderrLog::new(verbose, verbose),
        }
    }
}

impl EventSink for JsonOutput {
    fn emit(&self, event: AgentEvent) {
        self.stderr.emit(&event);
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
    let mut line = value.to_string();
    line.push('\n');
    write_stdout(line.as_bytes());
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
                if let Some(line) = side_channel(&event, Style::for_stderr(), self.verbose) {
                    stderr_line(&line);
                }
                return;
            }
        };
        json_line(&value);
    }
}
