//! The model's own questions on the terminal, asked the way a call's approval is (the status
//! area hidden, type-ahead dropped, one key read at a time) and queued with the MCP servers'
//! questions (`dialog_queue`): a plan to approve (`exit_plan_mode`: rendered as markdown in a
//! frame, then 1 approve in default mode, 2 approve and accept edits, 3/Esc keep planning, 4
//! keep planning and say what to change) and multiple-choice questions (`ask_user`: numbered
//! options and "other"; a digit picks, or for a multi-select toggles until Enter; Esc answers
//! nothing, and the model is told the user declined). Also `/todos`, the to-do list.
//!
//! What the model wrote (the plan, questions, labels) is neutralised like every other piece
//! from outside: it cannot draw rows of the question.

use std::io::IsTerminal;
use std::os::fd::AsFd;

use nix::poll::PollTimeout;
use nix::sys::termios::{LocalFlags, SetArg, SpecialCharacterIndices, tcgetattr, tcsetattr};
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;

use super::approval::{self, Choice, one_row};
use super::view::ReplUi;
use crate::config::PermissionMode;
use crate::session::{PlanAnswer, PlanRequest, Question, QuestionAnswer, QuestionRequest, Todo};
use crate::term;
use crate::ui::output::{stdout_line, terminal_width};
use crate::ui::safe_text::neutralise;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// Whose turn it is in the question queue: the model's own questions.
const ASKER: &str = "the model";

/// `/todos`: the list, one item a row, or what to expect when there is none.
pub(super) fn print_todos(todos: &[Todo], style: Style) {
    if todos.is_empty() {
        stdout_line(style.dim(
            "no to-do list in this session (the model writes one with todo_write for work of \
             several steps)",
        ));
        return;
    }
    for row in crate::session::render_todos(todos).lines() {
        stdout_line(term!["  ", one_row(row)]);
    }
}

/// The frame of a plan: its rendered rows, then the choices.
fn plan_rows(style: Style, plan: &str, width: usize) -> Vec<Term> {
    let bar = |s: &str| style.dim(s);
    let mut rows = vec![term![
        bar("  ╭─ "),
        style.bold("Plan"),
        " ",
        bar(&"─".repeat(width.saturating_sub(12).clamp(2, 40)))
    ]];
    let rendered = crate::ui::markdown::render_rows(&neutralise(plan), style, width.max(30) - 4);
    for row in rendered {
        rows.push(bar("  │ ") + row);
    }
    let choices = [
        ("1", "Yes, and go on in default mode (edits ask)", "y"),
        ("2", "Yes, and accept edits", "a"),
        ("3", "No, keep planning", "n, Esc"),
        ("4", "No, and tell Ling what to change", "t"),
    ];
    for (n, text, key) in choices {
        rows.push(term![
            bar("  ├ "),
            style.bold(&format!("{n}.")),
            " ",
            text,
            " ",
            style.dim(&format!("({key})"))
        ]);
    }
    rows.push(term![
        bar("  ╰─ "),
        style.bold("Plan"),
        ": ",
        style.yellow("approve?"),
        style.dim(" 1-4, Esc: keep planning")
    ]);
    rows
}

/// The rows of one question: its header and text, the numbered options, "other", and how to
/// answer.
fn question_rows(style: Style, q: &Question, index: usize, count: usize) -> Vec<Term> {
    let bar = |s: &str| style.dim(s);
    let which = if count > 1 {
        format!(" ({}/{count})", index + 1)
    } else {
        String::new()
    };
    let mut rows = vec![
        term![
            bar("  ╭─ "),
            style.bold(&one_row(&q.header)),
            style.dim(&which)
        ],
        bar("  │ ") + style.bold(&one_row(&q.question)),
    ];
    for (i, option) in q.options.iter().enumerate() {
        let description = if option.description.trim().is_empty() {
            Term::new()
        } else {
            style.dim(&format!(" - {}", one_row(&option.description)))
        };
        rows.push(term![
            bar("  ├ "),
            style.bold(&format!("{}.", i + 1)),
            " ",
            one_row(&option.label),
            description
        ]);
    }
    rows.push(term![
        bar("  ├ "),
        style.bold(&format!("{}.", q.options.len() + 1)),
        " Other: type your own answer"
    ]);
    let hint = if q.multi_select {
        "digits choose (again: unchoose), Enter: done, Esc: no answer"
    } else {
        "a digit picks, Esc: no answer"
    };
    rows.push(term![
        bar("  ╰─ "),
        style.yellow("answer?"),
        " ",
        style.dim(hint)
    ]);
    rows
}

