//! Plain writes to stdout and stderr. A closed stdout pipe (`ling ... | head -1`) never panics:
//! a one-shot run that registered its cancel token is stopped cleanly (hooks, transcript and MCP
//! servers still finish), anything else exits quietly.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static ON_CLOSED: Mutex<Option<CancellationToken>> = Mutex::new(None);

/// Writes text to stdout as it is (add the newline yourself).
pub fn stdout(text: &str) {
    write_stdout(text.as_bytes());
}

pub fn stdout_line(text: &str) {
    stdout(&format!("{text}\n"));
}

/// Writes and flushes `bytes` on stdout, unless it was found closed.
pub fn write_stdout(bytes: &[u8]) {
    if stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        on_write_error(&e);
    }
}

/// Writes one line to stderr, scrubbed of secrets (`crate::redact`: URL userinfo and query
/// values, the API key); errors writing to stderr are ignored (nowhere left to report them).
pub fn stderr_line(text: &str) {
    let text = crate::redact::scrub(text);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
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
