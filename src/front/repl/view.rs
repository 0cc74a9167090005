//! The REPL's side of a running turn: [`ReplUi`] receives the agent's events, has [`TurnView`]
//! (the state) say what to paint, and paints it on the [`Screen`] (the terminal); it asks the
//! permission questions (and, in `mcp_dialogs`, the MCP servers' questions) with the state they
//! share between events.
//!
//! One question has the terminal at a time, whoever asks (the agent, a sub-agent, an MCP
//! server): [`ReplUi::question`] hands out the floor in the order the questions came, the next
//! one saying how many still wait. While a question is open the key reader stays paused and the
//! events of agents still at work are held, then painted when it is answered: nothing writes
//! into an open question and no key meant for it goes to the line typed ahead.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;

use super::approval::{self, Choice};
use super::screen::Screen;
use super::turn::{Paint, TurnView};
use super::turn_keys::{TurnKeys, Typed};
use crate::session::{
    AgentEvent, Approval, ApprovalRequest, Approver, EventSink, Live, PlanAnswer, PlanRequest,
    QuestionAnswer, QuestionRequest,
};
use crate::term;
use crate::ui::output::{stdout_line, terminal_width};
use crate::ui::style::Style;
use crate::ui::term::Term;

/// What one paint writes at most before it looks whether Ctrl-C came.
const PAINT_CHUNK: usize = 64 * 1024;

/// Renders agent events in the terminal and asks the user for permissions (and, in
/// `mcp_dialogs`, the questions of MCP servers).
pub(super) struct ReplUi {
    pub(super) style: Style,
    /// The session, for a rule "always" keeps in a settings file.
    live: Live,
    pub(super) screen: Arc<Screen>,
    state: Mutex<UiState>,
    /// MCP servers' questions, one at a time (`mcp_dialogs`).
    pub(super) dialogs: super::dialog_queue::DialogQueue,
    /// Who has the terminal for a question (fair: in the order they came).
    floor: tokio::sync::Mutex<()>,
    /// Questions waiting for the floor.
    waiting: AtomicUsize,
    /// Rows printed under the open question since it was drawn (hints, questions waiting):
    /// what its collapse must wipe besides its frame.
    printed_under: Arc<AtomicUsize>,
}

/// The floor for one question: the terminal is the question's until this is dropped, when the
/// held events are painted and the spinner and the key reader come back.
pub(super) struct Question<'a> {
    ui: &'a ReplUi,
    _floor: tokio::sync::MutexGuard<'a, ()>,
}

impl Drop for Question<'_> {
    fn drop(&mut self) {
        self.ui.question_done();
    }
}

struct UiState {
    view: TurnView,
    cancel: Option<CancellationToken>,
    /// Keys typed during the turn (Esc interrupts, the rest is queued for after it).
    keys: Option<TurnKeys>,
    /// A question has the terminal: what events paint waits in `held`.
    asking: bool,
    held: Vec<Term>,
}

fn width() -> usize {
    terminal_width().unwrap_or(80)
}

