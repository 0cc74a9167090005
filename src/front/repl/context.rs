//! The REPL's commands about the context and the sessions: `/compact [instructions]`,
//! `/context` (tokens used of the window, by part), `/resume [ID]` (a picker of this project's
//! sessions: when, first prompt, length), the dim line after each turn saying how full the
//! context is, and the last exchanges shown when a session is resumed.

use tokio_util::sync::CancellationToken;

use crate::config::Paths;
use crate::llm::Message;
use crate::session::{
    Command, Compaction, EventSink, Host, Io, Reply, SessionSummary, TrustAsker, session_list,
};
use crate::term;
use crate::trust::ProjectConfig;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// How many of the last exchanges a resumed REPL shows.
const RECENT_EXCHANGES: usize = 3;
/// How many sessions `/resume` offers at most.
const PICKER_SIZE: usize = 40;
/// Rows of an answer a resumed REPL shows.
const ANSWER_ROWS: usize = 8;

/// `/compact [instructions]`.
pub async fn compact(host: &mut Host, instructions: &str, style: Style, sink: &dyn EventSink) {
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let io = Io::unattended(sink, &cancel);
    let reply = host
        .submit(Command::Compact(Some(instructions.to_string())), &io)
        .await;
    watcher.abort();
    let outcome = match reply {
        Ok(Reply::Compacted(outcome)) => outcome,
        Ok(_) => return,
        Err(e) => return stdout_line(term![style.red("error:"), " ", e.to_string()]),
    };
    match outcome {
        // The agent's `Compacted` event has said it.
        Compaction::Done { .. } => {}
        Compaction::Blocked(reason) => stdout_line(term![
            style.yellow("compaction blocked by hook:"),
            " ",
            reason
        ]),
        Compaction::TooShort => {
            stdout_line(style.dim("nothing to compact yet: the conversation is short"))
        }
        Compaction::Failed(why) => {
            stdout_line(term![style.red("error:"), " compaction failed: ", why])
        }
        Compaction::Interrupted => stdout_line(style.yellow("⏹ compaction interrupted")),
    }
}

/// `/context`: how full the window is, by part.
pub async fn context(host: &mut Host, style: Style) {
    let usage = host.context_usage().await;
    stdout_line(term![
        style.bold("Context"),
        format!(
            " {} of {} tokens ({}%), window {}",
            usage.used,
            usage.window,
            usage.percent(),
            usage.source.describe()
        )
    ]);
    let rows = [
        ("system prompt", usage.system),
        ("tools", usage.tools),
        ("messages", usage.messages),
    ];
    for (part, tokens) in rows {
        stdout_line(format!("  {part:<14} {tokens:>8} tokens"));
    }
    let counted = if usage.reported {
        "the server's count of the last request, plus an estimate of what was added since"
    } else {
        "an estimate (the server has not counted this conversation yet)"
    };
    stdout_line(style.dim(&format!(
        "  {counted}; {} history messages; compacts at {}% ({})",
        host.history().len(),
        host.settings().auto_compact_percent,
        if host.settings().auto_compact {
            "autoCompact on"
        } else {
            "autoCompact off"
        }
    )));
}

