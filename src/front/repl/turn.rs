//! The state of a running turn as the REPL shows it, apart from the terminal: [`TurnView`] takes
//! the agent's events one by one and says what to paint ([`Paint`]): the answer as markdown, as
//! it streams; one line per tool call with its outcome and preview; what the spinner says. It
//! writes nothing itself, so a recorded event stream can be replayed through it in a test.

use std::path::PathBuf;

use serde_json::Value;

use super::session_diff::SessionDiff;
use super::tool_view;
use crate::session::{AgentEvent, todo_summary};
use crate::ui::markdown::MarkdownStream;
use crate::ui::render::{Finished, call_summary, call_summary_within, outcome, styled_display};
use crate::ui::style::Style;
use crate::ui::term::Term;

/// What the terminal is to do for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Paint {
    /// Print this (whole lines, newlines included, unless `open` says the line stays open).
    Text(Term),
    /// The spinner's label.
    Activity(String),
    /// The spinner's detail (a command's last output line).
    Detail(String),
    /// The running sub-agents' rows under the spinner.
    Agents(Vec<super::agent_rows::AgentRow>),
    /// The to-do list's row under the spinner (`None`: the list is empty).
    Todos(Option<String>),
}

/// A call that runs.
struct Running {
    name: String,
    input: Value,
}

/// The turn's state between events.
pub struct TurnView {
    style: Style,
    root: PathBuf,
    /// The answer being streamed.
    markdown: Option<MarkdownStream>,
    /// stdout has text not yet ended by a newline (reasoning text).
    open_line: bool,
    /// The calls running, by id, in the order they began.
    running: Vec<(String, Running)>,
    /// The question just answered showed the call's change (its diff is not shown again).
    pub previewed: bool,
    /// What the last tool call returned, for `/expand`.
    pub last_output: Option<String>,
    /// The last call's whole input, for `/expand` (a command longer than its line).
    pub last_input: Option<(String, Value)>,
    /// The files the session changed, for `/diff`.
    pub changes: SessionDiff,
    /// The turn's Ctrl-C.
    cancel: Option<tokio_util::sync::CancellationToken>,
    /// The sub-agents at work, one row each.
    agents: super::agent_rows::AgentRows,
}

impl TurnView {
    pub fn new(style: Style, root: PathBuf) -> Self {
        Self {
            style,
            root,
            markdown: None,
            open_line: false,
            running: Vec::new(),
            previewed: false,
            last_output: None,
            last_input: None,
            changes: SessionDiff::default(),
            cancel: None,
            agents: super::agent_rows::AgentRows::default(),
        }
    }

    /// A turn begins: its Ctrl-C stops the painting of its answer.
    pub fn begin(&mut self, cancel: tokio_util::sync::CancellationToken) {
        self.cancel = Some(cancel);
    }

    /// What the spinner says while nothing is painted: the running calls, or `thinking`.
    fn activity(&self) -> String {
        match self.running.as_slice() {
            [] => "thinking".to_string(),
            [(_, call)] => call_summary(&call.name, &call.input),
            [(_, first), rest @ ..] => format!(
                "{} and {} more",
                call_summary(&first.name, &first.input),
                rest.len()
            ),
        }
    }

    /// Ends an open line and paints what is left of the answer before something else shows.
    pub fn settle(&mut self, width: usize) -> Term {
        let mut out = self.finish_answer(width);
        if self.open_line {
            out.push("\n");
            self.open_line = false;
        }
        out
    }

    fn finish_answer(&mut self, width: usize) -> Term {
        let mut out = Term::new();
        if let Some(mut markdown) = self.markdown.take() {
            markdown.set_width(width);
            out.push(markdown.finish());
        }
        if self.open_line && !out.is_empty() {
            out = crate::term!["\n", out];
            self.open_line = false;
        }
        out
    }

    /// Ctrl-C: the answer not painted yet is dropped.
    pub fn stop(&mut self) {
        if let Some(markdown) = &mut self.markdown {
            markdown.stop();
        }
    }

