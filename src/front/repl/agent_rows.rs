//! One live row per sub-agent under the REPL's spinner: its description, seconds, tool count,
//! the call it runs now and that call's last output line, updated in place as its events come;
//! when it ends the row goes and one line stays above: `⎿ ✓ find the bug · 3 tools · 7.7k
//! tokens · 5s`. A sub-agent's own call lines, results and the text it writes for its parent
//! are not printed: the row says what it does, its answer goes back to the parent. Its hook
//! notices and warnings, and a call the user refused, still get a line of their own.

use std::time::{Duration, Instant};

use crate::session::{AgentEvent, SubagentEvent, SubagentKind};
use crate::ui::render::{call_summary, hook_line, tokens};
use crate::ui::safe_text::one_row;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// One running sub-agent as its row shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    id: String,
    /// The description the parent gave it, or its agent's name.
    name: String,
    since: Instant,
    tools: u32,
    /// The call it runs now (`bash(cargo test)`), or how the last one ended.
    current: String,
    /// The running call's last output line.
    last: String,
}

impl AgentRow {
    /// `  ⎿ find the bug · 5s · 3 tools · bash(cargo test) · test a ... ok`, cut to one row of
    /// `width` columns (the name kept before the call's output).
    pub fn text(&self, now: Instant, width: usize) -> String {
        let seconds = now.saturating_duration_since(self.since).as_secs();
        let mut text = format!(
            "  ⎿ {} · {seconds}s · {}",
            self.name,
            tool_count(self.tools)
        );
        for part in [&self.current, &self.last] {
            if !part.is_empty() {
                text.push_str(" · ");
                text.push_str(part);
            }
        }
        cut(&text, width)
    }
}

fn tool_count(n: u32) -> String {
    match n {
        1 => "1 tool".to_string(),
        n => format!("{n} tools"),
    }
}

/// The running sub-agents' rows, from their events.
#[derive(Debug, Default)]
pub struct AgentRows {
    rows: Vec<AgentRow>,
}

/// What one sub-agent event changes on the screen.
#[derive(Debug, Default)]
pub struct AgentPaint {
    /// A line printed above the status area.
    pub line: Option<Term>,
    /// The rows changed (to be drawn again).
    pub changed: bool,
}

impl AgentRows {
    pub fn rows(&self) -> Vec<AgentRow> {
        self.rows.clone()
    }

    fn row(&mut self, id: &str) -> Option<&mut AgentRow> {
        self.rows.iter_mut().find(|row| row.id == id)
    }

    /// Takes one event at `now`.
    pub fn apply(&mut self, style: Style, event: &SubagentEvent, now: Instant) -> AgentPaint {
        let changed = AgentPaint {
            line: None,
            changed: true,
        };
        match &event.kind {
            SubagentKind::Started { description, .. } => {
                let name = match description.trim() {
                    "" => one_row(&event.agent),
                    words => one_row(words),
                };
                self.rows.push(AgentRow {
                    id: event.agent_id.clone(),
                    name,
                    since: now,
                    tools: 0,
                    current: String::new(),
                    last: String::new(),
                });
                changed
            }
            SubagentKind::Finished {
                usage,
                tool_calls,
                ok,
                ..
            } => {
                let Some(at) = self.rows.iter().position(|r| r.id == event.agent_id) else {
                    return AgentPaint::default();
                };
                let row = self.rows.remove(at);
                let mark = if *ok {
                    style.green("✓")
                } else {
                    style.red("✗")
                };
                let total = usage.prompt_tokens + usage.completion_tokens;
                let took = now.saturating_duration_since(row.since);
                let line = crate::term![
                    "  ⎿ ",
                    mark,
                    " ",
                    row.name.as_str(),
                    style.dim(&format!(
                        " · {} · {} tokens · {}",
                        tool_count(*tool_calls),
                        tokens(total),
                        seconds(took)
                    )),
                    "\n"
                ];
                AgentPaint {
                    line: Some(line),
                    changed: true,
                }
            }
            SubagentKind::Event(inner) => self.event(style, &event.agent_id, inner),
        }
    }