/// `/resume [ID]`: picks a session of this project (or takes the one named) and continues it.
/// At start (`ling --resume` without an id) no session has begun yet: the host then fires no
/// SessionEnd, and SessionStart comes as for any resumed session.
pub async fn resume(host: &mut Host, arg: &str, style: Style, sink: &dyn EventSink) {
    let dir = host.paths().sessions_dir();
    let id = if arg.is_empty() {
        let sessions: Vec<SessionSummary> = session_list::list(&dir, &host.paths().project_root)
            .into_iter()
            .filter(|s| s.id != host.session_id() && s.messages > 0)
            .take(PICKER_SIZE)
            .collect();
        if sessions.is_empty() {
            stdout_line("no other session of this project to resume");
            return;
        }
        let width = crate::ui::output::terminal_width().unwrap_or(80);
        let number_width = sessions.len().to_string().len() + 2;
        for (index, session) in sessions.iter().enumerate() {
            let size = std::fs::metadata(&session.transcript_path)
                .map(|m| m.len())
                .unwrap_or(0);
            let head = format!(
                " {:>9}  {:>5} msgs {:>7}  ",
                ago(session.modified),
                session.messages,
                bytes(size)
            );
            let used = number_width + 2 + head.chars().count();
            let prompt = crate::ui::render::one_line(
                &session.first_prompt,
                width.saturating_sub(used + 1).max(10),
            );
            stdout_line(term![
                style.bold(&format!("  {:>number_width$}", format!("[{}]", index + 1))),
                style.dim(&head),
                prompt
            ]);
        }
        let count = sessions.len();
        let answer = tokio::task::spawn_blocking(move || {
            let mut editor = rustyline::DefaultEditor::new().ok()?;
            editor
                .readline(&format!("resume which? [1-{count}, Enter to cancel] "))
                .ok()
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
        match answer.trim().parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => sessions[n - 1].id.clone(),
            _ => {
                stdout_line(style.dim("not resumed"));
                return;
            }
        }
    } else {
        arg.to_string()
    };
    let cancel = CancellationToken::new();
    let io = Io::unattended(sink, &cancel);
    let reply = host.submit(Command::Resume(id), &io).await;
    let stopped = match reply {
        Ok(Reply::Resumed { warnings }) => {
            for warning in &warnings {
                stdout_line(term![style.yellow("warning:"), " ", warning]);
            }
            None
        }
        Ok(Reply::Stopped(reason)) => Some(reason),
        Ok(_) => None,
        Err(e) => return stdout_line(term![style.red("error:"), " ", e.to_string()]),
    };
    stdout_line(style.dim(&format!(
        "resumed session {} ({} messages)",
        host.session_id(),
        host.history().len()
    )));
    recent(host.history(), style);
    if let Some(reason) = stopped {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
    }
}

/// The REPL's trust question, for project config that changed during the session.
pub struct AskTrust;

#[async_trait::async_trait(?Send)]
impl TrustAsker for AskTrust {
    async fn trust(&self, project: &ProjectConfig, paths: &Paths) -> bool {
        match crate::ui::trust::ask(project, paths).await {
            Ok(crate::ui::trust::Answer::Trust) => true,
            Ok(crate::ui::trust::Answer::Open | crate::ui::trust::Answer::Quit) => false,
            Err(e) => {
                stdout_line(term![Style::for_repl().red("error:"), " ", e.to_string()]);
                false
            }
        }
    }
}

/// `12 KB`, `1.4 MB`: a transcript's size.
fn bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{} KB", n / 1024),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
}

/// The last exchanges of a resumed conversation: the user's prompts, the model's answers
/// rendered as markdown (a few rows each) and each tool call as its one line.
pub fn recent(history: &[Message], style: Style) {
    enum Shown<'a> {
        User(&'a str),
        Answer(&'a str),
        Call(String),
    }
    let mut shown = Vec::new();
    for message in history {
        match message {
            Message::User { content, .. } if !content.starts_with('[') => {
                shown.push(Shown::User(content.as_str()))
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                    shown.push(Shown::Answer(text));
                }
                for call in tool_calls {
                    let input: serde_json::Value =
                        serde_json::from_str(call.arguments()).unwrap_or_default();
                    shown.push(Shown::Call(crate::ui::render::call_summary(
                        call.name(),
                        &input,
                    )));
                }
            }
            _ => {}
        }
    }
    let start = shown
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Shown::User(_)))
        .map(|(i, _)| i)
        .rev()
        .nth(RECENT_EXCHANGES - 1)
        .unwrap_or(0);
    let width = crate::ui::output::terminal_width().unwrap_or(80);
    for item in &shown[start..] {
        match item {
            Shown::User(text) => {
                let lines: Vec<&str> = text.trim().lines().collect();
                for (n, line) in lines.iter().take(4).enumerate() {
                    let lead = if n == 0 {
                        style.bold("> ")
                    } else {
                        style.dim("  ")
                    };
                    stdout_line(term![lead, style.dim(line)]);
                }
                if lines.len() > 4 {
                    stdout_line(style.dim("  ..."));
                }
            }
            Shown::Answer(text) => {
                let rows = crate::ui::markdown::render_rows(text, style, width);
                for row in rows.iter().take(ANSWER_ROWS) {
                    stdout_line(row.clone());
                }
                if rows.len() > ANSWER_ROWS {
                    stdout_line(style.dim(&format!("  … +{} rows", rows.len() - ANSWER_ROWS)));
                }
            }
            Shown::Call(line) => stdout_line(term![style.cyan("●"), " ", style.dim(line)]),
        }
    }
}

/// "5 min ago", "3 h ago", "2 days ago".
fn ago(time: std::time::SystemTime) -> String {
    let secs = time.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    match secs {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}
