//! The REPL's commands about the context and the sessions: `/compact [instructions]`,
//! `/context` (tokens used of the window, by part), `/resume [ID]` (a picker of this project's
//! sessions: when, first prompt, length), the dim line after each turn saying how full the
//! context is, and the last exchanges shown when a session is resumed.

use tokio_util::sync::CancellationToken;

use crate::agent::{Compaction, EventSink, Session, SessionSummary, session_list};
use crate::llm::Message;
use crate::setup::Setup;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// How many of the last exchanges a resumed REPL shows.
const RECENT_EXCHANGES: usize = 3;
/// How many sessions `/resume` offers.
const PICKER_SIZE: usize = 10;

/// `/compact [instructions]`.
pub async fn compact(setup: &mut Setup, instructions: &str, style: Style, sink: &dyn EventSink) {
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let outcome = setup.agent.compact(instructions, sink, &cancel).await;
    watcher.abort();
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
pub async fn context(setup: &mut Setup, style: Style) {
    let usage = setup.agent.context_usage().await;
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
        setup.agent.history().len(),
        setup.settings.auto_compact_percent,
        if setup.settings.auto_compact {
            "autoCompact on"
        } else {
            "autoCompact off"
        }
    )));
}

/// `/resume [ID]`: picks a session of this project (or takes the one named) and continues it.
pub async fn resume(setup: &mut Setup, arg: &str, style: Style, sink: &dyn EventSink) {
    let dir = setup.paths.sessions_dir();
    let id = if arg.is_empty() {
        let sessions: Vec<SessionSummary> = session_list::list(&dir, &setup.paths.project_root)
            .into_iter()
            .filter(|s| s.id != setup.agent.session().id && s.messages > 0)
            .take(PICKER_SIZE)
            .collect();
        if sessions.is_empty() {
            stdout_line("no other session of this project to resume");
            return;
        }
        for (index, session) in sessions.iter().enumerate() {
            stdout_line(term![
                style.bold(&format!("  [{}]", index + 1)),
                format!(
                    " {:<16} {:>4} msgs  ",
                    ago(session.modified),
                    session.messages
                ),
                &session.first_prompt
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
    let resumed = match Session::open(&dir, &id) {
        Ok(resumed) => resumed,
        Err(e) => {
            stdout_line(term![style.red("error:"), " ", e.to_string()]);
            return;
        }
    };
    setup.agent.end_session("resume", sink).await;
    for warning in &resumed.warnings {
        stdout_line(term![style.yellow("warning:"), " ", warning]);
    }
    setup
        .agent
        .switch_session(resumed.session, resumed.messages);
    stdout_line(style.dim(&format!(
        "resumed session {} ({} messages)",
        setup.agent.session().id,
        setup.agent.history().len()
    )));
    recent(setup.agent.history(), style);
    if let Some(reason) = setup.agent.fire_session_start("resume", sink).await {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
    }
}

/// The last exchanges of a resumed conversation: the user's prompts and the model's answers,
/// each cut to a few lines.
pub fn recent(history: &[Message], style: Style) {
    let shown: Vec<(bool, &str)> = history
        .iter()
        .filter_map(|m| match m {
            Message::User { content } if !content.starts_with('[') => {
                Some((true, content.as_str()))
            }
            Message::Assistant {
                content: Some(text),
                ..
            } if !text.trim().is_empty() => Some((false, text.as_str())),
            _ => None,
        })
        .collect();
    let start = shown
        .iter()
        .enumerate()
        .filter(|(_, (user, _))| *user)
        .map(|(i, _)| i)
        .rev()
        .nth(RECENT_EXCHANGES - 1)
        .unwrap_or(0);
    for (user, text) in &shown[start..] {
        let lines: Vec<&str> = text.trim().lines().collect();
        let cut = lines.len() > 4;
        for (n, line) in lines.iter().take(4).enumerate() {
            let lead = match (n, user) {
                (0, true) => style.bold("> "),
                (0, false) => style.dim("● "),
                _ => style.dim("  "),
            };
            stdout_line(term![lead, style.dim(line)]);
        }
        if cut {
            stdout_line(style.dim("  ..."));
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
