//! The interactive REPL: rustyline with persistent history and multi-line input (end a line with
//! `\`), slash commands, streamed answers, one line per tool call, permission questions, and
//! Ctrl-C that interrupts the running turn (a second Ctrl-C at an empty prompt, or Ctrl-D, exits).

use std::sync::Arc;

use rustyline::Editor;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use tokio_util::sync::CancellationToken;

use super::line_editor::{self, ModePrompt, ReplHelper};
use super::output::stdout_line;
use super::repl_ui::ReplUi;
use super::style::Style;
use super::tool_view;
use super::{RunOutcome, TerminalError};
use crate::agent::{RunEnd, Session};
use crate::mcp::{ServerState, ServerStatus};
use crate::setup::Setup;
use crate::term;

const COMMANDS: [(&str, &str); 18] = [
    ("/help", "show this help"),
    ("/tools", "list the tools the model can call"),
    ("/hooks", "list the loaded hooks"),
    (
        "/mcp",
        "MCP server status; /mcp reconnect NAME restarts one, /mcp login NAME logs in (OAuth)",
    ),
    ("/expand", "print the last tool output whole"),
    (
        "/status",
        "model, base URL, mode, sandbox, context, MCP servers, session, log",
    ),
    ("/diff", "what this session changed in files, as a diff"),
    (
        "/init",
        "have the model write or improve AGENTS.md (you approve the write)",
    ),
    (
        "/cost",
        "tokens this session, and their cost when settings give prices",
    ),
    (
        "/mode",
        "show the permission mode, or set it with /mode NAME (Shift-Tab cycles)",
    ),
    (
        "/permissions",
        "list the rules and where they came from; /permissions allow|deny|remove RULE",
    ),
    ("/clear", "forget the conversation and start a new session"),
    ("/model", "show the model, or switch with /model NAME"),
    (
        "/compact",
        "summarise the conversation to free context; /compact INSTRUCTIONS says what to keep",
    ),
    ("/context", "how full the model's context is, by part"),
    (
        "/resume",
        "continue another session of this project (a picker), or /resume ID",
    ),
    ("/exit", "leave Ling (also Ctrl-D)"),
    ("/quit", "same as /exit"),
];

/// What `/init` asks the model to do.
const INIT_PROMPT: &str = include_str!("../prompts/init.md");

type LineEditor = Editor<ReplHelper, DefaultHistory>;

/// Runs the REPL until the user leaves (Ctrl-D, `/exit`) or a hook stops the session.
pub async fn run(
    mut setup: Setup,
    first_prompt: Option<String>,
) -> Result<RunOutcome, TerminalError> {
    let style = Style::for_repl();
    if style.color {
        // Off the REPL's thread: the first code block of an answer then paints at once.
        std::thread::spawn(super::markdown::warm_up);
    }
    let history_path = setup.paths.history_file();
    let mut editor = new_editor(&setup)?;
    let _ = editor.load_history(&history_path);
    print_banner(&setup, style);

    let ui = Arc::new(ReplUi::new(style, setup.paths.clone()));
    let mcp = setup.mcp.clone();
    tokio::spawn(super::signals::exit_on_termination(async move {
        mcp.shutdown().await;
    }));
    setup.mcp_host.set_asker(ui.clone());
    let source = if setup.resumed { "resume" } else { "startup" };
    if let Some(reason) = setup.agent.fire_session_start(source, ui.as_ref()).await {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
        setup.agent.end_session("other", ui.as_ref()).await;
        return Ok(RunOutcome::Failed);
    }
    let mut pending = first_prompt;
    let mut interrupted_once = false;
    let mut seen_servers = Vec::new();
    let mut typed = String::new();
    loop {
        let line = match pending.take() {
            Some(line) => line,
            None => {
                report_server_changes(&setup, &mut seen_servers, style);
                let prompt = line_editor::prompt(style, setup.agent.permission_mode());
                let (back, result) = read_line(editor, prompt, std::mem::take(&mut typed)).await?;
                editor = back;
                match result {
                    Ok(line) => {
                        interrupted_once = false;
                        match editor.helper() {
                            Some(helper) => helper.expand_pastes(line),
                            None => line,
                        }
                    }
                    Err(ReadlineError::Interrupted)
                        if let Some(line) = editor.helper().and_then(ReplHelper::take_cycle) =>
                    {
                        // Shift-Tab: the next mode, and the line as it was.
                        let mode = line_editor::next_mode(setup.agent.permission_mode());
                        setup.agent.set_permission_mode(mode);
                        typed = line;
                        continue;
                    }
                    Err(ReadlineError::Interrupted) => {
                        if interrupted_once {
                            break;
                        }
                        interrupted_once = true;
                        stdout_line(style.dim("(press Ctrl-C again or Ctrl-D to exit)"));
                        continue;
                    }
                    Err(ReadlineError::Eof) => break,
                    Err(e) => return Err(TerminalError::Input(e)),
                }
            }
        };
        // A continued line's `\` is the editor's, not the prompt's.
        let line = line.replace("\\\n", "\n").trim().to_string();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        // rustyline writes the file 0600 itself; its folder is made owner-only here.
        if let Some(parent) = history_path.parent() {
            let _ = crate::config::private_fs::create_dir(parent);
        }
        let _ = editor.save_history(&history_path);

        if line.starts_with('/') {
            match slash_command(&mut setup, &line, style, &ui).await {
                Flow::Continue => continue,
                Flow::Exit => break,
                Flow::Send(prompt) => {
                    typed = run_turn(&mut setup, &ui, &prompt).await;
                    pending = typed_line(&mut typed, style);
                    continue;
                }
            }
        }
        typed = run_turn(&mut setup, &ui, &line).await;
        pending = typed_line(&mut typed, style);
    }
    setup
        .agent
        .end_session("prompt_input_exit", ui.as_ref())
        .await;
    setup.shutdown().await;
    Ok(RunOutcome::Success)
}

