//! The REPL's view of a running turn: [`ReplUi`] renders the agent's events (the answer as
//! markdown, one line per tool call with its preview, spinners) and asks the permission
//! questions, with the state they share between events.

use std::sync::Mutex;

use async_trait::async_trait;
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;

use super::session_diff::SessionDiff;
use super::spinner::Spinner;
use super::tool_view::{self, Finished};
use super::turn_keys::TurnKeys;
use crate::agent::{AgentEvent, Approval, ApprovalRequest, Approver, EventSink};
use crate::config::settings_edit::add_allow_rule;
use crate::config::{Paths, ProjectConfig, SETTINGS_FILE, TrustStatus};
use crate::term;
use crate::ui::markdown::MarkdownStream;
use crate::ui::output::{stdout, stdout_line, terminal_width};
use crate::ui::render::ToolLines;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// Renders agent events in the terminal and asks the user for permissions (and, in
/// `mcp_dialogs`, the questions of MCP servers).
pub(super) struct ReplUi {
    pub(super) style: Style,
    paths: Paths,
    state: Mutex<UiState>,
    /// MCP servers' questions, one at a time (`mcp_dialogs`).
    pub(super) dialogs: super::dialog_queue::DialogQueue,
}

#[derive(Default)]
struct UiState {
    spinner: Option<Spinner>,
    /// stdout has text not yet ended by a newline.
    open_line: bool,
    tool_lines: ToolLines,
    cancel: Option<CancellationToken>,
    /// The answer being streamed, painted block by block.
    markdown: Option<MarkdownStream>,
    /// The question just answered showed the call's change (its diff is not shown again).
    previewed: bool,
    /// What the last tool call returned, for `/expand`.
    last_output: Option<String>,
    /// A call that runs and whose line is not printed yet (it is, with its outcome).
    pending_call: Option<(String, Term)>,
    /// The files the session changed, for `/diff`.
    changes: SessionDiff,
    /// Keys typed during the turn (Esc interrupts, the rest pre-fills the next prompt).
    keys: Option<TurnKeys>,
}

