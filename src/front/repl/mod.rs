//! The interactive REPL: rustyline with persistent history and multi-line input (end a line with
//! `\`), slash commands, streamed answers, one line per tool call, permission questions, and
//! Ctrl-C that interrupts the running turn (a second Ctrl-C at an empty prompt, or Ctrl-D, exits).

mod approval;
mod context;
mod dialog_queue;
mod extension_commands;
mod line_editor;
mod mcp_dialogs;
mod mcp_reload;
mod screen;
mod session_commands;
mod session_diff;
mod status;
mod theme;
mod tool_view;
mod turn;
mod turn_keys;
mod view;

use std::sync::Arc;

use rustyline::Editor;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use tokio_util::sync::CancellationToken;

use self::line_editor::{ModePrompt, ReplHelper};
use self::turn_keys::Typed;
use self::view::ReplUi;
use crate::agent::{RunEnd, Session};
use crate::mcp::{ServerState, ServerStatus};
use crate::setup::Setup;
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::{RunOutcome, TerminalError};

/// The slash commands and their one-line help, in `/help`'s order (a new command is one more
/// row here and one more arm in `slash_command`).
const COMMANDS: &[(&str, &str)] = &[
    ("/help", "show this help"),
    ("/agents", "list the sub-agent types the task tool offers"),
    ("/skills", "list the skills the model can load"),
    ("/tools", "list the tools the model can call"),
    ("/hooks", "list the loaded hooks"),
    (
        "/mcp",
        "MCP server status; /mcp reconnect NAME restarts one, /mcp login NAME logs in (OAuth), /mcp enable|disable NAME switches one on or off here",
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
    (
        "/theme",
        "show the colours of code, or set them with /theme dark|light|auto",
    ),
    ("/exit", "leave Ling (also Ctrl-D)"),
    ("/quit", "same as /exit"),
];

/// What `/init` asks the model to do.
const INIT_PROMPT: &str = include_str!("../../prompts/init.md");

type LineEditor = Editor<ReplHelper, DefaultHistory>;

/// Runs the REPL until the user leaves (Ctrl-D, `/exit`) or a hook stops the session; `pick`
/// (`ling --resume` without an id) opens the session picker first.
pub async fn run(
    mut setup: Setup,
    first_prompt: Option<String>,
    pick: bool,
) -> Result<RunOutcome, TerminalError> {
    crate::ui::signals::restore_terminal_on_panic();
    let style = Style::for_repl();
    if style.color {
        crate::ui::markdown::set_theme(self::theme::resolve(setup.settings.theme));
        // Off the REPL's thread: the first code block of an answer then paints at once.
        std::thread::spawn(crate::ui::markdown::warm_up);
    }
    let history_path = setup.paths.history_file();
    let mut editor = new_editor(&setup)?;
    let _ = editor.load_history(&history_path);
    print_banner(&setup, style);

    let ui = Arc::new(ReplUi::new(style, setup.paths.clone()));
    let mcp = setup.mcp.clone();
    tokio::spawn(crate::ui::signals::exit_on_termination(async move {
        mcp.shutdown().await;
    }));
    setup.mcp_host.set_asker(ui.clone());
    if pick {
        self::context::resume(&mut setup, "", style, ui.as_ref(), true).await;
    }
    let source = if setup.resumed { "resume" } else { "startup" };
    if let Some(reason) = setup.agent.fire_session_start(source, ui.as_ref()).await {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
        setup.agent.end_session("other", ui.as_ref()).await;
        return Ok(RunOutcome::Failed);
    }
    // Lines to send before the prompt is shown again: the first prompt, then what was typed
    // ahead during a turn, in order.
    let mut queue: std::collections::VecDeque<String> = first_prompt.into_iter().collect();
    let mut interrupted_once = false;
    let notices = ServerNotices::default();
    let mut typed = String::new();
    // The last prompt was left by Shift-Tab, its mode said on the row above it.
    let mut described = false;
    loop {
        if ui.wrote_files()
            && let Some(helper) = editor.helper()
        {
            helper.refresh_files();
        }
        let line = match queue.pop_front() {
            Some(line) => line,
            None => {
                notices.report(&setup, style);
                let prompt = line_editor::prompt(style, setup.agent.permission_mode());
                let idle = setup.agent.idle_notice();
                let (back, result) = read_line(editor, prompt, std::mem::take(&mut typed)).await?;
                drop(idle);
                editor = back;
                match result {
                    Ok(line) => {
                        interrupted_once = false;
                        described = false;
                        match editor.helper() {
                            Some(helper) => helper.expand_pastes(line),
                            None => line,
                        }
                    }
                    Err(ReadlineError::Interrupted)
                        if let Some(line) = editor.helper().and_then(ReplHelper::take_cycle) =>
                    {
                        // Shift-Tab: the next mode, said in place of the last one, and the line
                        // as it was.
                        let mode = line_editor::next_mode(setup.agent.permission_mode());
                        setup.agent.set_permission_mode(mode);
                        line_editor::show_mode(style, mode, &line, described);
                        described = true;
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
        // Appended under rustyline's lock on the file, merged with what other sessions added
        // since (saving would write back this session's copy over theirs).
        let _ = editor.append_history(&history_path);

        let prompt = if line.starts_with('/') {
            match slash_command(&mut setup, &line, style, &ui).await {
                Flow::Continue => continue,
                Flow::Exit => break,
                Flow::Send(prompt) => prompt,
            }
        } else {
            line
        };
        notices.report(&setup, style);
        let ahead = run_turn(&mut setup, &ui, &prompt).await;
        // Typed ahead: each line shown as if at the prompt when its turn comes, then sent.
        for line in ahead.lines {
            queue.push_back(line);
        }
        typed = ahead.partial;
        if let Some(next) = queue.front() {
            stdout_line(term![style.dim("> "), next]);
        }
    }
    stdout_line(style.dim(&format!(
        "resume with: ling --resume {}",
        setup.agent.session().id
    )));
    setup
        .agent
        .end_session("prompt_input_exit", ui.as_ref())
        .await;
    setup.shutdown().await;
    Ok(RunOutcome::Success)
}

/// Servers start in the background: their changes are said once each, before the next prompt
/// and before each turn (so a server is said connected before the turn that uses it).
#[derive(Default)]
struct ServerNotices {
    reported: std::sync::Mutex<Vec<ServerStatus>>,
}

impl ServerNotices {
    /// The lines for what changed since the last report.
    fn changes(&self, now: Vec<ServerStatus>, style: Style) -> Vec<crate::ui::term::Term> {
        let mut seen = self.reported.lock().unwrap_or_else(|e| e.into_inner());
        let mut lines = Vec::new();
        for status in &now {
            let before = seen.iter().find(|s| s.name == status.name);
            if before.map(|b| &b.state) == Some(&status.state) {
                continue;
            }
            match &status.state {
                ServerState::Connected => lines.push(style.dim(&format!(
                    "mcp {}: connected ({} tools)",
                    status.name, status.tools
                ))),
                ServerState::Failed(why) => lines.push(term![
                    style.yellow("warning:"),
                    format!(" mcp {}: {why}", status.name)
                ]),
                ServerState::NeedsAuth(how) => lines.push(term![
                    style.yellow("mcp"),
                    format!(" {}: needs-auth: {how}", status.name)
                ]),
                ServerState::Starting | ServerState::Disabled => {}
            }
        }
        *seen = now;
        lines
    }

    /// Says what changed, now.
    fn report(&self, setup: &Setup, style: Style) {
        for line in self.changes(setup.mcp.statuses(), style) {
            stdout_line(line);
        }
    }
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
            self::mcp_dialogs::print_prompt_help(setup, style).await;
            self::extension_commands::print_help(&setup.agent, style);
        }
        "/agents" => self::extension_commands::print_agents(&setup.agent, style),
        "/skills" => self::extension_commands::print_skills(&setup.agent, style),
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
                let login = crate::ui::login::browser_login(
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
            (verb @ ("enable" | "disable"), name) if !name.is_empty() => {
                let on = verb == "enable";
                let paths = setup.paths.clone();
                match crate::agent::mcp::reload::switch_server(&setup.mcp, &paths, name, on).await {
                    Ok(()) => {
                        setup.agent.sync_tools().await;
                        print_mcp_status(setup, style);
                    }
                    Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
                }
            }
            _ => stdout_line(
                "usage: /mcp, /mcp reconnect NAME, /mcp login NAME, /mcp enable NAME or /mcp disable NAME",
            ),
        },
        "/tools" => {
            setup.agent.sync_tools().await;
            let width = crate::ui::output::terminal_width().unwrap_or(80);
            for tool in setup.agent.tools().iter() {
                // The first sentence, on the rest of the row.
                let first = tool.description().lines().next().unwrap_or("");
                let sentence = first
                    .split_inclusive(". ")
                    .next()
                    .unwrap_or(first)
                    .trim_end();
                let room = width.saturating_sub(28).max(20);
                stdout_line(term![
                    "  ",
                    style.bold(&format!("{:<24}", tool.name())),
                    " ",
                    style.dim(&crate::ui::render::one_line(sentence, room))
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
        "/compact" => self::context::compact(setup, rest, style, ui).await,
        "/context" => self::context::context(setup, style).await,
        "/resume" => self::context::resume(setup, rest, style, ui, false).await,
        "/mode" => self::session_commands::mode(setup, rest, style),
        "/status" => self::session_commands::status(setup, style).await,
        "/cost" => self::session_commands::cost_report(setup, style),
        "/permissions" => self::session_commands::permissions(setup, rest, style),
        "/diff" => {
            let diffs = ui.session_diff();
            if diffs.is_empty() {
                stdout_line(
                    style.dim(
                        "no file changed by this session (commands run by bash are not tracked)",
                    ),
                );
            }
            for (summary, _) in &diffs {
                stdout_line(term!["  ", style.bold(summary)]);
            }
            for (_, diff) in diffs {
                stdout_line(crate::ui::render::styled_display(style, &diff));
            }
        }
        "/init" => return Flow::Send(INIT_PROMPT.to_string()),
        "/theme" => {
            match crate::config::ThemeSetting::parse(rest) {
                Some(setting) => {
                    crate::ui::markdown::set_theme(self::theme::resolve(setting));
                }
                None if rest.is_empty() => {}
                None => {
                    stdout_line("usage: /theme, or /theme dark|light|auto");
                    return Flow::Continue;
                }
            }
            let theme = match crate::ui::markdown::theme() {
                crate::ui::markdown::Theme::Dark => "dark",
                crate::ui::markdown::Theme::Light => "light",
            };
            let colours = if !style.color {
                " (colours are off: NO_COLOR, TERM=dumb or not a terminal)"
            } else {
                ""
            };
            stdout_line(format!("theme: {theme}{colours}"));
        }
        "/expand" => match ui.last_call() {
            (Some(output), input) => {
                // The whole call (a command longer than its line), then its whole output.
                if let Some((name, input)) = input {
                    let whole = match input.get("command").and_then(serde_json::Value::as_str) {
                        Some(command) => command.to_string(),
                        None => serde_json::to_string_pretty(&input).unwrap_or_default(),
                    };
                    stdout_line(term![style.cyan("●"), " ", style.bold(&name)]);
                    for line in whole.lines() {
                        stdout_line(term![style.dim("│ "), line]);
                    }
                }
                stdout_line(tool_view::whole(&output));
            }
            (None, _) => stdout_line(style.dim("no tool has run yet")),
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
                // Checked against the server's list, when it has one.
                let mut config = crate::llm::LlmConfig::from_settings(&setup.settings);
                config.model = setup.agent.model().to_string();
                let known = crate::llm::list_models(&config).await;
                if !known.is_empty() && !known.iter().any(|m| m == rest) {
                    let close: Vec<&String> = known
                        .iter()
                        .filter(|m| m.contains(rest) || rest.contains(m.as_str()))
                        .take(5)
                        .collect();
                    let hint = if close.is_empty() {
                        "Tab after /model lists them".to_string()
                    } else {
                        format!(
                            "did you mean {}?",
                            close
                                .iter()
                                .map(|m| m.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    stdout_line(term![
                        style.yellow("?"),
                        format!(" the server has no model {rest:?}; {hint}")
                    ]);
                    return Flow::Continue;
                }
                setup.agent.set_model(rest.to_string());
                setup.mcp_host.set_model(rest.to_string());
                stdout_line(format!("model set to {rest}"));
            }
        }
        other if other.starts_with("/mcp__") => {
            if let Some(prompt) = self::mcp_dialogs::expand_prompt_command(setup, line, style).await
            {
                return Flow::Send(prompt);
            }
        }
        _ if setup.agent.custom_command(line).is_some() => return Flow::Send(line.to_string()),
        other => stdout_line(term![
            style.yellow("?"),
            format!(" unknown command {other}; /help lists the commands")
        ]),
    }
    Flow::Continue
}

/// Runs one turn; returns what the user typed during it (the lines to send next, in order, and
/// the one to pre-fill the prompt with).
async fn run_turn(setup: &mut Setup, ui: &Arc<ReplUi>, prompt: &str) -> Typed {
    let style = ui.style;
    self::mcp_reload::before_turn(setup, style).await;
    // A custom command attaches its own `@file` mentions, once expanded.
    let attached = match setup.agent.custom_command(prompt) {
        Some(_) => crate::agent::Attached {
            prompt: prompt.to_string(),
            ..Default::default()
        },
        None => crate::agent::attach_files(&setup.paths.project_root, prompt),
    };
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
        .run_input(prompt, ui.as_ref(), ui.as_ref(), &cancel)
        .await;
    watcher.abort();
    let typed = ui.end_turn();
    let after = setup.agent.usage();
    let turn = after.since(before);
    let context = setup.agent.context_usage().await;
    stdout_line(self::session_commands::footer(
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
                run.requests
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
    if let Some(line) = setup.add_dirs_line() {
        stdout_line(style.dim(&line));
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
        self::context::recent(setup.agent.history(), style);
    }
}

fn new_editor(setup: &Setup) -> Result<LineEditor, TerminalError> {
    // Tab shows the candidates as a list (with each command's description), not in place.
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor = LineEditor::with_config(config).map_err(TerminalError::Editor)?;
    let mut commands: Vec<(String, String)> = COMMANDS
        .iter()
        .map(|(name, help)| (name.to_string(), help.to_string()))
        .collect();
    commands.extend(self::extension_commands::completion_entries(&setup.agent));
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