    /// The paints for one event; `width` is the terminal's now.
    pub fn apply(&mut self, event: AgentEvent, width: usize) -> Vec<Paint> {
        let style = self.style;
        match event {
            AgentEvent::RequestStarted { .. } => {
                self.above(width, Term::new(), Some("thinking".into()))
            }
            AgentEvent::TextDelta(delta) => self.answer_delta(&delta, width),
            AgentEvent::ReasoningDelta(delta) => {
                let mut paints = Vec::new();
                push_text(&mut paints, self.finish_answer(width));
                push_text(&mut paints, style.dim(&delta));
                self.open_line = !delta.ends_with('\n');
                paints
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                let mut paints = self.above(width, Term::new(), None);
                self.changes.before_call(&self.root, &name, &input);
                self.running.push((id, Running { name, input }));
                paints.push(Paint::Activity(self.activity()));
                paints
            }
            AgentEvent::ToolOutputLine { line, .. } => vec![Paint::Detail(line)],
            AgentEvent::ToolProgress { message, .. } => vec![Paint::Detail(message)],
            AgentEvent::ToolCallEnd {
                id,
                name,
                content,
                is_error,
                display,
                total_lines,
                told,
            } => {
                let mut paints = self.above(width, Term::new(), None);
                let told = told.or_else(|| refusal_words(&content, &name));
                paints.extend(self.finished(
                    &id,
                    &Finished {
                        name: &name,
                        content: &content,
                        is_error,
                        display: display.as_deref(),
                        total_lines,
                    },
                    told.as_deref(),
                    width,
                ));
                if let Some(at) = self.running.iter().position(|(call, _)| *call == id) {
                    let input = self.running.remove(at).1.input;
                    self.last_input = Some((name, input));
                }
                self.last_output = Some(content);
                paints.push(Paint::Activity(self.activity()));
                paints
            }
            // The call's own line says it was refused (`ToolCallEnd` follows).
            AgentEvent::PermissionDenied { .. } => Vec::new(),
            AgentEvent::Hook(notice) => {
                let line = crate::term!["  ", crate::ui::render::hook_line(style, &notice), "\n"];
                self.above(width, line, None)
            }
            AgentEvent::Retrying {
                attempt, reason, ..
            } => {
                let line = style.dim(&format!("retrying (attempt {attempt}): {reason}")) + "\n";
                self.above(width, line, Some("thinking".into()))
            }
            AgentEvent::Warning(warning) => {
                let line = crate::term![style.yellow("warning:"), " ", warning, "\n"];
                self.above(width, line, None)
            }
            AgentEvent::GoalCheck {
                command,
                round,
                passed,
                output,
            } => {
                let line = crate::session::check_line(&command, round, passed, &output);
                let line = if passed {
                    style.green(&line)
                } else {
                    style.yellow(&line)
                };
                self.above(width, line + "\n", None)
            }
            AgentEvent::McpReloaded {
                added,
                removed,
                restarted,
            } => {
                let line = style.dim(&mcp_reloaded(&added, &removed, &restarted)) + "\n";
                self.above(width, line, None)
            }
            AgentEvent::McpStatus {
                server,
                state: server_state,
            } => {
                let (status, detail) = server_state.report();
                let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
                let line = style.dim(&format!("mcp {server}: {status}{detail}")) + "\n";
                self.above(width, line, None)
            }
            AgentEvent::CompactStarted { .. } => self.above(
                width,
                Term::new(),
                Some("compacting the conversation".into()),
            ),
            AgentEvent::Compacted {
                trigger,
                pre_tokens,
                post_tokens,
            } => {
                let line = style.dim(&format!(
                    "conversation compacted ({trigger}): {pre_tokens} → {post_tokens} tokens"
                )) + "\n";
                self.above(width, line, None)
            }
            AgentEvent::Subagent(event) => {
                let paint = self.agents.apply(style, &event, std::time::Instant::now());
                let mut paints = match paint.line {
                    Some(line) => self.above(width, line, None),
                    None => Vec::new(),
                };
                if paint.changed {
                    paints.push(Paint::Agents(self.agents.rows()));
                }
                paints
            }
            AgentEvent::Todos(todos) => vec![Paint::Todos(todo_summary(&todos))],
            AgentEvent::ModeChanged(mode) => {
                let line = crate::term![
                    "  ",
                    style.bold(mode.as_str()),
                    style.dim(&format!(" mode: {}", mode.meaning().short)),
                    "\n"
                ];
                self.above(width, line, None)
            }
            AgentEvent::AssistantMessage { .. } | AgentEvent::TurnFinished { .. } => {
                self.above(width, Term::new(), None)
            }
        }
    }

    /// What is left of the answer settled, then `line` (if any) and the spinner's new label (if
    /// any): the shape of every event that prints a line of its own.
    fn above(&mut self, width: usize, line: Term, activity: Option<String>) -> Vec<Paint> {
        let mut paints = Vec::new();
        push_text(&mut paints, self.settle(width));
        push_text(&mut paints, line);
        if let Some(label) = activity {
            paints.push(Paint::Activity(label));
        }
        paints
    }