/// Servers start in the background: before each prompt, say which connected or failed since.
fn report_server_changes(setup: &Setup, seen: &mut Vec<ServerStatus>, style: Style) {
    let now = setup.mcp.statuses();
    for status in &now {
        let before = seen.iter().find(|s| s.name == status.name);
        if before.map(|b| &b.state) == Some(&status.state) {
            continue;
        }
        match &status.state {
            ServerState::Connected => stdout_line(style.dim(&format!(
                "mcp {}: connected ({} tools)",
                status.name, status.tools
            ))),
            ServerState::Failed(why) => stdout_line(term![
                style.yellow("warning:"),
                format!(" mcp {}: {why}", status.name)
            ]),
            ServerState::NeedsAuth(how) => stdout_line(term![
                style.yellow("mcp"),
                format!(" {}: needs-auth: {how}", status.name)
            ]),
            ServerState::Starting | ServerState::Disabled => {}
        }
    }
    *seen = now;
}

fn print_mcp_status(setup: &Setup, style: Style) {
    let statuses = setup.mcp.statuses();
    if statuses.is_empty() {
        stdout_line("no MCP servers configured (~/.ling/mcp.json, .ling/mcp.json, --mcp-config)");
        return;
    }
    for status in statuses {
        // Pad before styling: escape codes would count as width.
        let state = match &status.state {
            ServerState::Connected => style.green("connected"),
            ServerState::Starting => style.yellow("starting "),
            ServerState::Disabled => style.dim("disabled "),
            ServerState::Failed(_) => style.red("failed   "),
            ServerState::NeedsAuth(_) => style.yellow("needs-auth"),
        };
        stdout_line(term![
            "  ",
            style.bold(&format!("{:<16}", status.name)),
            format!(" {:<6} ", status.transport),
            state,
            format!(" {} tools", status.tools)
        ]);
        if let ServerState::Failed(why) | ServerState::NeedsAuth(why) = &status.state {
            for line in why.lines() {
                stdout_line(term!["      ", style.dim(line)]);
            }
        }
    }
}

enum Flow {
    Continue,
    Exit,
    /// An MCP prompt command expanded into this user message.
    Send(String),
}