impl ReplUi {
    pub(super) fn new(style: Style, live: Live) -> Self {
        let view = TurnView::new(style, live.project_root().clone());
        Self {
            style,
            live,
            screen: Screen::new(style),
            state: Mutex::new(UiState {
                view,
                cancel: None,
                keys: None,
                asking: false,
                held: Vec::new(),
            }),
            dialogs: super::dialog_queue::DialogQueue::default(),
            floor: tokio::sync::Mutex::new(()),
            waiting: AtomicUsize::new(0),
            printed_under: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, UiState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn begin_turn(&self, cancel: CancellationToken) {
        let screen = self.screen.clone();
        let on_change = Box::new(move |typed: &Typed| screen.typed(&typed.lines, &typed.partial));
        let mut state = self.lock();
        state.keys = Some(TurnKeys::start(cancel.clone(), on_change));
        state.view.begin(cancel.clone());
        state.cancel = Some(cancel);
        drop(state);
        self.screen.begin("thinking");
        self.dialogs.open();
    }

    /// The running turn's cancel, if a turn runs.
    pub(super) fn turn_cancel(&self) -> Option<CancellationToken> {
        self.lock().cancel.clone()
    }

    /// Interrupts the turn running now, if any (Ctrl-C in an MCP server's question).
    pub(super) fn interrupt_turn(&self) {
        if let Some(cancel) = &self.lock().cancel {
            cancel.cancel();
        }
    }

    /// Ends the turn; returns what the user typed meanwhile (sent next, in order).
    pub(super) fn end_turn(&self) -> Typed {
        let skipped = self.dialogs.close();
        let mut state = self.lock();
        let typed = state.keys.take().map(TurnKeys::finish).unwrap_or_default();
        let rest = state.view.settle(width());
        self.screen.print(rest);
        self.screen.end();
        if skipped > 0 {
            stdout_line(self.style.dim(&format!(
                "(declined {skipped} more MCP server question(s) without asking)"
            )));
        }
        state.cancel = None;
        typed
    }

    /// The session's changes to files, one diff per file (`/diff`).
    pub(super) fn session_diff(&self) -> Vec<(String, String)> {
        self.lock().view.changes.diff()
    }

    /// Forgets the changes noted so far (`/clear`).
    pub(super) fn clear_changes(&self) {
        self.lock().view.changes.clear();
    }

    /// What the last tool call returned, and its call (`/expand`).
    pub(super) fn last_call(&self) -> (Option<String>, Option<(String, serde_json::Value)>) {
        let state = self.lock();
        (
            state.view.last_output.clone(),
            state.view.last_input.clone(),
        )
    }

    /// Notes that a tool wrote files (the `@` completion index is stale).
    pub(super) fn wrote_files(&self) -> bool {
        self.lock().view.changes.take_written()
    }

    /// Waits for the floor (the questions before this one answered), then paints what is held
    /// and hands the terminal over; the returned guard gives it back.
    pub(super) async fn question(&self) -> Question<'_> {
        let waiting = self.waiting.fetch_add(1, Ordering::SeqCst) + 1;
        let floor = match self.floor.try_lock() {
            Ok(floor) => floor,
            Err(_) => {
                // Said under the open question, whose keys still answer it.
                stdout_line(self.style.dim(&format!("  ({})", waiting_words(waiting))));
                self.printed_under.fetch_add(1, Ordering::SeqCst);
                self.floor.lock().await
            }
        };
        let others = self.waiting.fetch_sub(1, Ordering::SeqCst) - 1;
        let mut state = self.lock();
        let rest = state.view.settle(width());
        let held = std::mem::take(&mut state.held);
        state.asking = true;
        // The question needs the keys: the reader is paused until the guard goes.
        if let Some(keys) = &state.keys {
            keys.pause();
        }
        drop(state);
        for text in held {
            self.screen.print(text);
        }
        self.screen.print(rest);
        self.screen.hide();
        if others > 0 {
            stdout_line(self.style.dim(&format!("  ({})", waiting_words(others))));
        }
        Question {
            ui: self,
            _floor: floor,
        }
    }

    /// The question is answered: what was held is painted, the spinner and the key reader
    /// come back.
    fn question_done(&self) {
        let mut state = self.lock();
        state.asking = false;
        let held = std::mem::take(&mut state.held);
        if let Some(keys) = &state.keys {
            keys.resume();
        }
        let cancel = state.cancel.clone();
        drop(state);
        self.screen.show();
        for text in held {
            self.paint(text, cancel.as_ref());
        }
    }

    /// Prints `text`; a huge paint goes out in pieces, so that Ctrl-C stops it.
    fn paint(&self, text: Term, cancel: Option<&CancellationToken>) {
        for piece in text.into_chunks(PAINT_CHUNK) {
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                return;
            }
            self.screen.print(piece);
        }
    }
}

impl EventSink for ReplUi {
    fn emit(&self, event: AgentEvent) {
        let mut state = self.lock();
        let cancel = state.cancel.clone();
        if cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            state.view.stop();
        }
        let paints = state.view.apply(event, width());
        // The spinner's words first: the status area drawn under the text already says them.
        let mut texts = Vec::new();
        for paint in paints {
            match paint {
                Paint::Text(text) => texts.push(text),
                Paint::Activity(label) => self.screen.activity(&label),
                Paint::Detail(detail) => self.screen.detail(&detail),
                Paint::Agents(rows) => self.screen.agents(rows),
                Paint::Todos(row) => self.screen.todos(row),
            }
        }
        if state.asking {
            // Another agent's work goes on while a question is open: painted after it.
            state.held.extend(texts);
            return;
        }
        drop(state);
        for text in texts {
            self.paint(text, cancel.as_ref());
        }
    }
}

#[async_trait]
impl Approver for ReplUi {
    fn orders_questions(&self) -> bool {
        true
    }