impl ReplUi {
    pub(super) fn new(style: Style, paths: Paths) -> Self {
        Self {
            style,
            paths,
            state: Mutex::new(UiState::default()),
            dialogs: super::dialog_queue::DialogQueue::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, UiState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn begin_turn(&self, cancel: CancellationToken) {
        let mut state = self.lock();
        state.keys = Some(TurnKeys::start(cancel.clone()));
        state.cancel = Some(cancel);
        drop(state);
        self.dialogs.open();
    }

    /// Interrupts the turn running now, if any (Ctrl-C in an MCP server's question).
    pub(super) fn interrupt_turn(&self) {
        if let Some(cancel) = &self.lock().cancel {
            cancel.cancel();
        }
    }

    /// Ends the turn; returns what the user typed meanwhile (for the next prompt).
    pub(super) fn end_turn(&self) -> String {
        let skipped = self.dialogs.close();
        let mut state = self.lock();
        let typed = state.keys.take().map(TurnKeys::finish).unwrap_or_default();
        state.spinner = None;
        Self::finish_answer(&mut state);
        if state.open_line {
            stdout("\n");
            state.open_line = false;
        }
        if skipped > 0 {
            stdout_line(self.style.dim(&format!(
                "(declined {skipped} more MCP server question(s) without asking)"
            )));
        }
        state.cancel = None;
        typed
    }

    /// The session's changes to files, one diff per file (`/diff`).
    pub(super) fn session_diff(&self) -> Vec<String> {
        self.lock().changes.diff()
    }

    /// Forgets the changes noted so far (`/clear`).
    pub(super) fn clear_changes(&self) {
        self.lock().changes.clear();
    }

    pub(super) fn last_output(&self) -> Option<String> {
        self.lock().last_output.clone()
    }

    /// [`ReplUi::settle`] before a question.
    pub(super) fn settle_now(&self) {
        let mut state = self.lock();
        Self::settle(&mut state);
        // The question needs the terminal; the next event takes it back.
        if let Some(keys) = &state.keys {
            keys.pause();
        }
    }

    /// Stops the spinner and ends an open text line before something else is printed.
    fn settle(state: &mut UiState) {
        state.spinner = None;
        Self::finish_answer(state);
        state.tool_lines.interrupt();
        if state.open_line {
            stdout("\n");
            state.open_line = false;
        }
        if let Some((_, line)) = state.pending_call.take() {
            stdout_line(line);
        }
    }
}

impl ReplUi {
    /// Paints what is left of a streamed answer.
    fn finish_answer(state: &mut UiState) {
        if let Some(mut markdown) = state.markdown.take() {
            let rest = markdown.finish();
            if !rest.is_empty() {
                state.spinner = None;
                if state.open_line {
                    stdout("\n");
                    state.open_line = false;
                }
                stdout(rest);
            }
        }
    }
}

impl EventSink for ReplUi {
    fn emit(&self, event: AgentEvent) {
        let style = self.style;
        let mut state = self.lock();
        if let Some(keys) = &state.keys {
            keys.resume();
        }
        match event {
            AgentEvent::RequestStarted { .. } => {
                Self::settle(&mut state);
                state.spinner = Some(Spinner::start("thinking", style));
            }
            AgentEvent::TextDelta(text) => {
                // Each markdown block is painted once complete; the spinner runs meanwhile.
                let markdown = state.markdown.get_or_insert_with(|| {
                    MarkdownStream::new(style, terminal_width().unwrap_or(80))
                });
                let painted = markdown.push(&text);
                let holding = markdown.is_holding();
                if !painted.is_empty() {
                    state.spinner = None;
                    if state.open_line {
                        stdout("\n");
                        state.open_line = false;
                    }
                    stdout(painted);
                    if holding {
                        state.spinner = Some(Spinner::start("writing", style));
                    }
                }
            }
            AgentEvent::ReasoningDelta(text) => {
                state.spinner = None;
                stdout(style.dim(&text));
                state.open_line = !text.ends_with('\n');
            }
            AgentEvent::ToolCallBegin { id, name, input } => {
                // The call's line is printed with its outcome; meanwhile a spinner says what
                // runs (and a command's last line). A question prints the line first.
                Self::settle(&mut state);
                state
                    .changes
                    .before_call(&self.paths.project_root, &name, &input);
                let line = state.tool_lines.begin(style, &id, &name, &input);
                state.tool_lines.interrupt();
                state.pending_call = Some((id, line));
                let label = crate::ui::render::call_summary(&name, &input);
                state.spinner = Some(Spinner::start(&label, style));
            }
            AgentEvent::ToolOutputLine { line, .. } => {
                if let Some(spinner) = &state.spinner {
                    spinner.set_detail(&line);
                }
            }
            AgentEvent::ToolCallEnd {
                id,
                name,
                content,
                is_error,
                display,
                total_lines,
            } => {
                state.spinner = None;
                if state
                    .pending_call
                    .as_ref()
                    .is_some_and(|(call, _)| *call == id)
                {
                    state.pending_call = None;
                }
                let call = Finished {
                    name: &name,
                    content: &content,
                    is_error,
                    display: display.as_deref(),
                    total_lines,
                };
                // The outcome goes on the call's own line when it is still open; else the call
                // is repeated on a line of its own.
                let continues = state.tool_lines.is_open(&id);
                let line = state
                    .tool_lines
                    .end_with(&id, tool_view::outcome(style, &call));
                if !continues && state.open_line {
                    stdout("\n");
                }
                stdout(line);
                state.open_line = false;
                for row in tool_view::preview(style, &call, terminal_width().unwrap_or(80)) {
                    stdout_line(row);
                }
                // A diff already shown in the question is not shown again.
                let previewed = std::mem::take(&mut state.previewed);
                if let (Some(display), false) = (&display, previewed && !is_error) {
                    stdout_line(crate::ui::render::styled_display(style, display));
                }
                state.last_output = Some(content);
            }
            AgentEvent::PermissionDenied { tool, message } => {
                Self::settle(&mut state);
                stdout_line(term![
                    "  ",
                    style.yellow("denied"),
                    " ",
                    tool,
                    ": ",
                    message
                ]);
            }
            AgentEvent::Hook(notice) => {
                Self::settle(&mut state);
                stdout_line(term!["  ", crate::ui::print::hook_line(style, &notice)]);
            }
            AgentEvent::Retrying {
                attempt, reason, ..
            } => {
                state.spinner = None;
                stdout_line(style.dim(&format!("retrying (attempt {attempt}): {reason}")));
                state.spinner = Some(Spinner::start("thinking", style));
            }
            AgentEvent::Warning(text) => {
                Self::settle(&mut state);
                stdout_line(term![style.yellow("warning:"), " ", text]);
            }
            AgentEvent::McpStatus {
                server,
                state: server_state,
            } => {
                Self::settle(&mut state);
                let (status, detail) = server_state.report();
                let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
                stdout_line(style.dim(&format!("mcp {server}: {status}{detail}")));
            }
            AgentEvent::ToolProgress { message, .. } => {
                Self::settle(&mut state);
                stdout_line(term!["  ", style.dim(&message)]);
            }
            AgentEvent::CompactStarted { .. } => {
                Self::settle(&mut state);
                state.spinner = Some(Spinner::start("compacting the conversation", style));
            }
            AgentEvent::Compacted {
                trigger,
                pre_tokens,
                post_tokens,
            } => {
                Self::settle(&mut state);
                stdout_line(style.dim(&format!(
                    "conversation compacted ({trigger}): {pre_tokens} → {post_tokens} tokens"
                )));
            }
            AgentEvent::AssistantMessage { .. } | AgentEvent::TurnFinished { .. } => {
                state.spinner = None;
                Self::finish_answer(&mut state);
            }
        }
    }
}

#[async_trait]
impl Approver for ReplUi {
    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let style = self.style;
        let cancel = {
            let mut state = self.lock();
            Self::settle(&mut state);
            if let Some(keys) = &state.keys {
                keys.pause();
            }
            state.cancel.clone()
        };
        // The call's own line was printed just above; below it, all that line did not show
        // (the whole command, a new file's content), then the question naming its rule.
        let width = terminal_width().unwrap_or(80);
        self.lock().previewed = request.preview.is_some();
        for line in super::approval::details(style, request, width) {
            stdout_line(line);
        }
        let prompt = super::approval::question(style, &request.session_rule);
        let answer = tokio::task::spawn_blocking(move || {
            let mut editor = rustyline::DefaultEditor::new().ok()?;
            loop {
                match editor.readline(prompt.as_str()) {
                    Ok(line) => match line.trim().to_lowercase().as_str() {
                        "y" | "yes" | "" => return Some((Approval::Once, Keep::Session)),
                        "a" | "always" => {
                            let keep = match editor.readline(KEEP_QUESTION) {
                                Ok(line) => match line.trim().to_lowercase().as_str() {
                                    "p" => Keep::Project,
                                    "u" => Keep::User,
                                    _ => Keep::Session,
                                },
                                Err(ReadlineError::Interrupted) => return None,
                                Err(_) => Keep::Session,
                            };
                            return Some((Approval::Always, keep));
                        }
                        "n" | "no" => return Some((Approval::Deny, Keep::Session)),
                        "t" | "tell" => match editor.readline("  say what to do › ") {
                            Ok(words) if !words.trim().is_empty() => {
                                let words = words.trim().to_string();
                                return Some((Approval::Instead(words), Keep::Session));
                            }
                            Ok(_) => continue,
                            Err(ReadlineError::Interrupted) => return None,
                            Err(_) => return Some((Approval::Deny, Keep::Session)),
                        },
                        _ => continue,
                    },
                    Err(ReadlineError::Interrupted) => return None,
                    Err(_) => return Some((Approval::Deny, Keep::Session)),
                }
            }
        })
        .await
        .ok()
        .flatten();
        if let Some(keys) = &self.lock().keys {
            keys.resume();
        }
        match answer {
            Some((answer, keep)) => {
                if keep != Keep::Session {
                    match keep_rule(&self.paths, &request.session_rule, keep) {
                        Ok(file) => stdout_line(
                            style.dim(&format!("  kept {} in {file}", request.session_rule)),
                        ),
                        Err(e) => stdout_line(term![style.red("error:"), " ", e.to_string()]),
                    }
                }
                Some(answer)
            }
            None => {
                // Ctrl-C at the question: deny and interrupt the turn.
                if let Some(cancel) = cancel {
                    cancel.cancel();
                }
                Some(Approval::Deny)
            }
        }
    }
}

/// Where "always" keeps its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Session,
    Project,
    User,
}

