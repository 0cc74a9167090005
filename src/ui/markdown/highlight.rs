//! Code blocks highlighted by language with syntect's bundled syntaxes and a bundled theme.
//! The sets are loaded on the first code block shown in colour (about the cost the README
//! gives), never at start-up and never when colours are off.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use super::super::style::Style;
use super::super::term::Term;

/// The theme the code is painted with (dark background, readable on most terminals).
const THEME: &str = "base16-ocean.dark";

struct Sets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn sets() -> &'static Sets {
    static SETS: OnceLock<Sets> = OnceLock::new();
    SETS.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults();
        Sets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            theme: themes.themes.remove(THEME).unwrap_or_default(),
        }
    })
}

/// The lines of `code`, each painted by the syntax of `lang` (a fence's info word: `rust`,
/// `py`, `sh`...; unknown or empty is plain text). Plain, unloaded, when colours are off.
pub fn highlight(style: Style, code: &str, lang: &str) -> Vec<Term> {
    if !style.color {
        return code.lines().map(Term::plain).collect();
    }
    let sets = sets();
    let syntax = sets
        .syntaxes
        .find_syntax_by_token(lang)
        .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
    let mut lines = HighlightLines::new(syntax, &sets.theme);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let Ok(regions) = lines.highlight_line(line, &sets.syntaxes) else {
            out.push(Term::plain(line.trim_end_matches('\n')));
            continue;
        };
        let mut painted = Term::new();
        for (region, text) in regions {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            let c = region.foreground;
            painted.push(Term::painted(
                &format!("38;2;{};{};{}", c.r, c.g, c.b),
                text,
            ));
        }
        out.push(painted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_coloured_by_its_language_and_plain_without_colours() {
        let rust = highlight(Style { color: true }, "fn main() {}\n", "rust");
        assert_eq!(rust.len(), 1);
        let line = rust[0].as_str();
        assert!(line.contains("\x1b[38;2;"), "{line:?}");
        // `fn` and `main` are painted differently.
        assert!(line.matches("\x1b[38;2;").count() >= 3, "{line:?}");

        let plain = highlight(Style::plain(), "fn main() {}\nx\n", "rust");
        let plain: Vec<&str> = plain.iter().map(Term::as_str).collect();
        assert_eq!(plain, vec!["fn main() {}", "x"]);
    }

    #[test]
    fn outside_escapes_in_code_are_neutralised() {
        let lines = highlight(Style { color: true }, "echo \x1b[2J\n", "sh");
        let line = lines[0].as_str();
        assert!(line.contains("^[") && !line.contains("\x1b[2J"), "{line:?}");
    }
}
