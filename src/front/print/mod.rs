//! The outputs of `ling -p`: `text` (the answer streams to stdout, everything else to stderr),
//! `json` (one result object at the end), `stream-json` (Claude Code's messages, one per line:
//! [`claude`]) and `ling-stream-json` (Ling's own lines, one per event: `lines`). Each is an
//! [`EventSink`] over the agent's one event stream. The answer on stdout is written exactly to a
//! pipe or file and neutralised to a terminal ([`stdout_data`]); stderr is always neutralised;
//! JSON is escaped by serde_json (and C1/bidi characters too, to a terminal). [`run()`] is the
//! `-p` frontend that drives the agent into one of them; [`crate::front::claude::run`] the one of
//! `--input-format stream-json`, where a program sends the prompts and answers the questions.

pub mod claude;
mod codex;
pub(crate) mod ending;
mod lines;
pub(crate) mod run;
pub mod schema;

use std::sync::Mutex;

use serde::Serialize;

use crate::mcp::ServerState;
use crate::session::{AgentEvent, EventSink};
use crate::term;
use crate::ui::output::{stderr, stderr_line, stdout_data, stdout_json};
use crate::ui::render::{Finished, ToolLines, hook_line, outcome, styled_display};
use crate::ui::style::Style;
use crate::ui::term::Term;
use lines::{Line, System};

pub use run::run;

/// `--output-format` of a `-p` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// Claude Code's messages.
    StreamJson,
    /// Ling's own lines.
    LingStreamJson,
    /// Codex's JSONL events.
    CodexJson,
}

/// How a `-p` run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintOptions {
    pub format: Format,
    /// `--verbose`.
    pub verbose: bool,
    /// `--include-partial-messages`: the text streams as `stream_event`s (`stream-json`).
    pub partial: bool,
    /// `--output-last-message FILE`: the final answer is also written there.
    pub last_message: Option<std::path::PathBuf>,
    /// `--until CMD`: the check each answer is followed by until it passes.
    pub until: Option<String>,
    /// `--output-schema FILE`: the final answer must match it.
    pub output_schema: Option<schema::OutputSchema>,
}