impl ReplUi {
    /// A plan to approve; `None` never (somebody is at the terminal).
    pub(super) async fn ask_plan(&self, request: &PlanRequest) -> Option<PlanAnswer> {
        let Some(_asking) = self.dialogs.enter(ASKER).await else {
            return Some(PlanAnswer::KeepPlanning(None));
        };
        let style = self.style;
        let _floor = self.question().await;
        approval::forget_typed_ahead();
        for row in plan_rows(style, &request.plan, terminal_width().unwrap_or(80)) {
            stdout_line(row);
        }
        let cancel = self.turn_cancel();
        let ask_cancel = cancel.clone();
        let answer = tokio::task::spawn_blocking(move || read_plan_answer(style, ask_cancel))
            .await
            .ok()
            .flatten();
        match answer {
            Some(answer) => Some(answer),
            None => {
                // Ctrl-C: the turn ends, still planning.
                if let Some(cancel) = cancel {
                    cancel.cancel();
                }
                Some(PlanAnswer::KeepPlanning(None))
            }
        }
    }

    /// The model's questions, one after the other; Esc at any declines them all.
    pub(super) async fn ask_user(&self, request: &QuestionRequest) -> Option<QuestionAnswer> {
        let Some(_asking) = self.dialogs.enter(ASKER).await else {
            return Some(QuestionAnswer::Declined);
        };
        let style = self.style;
        let _floor = self.question().await;
        approval::forget_typed_ahead();
        let cancel = self.turn_cancel();
        let mut answers = Vec::new();
        let count = request.questions.len();
        for (index, q) in request.questions.iter().enumerate() {
            for row in question_rows(style, q, index, count) {
                stdout_line(row);
            }
            let asked = q.clone();
            let ask_cancel = cancel.clone();
            let answer = tokio::task::spawn_blocking(move || {
                read_question_answer(style, &asked, ask_cancel)
            })
            .await
            .ok()
            .flatten();
            match answer {
                Some(Some(answer)) => {
                    stdout_line(term!["  ", style.dim("→ "), one_row(&answer)]);
                    answers.push((q.question.clone(), answer));
                }
                Some(None) => {
                    stdout_line(style.dim("  (no answer: the model is told you declined)"));
                    return Some(QuestionAnswer::Declined);
                }
                None => {
                    if let Some(cancel) = cancel {
                        cancel.cancel();
                    }
                    return Some(QuestionAnswer::Declined);
                }
            }
        }
        Some(QuestionAnswer::Answered(answers))
    }
}

