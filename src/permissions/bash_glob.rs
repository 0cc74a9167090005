//! Claude Code's wildcard bash rules: a `*` anywhere in the command pattern (`Bash(*rm *)`,
//! `Bash(* install)`, `Bash(git * main)`) stands for any text, spaces included, and the
//! pattern is matched against the whole text of each simple command, as Claude Code matches
//! it. The matching itself is the `wildmatch` crate's (the crate codex-rs uses); only `*` is a
//! wildcard, as in Claude Code (`?` and `[` are literal).
//!
//! A word only known when the command runs (`$CMD`, `$(...)`) could be any text, so a command
//! with one matches *unknown* when some value of it would match: [`could_match`] decides that
//! for two patterns of literal text and `*`, which no crate does.

use wildmatch::WildMatchPattern;

use super::shell::Word;

/// `*` for any text; no single-character wildcard (NUL never occurs in a command).
type Pattern = WildMatchPattern<'*', '\0'>;

/// A compiled wildcard pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    text: String,
    pattern: Pattern,
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Glob {}

/// What a glob says of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobMatch {
    Match,
    /// The command has a word only known at run time, and some value of it would match.
    Unknown,
    NoMatch,
}

impl Glob {
    /// `text` is the rule's command pattern with at least one `*` that is not only a trailing
    /// prefix star. A `\` (Claude Code's escape for a literal `*`) is refused: Ling would read
    /// the rule differently than Claude Code does, and a rule read wrongly is a guard that
    /// does not exist.
    pub fn new(text: &str) -> Result<Self, &'static str> {
        if text.contains('\\') {
            return Err(
                "a `\\` in a wildcard bash rule (an escaped `*`) is not supported; \
                        write the rule without it",
            );
        }
        if text.contains('\0') {
            return Err("a bash rule cannot contain a NUL character");
        }
        Ok(Self {
            text: text.to_string(),
            pattern: Pattern::new(text),
        })
    }

    /// Whether the glob matches a text as written.
    pub fn matches_text(&self, text: &str) -> bool {
        self.pattern.matches(text)
    }

    /// How the glob matches one simple command's words: their values joined by spaces; a
    /// dynamic word may be any text.
    pub fn matches_words(&self, words: &[Word]) -> GlobMatch {
        let plain = words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if self.pattern.matches(&plain) {
            return GlobMatch::Match;
        }
        if !words.iter().any(|w| w.dynamic) {
            return GlobMatch::NoMatch;
        }
        // Each dynamic word as `*`: any value it takes at run time.
        let open: Vec<Piece> = words
            .iter()
            .enumerate()
            .flat_map(|(i, w)| {
                let space = (i > 0).then_some(Piece::Char(' '));
                let body: Vec<Piece> = if w.dynamic {
                    vec![Piece::Star]
                } else {
                    w.text.chars().map(Piece::Char).collect()
                };
                space.into_iter().chain(body)
            })
            .collect();
        let rule: Vec<Piece> = self
            .text
            .chars()
            .map(|c| {
                if c == '*' {
                    Piece::Star
                } else {
                    Piece::Char(c)
                }
            })
            .collect();
        if could_match(&rule, &open) {
            GlobMatch::Unknown
        } else {
            GlobMatch::NoMatch
        }
    }
}

/// One element of a pattern of literal text and `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    Char(char),
    Star,
}

/// Whether some text matches both patterns: a search over pairs of positions, where a star
/// may take nothing (skip it) or one more character of the other side (stay on it).
fn could_match(a: &[Piece], b: &[Piece]) -> bool {
    let width = b.len() + 1;
    let mut seen = vec![false; (a.len() + 1) * width];
    let mut todo = vec![(0usize, 0usize)];
    while let Some((i, j)) = todo.pop() {
        if std::mem::replace(&mut seen[i * width + j], true) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        let (x, y) = (a.get(i).copied(), b.get(j).copied());
        if x == Some(Piece::Star) {
            todo.push((i + 1, j));
        }
        if y == Some(Piece::Star) {
            todo.push((i, j + 1));
        }
        match (x, y) {
            (Some(Piece::Char(p)), Some(Piece::Char(q))) if p == q => todo.push((i + 1, j + 1)),
            // A star takes the other side's character and stays.
            (Some(Piece::Star), Some(Piece::Char(_))) => todo.push((i, j + 1)),
            (Some(Piece::Char(_)), Some(Piece::Star)) => todo.push((i + 1, j)),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split(' ')
            .map(|w| {
                if w.starts_with('$') {
                    Word::dynamic(w, true)
                } else {
                    Word::literal(w)
                }
            })
            .collect()
    }

    #[test]
    fn a_star_stands_for_any_text_anywhere() {
        let rm = Glob::new("*rm *").unwrap();
        assert_eq!(rm.matches_words(&words("rm notes.txt")), GlobMatch::Match);
        assert_eq!(rm.matches_words(&words("git rm x")), GlobMatch::Match);
        assert_eq!(rm.matches_words(&words("ls notes.txt")), GlobMatch::NoMatch);
        let install = Glob::new("* install").unwrap();
        assert_eq!(
            install.matches_words(&words("npm install")),
            GlobMatch::Match
        );
        assert_eq!(install.matches_words(&words("npm ci")), GlobMatch::NoMatch);
        let main = Glob::new("git * main").unwrap();
        assert_eq!(
            main.matches_words(&words("git push origin main")),
            GlobMatch::Match
        );
        assert_eq!(
            main.matches_words(&words("git push origin dev")),
            GlobMatch::NoMatch
        );
        // `?` is literal, as in Claude Code.
        let question = Glob::new("* a?c").unwrap();
        assert_eq!(question.matches_words(&words("x abc")), GlobMatch::NoMatch);
        assert_eq!(question.matches_words(&words("x a?c")), GlobMatch::Match);
    }

    #[test]
    fn a_word_known_only_at_run_time_is_unknown_when_a_value_would_match() {
        let rm = Glob::new("*rm *").unwrap();
        assert_eq!(
            rm.matches_words(&words("$CMD notes.txt")),
            GlobMatch::Unknown
        );
        let install = Glob::new("* install").unwrap();
        assert_eq!(install.matches_words(&words("npm $X")), GlobMatch::Unknown);
        let main = Glob::new("git * main").unwrap();
        assert_eq!(main.matches_words(&words("ls $X")), GlobMatch::NoMatch);
    }

    #[test]
    fn an_escape_is_refused() {
        assert!(Glob::new(r"echo \* *").is_err());
    }

    #[test]
    fn two_patterns_meet_when_some_text_matches_both() {
        let p = |s: &str| -> Vec<Piece> {
            s.chars()
                .map(|c| {
                    if c == '*' {
                        Piece::Star
                    } else {
                        Piece::Char(c)
                    }
                })
                .collect()
        };
        assert!(could_match(&p("a*c"), &p("ab*")));
        assert!(could_match(&p("*x*"), &p("abc*")));
        assert!(!could_match(&p("a*c"), &p("b*")));
        assert!(!could_match(&p("abc"), &p("abd")));
        assert!(could_match(&p("abc"), &p("abc")));
    }
}
