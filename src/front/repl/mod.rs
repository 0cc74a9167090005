//! The interactive REPL: rustyline with persistent history and multi-line input (end a line with
//! `\`), slash commands, streamed answers, one line per tool call, permission questions, and
//! Ctrl-C that interrupts the running turn (a second Ctrl-C at an empty prompt, or Ctrl-D, exits).

mod approval;
mod context;
mod dialog_queue;
mod extension_commands;
mod line_editor;
mod mcp_dialogs;
mod screen;
mod session_commands;
mod session_diff;
mod slash;
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
use self::slash::{COMMANDS, McpSlash, PermissionsSlash, Slash};
use self::turn_keys::Typed;
use self::view::ReplUi;
use crate::mcp::{ServerState, ServerStatus};
use crate::session::{
    Command, EndReason, EventSink, Host, Io, McpCommand, NonInteractive, Plugs, Reply, RunEnd,
};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::{RunOutcome, TerminalError};

/// What `/init` asks the model to do.
const INIT_PROMPT: &str = include_str!("../../prompts/init.md");

type LineEditor = Editor<ReplHelper, DefaultHistory>;

/// Runs the REPL until the user leaves (Ctrl-D, `/exit`) or a hook stops the session; `pick`
/// (`ling --resume` without an id) opens the session picker first.
pub async fn run(
    mut host: Host,
    first_prompt: Option<String>,
    pick: bool,
) -> Result<RunOutcome, TerminalError> {
    crate::ui::signals::restore_terminal_on_panic();
    let style = Style::for_repl();
    if style.color {
        crate::ui::markdown::set_theme(self::theme::resolve(host.settings().theme));
        // Off the REPL's thread: the first code block of an answer then paints at once.
        std::thread::spawn(crate::ui::markdown::warm_up);
    }
    let history_path = host.paths().history_file();
    let mut editor = new_editor(&host)?;
    let _ = editor.load_history(&history_path);
    print_banner(&host, style);

    let ui = Arc::new(ReplUi::new(style, host.live()));
    let mcp = host.mcp().clone();
    tokio::spawn(crate::ui::signals::exit_on_termination(async move {
        mcp.shutdown().await;
    }));
    host.plug(Plugs {
        asker: Some(ui.clone()),
        ..Plugs::default()
    });
    if pick {
        self::context::resume(&mut host, "", style, ui.as_ref()).await;
    }
    if let Reply::Stopped(reason) = submit(&mut host, Command::Start, ui.as_ref()).await {
        stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
        submit(&mut host, Command::End(EndReason::Other), ui.as_ref()).await;
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
                notices.report(&host, style);
                let prompt = line_editor::prompt(style, host.status().mode);
                let idle = host.idle_notice();
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
                        let mode = line_editor::next_mode(host.status().mode);
                        submit(&mut host, Command::SetMode(mode), ui.as_ref()).await;
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
            let slash = slash::parse(&line, |line| host.is_custom_command(line));
            match slash_command(&mut host, slash, style, &ui).await {
                Flow::Continue => continue,
                Flow::Exit => break,
                Flow::Send(prompt) => prompt,
            }
        } else {
            line
        };
        notices.report(&host, style);
        let ahead = run_turn(&mut host, &ui, &prompt).await;
        // Typed ahead: each line shown as if at the prompt when its turn comes, then sent.
        for line in ahead.lines {
            queue.push_back(line);
        }
        typed = ahead.partial;
        if let Some(next) = queue.front() {
            stdout_line(term![style.dim("> "), next]);
        }
    }
    stdout_line(style.dim(&format!("resume with: ling --resume {}", host.session_id())));
    submit(
        &mut host,
        Command::End(EndReason::PromptInputExit),
        ui.as_ref(),
    )
    .await;
    Ok(RunOutcome::Success)
}

/// One command of the REPL's own (not a prompt): nothing to interrupt, nobody asked about
/// trust. A failure is said in red and comes back as [`Reply::Done`].
async fn submit(host: &mut Host, command: Command, sink: &dyn EventSink) -> Reply {
    let cancel = CancellationToken::new();
    let io = Io {
        sink,
        approver: &NonInteractive,
        cancel: &cancel,
        trust: None,
    };
    match host.submit(command, &io).await {
        Ok(reply) => reply,
        Err(e) => {
            stdout_line(term![Style::for_repl().red("error:"), " ", e.to_string()]);
            Reply::Done
        }
    }
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
    fn report(&self, host: &Host, style: Style) {
        for line in self.changes(host.mcp().statuses(), style) {
            stdout_line(line);
        }
    }
}