/// Lines for stderr shared by the outputs: what the user should know about but that must never
/// reach stdout. Tool calls are handled by [`StderrLog`], which keeps each on one line.
pub(crate) fn side_channel(event: &AgentEvent, style: Style, verbose: bool) -> Option<Term> {
    match event {
        AgentEvent::PermissionDenied { tool, message } => Some(term![
            style.yellow("permission denied:"),
            " ",
            tool,
            ": ",
            message
        ]),
        AgentEvent::Hook(notice) => Some(hook_line(style, notice)),
        AgentEvent::Retrying {
            attempt,
            delay_ms,
            reason,
        } => Some(style.dim(&format!(
            "retrying model request (attempt {attempt}) in {delay_ms} ms: {reason}"
        ))),
        AgentEvent::Warning(text) => Some(term![style.yellow("warning:"), " ", text]),
        AgentEvent::GoalCheck {
            command,
            round,
            passed,
            output,
        } => Some(term![
            style.dim("ling:"),
            " ",
            crate::session::check_line(command, *round, *passed, output)
        ]),
        AgentEvent::Compacted {
            trigger,
            pre_tokens,
            post_tokens,
        } => Some(style.dim(&format!(
            "conversation compacted ({trigger}): {pre_tokens} -> {post_tokens} tokens"
        ))),
        AgentEvent::McpStatus { server, state }
            if verbose || matches!(state, ServerState::Failed(_) | ServerState::NeedsAuth(_)) =>
        {
            Some(Term::from(match state.report() {
                (status, Some(detail)) => format!("mcp {server}: {status}: {detail}"),
                (status, None) => format!("mcp {server}: {status}"),
            }))
        }
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
        match event {
            AgentEvent::ToolCallBegin { id, name, input } if self.tools => {
                if let Some(newline) = lines.interrupt() {
                    stderr(newline);
                }
                stderr(lines.begin(self.style, id, name, input));
            }
            AgentEvent::ToolCallEnd {
                id,
                name,
                content,
                is_error,
                display,
                total_lines,
                ..
            } if self.tools => {
                let call = Finished {
                    name,
                    content,
                    is_error: *is_error,
                    display: display.as_deref(),
                    total_lines: *total_lines,
                };
                stderr(lines.end_with(id, outcome(self.style, &call)));
                if let (Some(display), true) = (display, self.verbose) {
                    stderr_line(styled_display(self.style, display));
                }
            }
            AgentEvent::Subagent(sub) => {
                let line = crate::ui::subagent_view::line(self.style, sub);
                if let Some(line) = line.filter(|_| self.tools) {
                    if let Some(newline) = lines.interrupt() {
                        stderr(newline);
                    }
                    stderr_line(line);
                }
            }
            _ => {
                if let Some(line) = side_channel(event, self.style, self.verbose) {
                    if let Some(newline) = lines.interrupt() {
                        stderr(newline);
                    }
                    stderr_line(line);
                }
            }
        }
    }
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
        stdout_data(text);
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
            AgentEvent::AssistantMessage { text, .. } if !text.is_empty() => {
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
    stats: Mutex<crate::front::print::claude::RunStats>,
}

impl JsonOutput {
    pub fn new(verbose: bool) -> Self {
        Self {
            stderr: StderrLog::new(verbose, verbose),
            stats: Mutex::default(),
        }
    }

    /// Model time and denials of the run, for its result.
    pub fn take_stats(&self) -> (u64, Vec<serde_json::Value>) {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl EventSink for JsonOutput {
    fn emit(&self, event: AgentEvent) {
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .observe(&event);
        self.stderr.emit(&event);
    }
}

/// `--output-format ling-stream-json`: Ling's own lines, one JSON object per event on stdout.
pub struct StreamJsonOutput {
    verbose: bool,
}

impl StreamJsonOutput {
    pub fn new(verbose: bool) -> Self {
        Self { verbose }
    }
}

/// Writes one JSON object as a line on stdout.
pub(crate) fn json_line(value: &impl Serialize) {
    // Cannot fail: the lines hold strings, numbers and JSON values only.
    let Ok(mut line) = serde_json::to_string(value) else {
        return;
    };
    line.push('\n');
    stdout_json(&line);
}

impl EventSink for StreamJsonOutput {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::Subagent(sub) = &event {
            self.subagent(sub);
            return;
        }
        let Some(line) = stream_line(&event) else {
            if let Some(line) = side_channel(&event, Style::for_stderr(), self.verbose) {
                stderr_line(line);
            }
            return;
        };
        json_line(&line);
    }
}

impl StreamJsonOutput {
    /// A sub-agent's event: its line tagged with the parent's call (`parent_tool_use_id`, as
    /// the Claude Agent SDK tags a sub-agent's messages), and a `system` line when it starts
    /// and ends.
    fn subagent(&self, sub: &crate::session::SubagentEvent) {
        use crate::session::SubagentKind;
        let mut value = match &sub.kind {
            SubagentKind::Event(inner) => match stream_line(inner) {
                Some(line) => serde_json::to_value(&line).unwrap_or_default(),
                None => return,
            },
            SubagentKind::Started { description, model } => serde_json::json!({
                "type": "system",
                "subtype": "subagent_start",
                "agent_type": sub.agent,
                "agent_id": sub.agent_id,
                "description": description,
                "model": model,
            }),
            SubagentKind::Finished {
                usage,
                num_turns,
                tool_calls,
                ok,
            } => serde_json::json!({
                "type": "system",
                "subtype": "subagent_stop",
                "agent_type": sub.agent,
                "agent_id": sub.agent_id,
                "is_error": !ok,
                "num_turns": num_turns,
                "tool_calls": tool_calls,
                "usage": usage,
            }),
        };
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("parent_tool_use_id".into(), sub.call_id.clone().into());
        }
        json_line(&value);
    }
}

/// The stream-json line of an event, when it has one.
fn stream_line(event: &AgentEvent) -> Option<Line<'_>> {
    Some(match event {
        AgentEvent::AssistantMessage { text, .. } if !text.is_empty() => Line::Assistant { text },
        AgentEvent::ToolCallBegin { id, name, input } => Line::ToolUse { id, name, input },
        AgentEvent::ToolCallEnd {
            id,
            content,
            is_error,
            ..
        } => Line::ToolResult {
            tool_use_id: id,
            content,
            is_error: *is_error,
        },
        AgentEvent::Hook(notice) => Line::Hook {
            event: &notice.event,
            decision: notice.decision,
            message: &notice.message,
            tool: notice.tool.as_deref(),
        },
        AgentEvent::Compacted {
            trigger,
            pre_tokens,
            post_tokens,
        } => Line::System(System::Compact {
            trigger,
            pre_tokens: *pre_tokens,
            post_tokens: *post_tokens,
        }),
        AgentEvent::McpStatus { server, state } => {
            let (status, error) = state.report();
            Line::System(System::McpStatus {
                name: server,
                status,
                error,
            })
        }
        _ => return None,
    })
}
