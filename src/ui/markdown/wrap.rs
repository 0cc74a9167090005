//! Styled runs of text and their word-wrapping to the terminal's width, counting columns with
//! `unicode-width` (a CJK character is two, a combining mark none).

use unicode_width::UnicodeWidthStr;

use super::super::style::Style;
use super::super::term::Term;

/// How a run of text is drawn: SGR attributes, combined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tone {
    pub bold: bool,
    pub italic: bool,
    pub strike: bool,
    pub underline: bool,
    pub dim: bool,
    /// Inline code and link targets.
    pub cyan: bool,
}

impl Tone {
    fn code(self) -> String {
        let mut parts = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
            (self.cyan, "36"),
        ] {
            if on {
                parts.push(code);
            }
        }
        parts.join(";")
    }

    /// `text` in this tone (plain when colours are off or there is no attribute).
    pub fn paint(self, style: Style, text: &str) -> Term {
        let code = self.code();
        if style.color && !code.is_empty() {
            Term::painted(&code, text)
        } else {
            Term::plain(text)
        }
    }
}

/// A run of text in one tone; `"\n"` alone is a hard line break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub tone: Tone,
}

/// The display width of `spans` on one line.
pub fn width_of(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.text.width()).sum()
}

/// A painted line's text without Ling's colour codes (only they can be escape sequences in it).
pub fn without_colours(line: &Term) -> String {
    let mut out = String::with_capacity(line.as_str().len());
    let mut chars = line.as_str().chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The columns a painted line takes (Ling's colour codes take none).
pub fn term_width(line: &Term) -> usize {
    without_colours(line).width()
}

/// `spans` as one line (tables: no wrapping).
pub fn one_line(style: Style, spans: &[Span]) -> Term {
    let mut out = Term::new();
    for span in spans {
        out.push(span.tone.paint(style, &span.text.replace('\n', " ")));
    }
    out
}

/// Word-wraps `spans` into lines of at most `width` columns (a word longer than that is cut).
/// Each line is the painted words and their widths; spaces at a break are dropped.
pub fn wrap(style: Style, spans: &[Span], width: usize) -> Vec<Term> {
    let width = width.max(10);
    let mut lines = Vec::new();
    let mut line = Term::new();
    let mut column = 0;
    // A space seen since the last word, to put before the next one on the same line.
    let mut space: Option<Tone> = None;
    for span in spans {
        if span.text == "\n" {
            lines.push(std::mem::take(&mut line));
            column = 0;
            space = None;
            continue;
        }
        for piece in split_words(&span.text) {
            if piece.chars().all(char::is_whitespace) {
                if column > 0 {
                    space = Some(span.tone);
                }
                continue;
            }
            let mut word = piece;
            let gap = usize::from(space.is_some());
            if column > 0 && column + gap + word.width() > width {
                lines.push(std::mem::take(&mut line));
                column = 0;
                space = None;
            }
            if let Some(tone) = space.take() {
                line.push(tone.paint(style, " "));
                column += 1;
            }
            // A word wider than a whole line is cut where the line ends.
            while column + word.width() > width {
                let (head, tail) = cut_at_width(word, width - column);
                if head.is_empty() {
                    break;
                }
                line.push(span.tone.paint(style, head));
                lines.push(std::mem::take(&mut line));
                column = 0;
                word = tail;
            }
            line.push(span.tone.paint(style, word));
            column += word.width();
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Words and the whitespace between them, in order.
fn split_words(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if in_space.is_some_and(|s| s != space) {
            pieces.push(&text[start..i]);
            start = i;
        }
        in_space = Some(space);
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// The longest head of `word` that fits in `columns`, and the rest.
fn cut_at_width(word: &str, columns: usize) -> (&str, &str) {
    let mut used = 0;
    for (i, c) in word.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > columns {
            return word.split_at(i);
        }
        used += w;
    }
    (word, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn plain(text: &str) -> Span {
        Span {
            text: text.into(),
            tone: Tone::default(),
        }
    }

    fn shown(lines: Vec<Term>) -> Vec<String> {
        lines.iter().map(|l| l.as_str().to_string()).collect()
    }

    #[test]
    fn words_wrap_at_the_width_and_long_words_are_cut() {
        let lines = wrap(Style::plain(), &[plain("the quick brown fox jumps")], 10);
        assert_eq!(shown(lines), vec!["the quick", "brown fox", "jumps"]);
        let lines = wrap(Style::plain(), &[plain("abcdefghijklmnopqrstuvwxyz")], 10);
        assert_eq!(shown(lines), vec!["abcdefghij", "klmnopqrst", "uvwxyz"]);
        let lines = wrap(Style::plain(), &[plain("日本語の文章です。とても長い")], 10);
        assert_eq!(shown(lines), vec!["日本語の文", "章です。と", "ても長い"]);
    }

    #[test]
    fn a_hard_break_starts_a_line_and_tones_survive_a_break() {
        let bold = Span {
            text: "bold words here".into(),
            tone: Tone {
                bold: true,
                ..Tone::default()
            },
        };
        let lines = wrap(Style { color: true }, &[plain("a"), plain("\n"), bold], 10);
        assert_eq!(
            shown(lines),
            vec![
                "a",
                "\x1b[1mbold\x1b[0m\x1b[1m \x1b[0m\x1b[1mwords\x1b[0m",
                "\x1b[1mhere\x1b[0m"
            ]
        );
    }
}