const KEEP_QUESTION: &str =
    "  keep it: [enter] this session  [p] in .ling/settings.json  [u] in ~/.ling/settings.json › ";

/// Adds `rule` to the project's or the user's `settings.json`; returns the file as shown. The
/// project's file is part of what its trust covers: a folder trusted before the user's own
/// edit stays trusted (as `ling mcp add` does).
fn keep_rule(paths: &Paths, rule: &str, keep: Keep) -> Result<String, KeepError> {
    let user = keep == Keep::User;
    let file = if user {
        paths.user_file(SETTINGS_FILE)
    } else {
        paths.project_file(SETTINGS_FILE)
    };
    let before = (!user).then(|| ProjectConfig::read(paths)).transpose()?;
    add_allow_rule(&file, rule, user)?;
    if let Some(before) = before {
        let was_usable = match before.status() {
            TrustStatus::Trusted => true,
            TrustStatus::None => !before.is_user_config(),
            TrustStatus::Untrusted => false,
        };
        let mut after = ProjectConfig::read(paths)?;
        if was_usable && after.status() == TrustStatus::Untrusted {
            after.trust()?;
        }
    }
    Ok(paths.display(&file).into_owned())
}

/// Keeping a rule failed: the file could not be edited, or the folder's trust not kept.
#[derive(Debug, thiserror::Error)]
enum KeepError {
    #[error("the rule was not kept: {0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("the folder's trust could not be kept with the rule (run `ling trust`): {0}")]
    Trust(#[from] crate::config::TrustError),
}
