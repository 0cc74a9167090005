//! The one place that writes to stdout and stderr (clippy's print lints and `disallowed-methods`
//! in `clippy.toml` keep every other module from doing so).
//!
//! What reaches a terminal is a [`Term`]: any text given here is neutralised on the way in, and
//! only Ling's own colours can carry an escape sequence. The exception is data whose bytes are
//! the contract: [`stdout_data`] (the answer of `ling -p`, the result of `ling mcp call`) and
//! [`stdout_json`] are written exactly to a pipe or file, and made safe only when stdout is a
//! terminal.
//!
//! A closed stdout pipe (`ling ... | head -1`) never panics: a one-shot run that registered its
//! cancel token is stopped cleanly (hooks, transcript and MCP servers still finish), anything
//! else exits quietly.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use super::safe_text::{json_for_terminal, neutralise};
use super::term::Term;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static ON_CLOSED: Mutex<Option<CancellationToken>> = Mutex::new(None);

/// Writes `text` to stdout (add the newline yourself).
pub fn stdout(text: impl Into<Term>) {
    write_stdout(text.into().as_str().as_bytes());
}

pub fn stdout_line(text: impl Into<Term>) {
    let mut line = text.into();
    line.push("\n");
    stdout(line);
}

/// Writes data whose bytes matter: exactly as given to a pipe or a file, neutralised when
/// stdout is a terminal (so `ling -p ... > out.txt` keeps every byte, and a terminal acts on
/// none of them).
pub fn stdout_data(text: &str) {
    if stdout_is_terminal() {
        write_stdout(neutralise(text).as_bytes());
    } else {
        write_stdout(text.as_bytes());
    }
}

/// Writes JSON text (serde_json's, so C0 controls are already escaped): exactly as given to a
/// pipe or a file; to a terminal with C1 and bidi characters as `\uXXXX` escapes, the same value.
pub fn stdout_json(json: &str) {
    if stdout_is_terminal() {
        write_stdout(json_for_terminal(json).as_bytes());
    } else {
        write_stdout(json.as_bytes());
    }
}

/// Whether stdout is a terminal (asked once).
pub fn stdout_is_terminal() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| std::io::stdout().is_terminal())
}

/// Whether stderr is a terminal (asked once).
pub fn stderr_is_terminal() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| std::io::stderr().is_terminal())
}

/// The width of the terminal on stdout in columns, when it is one and says.
pub fn terminal_width() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    Some(usize::from(size.ws_col)).filter(|w| *w > 0)
}

/// The height of the terminal on stdout in rows, when it is one and says.
pub fn terminal_height() -> Option<usize> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    Some(usize::from(size.ws_row)).filter(|h| *h > 0)
}

/// Writes and flushes `bytes` on stdout, unless it was found closed.
fn write_stdout(bytes: &[u8]) {
    if stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        on_write_error(&e);
    }
}

/// Writes `text` to stderr, scrubbed of secrets (`crate::redact`: URL userinfo and query
/// values, the API key), and flushes; errors writing to stderr are ignored (nowhere left to
/// report them).
pub fn stderr(text: impl Into<Term>) {
    let text = crate::redact::scrub(text.into().as_str());
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Writes one line to stderr.
pub fn stderr_line(text: impl Into<Term>) {
    let mut line = text.into();
    line.push("\n");
    stderr(line);
}

/// Ends what the REPL may have left on the terminal when a panic stops it: bracketed paste
/// off, the cursor shown, a fresh line. Written to stderr directly (nothing else of Ling's
/// output may be trusted to be in order then).
pub fn terminal_reset_after_panic() {
    if std::io::stderr().is_terminal() {
        let _ = std::io::stderr().write_all(b"\x1b[?2004l\x1b[?25h\r\n");
    }
}

/// From now on a closed stdout cancels `token` instead of exiting.
pub fn cancel_on_closed_stdout(token: CancellationToken) {
    *ON_CLOSED.lock().unwrap_or_else(|e| e.into_inner()) = Some(token);
}

/// Whether a write found stdout closed by its reader.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

fn on_write_error(e: &std::io::Error) {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        return;
    }
    STDOUT_CLOSED.store(true, Ordering::Relaxed);
    match ON_CLOSED.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some(token) => token.cancel(),
        None => std::process::exit(0),
    }
}