    async fn approve(&self, request: &ApprovalRequest) -> Option<Approval> {
        let style = self.style;
        let floor = self.question().await;
        let cancel = self.lock().cancel.clone();
        self.lock().view.previewed = request.preview.is_some();
        approval::forget_typed_ahead();
        let frame = approval::question(style, request, width());
        let frame_rows: usize = frame.iter().map(|line| rows_of(line, width())).sum();
        for line in frame {
            stdout_line(line);
        }
        self.printed_under.store(0, Ordering::SeqCst);
        let session_rule = request.session_rule.clone();
        let ask_cancel = cancel.clone();
        let under = self.printed_under.clone();
        let answer =
            tokio::task::spawn_blocking(move || ask(style, &session_rule, ask_cancel, &under))
                .await
                .ok()
                .flatten();
        if let Some((answer @ (Approval::Once | Approval::Deny), Keep::Session)) = &answer {
            let rows = frame_rows + self.printed_under.load(Ordering::SeqCst);
            if collapse(style, request, answer, rows) {
                // The diff went with the frame: the call's line shows it.
                self.lock().view.previewed = false;
            }
        }
        drop(floor);
        match answer {
            Some((answer, keep)) => {
                if keep != Keep::Session && !request.session_rule.is_empty() {
                    match self
                        .live
                        .keep_rule(&request.session_rule, keep == Keep::User)
                    {
                        Ok(file) => stdout_line(style.dim(&format!(
                            "  kept {} in {file}",
                            approval::one_row(&request.session_rule)
                        ))),
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

    async fn approve_plan(&self, request: &PlanRequest) -> Option<PlanAnswer> {
        self.ask_plan(request).await
    }

    async fn ask_questions(&self, request: &QuestionRequest) -> Option<QuestionAnswer> {
        self.ask_user(request).await
    }
}

/// The terminal rows `line` takes at `width` columns.
fn rows_of(line: &Term, width: usize) -> usize {
    crate::ui::markdown::term_width(line)
        .max(1)
        .div_ceil(width.max(1))
}

/// An answered question's frame (and what was printed under it, `rows` in all) wiped when it
/// is all on the screen: a yes leaves one line, `● bash(cargo test)  ✓ approved once`; a no
/// leaves nothing, the call's own line saying `✗ denied by you`. Whether it was wiped.
fn collapse(style: Style, request: &ApprovalRequest, answer: &Approval, rows: usize) -> bool {
    let fits = crate::ui::output::terminal_height().is_some_and(|height| rows < height);
    if !crate::ui::output::stdout_is_terminal() || !fits {
        return false;
    }
    crate::ui::output::stdout(Term::wipe_rows_above(rows));
    if matches!(answer, Approval::Once) {
        let room = width().saturating_sub(22).max(20);
        let (summary, _) =
            crate::ui::render::call_summary_within(&request.tool, &request.input, room);
        stdout_line(term![
            style.cyan("●"),
            " ",
            style.dim(&summary),
            "  ",
            style.green("✓"),
            " ",
            style.dim("approved once")
        ]);
    }
    true
}

/// `1 more question waiting`, `2 more questions waiting`.
fn waiting_words(n: usize) -> String {
    match n {
        1 => "1 more question waiting".to_string(),
        n => format!("{n} more questions waiting"),
    }
}

/// The answer read on a blocking thread: `None` on Ctrl-C.
fn ask(
    style: Style,
    session_rule: &str,
    cancel: Option<CancellationToken>,
    printed: &AtomicUsize,
) -> Option<(Approval, Keep)> {
    let hint = |key: &str| {
        stdout_line(approval::not_a_choice(style, key));
        printed.fetch_add(1, Ordering::SeqCst);
    };
    loop {
        let (choice, next) = approval::read_choice(cancel.as_ref(), &hint);
        match choice {
            Choice::Once => return Some((Approval::Once, Keep::Session)),
            Choice::No => return Some((Approval::Deny, Keep::Session)),
            Choice::Interrupted => return None,
            Choice::Always => {
                if session_rule.is_empty() {
                    return Some((Approval::Always, Keep::Session));
                }
                let mut editor = rustyline::DefaultEditor::new().ok()?;
                let typed = next.map(String::from).unwrap_or_default();
                let keep = match editor.readline_with_initial(&keep_question(), (&typed, "")) {
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
            Choice::Tell => {
                let mut editor = rustyline::DefaultEditor::new().ok()?;
                let typed = next.map(String::from).unwrap_or_default();
                let prompt = "  say what to do instead (Enter alone: back) › ";
                match editor.readline_with_initial(prompt, (&typed, "")) {
                    Ok(words) if !words.trim().is_empty() => {
                        let words = words.trim().to_string();
                        return Some((Approval::Instead(words), Keep::Session));
                    }
                    Ok(_) => stdout_line(style.dim("  choose 1-4 (Esc: no)")),
                    Err(ReadlineError::Interrupted) => return None,
                    Err(_) => return Some((Approval::Deny, Keep::Session)),
                }
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

fn keep_question() -> String {
    "  keep it: [enter] this session  [p] in .ling/settings.json  [u] in your settings.json › "
        .to_string()
}
