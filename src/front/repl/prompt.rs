//! One prompt of the REPL: what runs before the turn takes the terminal (the MCP config
//! reloaded, asking the trust question again when a project file changed), the files `@path`
//! attaches, the turn itself under the live view, and the footer and ending after it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::turn_keys::Typed;
use super::view::ReplUi;
use crate::session::{Command, EventSink, Host, Io, NonInteractive, Reply, RunEnd};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// Runs one turn; returns what the user typed during it (the lines to send next, in order, and
/// the one to pre-fill the prompt with).
pub(super) async fn run_turn(host: &mut Host, ui: &Arc<ReplUi>, prompt: &str) -> Typed {
    let style = ui.style;
    // Before the turn's view takes the terminal: MCP config edited since the last turn (the
    // trust question asked again for a changed project file), a model chosen meanwhile.
    let quiet = CancellationToken::new();
    let prelude = Prelude { style };
    let asker = super::context::AskTrust;
    let io = Io {
        sink: &prelude,
        approver: &NonInteractive,
        cancel: &quiet,
        trust: Some(&asker),
    };
    if let Some(reason) = host.before_prompt(&io).await {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
        return Typed::default();
    }
    // A custom command attaches its own `@file` mentions, once expanded.
    let attached = if host.is_custom_command(prompt) {
        crate::session::Attached {
            prompt: prompt.to_string(),
            ..Default::default()
        }
    } else {
        crate::session::attach_files(&host.paths().project_root, prompt)
    };
    for (file, lines) in &attached.files {
        stdout_line(style.dim(&format!("attached {file} ({lines} lines)")));
    }
    for warning in &attached.warnings {
        stdout_line(term![style.yellow("warning:"), " ", warning]);
    }
    let started = std::time::Instant::now();
    let cancel = CancellationToken::new();
    ui.begin_turn(cancel.clone());
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let io = Io {
        sink: ui.as_ref(),
        approver: ui.as_ref(),
        cancel: &cancel,
        trust: None,
    };
    let reply = host.submit(Command::Prompt(attached.prompt), &io).await;
    watcher.abort();
    let typed = ui.end_turn();
    let (result, turn) = match reply {
        Ok(Reply::Turn { result, usage }) => (Ok(result), usage),
        Ok(Reply::Stopped(reason)) => (
            Err(format!("stopped by hook: {reason}")),
            Default::default(),
        ),
        Ok(_) => (
            Err("the prompt did not run".to_string()),
            Default::default(),
        ),
        Err(e) => (Err(e.to_string()), Default::default()),
    };
    let context = host.context_usage().await;
    stdout_line(super::session_commands::footer(
        style,
        started.elapsed(),
        turn,
        Some((context.used, context.window)),
    ));
    let run = match result {
        Ok(Ok(run)) => run,
        Ok(Err(e)) => {
            stdout_line(term![
                style.red("error:"),
                " ",
                crate::redact::scrub(&e.to_string())
            ]);
            return typed;
        }
        Err(why) => {
            stdout_line(term![style.yellow("note:"), " ", why]);
            return typed;
        }
    };
    match run.end {
        RunEnd::Completed => {}
        RunEnd::Declined => {
            stdout_line(style.dim("declined; the model waits for your next message"))
        }
        RunEnd::Interrupted => stdout_line(style.yellow("⏹ interrupted")),
        RunEnd::MaxTurns => stdout_line(style.yellow(&format!(
            "stopped after {} model requests (--max-turns)",
            run.requests
        ))),
        RunEnd::Stopped(reason) => {
            stdout_line(term![style.yellow("stopped by hook:"), " ", reason])
        }
        RunEnd::PromptBlocked(reason) => {
            stdout_line(term![style.yellow("prompt blocked by hook:"), " ", reason])
        }
        RunEnd::MaxBudget(reason) => super::budget::reached(host, style, &reason).await,
    }
    typed
}

/// What happens before a turn's view takes the terminal, said as plain lines: a warning, the
/// MCP servers a config change added, removed or restarted.
struct Prelude {
    style: Style,
}

impl EventSink for Prelude {
    fn emit(&self, event: crate::session::AgentEvent) {
        use crate::session::AgentEvent;
        match event {
            AgentEvent::Warning(warning) => {
                stdout_line(term![self.style.yellow("warning:"), " ", warning]);
            }
            AgentEvent::McpReloaded {
                added,
                removed,
                restarted,
            } => stdout_line(
                self.style
                    .dim(&super::turn::mcp_reloaded(&added, &removed, &restarted)),
            ),
            _ => {}
        }
    }
}
