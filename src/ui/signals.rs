//! The signals that end a run: Ctrl-C (SIGINT), SIGTERM and SIGHUP. The first one cancels the
//! run, which then winds down through the normal path (hooks, transcript, MCP shutdown); a second
//! one while it does exits at once.

use std::sync::atomic::{AtomicU8, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::Exit;
use crate::ui::output::stderr_line;

/// The exit code of the first signal received, 0 while none was.
static RECEIVED: AtomicU8 = AtomicU8::new(0);

/// The exit code for the signal that interrupted the run: 130 for SIGINT (also when none was
/// recorded), 143 for SIGTERM, 129 for SIGHUP.
pub fn interrupted_exit() -> Exit {
    match RECEIVED.load(Ordering::Relaxed) {
        143 => Exit::Terminated,
        129 => Exit::HungUp,
        _ => Exit::Interrupted,
    }
}

/// Waits for the next of the three signals and returns its exit code; `None` if the signal
/// handlers could not be installed.
async fn next() -> Option<Exit> {
    let mut term = signal(SignalKind::terminate()).ok()?;
    let mut hup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.ok().map(|()| Exit::Interrupted),
        _ = term.recv() => Some(Exit::Terminated),
        _ = hup.recv() => Some(Exit::HungUp),
    }
}

/// For the REPL: on SIGTERM or SIGHUP, puts the terminal back as it was, runs `cleanup` (the MCP
/// shutdown) and exits. Ctrl-C is the REPL's own business (it interrupts the turn).
/// The terminal state is taken now, before the prompt can switch it to raw mode.
pub fn exit_on_termination<F>(cleanup: F) -> impl std::future::Future<Output = ()>
where
    F: std::future::Future<Output = ()>,
{
    let saved = nix::sys::termios::tcgetattr(std::io::stdin()).ok();
    let handlers = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    );
    async move {
        let (Ok(mut term), Ok(mut hup)) = handlers else {
            return;
        };
        let code = tokio::select! {
            _ = term.recv() => Exit::Terminated,
            _ = hup.recv() => Exit::HungUp,
        };
        if let Some(saved) = saved {
            // rustyline may be in raw mode at the prompt; leave the terminal usable.
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                &saved,
            );
        }
        cleanup.await;
        std::process::exit(code as i32);
    }
}

/// Cancels `cancel` on the first signal; exits on the second.
pub async fn watch(cancel: CancellationToken) {
    let Some(first) = next().await else {
        return;
    };
    RECEIVED.store(first as u8, Ordering::Relaxed);
    cancel.cancel();
    if let Some(second) = next().await {
        stderr_line("error: interrupted twice; exiting now");
        std::process::exit(second as i32);
    }
}
