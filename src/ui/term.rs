//! [`Term`]: text ready for a terminal. It is the only thing the writers of [`super::output`]
//! accept, and it can hold an escape sequence only where Ling put one: every `&str` or `String`
//! that becomes a `Term` (or part of one) is neutralised by [`super::safe_text`] on the way in,
//! and the colours of [`super::style::Style`] are the one way to add a sequence.
//!
//! `Term` has no `Display`, so it cannot be formatted into a `String` and come back in as if it
//! were Ling's own: `format!` output is outside text again, and a colour formatted into it would
//! show as `^[[31m` (a visible mistake, never a hole). Build lines with [`term!`](crate::term!) or `+`.

use std::ops::{Add, AddAssign};

use super::safe_text::neutralise_into;

/// Terminal-ready text: outside text neutralised, Ling's colours as escape sequences.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Term(String);

impl Term {
    pub fn new() -> Self {
        Self::default()
    }

    /// `text` made safe.
    pub fn plain(text: &str) -> Self {
        let mut out = String::with_capacity(text.len());
        neutralise_into(text, &mut out);
        Self(out)
    }

    /// `text` made safe, between the SGR `code` and a reset (only [`super::style::Style`]).
    pub(crate) fn painted(code: &str, text: &str) -> Self {
        let mut out = String::with_capacity(text.len() + code.len() + 7);
        out.push_str("\x1b[");
        out.push_str(code);
        out.push('m');
        neutralise_into(text, &mut out);
        out.push_str("\x1b[0m");
        Self(out)
    }

    /// Back to the start of the line and clear it: the spinner's redraw.
    pub(crate) fn clear_line() -> Self {
        Self("\r\x1b[K".into())
    }

    /// Wipes the `rows` rows above the cursor's row, leaving the cursor at the first of them.
    pub(crate) fn wipe_rows_above(rows: usize) -> Self {
        Self("\x1b[A\r\x1b[2K".repeat(rows))
    }

    /// OSC 11 with `?`: asks the terminal its background colour (`/theme auto`).
    pub(crate) fn background_query() -> Self {
        Self("\x1b]11;?\x1b\\".into())
    }

    /// Up one row: the status area's redraw.
    pub(crate) fn cursor_up() -> Self {
        Self("\x1b[A".into())
    }

    /// The bytes for the terminal (and for a line editor's prompt).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn ends_with_newline(&self) -> bool {
        self.0.ends_with('\n')
    }

    /// This text in pieces of about `max` bytes, each cut after a newline where there is one
    /// (so no piece ends inside one of Ling's escape sequences but at a line's end).
    pub fn into_chunks(self, max: usize) -> Vec<Term> {
        if self.0.len() <= max {
            return vec![self];
        }
        let text = self.0;
        let mut out = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + max).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            if end < text.len()
                && let Some(i) = text[start..end].rfind('\n')
            {
                end = start + i + 1;
            }
            out.push(Self(text[start..end].to_string()));
            start = end;
        }
        out
    }

    /// Appends one part: a `Term` as it is, text neutralised.
    pub fn push(&mut self, part: impl TermPart) {
        part.push_to(self);
    }
}

/// What can be appended to a [`Term`]: another `Term`, or text (neutralised).
pub trait TermPart {
    fn push_to(self, term: &mut Term);
}

impl TermPart for Term {
    fn push_to(self, term: &mut Term) {
        if term.0.is_empty() {
            term.0 = self.0;
        } else {
            term.0.push_str(&self.0);
        }
    }
}

impl TermPart for &Term {
    fn push_to(self, term: &mut Term) {
        term.0.push_str(&self.0);
    }
}

impl TermPart for &str {
    fn push_to(self, term: &mut Term) {
        neutralise_into(self, &mut term.0);
    }
}

impl TermPart for String {
    fn push_to(self, term: &mut Term) {
        neutralise_into(&self, &mut term.0);
    }
}

impl TermPart for &String {
    fn push_to(self, term: &mut Term) {
        neutralise_into(self, &mut term.0);
    }
}

impl TermPart for char {
    fn push_to(self, term: &mut Term) {
        let mut buf = [0; 4];
        neutralise_into(self.encode_utf8(&mut buf), &mut term.0);
    }
}

impl<T: TermPart> AddAssign<T> for Term {
    fn add_assign(&mut self, part: T) {
        part.push_to(self);
    }
}

impl<T: TermPart> Add<T> for Term {
    type Output = Term;

    fn add(mut self, part: T) -> Term {
        part.push_to(&mut self);
        self
    }
}

impl From<&str> for Term {
    fn from(text: &str) -> Self {
        Self::plain(text)
    }
}

impl From<String> for Term {
    fn from(text: String) -> Self {
        Self::plain(&text)
    }
}

impl From<&String> for Term {
    fn from(text: &String) -> Self {
        Self::plain(text)
    }
}

impl From<&Term> for Term {
    fn from(term: &Term) -> Self {
        term.clone()
    }
}

/// A [`Term`] from parts, each a `Term` (kept) or text (neutralised):
/// `term![style.yellow("warning:"), " ", message]`. No format string, so nothing can be
/// captured around the neutralising.
#[macro_export]
macro_rules! term {
    ($($part:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut line = $crate::ui::term::Term::new();
        $( line.push($part); )*
        line
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn text_is_neutralised_and_colours_survive() {
        let red = Term::painted("31", "err\x1b]0;t\x07");
        assert_eq!(red.as_str(), "\x1b[31merr^[]0;t^G\x1b[0m");
        let line = crate::term![red, " ", "\x1b[2J", String::from("\r"), &Term::plain("ok")];
        assert_eq!(line.as_str(), "\x1b[31merr^[]0;t^G\x1b[0m ^[[2J^Mok");
        let sum = Term::plain("a") + "\u{9b}" + 'b';
        assert_eq!(sum.as_str(), "a<U+009B>b");
        assert_eq!(Term::from(String::from("\x1b[31m")).as_str(), "^[[31m");
    }

    #[test]
    fn a_long_text_is_cut_in_pieces_at_line_ends() {
        let text = Term::plain("aaa\nbbb\nccc\n");
        let pieces: Vec<String> = text
            .clone()
            .into_chunks(5)
            .iter()
            .map(|t| t.as_str().to_string())
            .collect();
        assert_eq!(pieces, vec!["aaa\n", "bbb\n", "ccc\n"]);
        assert_eq!(text.clone().into_chunks(100), vec![text]);
    }
}