async fn slash_command(setup: &mut Setup, line: &str, style: Style, ui: &ReplUi) -> Flow {
    let (command, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    match command {
        "/exit" | "/quit" => return Flow::Exit,
        "/help" => {
            stdout_line(style.bold("Commands"));
            for (name, help) in COMMANDS {
                stdout_line(format!("  {name:<10} {help}"));
            }
            stdout_line(
                "\nEnd a line with \\ to continue on the next one. Ctrl-C interrupts a running turn.",
            );
            super::mcp_dialogs::print_prompt_help(setup, style).await;
        }
        "/mcp" => match rest
            .split_once(' ')
            .map_or((rest, ""), |(a, b)| (a, b.trim()))
        {
            ("", _) => print_mcp_status(setup, style),
            ("reconnect", name) if !name.is_empty() => {
                stdout_line(style.dim(&format!("reconnecting {name}...")));
                match setup.mcp.reconnect(name).await {
                    Ok(()) => {
                        setup.agent.sync_tools().await;
                        print_mcp_status(setup, style);
                    }
                    Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
                }
            }
            ("login", name) if !name.is_empty() => {
                let login = super::login::browser_login(
                    name,
                    false,
                    crate::setup::children(&setup.settings),
                );
                match setup.mcp.login(name, login).await {
                    Ok(()) => {
                        setup.agent.sync_tools().await;
                        print_mcp_status(setup, style);
                    }
                    Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
                }
            }
            _ => stdout_line("usage: /mcp, /mcp reconnect NAME or /mcp login NAME"),
        },
        "/tools" => {
            setup.agent.sync_tools().await;
            for tool in setup.agent.tools().iter() {
                let description = tool.description().lines().next().unwrap_or("");
                stdout_line(term![
                    "  ",
                    style.bold(&format!("{:<24}", tool.name())),
                    " ",
                    style.dim(description)
                ]);
            }
        }
        "/clear" => {
            setup.agent.end_session("clear", ui).await;
            let session = Session::new(
                &setup.paths.sessions_dir(),
                &setup.paths.project_root,
                setup.agent.model(),
            );
            setup.agent.clear(session);
            ui.clear_changes();
            stdout_line(style.dim("conversation cleared; new session started"));
            if let Some(reason) = setup.agent.fire_session_start("clear", ui).await {
                stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
                return Flow::Exit;
            }
        }
        "/compact" => super::repl_context::compact(setup, rest, style, ui).await,
        "/context" => super::repl_context::context(setup, style).await,
        "/resume" => super::repl_context::resume(setup, rest, style, ui).await,
        "/mode" => super::session_commands::mode(setup, rest, style),
        "/status" => super::session_commands::status(setup, style).await,
        "/cost" => super::session_commands::cost_report(setup, style),
        "/permissions" => super::session_commands::permissions(setup, rest, style),
        "/diff" => {
            let diffs = ui.session_diff();
            if diffs.is_empty() {
                stdout_line(
                    style.dim(
                        "no file changed by this session (commands run by bash are not tracked)",
                    ),
                );
            }
            for diff in diffs {
                stdout_line(super::render::styled_display(style, &diff));
            }
        }
        "/init" => return Flow::Send(INIT_PROMPT.to_string()),
        "/expand" => match ui.last_output() {
            Some(output) => stdout_line(tool_view::whole(&output)),
            None => stdout_line(style.dim("no tool has run yet")),
        },
        "/hooks" => {
            let listing = setup.agent.hooks().list();
            if listing.is_empty() {
                stdout_line("no hooks loaded (~/.ling/hooks.json, .ling/hooks.json)");
            } else {
                stdout_line(crate::hooks::render_listing(&listing, false).trim_end());
            }
        }
        "/model" => {
            if rest.is_empty() {
                stdout_line(format!("model: {}", setup.agent.model()));
            } else {
                setup.agent.set_model(rest.to_string());
                setup.mcp_host.set_model(rest.to_string());
                stdout_line(format!("model set to {rest}"));
            }
        }
        other if other.starts_with("/mcp__") => {
            if let Some(prompt) =
                super::mcp_dialogs::expand_prompt_command(setup, line, style).await
            {
                return Flow::Send(prompt);
            }
        }
        other => stdout_line(term![
            style.yellow("?"),
            format!(" unknown command {other}; /help lists the commands")
        ]),
    }
    Flow::Continue
}

/// A line typed and ended with Enter during the last turn: shown as if at the prompt, and
/// sent next; what follows it stays in `typed` to pre-fill the prompt after.
fn typed_line(typed: &mut String, style: Style) -> Option<String> {
    let (line, rest) = typed.split_once('\n')?;
    let line = line.to_string();
    *typed = rest.replace('\n', " ");
    stdout_line(term![style.dim("> "), &line]);
    Some(line)
}

/// Runs one turn; returns what the user typed during it, to pre-fill the next prompt.
async fn run_turn(setup: &mut Setup, ui: &Arc<ReplUi>, prompt: &str) -> String {
    let style = ui.style;
    let attached = crate::agent::attach_files(&setup.paths.project_root, prompt);
    for (file, lines) in &attached.files {
        stdout_line(style.dim(&format!("attached {file} ({lines} lines)")));
    }
    for warning in &attached.warnings {
        stdout_line(term![style.yellow("warning:"), " ", warning]);
    }
    let prompt = attached.prompt.as_str();
    let started = std::time::Instant::now();
    let before = setup.agent.usage();
    let cancel = CancellationToken::new();
    ui.begin_turn(cancel.clone());
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let result = setup
        .agent
        .run(prompt, ui.as_ref(), ui.as_ref(), &cancel)
        .await;
    watcher.abort();
    let typed = ui.end_turn();
    let after = setup.agent.usage();
    let turn = after.since(before);
    let context = setup.agent.context_usage().await;
    stdout_line(super::session_commands::footer(
        style,
        started.elapsed(),
        turn,
        Some((context.used, context.window)),
    ));
    match result {
        Ok(run) => match run.end {
            RunEnd::Completed => {}
            RunEnd::Declined => {
                stdout_line(style.dim("declined; the model waits for your next message"))
            }
            RunEnd::Interrupted => stdout_line(style.yellow("⏹ interrupted")),
            RunEnd::MaxTurns => stdout_line(style.yellow(&format!(
                "stopped after {} model requests (--max-turns)",
                run.num_turns
            ))),
            RunEnd::Stopped(reason) => {
                stdout_line(term![style.yellow("stopped by hook:"), " ", reason])
            }
            RunEnd::PromptBlocked(reason) => {
                stdout_line(term![style.yellow("prompt blocked by hook:"), " ", reason])
            }
        },
        Err(e) => stdout_line(term![
            style.red("error:"),
            " ",
            crate::redact::scrub(&e.to_string())
        ]),
    }
    typed
}

fn print_banner(setup: &Setup, style: Style) {
    stdout_line(term![
        style.bold("Ling"),
        concat!(" ", env!("CARGO_PKG_VERSION"), " · model "),
        style.cyan(setup.agent.model()),
        " · ",
        style.dim(&crate::redact::url(&setup.settings.base_url))
    ]);
    stdout_line(style.dim(&format!(
        "{} · /help for commands · Ctrl-D to exit",
        setup.paths.project_root.display()
    )));
    for warning in &setup.warnings {
        stdout_line(term![style.yellow("warning:"), " ", warning]);
    }
    if let Some(notice) = &setup.trust_notice {
        stdout_line(term![style.yellow("note:"), " ", notice]);
    }
    if setup.resumed {
        stdout_line(style.dim(&format!(
            "resumed session {} ({} messages)",
            setup.agent.session().id,
            setup.agent.history().len()
        )));
        super::repl_context::recent(setup.agent.history(), style);
    }
}

fn new_editor(setup: &Setup) -> Result<LineEditor, TerminalError> {
    let mut editor = LineEditor::new().map_err(TerminalError::Editor)?;
    let commands = COMMANDS
        .iter()
        .map(|(name, help)| (name.to_string(), help.to_string()))
        .collect();
    let mut model = crate::llm::LlmConfig::from_settings(&setup.settings);
    model.model = setup.agent.model().to_string();
    editor.set_helper(Some(ReplHelper::new(
        commands,
        setup.paths.project_root.clone(),
        model,
    )));
    ReplHelper::bind(&mut editor);
    Ok(editor)
}

/// Reads one line on a blocking thread (rustyline blocks), handing the editor back; `initial`
/// is text already typed (kept across a Shift-Tab).
async fn read_line(
    mut editor: LineEditor,
    prompt: ModePrompt,
    initial: String,
) -> Result<(LineEditor, rustyline::Result<String>), TerminalError> {
    tokio::task::spawn_blocking(move || {
        let result = editor.readline_with_initial(&prompt, (&initial, ""));
        (editor, result)
    })
    .await
    .map_err(TerminalError::EditorStopped)
}