    /// A piece of the answer: painted as markdown as it streams, the spinner saying what is
    /// being written.
    fn answer_delta(&mut self, delta: &str, width: usize) -> Vec<Paint> {
        let mut paints = Vec::new();
        if self.open_line {
            push_text(&mut paints, Term::plain("\n"));
            self.open_line = false;
        }
        let (style, cancel) = (self.style, self.cancel.clone());
        let markdown = self.markdown.get_or_insert_with(|| {
            let stream = MarkdownStream::new(style, width);
            match cancel {
                Some(cancel) => stream.stop_on(cancel),
                None => stream,
            }
        });
        markdown.set_width(width);
        let painted = markdown.push(delta);
        let label = match markdown.table_rows() {
            Some(0) => "writing a table".to_string(),
            Some(1) => "writing a table (1 row)".to_string(),
            Some(rows) => format!("writing a table ({rows} rows)"),
            None => "writing".to_string(),
        };
        // The label first: the spinner drawn under the text already says it.
        paints.push(Paint::Activity(label));
        push_text(&mut paints, painted);
        paints
    }

    /// The input of a running call (`null` when it is not known).
    fn running_input(&self, id: &str) -> Value {
        self.running
            .iter()
            .find(|(call, _)| call == id)
            .map(|(_, c)| c.input.clone())
            .unwrap_or(Value::Null)
    }

    /// A finished call: its line with the outcome, then its preview or its diff.
    fn finished(
        &mut self,
        id: &str,
        call: &Finished<'_>,
        told: Option<&str>,
        width: usize,
    ) -> Vec<Paint> {
        let style = self.style;
        let mut out = Term::new();
        let shown = match told {
            Some(words) => crate::term![style.red("✗"), " ", style.red(words)],
            None => outcome(style, call),
        };
        // The call's line takes the terminal's width: its summary gets what the outcome leaves.
        let input = self.running_input(id);
        let room = width
            .saturating_sub(crate::ui::markdown::term_width(&shown) + 6)
            .max(20);
        let (summary, whole) = call_summary_within(call.name, &input, room);
        out.push(crate::term![
            style.cyan("●"),
            " ",
            style.bold(&summary),
            "  ",
            shown,
            "\n"
        ]);
        // A command longer than its line is shown whole under it.
        if !whole && let Some(command) = input.get("command").and_then(Value::as_str) {
            for (i, line) in command.lines().enumerate() {
                let lead = if i == 0 { "  $ " } else { "  > " };
                out.push(style.dim(lead));
                out.push(style.dim(line));
                out.push("\n");
            }
        }
        if told.is_none() {
            for row in tool_view::preview(style, call, width) {
                out.push(row);
                out.push("\n");
            }
        }
        // A diff already shown in the question is not shown again.
        let previewed = std::mem::take(&mut self.previewed);
        if let (Some(display), false) = (call.display, previewed && !call.is_error) {
            out.push(styled_display(style, display));
            out.push("\n");
        }
        vec![Paint::Text(out)]
    }
}

/// The user's words for a refusal the model reads at length: `None` when the outcome is the
/// tool's own.
pub fn refusal_words(content: &str, name: &str) -> Option<String> {
    let edits = matches!(name, "write_file" | "edit_file");
    if content.starts_with("permission denied: plan mode") {
        return Some(if edits {
            "plan mode: Shift-Tab to allow edits".into()
        } else {
            "plan mode: Shift-Tab to leave plan mode".into()
        });
    }
    None
}

/// `t` painted, when it holds anything.
fn push_text(paints: &mut Vec<Paint>, t: Term) {
    if !t.is_empty() {
        paints.push(Paint::Text(t));
    }
}