    fn event(&mut self, style: Style, id: &str, event: &AgentEvent) -> AgentPaint {
        let Some(row) = self.row(id) else {
            return AgentPaint::default();
        };
        let name = row.name.clone();
        match event {
            AgentEvent::ToolCallBegin { name, input, .. } => {
                row.tools += 1;
                row.current = call_summary(name, input);
                row.last.clear();
            }
            AgentEvent::ToolOutputLine { line, .. }
            | AgentEvent::ToolProgress { message: line, .. } => {
                row.last = one_row(line.trim());
            }
            AgentEvent::ToolCallEnd {
                name,
                is_error,
                told,
                ..
            } => {
                row.last.clear();
                row.current = match (told, is_error) {
                    // The user's words for a refusal, never the prose written for the model.
                    (Some(words), _) => format!("{} ✗ {}", one_row(name), one_row(words)),
                    (None, true) => format!("{} ✗ failed", one_row(name)),
                    (None, false) => format!("{} ✓", one_row(name)),
                };
                if told.is_some() {
                    let line = crate::term![
                        "  ⎿ ",
                        name_of(style, &row.name),
                        " ",
                        style.red(&row.current),
                        "\n"
                    ];
                    return AgentPaint {
                        line: Some(line),
                        changed: true,
                    };
                }
            }
            AgentEvent::Hook(notice) => {
                return AgentPaint {
                    line: Some(crate::term![
                        "  ⎿ ",
                        name_of(style, &name),
                        " ",
                        hook_line(style, notice),
                        "\n"
                    ]),
                    changed: false,
                };
            }
            AgentEvent::Warning(text) => {
                return AgentPaint {
                    line: Some(crate::term![
                        "  ⎿ ",
                        name_of(style, &name),
                        " ",
                        style.yellow("warning:"),
                        " ",
                        one_row(text),
                        "\n"
                    ]),
                    changed: false,
                };
            }
            _ => return AgentPaint::default(),
        }
        AgentPaint {
            line: None,
            changed: true,
        }
    }
}

fn name_of(style: Style, name: &str) -> Term {
    style.cyan(&format!("{name}:"))
}

/// `5s`, `1m 05s`.
fn seconds(took: Duration) -> String {
    let s = took.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// `text` on one row of `width` columns, cut at its end with `…` (the screen's rows too).
pub(super) fn cut(text: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(10);
    let one_line: String = text.replace(['\n', '\r'], " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;
    use serde_json::json;

    fn event(id: &str, kind: SubagentKind) -> SubagentEvent {
        SubagentEvent {
            call_id: format!("call_{id}"),
            agent: "general-purpose".into(),
            agent_id: id.into(),
            kind,
        }
    }

    fn inner(id: &str, e: AgentEvent) -> SubagentEvent {
        event(id, SubagentKind::Event(Box::new(e)))
    }

    fn shown(rows: &AgentRows, now: Instant, width: usize) -> String {
        rows.rows()
            .iter()
            .map(|r| r.text(now, width))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn each_agent_has_one_row_updated_in_place_and_a_line_when_it_ends() {
        let style = Style::plain();
        let t0 = Instant::now();
        let mut rows = AgentRows::default();
        let start = |d: &str| SubagentKind::Started {
            description: d.into(),
            model: "m".into(),
        };
        rows.apply(style, &event("a1", start("find the bug")), t0);
        rows.apply(style, &event("a2", start("")), t0);
        let call = AgentEvent::ToolCallBegin {
            id: "c1".into(),
            name: "bash".into(),
            input: json!({"command": "cargo test"}),
        };
        let p = rows.apply(style, &inner("a1", call), t0);
        assert!(p.line.is_none() && p.changed);
        rows.apply(
            style,
            &inner(
                "a1",
                AgentEvent::ToolOutputLine {
                    id: "c1".into(),
                    line: "test parse ... ok\n".into(),
                },
            ),
            t0,
        );
        let now = t0 + Duration::from_secs(5);
        insta::assert_snapshot!(shown(&rows, now, 80), @r"
          ⎿ find the bug · 5s · 1 tool · bash(cargo test) · test parse ... ok
          ⎿ general-purpose · 5s · 0 tools
        ");
        // At 40 columns each row is cut to one.
        insta::assert_snapshot!(shown(&rows, now, 40), @r"
          ⎿ find the bug · 5s · 1 tool · bash(…
          ⎿ general-purpose · 5s · 0 tools
        ");
        let end = AgentEvent::ToolCallEnd {
            id: "c1".into(),
            name: "bash".into(),
            content: "the user denied permission to run bash. Do not retry it unchanged".into(),
            is_error: true,
            display: None,
            total_lines: None,
            told: Some("denied by you".into()),
        };
        let p = rows.apply(style, &inner("a1", end), now);
        let line = p.line.unwrap().as_str().to_string();
        assert_eq!(line, "  ⎿ find the bug: bash ✗ denied by you\n");
        assert!(!line.contains("retry"), "{line}");
        let finished = SubagentKind::Finished {
            usage: Usage {
                prompt_tokens: 7_000,
                completion_tokens: 700,
                ..Usage::default()
            },
            num_turns: 2,
            tool_calls: 3,
            ok: true,
        };
        let p = rows.apply(style, &event("a1", finished), now + Duration::from_secs(2));
        insta::assert_snapshot!(p.line.unwrap().as_str(), @"  ⎿ ✓ find the bug · 3 tools · 7.7k tokens · 7s");
        assert_eq!(rows.rows().len(), 1);
    }
}
