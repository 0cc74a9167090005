//! The interactive REPL: rustyline with persistent history and multi-line input (end a line with
//! `\`), slash commands, streamed answers, one line per tool call, permission questions, and
//! Ctrl-C that interrupts the running turn (a second Ctrl-C at an empty prompt, or Ctrl-D, exits).

mod agent_rows;
mod approval;
mod ask_user;
mod budget;
mod commands;
mod context;
mod dialog_queue;
mod extension_commands;
mod image_input;
mod line_editor;
mod mcp_dialogs;
mod mcp_status;
mod prompt;
mod rewind;
mod screen;
mod session_commands;
mod session_diff;
mod slash;
mod status;
mod status_line;
mod tasks;
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

use self::commands::{Flow, slash_command};
use self::line_editor::{ModePrompt, ReplHelper};
use self::mcp_status::ServerNotices;
use self::prompt::run_turn;
use self::slash::COMMANDS;
use self::turn_keys::Typed;
use self::view::ReplUi;
use crate::session::{Command, EndReason, EventSink, Host, Io, NonInteractive, Plugs, Reply};
use crate::term;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;
use crate::ui::{RunOutcome, TerminalError};

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
    let mut input = Input {
        editor: Some(editor),
        history: history_path,
        queue: first_prompt.into_iter().collect(),
        typed: String::new(),
        interrupted_once: false,
        described: false,
        status_line: status_line::StatusLine::default(),
    };
    let notices = ServerNotices::default();
    loop {
        // Background agents that ended meanwhile: their answers go to the model at once.
        while input.queue.is_empty() && host.background_ready() {
            let ahead = self::prompt::run_background_turn(&mut host, &ui).await;
            input.typed_ahead(ahead, style);
        }
        let Some(line) = input.next(&mut host, &ui, &notices, style).await? else {
            break;
        };
        // A pasted absolute path (`/Users/me/shot.png`) is a prompt, not a command.
        let prompt = if line.starts_with('/') && !image_input::starts_with_path(&line) {
            let slash = slash::parse(&line, |line| host.is_custom_command(line));
            match slash_command(&mut host, slash, style, &ui).await {
                Flow::Continue => continue,
                Flow::Prefill(text) => {
                    input.typed = text;
                    continue;
                }
                Flow::Exit => break,
                Flow::Send(prompt) => prompt,
            }
        } else {
            line
        };
        notices.report(&host, style);
        let ahead = run_turn(&mut host, &ui, &prompt).await;
        input.typed_ahead(ahead, style);
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

/// The prompt between turns: the line editor, the lines waiting to be sent (the first prompt,
/// what was typed during a turn), the text already typed at the prompt.
struct Input {
    /// `None` only while a line is being read on its blocking thread.
    editor: Option<LineEditor>,
    history: std::path::PathBuf,
    queue: std::collections::VecDeque<String>,
    typed: String,
    interrupted_once: bool,
    /// The last prompt was left by Shift-Tab, its mode said on the row above it.
    described: bool,
    /// Settings `statusLine`, shown above the prompt.
    status_line: status_line::StatusLine,
}

impl Input {
    /// The next line to act on (kept in the history); `None` when the user leaves.
    async fn next(
        &mut self,
        host: &mut Host,
        ui: &ReplUi,
        notices: &ServerNotices,
        style: Style,
    ) -> Result<Option<String>, TerminalError> {
        loop {
            if ui.wrote_files()
                && let Some(helper) = self.editor.as_ref().and_then(|e| e.helper())
            {
                helper.refresh_files();
            }
            let line = match self.queue.pop_front() {
                Some(line) => line,
                None => match self.read(host, ui, notices, style).await? {
                    Read::Line(line) => line,
                    Read::Again => continue,
                    Read::Leave => return Ok(None),
                },
            };
            // A continued line's `\` is the editor's, not the prompt's.
            let line = line.replace("\\\n", "\n").trim().to_string();
            if line.is_empty() {
                continue;
            }
            self.remember(&line);
            return Ok(Some(line));
        }
    }

    /// One line read at the prompt.
    async fn read(
        &mut self,
        host: &mut Host,
        ui: &ReplUi,
        notices: &ServerNotices,
        style: Style,
    ) -> Result<Read, TerminalError> {
        notices.report(host, style);
        // Not while Shift-Tab cycles: its mode is said in place on the row above.
        if !self.described {
            self.status_line.show(host, style).await;
        }
        let prompt = line_editor::prompt(style, host.status().mode);
        let idle = host.idle_notice();
        let Some(editor) = self.editor.take() else {
            return Ok(Read::Leave);
        };
        let (editor, result) = read_line(editor, prompt, std::mem::take(&mut self.typed)).await?;
        drop(idle);
        let helper = editor.helper();
        let read = match result {
            Ok(line) => {
                self.interrupted_once = false;
                self.described = false;
                Read::Line(match helper {
                    Some(helper) => helper.expand_pastes(line),
                    None => line,
                })
            }
            // Esc Esc at an empty prompt.
            Err(ReadlineError::Interrupted) if helper.is_some_and(ReplHelper::take_rewind) => {
                Read::Line("/rewind".into())
            }
            Err(ReadlineError::Interrupted)
                if let Some(line) = helper.and_then(ReplHelper::take_cycle) =>
            {
                // Shift-Tab: the next mode, said in place of the last one, and the line as it
                // was.
                let mode = line_editor::next_mode(host.status().mode);
                submit(host, Command::SetMode(mode), ui).await;
                line_editor::show_mode(style, mode, &line, self.described);
                self.described = true;
                self.typed = line;
                Read::Again
            }
            Err(ReadlineError::Interrupted) if self.interrupted_once => Read::Leave,
            Err(ReadlineError::Interrupted) => {
                self.interrupted_once = true;
                stdout_line(style.dim("(press Ctrl-C again or Ctrl-D to exit)"));
                Read::Again
            }
            Err(ReadlineError::Eof) => Read::Leave,
            Err(e) => return Err(TerminalError::Input(e)),
        };
        self.editor = Some(editor);
        Ok(read)
    }

    /// Keeps `line` in the history file.
    fn remember(&mut self, line: &str) {
        let Some(editor) = self.editor.as_mut() else {
            return;
        };
        let _ = editor.add_history_entry(line);
        // rustyline writes the file 0600 itself; its folder is made owner-only here.
        if let Some(parent) = self.history.parent() {
            let _ = crate::config::private_fs::create_dir(parent);
        }
        // Appended under rustyline's lock on the file, merged with what other sessions added
        // since (saving would write back this session's copy over theirs).
        let _ = editor.append_history(&self.history);
    }

    /// What was typed during a turn: each line shown as if at the prompt when its turn comes,
    /// then sent; the unfinished one back at the prompt.
    fn typed_ahead(&mut self, ahead: Typed, style: Style) {
        self.queue.extend(ahead.lines);
        self.typed = ahead.partial;
        if let Some(next) = self.queue.front() {
            stdout_line(term![style.dim("> "), next]);
        }
    }
}

/// What reading the prompt came to.
enum Read {
    Line(String),
    /// Nothing to act on (Shift-Tab, a first Ctrl-C): read again.
    Again,
    /// Ctrl-D, a second Ctrl-C.
    Leave,
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