/// The plan's answer read on a blocking thread: `None` on Ctrl-C.
fn read_plan_answer(style: Style, cancel: Option<CancellationToken>) -> Option<PlanAnswer> {
    let hint = |key: &str| {
        stdout_line(term![
            "  ",
            style.yellow(&format!("{key} is not a choice")),
            style.dim(": press 1, 2, 3 or 4 (Esc: keep planning)")
        ])
    };
    loop {
        let (choice, next) = approval::read_choice(cancel.as_ref(), &hint);
        match choice {
            Choice::Once => return Some(PlanAnswer::Approve(PermissionMode::Default)),
            Choice::Always => return Some(PlanAnswer::Approve(PermissionMode::AcceptEdits)),
            Choice::No => return Some(PlanAnswer::KeepPlanning(None)),
            Choice::Interrupted => return None,
            Choice::Tell => {
                let typed = next.map(String::from).unwrap_or_default();
                match read_line(
                    "  what should change in the plan? (Enter alone: back) › ",
                    &typed,
                ) {
                    Line::Text(words) => return Some(PlanAnswer::KeepPlanning(Some(words))),
                    Line::Empty => stdout_line(style.dim("  choose 1-4 (Esc: keep planning)")),
                    Line::Interrupted => return None,
                    Line::Closed => return Some(PlanAnswer::KeepPlanning(None)),
                }
            }
        }
    }
}

/// One line typed after a choice.
enum Line {
    Text(String),
    Empty,
    Interrupted,
    Closed,
}

fn read_line(prompt: &str, typed: &str) -> Line {
    let Ok(mut editor) = rustyline::DefaultEditor::new() else {
        return Line::Closed;
    };
    match editor.readline_with_initial(prompt, (typed, "")) {
        Ok(words) if words.trim().is_empty() => Line::Empty,
        Ok(words) => Line::Text(words.trim().to_string()),
        Err(ReadlineError::Interrupted) => Line::Interrupted,
        Err(_) => Line::Closed,
    }
}

/// A key of a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Digit(usize),
    Enter,
    Esc,
    CtrlC,
    /// End of input.
    Closed,
    Other,
}

/// The terminal without echo or line buffering while it lives.
struct Raw {
    saved: Option<nix::sys::termios::Termios>,
}

impl Raw {
    fn new() -> Self {
        let stdin = std::io::stdin();
        let Ok(saved) = tcgetattr(stdin.as_fd()) else {
            return Self { saved: None };
        };
        let mut raw = saved.clone();
        raw.local_flags
            .remove(LocalFlags::ECHO | LocalFlags::ICANON);
        raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw);
        Self { saved: Some(saved) }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, saved);
        }
    }
}

/// The next key (the terminal in raw mode: see [`Raw`]); `CtrlC` when `cancel` fired.
fn read_key(cancel: Option<&CancellationToken>) -> Key {
    let stdin = std::io::stdin();
    loop {
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Key::CtrlC;
        }
        let Some(bytes) = approval::read_some(&stdin, PollTimeout::from(50u16)) else {
            continue;
        };
        return match bytes.as_slice() {
            [] | [0x04, ..] => Key::Closed,
            [0x1b] => {
                let wait = PollTimeout::try_from(approval::ESC_WAIT).unwrap_or(PollTimeout::ZERO);
                match approval::read_some(&stdin, wait) {
                    None => Key::Esc,
                    Some(_) => Key::Other,
                }
            }
            [0x03, ..] => Key::CtrlC,
            [b'\r' | b'\n', ..] => Key::Enter,
            [d @ b'1'..=b'9', ..] => Key::Digit(usize::from(d - b'0')),
            _ => Key::Other,
        };
    }
}

