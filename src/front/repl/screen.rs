//! The REPL's terminal during a turn: what is printed (on stdout) and, below it, one status area
//! (on stderr, when it is a terminal): the turn's one spinner, whose label says what Ling waits
//! for (`thinking`, the running call, `writing a table (12 rows)`) with its seconds and
//! `esc to interrupt`, under it the to-do list's row (the item under way, how many are done),
//! and the lines typed ahead, queued to be sent.
//!
//! Printing never waits on a timer: [`Screen::print`] takes the terminal, wipes the status area,
//! writes, and draws the area again at once; a ticker thread redraws it every [`FRAME`] to move
//! the spinner, and is woken at once when the turn ends. Both hold one lock while they write, so
//! a frame never lands in the middle of a printed line.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::agent_rows::{AgentRow, cut};
use crate::ui::output::{stderr, stderr_is_terminal, stdout, terminal_width};
use crate::ui::style::Style;
use crate::ui::term::Term;

/// The spinner's frame time.
pub const FRAME: Duration = Duration::from_millis(80);
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Printing draws the status area again at once when it was drawn longer ago than this.
const REDRAW: Duration = Duration::from_millis(30);
/// Lines typed ahead shown under the spinner at most (the rest are counted).
const QUEUED_SHOWN: usize = 3;
/// Sub-agents' rows shown under the spinner at most (the rest are counted).
const AGENTS_SHOWN: usize = 8;

#[derive(Default)]
struct State {
    /// A turn runs: the status area is shown unless `hidden`.
    active: bool,
    /// A question has the terminal.
    hidden: bool,
    label: String,
    detail: String,
    /// The to-do list's row under the spinner (kept from turn to turn).
    todos: Option<String>,
    since: Option<Instant>,
    frame: usize,
    /// Rows of the status area on the terminal now (0: none drawn).
    drawn: usize,
    /// When it was last drawn.
    drawn_at: Option<Instant>,
    /// What was typed ahead: the lines to send, then the one being typed.
    queued: Vec<String>,
    typing: String,
    stop: bool,
    /// stdout's last line is not ended yet (reasoning text): nothing is drawn below it.
    open_line: bool,
    /// The sub-agents at work, a row each under the spinner.
    agents: Vec<AgentRow>,
}

