//! Colours and styles, only when the stream is a terminal and `NO_COLOR` is not set (and, for
//! the REPL, `TERM` is not `dumb`). Each
//! returns a [`Term`]: the text is neutralised first, then painted.

use super::output::{stderr_is_terminal, stdout_is_terminal};
use super::term::Term;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn for_stdout() -> Self {
        Self {
            color: stdout_is_terminal() && no_color_unset(),
        }
    }

    pub fn for_stderr() -> Self {
        Self {
            color: stderr_is_terminal() && no_color_unset(),
        }
    }

    /// The REPL's stdout: as [`Style::for_stdout`], and plain on a `TERM=dumb` terminal too
    /// (`-p` keeps its colours as they were).
    pub fn for_repl() -> Self {
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Self {
            color: Self::for_stdout().color && !dumb,
        }
    }

    pub fn plain() -> Self {
        Self { color: false }
    }

    fn paint(self, code: &str, text: &str) -> Term {
        if self.color {
            Term::painted(code, text)
        } else {
            Term::plain(text)
        }
    }

    pub fn dim(self, text: &str) -> Term {
        self.paint("2", text)
    }

    pub fn bold(self, text: &str) -> Term {
        self.paint("1", text)
    }

    pub fn red(self, text: &str) -> Term {
        self.paint("31", text)
    }

    pub fn green(self, text: &str) -> Term {
        self.paint("32", text)
    }

    pub fn yellow(self, text: &str) -> Term {
        self.paint("33", text)
    }

    pub fn cyan(self, text: &str) -> Term {
        self.paint("36", text)
    }
}

fn no_color_unset() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
