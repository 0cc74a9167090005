//! The signals that end a run: Ctrl-C (SIGINT), SIGTERM and SIGHUP. The first one cancels the
//! run, which then winds down through the normal path (hooks, transcript, MCP shutdown) and
//! reports the [`Signal`] in its outcome; a second one while it does exits at once.

use std::sync::atomic::{AtomicU8, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::Signal;
use super::output::stderr_line;

/// The first signal received ([`Signal::code`]), 0 while none was.
static RECEIVED: AtomicU8 = AtomicU8::new(0);

/// The signal that interrupted the run: SIGINT also when none was recorded (a Ctrl-C the
/// terminal delivered to the REPL's own handling).
pub fn received() -> Signal {
    match RECEIVED.load(Ordering::Relaxed) {
        2 => Signal::Terminate,
        3 => Signal::HangUp,
        _ => Signal::Interrupt,
    }
}

/// The three signals' handlers. Installed, a signal no longer ends the process: it is kept
/// until the next wait, even one that comes before anybody waits.
pub struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hang_up: tokio::signal::unix::Signal,
}

/// Handlers installed before the run could watch ([`install_early`]), for [`watch`] to take.
static EARLY: std::sync::Mutex<Option<Signals>> = std::sync::Mutex::new(None);

impl Signals {
    /// Installs the handlers now (inside the runtime); `None` if they could not be.
    pub fn install() -> Option<Self> {
        Some(Self {
            interrupt: signal(SignalKind::interrupt()).ok()?,
            terminate: signal(SignalKind::terminate()).ok()?,
            hang_up: signal(SignalKind::hangup()).ok()?,
        })
    }

    /// Waits for the next of the three.
    async fn next(&mut self) -> Option<Signal> {
        tokio::select! {
            got = self.interrupt.recv() => got.map(|()| Signal::Interrupt),
            got = self.terminate.recv() => got.map(|()| Signal::Terminate),
            got = self.hang_up.recv() => got.map(|()| Signal::HangUp),
        }
    }
}

/// For a run nobody types into (`-p`, stream-json): takes the signals now, before its MCP
/// servers start, so that a Ctrl-C while it starts them ends it through [`watch`] (exit 130,
/// servers told) instead of killing it on the spot.
pub fn install_early() {
    let mut early = EARLY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if early.is_none() {
        *early = Signals::install();
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
        let signal = tokio::select! {
            _ = term.recv() => Signal::Terminate,
            _ = hup.recv() => Signal::HangUp,
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
        std::process::exit(signal.status());
    }
}

/// For the REPL, whose prompt and questions switch the terminal's modes: a panic (a bug; the
/// `dist` build aborts on one) first puts the terminal back as it was now (line mode, echo,
/// bracketed paste off), then the panic's own message, then how to go on.
pub fn restore_terminal_on_panic() {
    let Ok(saved) = nix::sys::termios::tcgetattr(std::io::stdin()) else {
        return;
    };
    // Termios is not Sync; the hook may run on any thread.
    let saved = std::sync::Mutex::new(saved);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(saved) = saved.try_lock() {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                &saved,
            );
        }
        crate::ui::output::terminal_reset_after_panic();
        previous(info);
        stderr_line(
            "ling: stopped on an internal error (a bug: please report it with the message \
             above); the conversation so far is saved: `ling --continue` goes on with it",
        );
    }));
}

/// Cancels `cancel` on the first signal; exits on the second. The handlers are installed when
/// this is called (or were, by [`install_early`]), not when the future is first polled: a
/// signal in between is not lost.
pub fn watch(cancel: CancellationToken) -> impl std::future::Future<Output = ()> + Send {
    let early = EARLY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let signals = early.or_else(Signals::install);
    async move {
        let Some(mut signals) = signals else {
            return;
        };
        let Some(first) = signals.next().await else {
            return;
        };
        RECEIVED.store(first.code(), Ordering::Relaxed);
        cancel.cancel();
        if let Some(second) = signals.next().await {
            stderr_line("error: interrupted twice; exiting now");
            std::process::exit(second.status());
        }
    }
}