/// The terminal of the REPL's turns; see the module's doc.
pub struct Screen {
    style: Style,
    /// Whether the status area is drawn at all (stderr is a terminal).
    live: bool,
    state: Mutex<State>,
    wake: Condvar,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

impl Screen {
    pub fn new(style: Style) -> Arc<Self> {
        Arc::new(Self {
            style,
            live: stderr_is_terminal(),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            ticker: Mutex::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A turn begins: the spinner shows `label` and the ticker starts.
    pub fn begin(self: &Arc<Self>, label: &str) {
        {
            let mut state = self.lock();
            state.active = true;
            state.hidden = false;
            state.stop = false;
            state.label = label.to_string();
            state.detail.clear();
            state.since = Some(Instant::now());
            self.draw(&mut state);
        }
        if !self.live {
            return;
        }
        let screen = self.clone();
        let ticker = std::thread::spawn(move || screen.tick());
        *self.ticker.lock().unwrap_or_else(|e| e.into_inner()) = Some(ticker);
    }

    fn tick(&self) {
        let mut state = self.lock();
        loop {
            let (next, _) = self
                .wake
                .wait_timeout(state, FRAME)
                .unwrap_or_else(|e| e.into_inner());
            state = next;
            if state.stop {
                return;
            }
            state.frame += 1;
            self.draw(&mut state);
        }
    }

    /// The turn ended: the status area goes, the ticker stops (woken, not waited for a frame).
    pub fn end(&self) {
        {
            let mut state = self.lock();
            state.stop = true;
            state.active = false;
            state.open_line = false;
            self.wipe(&mut state);
            state.queued.clear();
            state.typing.clear();
            state.agents.clear();
        }
        self.wake.notify_all();
        if let Some(ticker) = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = ticker.join();
        }
    }

    /// Prints `text` above the status area. The area is drawn again at once unless it was
    /// drawn within the last [`REDRAW`] (text streaming fast): the ticker draws it then.
    pub fn print(&self, text: Term) {
        if text.is_empty() {
            return;
        }
        let mut state = self.lock();
        self.wipe(&mut state);
        state.open_line = !text.ends_with_newline();
        stdout(text);
        if state.drawn_at.is_none_or(|at| at.elapsed() >= REDRAW) {
            self.draw(&mut state);
        }
    }

    /// The spinner says `label` from now on, its seconds counted from now.
    pub fn activity(&self, label: &str) {
        let mut state = self.lock();
        if state.label == label {
            return;
        }
        state.label = label.to_string();
        state.since = Some(Instant::now());
        state.detail.clear();
        self.draw(&mut state);
    }

    /// A detail after the seconds (a command's last output line); shown from the next frame.
    pub fn detail(&self, detail: &str) {
        self.lock().detail = detail.to_string();
    }

    /// The to-do list's row under the spinner, from now on (`None`: no row).
    pub fn todos(&self, row: Option<String>) {
        let mut state = self.lock();
        if state.todos != row {
            state.todos = row;
            self.draw(&mut state);
        }
    }

    /// What was typed ahead: the lines queued and the one being typed (shown from the next frame).
    pub fn typed(&self, queued: &[String], typing: &str) {
        let mut state = self.lock();
        if state.queued != queued || state.typing != typing {
            state.queued = queued.to_vec();
            state.typing = typing.to_string();
            self.draw(&mut state);
        }
    }

    /// The sub-agents' rows (drawn at once: a row appears or goes).
    pub fn agents(&self, rows: Vec<AgentRow>) {
        let mut state = self.lock();
        if state.agents.len() != rows.len() {
            state.agents = rows;
            self.draw(&mut state);
        } else {
            state.agents = rows;
        }
    }

    /// A question takes the terminal: the status area goes until [`Screen::show`].
    pub fn hide(&self) {
        let mut state = self.lock();
        state.hidden = true;
        self.wipe(&mut state);
    }

    /// The question is answered: the status area comes back.
    pub fn show(&self) {
        let mut state = self.lock();
        if !state.hidden {
            return;
        }
        state.hidden = false;
        // What runs now (the call just approved) is timed from the answer.
        state.since = Some(Instant::now());
        self.draw(&mut state);
    }

    /// Clears the status area from the terminal (the cursor ends where it began).
    fn wipe(&self, state: &mut State) {
        if state.drawn == 0 {
            return;
        }
        let mut text = Term::new();
        for _ in 1..state.drawn {
            text.push(Term::clear_line());
            text.push(Term::cursor_up());
        }
        text.push(Term::clear_line());
        stderr(text);
        state.drawn = 0;
    }

    fn draw(&self, state: &mut State) {
        if !self.live || !state.active || state.hidden || state.open_line {
            return;
        }
        let width = terminal_width().unwrap_or(80);
        let rows = status_rows(state, width);
        let mut text = Term::new();
        for _ in 1..state.drawn.max(1) {
            text.push(Term::clear_line());
            text.push(Term::cursor_up());
        }
        text.push(Term::clear_line());
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                text.push("\n");
                text.push(Term::clear_line());
            }
            text.push(self.style.dim(row));
        }
        stderr(text);
        state.drawn = rows.len();
        state.drawn_at = Some(Instant::now());
    }
}

/// The rows of the status area: the spinner, the to-do list's row, then what is typed ahead;
/// each cut to one row.
fn status_rows(state: &State, width: usize) -> Vec<String> {
    let elapsed = state.since.map(|s| s.elapsed()).unwrap_or_default();
    let mut rows = vec![frame_text(
        FRAMES[state.frame % FRAMES.len()],
        &state.label,
        elapsed,
        &state.detail,
        width,
    )];
    if let Some(todos) = &state.todos {
        rows.push(cut(&format!("  {todos}"), width));
    }
    let now = Instant::now();
    let shown_agents = state.agents.len().min(AGENTS_SHOWN);
    for agent in &state.agents[..shown_agents] {
        rows.push(agent.text(now, width));
    }
    if state.agents.len() > shown_agents {
        rows.push(format!(
            "  ⎿ and {} more agents",
            state.agents.len() - shown_agents
        ));
    }
    let shown = state.queued.len().min(QUEUED_SHOWN);
    for line in &state.queued[..shown] {
        rows.push(cut(&format!("  ⏎ queued: {line}"), width));
    }
    if state.queued.len() > shown {
        rows.push(format!("  ⏎ and {} more", state.queued.len() - shown));
    }
    if !state.typing.is_empty() {
        rows.push(cut(&format!("  > {}", state.typing), width));
    }
    rows
}

/// `⠋ bash(cargo test) 3s · esc to interrupt · Compiling ling`, cut to one line of `width`
/// columns (a wrapped line could not be redrawn in place): a long label loses its middle, so
/// the seconds and the way out always show; the detail gets what is left.
fn frame_text(frame: &str, label: &str, elapsed: Duration, detail: &str, width: usize) -> String {
    let tail = format!(" {}s · esc to interrupt", elapsed.as_secs());
    let max = width.saturating_sub(1).max(10);
    let room = max.saturating_sub(frame.chars().count() + 1 + tail.chars().count());
    let label = cut_middle(&label.replace(['\n', '\r'], " "), room.max(8));
    let mut text = format!("{frame} {label}{tail}");
    if !detail.is_empty() {
        text.push_str(" · ");
        text.push_str(detail);
    }
    cut(&text, width)
}

/// `text` in `max` characters at most, its middle replaced by `…` when it is longer.
fn cut_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let head = (max - 1).div_ceil(2);
    let tail = max - 1 - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_frame_shows_the_seconds_the_way_out_and_the_detail_on_one_line() {
        assert_eq!(
            frame_text("⠋", "thinking", Duration::from_millis(3400), "", 80),
            "⠋ thinking 3s · esc to interrupt"
        );
        assert_eq!(
            frame_text("⠋", "bash(make)", Duration::ZERO, "cc -o x", 80),
            "⠋ bash(make) 0s · esc to interrupt · cc -o x"
        );
        let long = frame_text("⠋", "bash(make)", Duration::ZERO, &"x".repeat(200), 40);
        assert_eq!(long.chars().count(), 39);
        assert!(long.ends_with('…'));
        // A long call loses its middle, never the seconds or the way out.
        let call = format!("bash(cargo test {} --release)", "-p x ".repeat(30));
        let cut = frame_text("⠋", &call, Duration::from_secs(7), "", 60);
        assert_eq!(cut.chars().count(), 59, "{cut}");
        assert!(cut.starts_with("⠋ bash(cargo test"), "{cut}");
        assert!(cut.ends_with("--release) 7s · esc to interrupt"), "{cut}");
    }

    #[test]
    fn lines_typed_ahead_show_under_the_spinner() {
        let state = State {
            label: "thinking".into(),
            queued: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            typing: "e".into(),
            ..State::default()
        };
        let rows = status_rows(&state, 80);
        assert_eq!(
            rows[1..].to_vec(),
            vec![
                "  ⏎ queued: a",
                "  ⏎ queued: b",
                "  ⏎ queued: c",
                "  ⏎ and 1 more",
                "  > e"
            ]
        );
    }
}