/// `mcp config changed: added db; removed web; restarted files`.
pub fn mcp_reloaded(added: &[String], removed: &[String], restarted: &[String]) -> String {
    let mut parts = Vec::new();
    for (verb, names) in [
        ("added", added),
        ("removed", removed),
        ("restarted", restarted),
    ] {
        if !names.is_empty() {
            parts.push(format!("{verb} {}", names.join(", ")));
        }
    }
    format!("mcp config changed: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Replays `events` through a view 60 columns wide and writes what the terminal would get:
    /// the text painted, and the spinner's labels as `[spinner: ...]` rows.
    fn replay(events: Vec<AgentEvent>) -> String {
        let mut view = TurnView::new(Style::plain(), std::env::temp_dir());
        let mut out = String::new();
        let mut label = String::new();
        for event in events {
            for paint in view.apply(event, 60) {
                match paint {
                    Paint::Text(text) => out.push_str(text.as_str()),
                    Paint::Activity(now) if now != label => {
                        out.push_str(&format!("[spinner: {now}]\n"));
                        label = now;
                    }
                    Paint::Activity(_) => {}
                    Paint::Detail(detail) => out.push_str(&format!("[detail: {detail}]\n")),
                    Paint::Agents(rows) => out.push_str(&format!("[agents: {}]\n", rows.len())),
                    Paint::Todos(row) => out.push_str(&format!("[todos: {row:?}]\n")),
                }
            }
        }
        out.push_str(view.settle(60).as_str());
        out
    }

    fn begin(id: &str, name: &str, input: serde_json::Value) -> AgentEvent {
        AgentEvent::ToolCallBegin {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    fn end(id: &str, name: &str, content: &str, is_error: bool) -> AgentEvent {
        AgentEvent::ToolCallEnd {
            id: id.into(),
            name: name.into(),
            content: content.into(),
            is_error,
            display: None,
            total_lines: None,
            told: None,
        }
    }

    fn deltas(text: &str, size: usize) -> Vec<AgentEvent> {
        let chars: Vec<char> = text.chars().collect();
        chars
            .chunks(size)
            .map(|c| AgentEvent::TextDelta(c.iter().collect()))
            .collect()
    }

    #[test]
    fn an_answer_streams_its_code_line_by_line_under_one_spinner() {
        let mut events = vec![AgentEvent::RequestStarted { turn: 1 }];
        events.extend(deltas(
            "Here is the fix, which reads the header before the body so that a short read \
             stops:\n\n```rust\nfn read() {\n    body();\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone.",
            7,
        ));
        events.push(AgentEvent::AssistantMessage {
            text: String::new(),
            usage: None,
        });
        insta::assert_snapshot!(replay(events));
    }

    #[test]
    fn failures_show_as_failures_with_the_end_of_their_output() {
        let failing =
            "collecting\n".repeat(8) + "Traceback\nValueError: bad\nFAILED test_x\nExit code: 1";
        insta::assert_snapshot!(replay(vec![
            begin("1", "bash", json!({"command": "pytest"})),
            AgentEvent::ToolOutputLine {
                id: "1".into(),
                line: "collecting".into(),
            },
            end("1", "bash", &failing, false),
            begin("2", "bash", json!({"command": "curl http://nowhere"})),
            end(
                "2",
                "bash",
                "curl: (6) Could not resolve host\nExit code: 6",
                false
            ),
            begin("3", "bash", json!({"command": "true"})),
            end("3", "bash", "(no output)\nExit code: 0", false),
            begin("4", "grep", json!({"path": "src", "pattern": "TODO"})),
            end("4", "grep", "src/a.rs:3: TODO", false),
        ]));
    }

    #[test]
    fn a_command_longer_than_its_line_is_shown_whole_under_it() {
        let long = format!(
            "cargo test --workspace {} -- --nocapture",
            "--features x ".repeat(8)
        );
        insta::assert_snapshot!(replay(vec![
            begin("1", "bash", json!({ "command": long })),
            end("1", "bash", "ok\nExit code: 0", false),
        ]));
    }

    #[test]
    fn parallel_calls_are_each_one_line_and_refusals_speak_to_the_user() {
        let mut denied = end(
            "3",
            "bash",
            "the user denied permission to run bash and ended this turn. Do not retry it \
             unchanged; wait for the user's next message.",
            true,
        );
        if let AgentEvent::ToolCallEnd { told, .. } = &mut denied {
            *told = Some("denied by you".into());
        }
        insta::assert_snapshot!(replay(vec![
            begin("1", "read_file", json!({"path": "a.rs"})),
            begin("2", "read_file", json!({"path": "b.rs"})),
            end("1", "read_file", "     1\tfn a() {}\n     2\t\n", false),
            end("2", "read_file", "     1\tfn b() {}\n", false),
            begin("3", "bash", json!({"command": "rm -rf build"})),
            denied,
            AgentEvent::PermissionDenied {
                tool: "write_file".into(),
                message: "plan mode: write_file changes files".into(),
            },
            begin("4", "write_file", json!({"path": "x.rs", "content": "x"})),
            end(
                "4",
                "write_file",
                "permission denied: plan mode: write_file changes files, which is not allowed \
                 while planning; describe the change instead (the user can switch with \
                 --permission-mode accept-edits)",
                true,
            ),
        ]));
    }
}
