//! Code blocks highlighted by language with syntect's bundled syntaxes and a bundled theme.
//! The sets are loaded by the first use: [`warm_up`] on a background thread when the REPL
//! starts with colours on, else the first code block shown in colour; never with colours off.

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

/// Small programs in the languages answers show most, using their common constructs. syntect
/// compiles a syntax's regexes the first time a construct needs them (up to about 10 ms for a
/// Rust function's signature); highlighting these once, off the REPL's thread at start-up,
/// pays that before the first answer instead of during it.
const WARM_UP: &[(&str, &str)] = &[
    (
        "rust",
        "use std::io::{self, Read};\n\n/// Docs.\n#[derive(Debug, Clone)]\npub struct Item<'a> { \
         name: &'a str, size: Option<u64> }\n\nimpl<'a> Item<'a> {\n    pub async fn load(path: \
         &[u8], n: usize) -> Result<Vec<u8>, io::Error> {\n        let mut out = vec![0u8; n]; // \
         buffer\n        match self.size { Some(s) if s > 0 => out.push(b'x'), _ => {} }\n        \
         for (i, c) in \"abc\".chars().enumerate() { println!(\"{i}: {c:?}\"); }\n        \
         Ok(out?)\n    }\n}\n",
    ),
    (
        "python",
        "import os\nfrom typing import Optional\n\n@dataclass\nclass Item:\n    \"\"\"Docs.\"\"\"\n    \
         def load(self, path: str, n: int = 0) -> Optional[bytes]:\n        # comment\n        \
         with open(path, 'rb') as f:\n            return f.read(n) if n else f\"{path}\"\n",
    ),
    (
        "javascript",
        "import { x } from './x.js';\nexport async function load(path, n = 0) {\n  // comment\n  \
         const out = await fetch(`${path}/${n}`);\n  return out.ok ? [1, 2].map((v) => v * 2) : \
         null;\n}\n",
    ),
    (
        "typescript",
        "interface Item { name: string; size?: number }\nexport const load = async (p: string): \
         Promise<Item[]> => { return [] as Item[]; };\n",
    ),
    (
        "sh",
        "#!/bin/sh\nset -eu\nfor f in *.rs; do\n  if [ -f \"$f\" ]; then echo \"${f%.rs}\" | grep -v \
         x > out.txt 2>&1; fi\ndone\n",
    ),
    (
        "json",
        "{\"name\": \"x\", \"n\": [1, 2.5, true, null], \"o\": {}}\n",
    ),
    (
        "toml",
        "[package]\nname = \"x\" # comment\nversion = \"0.1\"\n[deps]\nserde = { version = \"1\" }\n",
    ),
    (
        "yaml",
        "name: x\nsteps:\n  - run: cargo test # comment\n    env: { A: \"1\" }\n",
    ),
    (
        "go",
        "package main\n\nimport \"fmt\"\n\nfunc load(path string, n int) ([]byte, error) {\n\t\
         // comment\n\treturn nil, fmt.Errorf(\"%s\", path)\n}\n",
    ),
    (
        "c",
        "#include <stdio.h>\nstatic int load(const char *path, size_t n) {\n  /* comment */\n  \
         return printf(\"%s %zu\\n\", path, n);\n}\n",
    ),
    ("diff", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n"),
];

/// Loads the sets and compiles what the common languages' code needs (the snippets of
/// `WARM_UP`); for a background thread at REPL start when colours are on.
pub fn warm_up() {
    let style = Style { color: true };
    for (lang, code) in WARM_UP {
        let _ = highlight(style, code, lang);
    }
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