fn print_mcp_status(host: &Host, style: Style) {
    let statuses = host.mcp().statuses();
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

async fn slash_command(host: &mut Host, slash: Slash, style: Style, ui: &ReplUi) -> Flow {
    match slash {
        Slash::Exit => return Flow::Exit,
        Slash::Help => help(host, style).await,
        Slash::Agents => self::extension_commands::print_agents(host, style),
        Slash::Skills => self::extension_commands::print_skills(host, style),
        Slash::Mcp(mcp) => mcp_command(host, mcp, style, ui).await,
        Slash::Tools => print_tools(host, style).await,
        Slash::Clear => {
            let reply = submit(host, Command::Clear, ui).await;
            ui.clear_changes();
            stdout_line(style.dim("conversation cleared; new session started"));
            if let Reply::Stopped(reason) = reply {
                stdout_line(term![style.yellow("stopped by hook:"), " ", reason]);
                return Flow::Exit;
            }
        }
        Slash::Compact(instructions) => {
            self::context::compact(host, &instructions, style, ui).await
        }
        Slash::Context => self::context::context(host, style).await,
        Slash::Resume(id) => self::context::resume(host, &id, style, ui).await,
        Slash::Mode(name) => self::session_commands::mode(host, name.as_deref(), style, ui).await,
        Slash::Status => self::session_commands::status(host, style).await,
        Slash::Cost => self::session_commands::cost_report(host, style),
        Slash::Permissions(command) => permissions(host, command, style, ui).await,
        Slash::Diff => print_diff(ui, style),
        Slash::Init => return Flow::Send(INIT_PROMPT.to_string()),
        Slash::Theme(setting) => theme(setting, style),
        Slash::ThemeUsage => stdout_line("usage: /theme, or /theme dark|light|auto"),
        Slash::Expand => expand(ui, style),
        Slash::Hooks => {
            let listing = host.hooks_listing();
            if listing.is_empty() {
                stdout_line("no hooks loaded (~/.ling/hooks.json, .ling/hooks.json)");
            } else {
                stdout_line(crate::hooks::render_listing(&listing, false).trim_end());
            }
        }
        Slash::Model(None) => stdout_line(format!("model: {}", host.model())),
        Slash::Model(Some(model)) => {
            if let Reply::Done = submit(host, Command::SetModel(model.clone()), ui).await
                && host.model() == model
            {
                stdout_line(format!("model set to {model}"));
            }
        }
        Slash::McpPrompt(line) => {
            if let Some(prompt) = self::mcp_dialogs::expand_prompt_command(host, &line, style).await
            {
                return Flow::Send(prompt);
            }
        }
        Slash::Custom(line) => return Flow::Send(line),
        Slash::Unknown(other) => stdout_line(term![
            style.yellow("?"),
            format!(" unknown command {other}; /help lists the commands")
        ]),
    }
    Flow::Continue
}

async fn help(host: &Host, style: Style) {
    stdout_line(style.bold("Commands"));
    for (name, help) in COMMANDS {
        stdout_line(format!("  {name:<10} {help}"));
    }
    stdout_line(
        "\nEnd a line with \\ to continue on the next one. Ctrl-C interrupts a running turn.",
    );
    self::mcp_dialogs::print_prompt_help(host, style).await;
    self::extension_commands::print_help(host, style);
}

async fn mcp_command(host: &mut Host, mcp: McpSlash, style: Style, ui: &ReplUi) {
    let command = match mcp {
        McpSlash::Status => return print_mcp_status(host, style),
        McpSlash::Usage => {
            return stdout_line(
                "usage: /mcp, /mcp reconnect NAME, /mcp login NAME, /mcp enable NAME or /mcp disable NAME",
            );
        }
        McpSlash::Login(name) => McpCommand::Login {
            login: crate::ui::login::browser_login(&name, false, host.child_env()),
            server: name,
        },
        McpSlash::Reconnect(name) => {
            stdout_line(style.dim(&format!("reconnecting {name}...")));
            McpCommand::Reconnect(name)
        }
        McpSlash::Enable(name) => McpCommand::Enable(name),
        McpSlash::Disable(name) => McpCommand::Disable(name),
    };
    let cancel = CancellationToken::new();
    let io = Io::unattended(ui, &cancel);
    match host.submit(Command::Mcp(command), &io).await {
        Ok(_) => print_mcp_status(host, style),
        Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
    }
}

async fn print_tools(host: &mut Host, style: Style) {
    host.sync_tools().await;
    let width = crate::ui::output::terminal_width().unwrap_or(80);
    for tool in host.tools().iter() {
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

async fn permissions(host: &mut Host, command: PermissionsSlash, style: Style, ui: &ReplUi) {
    match command {
        PermissionsSlash::List => self::session_commands::list_rules(host, style),
        PermissionsSlash::Usage => {
            stdout_line("usage: /permissions, or /permissions allow|deny|remove RULE")
        }
        PermissionsSlash::Add { allow, rule } => {
            let verb = if allow { "allow" } else { "deny" };
            let command = Command::AddRule {
                allow,
                rule: rule.clone(),
            };
            if let Reply::Done = submit(host, command, ui).await
                && host
                    .permission_rules()
                    .iter()
                    .any(|(a, r, _)| *a == allow && *r == rule)
            {
                stdout_line(format!("{verb} {rule} (for this session)"));
            }
        }
        PermissionsSlash::Remove(rule) => {
            match submit(host, Command::RemoveRule(rule.clone()), ui).await {
                Reply::NoSuchRule => stdout_line(format!(
                    "no rule is written {rule:?}; /permissions lists them"
                )),
                _ => stdout_line(format!("removed {rule} (for this session)")),
            }
        }
    }
}

fn print_diff(ui: &ReplUi, style: Style) {
    let diffs = ui.session_diff();
    if diffs.is_empty() {
        stdout_line(
            style.dim("no file changed by this session (commands run by bash are not tracked)"),
        );
    }
    for (summary, _) in &diffs {
        stdout_line(term!["  ", style.bold(summary)]);
    }
    for (_, diff) in diffs {
        stdout_line(crate::ui::render::styled_display(style, &diff));
    }
}

fn theme(setting: Option<crate::config::ThemeSetting>, style: Style) {
    if let Some(setting) = setting {
        crate::ui::markdown::set_theme(self::theme::resolve(setting));
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

fn expand(ui: &ReplUi, style: Style) {
    match ui.last_call() {
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
    }
}

/// Runs one turn; returns what the user typed during it (the lines to send next, in order, and
/// the one to pre-fill the prompt with).
async fn run_turn(host: &mut Host, ui: &Arc<ReplUi>, prompt: &str) -> Typed {
    let style = ui.style;
    // Before the turn's view takes the terminal: MCP config edited since the last turn (the
    // trust question asked again for a changed project file), a model chosen meanwhile.
    let quiet = CancellationToken::new();
    let prelude = Prelude { style };
    let asker = self::context::AskTrust;
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
    stdout_line(self::session_commands::footer(
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
                    .dim(&self::turn::mcp_reloaded(&added, &removed, &restarted)),
            ),
            _ => {}
        }
    }
}

fn print_banner(host: &Host, style: Style) {
    stdout_line(term![
        style.bold("Ling"),
        concat!(" ", env!("CARGO_PKG_VERSION"), " · model "),
        style.cyan(host.model()),
        " · ",
        style.dim(&crate::redact::url(&host.settings().base_url))
    ]);
    stdout_line(style.dim(&format!(
        "{} · /help for commands · Ctrl-D to exit",
        host.paths().project_root.display()
    )));
    for warning in host.warnings() {
        stdout_line(term![style.yellow("warning:"), " ", warning]);
    }
    if let Some(line) = host.add_dirs_line() {
        stdout_line(style.dim(&line));
    }
    if let Some(notice) = host.trust_notice() {
        stdout_line(term![style.yellow("note:"), " ", notice]);
    }
    if host.resumed() {
        stdout_line(style.dim(&format!(
            "resumed session {} ({} messages)",
            host.session_id(),
            host.history().len()
        )));
        self::context::recent(host.history(), style);
    }
}

fn new_editor(host: &Host) -> Result<LineEditor, TerminalError> {
    // Tab shows the candidates as a list (with each command's description), not in place.
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .build();
    let mut editor = LineEditor::with_config(config).map_err(TerminalError::Editor)?;
    let mut commands: Vec<(String, String)> = COMMANDS
        .iter()
        .map(|(name, help)| (name.to_string(), help.to_string()))
        .collect();
    commands.extend(self::extension_commands::completion_entries(host));
    let model = host.llm_config();
    editor.set_helper(Some(ReplHelper::new(
        commands,
        host.paths().project_root.clone(),
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
