//! The terminal plumbing the five front ends share: markdown, the rendering of tool
//! calls and hook notices, styles, the trust question. Only [`output`] writes to stdout and
//! stderr, and it takes [`term::Term`]s: text from outside Ling is neutralised ([`safe_text`])
//! before Ling's own colours are added. A front end's run ends in a [`RunOutcome`]; `cli` alone
//! turns it into an exit code.

pub mod login;
pub mod markdown;
pub mod output;
pub mod render;
pub mod safe_text;
pub mod signals;
pub mod style;
pub mod subagent_view;
pub mod term;
pub mod trust;

/// How a frontend's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// The model gave its answer; the user left the REPL; or the reader of a `-p` run's
    /// stdout went away, having what it wanted.
    Success,
    /// The run failed: a model error after retries, the turn limit, a hook that stopped it.
    Failed,
    /// The run went on while `--until`'s check failed, and it never passed.
    CheckFailed,
    /// A signal ended the run (it wound down through hooks, transcript and MCP shutdown).
    Interrupted(Signal),
}

/// A signal that ends a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal went away.
    HangUp,
}

impl Signal {
    /// The status of a process ended by this signal, as a shell reports it: 128 + its number.
    /// Used where Ling has to exit at once, without returning to `cli`.
    fn status(self) -> i32 {
        use nix::sys::signal::Signal as Nix;
        let number = match self {
            Self::Interrupt => Nix::SIGINT,
            Self::Terminate => Nix::SIGTERM,
            Self::HangUp => Nix::SIGHUP,
        };
        128 + number as i32
    }

    fn code(self) -> u8 {
        match self {
            Self::Interrupt => 1,
            Self::Terminate => 2,
            Self::HangUp => 3,
        }
    }
}

/// The terminal could not be used for a question or the prompt.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    #[error("cannot start the line editor: {0}")]
    Editor(#[source] rustyline::error::ReadlineError),
    #[error("cannot read input: {0}")]
    Input(#[source] rustyline::error::ReadlineError),
    #[error("cannot read the answer: {0}")]
    Answer(#[source] rustyline::error::ReadlineError),
    #[error("the line editor stopped: {0}")]
    EditorStopped(#[source] tokio::task::JoinError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_ends_the_process_with_128_plus_its_number() {
        assert_eq!(Signal::Interrupt.status(), 130);
        assert_eq!(Signal::Terminate.status(), 143);
        assert_eq!(Signal::HangUp.status(), 129);
    }
}
