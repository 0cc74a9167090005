//! One prompt of the REPL: what runs before the turn takes the terminal (the MCP config
//! reloaded, asking the trust question again when a project file changed), the files `@path`
//! attaches and the images a prompt names, the turn itself under the live view, and the footer and ending after it.

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
    // Pictures the prompt names: one that is not there stops it before anything runs.
    let custom = host.is_custom_command(prompt);
    let images = if custom {
        super::image_input::Found {
            prompt: prompt.to_string(),
            ..Default::default()
        }
    } else {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let paths = host.paths();
        super::image_input::find_images(
            prompt,
            &paths.project_root,
            &paths.working_dir,
            home.as_deref(),
        )
    };
    if !images.errors.is_empty() {
        for error in &images.errors {
            stdout_line(term![style.red("error:"), " ", error]);
        }
        return Typed::default();
    }
    let prompt = images.prompt.as_str();
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
    if !super::image_input::attach(host, &images, style) {
        return Typed::default();
    }
    // A custom command attaches its own `@file` mentions, once expanded.
    let attached = if custom {
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
    drive(host, ui, Command::Prompt(attached.prompt)).await
}

/// A turn on what background sub-agents that ended said (their answers arrived while the
/// REPL was idle).
pub(super) async fn run_background_turn(host: &mut Host, ui: &Arc<ReplUi>) -> Typed {
    stdout_line(
        ui.style
            .dim("a background agent ended; its answer goes to the model"),
    );
    drive(host, ui, Command::Background).await
}

/// The turn of `command` under the live view, the footer and how it ended.
async fn drive(host: &mut Host, ui: &Arc<ReplUi>, command: Command) -> Typed {
    let style = ui.style;
    let started = std::time::Instant::now();
    let cancel = CancellationToken::new();
    // The session's list of the moment (a resumed one's, none after /clear) under the spinner.
    ui.screen.todos(crate::session::todo_summary(&host.todos()));
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
    let reply = host.submit(command, &io).await;
    watcher.abort();
    let typed = ui.end_turn();
    let mut goal = None;
    let (result, turn) = match reply {
        Ok(Reply::Turn {
            result,
            usage,
            goal: outcome,
        }) => {
            goal = outcome;
            (Ok(result), usage)
        }
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
    let running = host.live().agents().iter().filter(|a| a.background).count();
    if running > 0 {
        stdout_line(style.dim(&format!(
            "{running} background agent(s) at work (/agents); an answer that came goes to the \
             model before your next message"
        )));
    }
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
    if let Some(goal) = goal {
        stdout_line(super::tasks::goal_line(&goal, style));
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