/// One question's answer read on a blocking thread: `Some(None)` when the user declined
/// (Esc, end of input), `None` on Ctrl-C.
fn read_question_answer(
    style: Style,
    q: &Question,
    cancel: Option<CancellationToken>,
) -> Option<Option<String>> {
    if !std::io::stdin().is_terminal() {
        return Some(None);
    }
    let other = q.options.len() + 1;
    let mut chosen: Vec<usize> = Vec::new();
    let mut own: Option<String> = None;
    // Raw for the whole question (no key echoed between two reads), but for the typed answer.
    let mut raw = Some(Raw::new());
    loop {
        match read_key(cancel.as_ref()) {
            Key::CtrlC => return None,
            Key::Esc | Key::Closed => return Some(None),
            Key::Digit(n) if n == other => {
                drop(raw.take());
                let line = read_line("  your answer (Enter alone: back) › ", "");
                raw = Some(Raw::new());
                match line {
                    Line::Text(text) if !q.multi_select => return Some(Some(text)),
                    Line::Text(text) => {
                        own = Some(text);
                        show_chosen(style, q, &chosen, own.as_deref());
                    }
                    Line::Empty => {}
                    Line::Interrupted => return None,
                    Line::Closed => return Some(None),
                }
            }
            Key::Digit(n) if (1..other).contains(&n) => {
                if !q.multi_select {
                    return Some(Some(q.options[n - 1].label.clone()));
                }
                match chosen.iter().position(|c| *c == n) {
                    Some(at) => {
                        chosen.remove(at);
                    }
                    None => chosen.push(n),
                }
                show_chosen(style, q, &chosen, own.as_deref());
            }
            Key::Enter if q.multi_select && (!chosen.is_empty() || own.is_some()) => {
                chosen.sort_unstable();
                let mut labels: Vec<String> = chosen
                    .iter()
                    .map(|n| q.options[n - 1].label.clone())
                    .collect();
                labels.extend(own);
                return Some(Some(labels.join(", ")));
            }
            Key::Enter if q.multi_select => stdout_line(
                style.dim("  choose at least one (a digit), then Enter; Esc: no answer"),
            ),
            _ => {
                let last = other;
                let keys = if q.multi_select {
                    format!("1-{last} choose, Enter: done, Esc: no answer")
                } else {
                    format!("1-{last} pick, Esc: no answer")
                };
                stdout_line(term![
                    "  ",
                    style.yellow("not a choice"),
                    style.dim(&format!(": {keys}"))
                ]);
            }
        }
    }
}

/// A multi-select's choices so far.
fn show_chosen(style: Style, q: &Question, chosen: &[usize], own: Option<&str>) {
    let mut labels: Vec<String> = chosen
        .iter()
        .map(|n| one_row(&q.options[n - 1].label))
        .collect();
    labels.extend(own.map(one_row));
    let shown = if labels.is_empty() {
        "nothing".to_string()
    } else {
        labels.join(", ")
    };
    stdout_line(term!["  ", style.dim("chosen: "), shown]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::QuestionOption;
    use pretty_assertions::assert_eq;

    fn shown(rows: Vec<Term>) -> Vec<String> {
        rows.iter().map(|t| t.as_str().to_string()).collect()
    }

    /// What the user sees of a question and of a plan, pinned.
    #[test]
    fn a_question_and_a_plan_as_the_user_sees_them() {
        let q = Question {
            question: "Which library?\x1b[2J".into(),
            header: "Library".into(),
            options: vec![
                QuestionOption {
                    label: "chrono".into(),
                    description: "the usual one".into(),
                },
                QuestionOption {
                    label: "time".into(),
                    description: String::new(),
                },
            ],
            multi_select: true,
        };
        assert_eq!(
            shown(question_rows(Style::plain(), &q, 0, 2)),
            vec![
                "  ╭─ Library (1/2)",
                "  │ Which library?^[[2J",
                "  ├ 1. chrono - the usual one",
                "  ├ 2. time",
                "  ├ 3. Other: type your own answer",
                "  ╰─ answer? digits choose (again: unchoose), Enter: done, Esc: no answer",
            ]
        );
        let plan = shown(plan_rows(Style::plain(), "# Steps\n\n1. edit `a.rs`", 60));
        assert_eq!(plan[0], format!("  ╭─ Plan {}", "─".repeat(40)));
        assert!(plan.contains(&"  │ 1. edit `a.rs`".to_string()), "{plan:?}");
        assert!(
            plan.contains(&"  ├ 2. Yes, and accept edits (a)".to_string()),
            "{plan:?}"
        );
        assert_eq!(
            plan.last().map(String::as_str),
            Some("  ╰─ Plan: approve? 1-4, Esc: keep planning")
        );
    }
}
