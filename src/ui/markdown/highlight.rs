//! Code blocks highlighted by language with syntect's bundled syntaxes and a bundled theme:
//! `base16-ocean.dark` on a dark terminal, `InspiredGitHub` on a light one ([`Theme`], chosen by
//! the REPL: `theme` in settings, `/theme`, or the terminal's background), painted in truecolor
//! where `COLORTERM` says `truecolor`/`24bit` and in the 256-colour palette elsewhere.
//! The sets are loaded by the first use: [`warm_up`] on a background thread when the REPL
//! starts with colours on, else the first code block shown in colour; never with colours off.
//!
//! A block is highlighted line by line as it streams ([`CodeLines`]: syntect's state carries
//! from one line to the next), within bounds: a line longer than [`MAX_LINE`] and everything of
//! a block after its first [`MAX_BLOCK`] bytes are shown plain, so a huge block costs no more
//! than its bytes.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use syntect::easy::HighlightLines;
use syntect::highlighting::{self, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use super::super::style::Style;
use super::super::term::Term;

/// A line of code longer than this (bytes) is shown plain: syntect's cost grows with it.
pub const MAX_LINE: usize = 4096;
/// The bytes of one block highlighted at most; the rest of the block is plain.
pub const MAX_BLOCK: usize = 256 * 1024;

/// The background code is painted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    Dark,
    Light,
}

impl Theme {
    fn name(self) -> &'static str {
        match self {
            Self::Dark => "base16-ocean.dark",
            Self::Light => "InspiredGitHub",
        }
    }
}

/// 0 dark, 1 light.
static THEME: AtomicU8 = AtomicU8::new(0);

/// Sets the theme of the code painted from now on.
pub fn set_theme(theme: Theme) {
    THEME.store(u8::from(theme == Theme::Light), Ordering::Relaxed);
}

/// The theme code is painted with now.
pub fn theme() -> Theme {
    if THEME.load(Ordering::Relaxed) == 1 {
        Theme::Light
    } else {
        Theme::Dark
    }
}

/// Whether the terminal takes 24-bit colours (`COLORTERM=truecolor` or `24bit`), asked once.
fn truecolor() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit"))
}

struct Sets {
    syntaxes: SyntaxSet,
    dark: highlighting::Theme,
    light: highlighting::Theme,
}

impl Sets {
    fn theme(&self) -> &highlighting::Theme {
        match theme() {
            Theme::Dark => &self.dark,
            Theme::Light => &self.light,
        }
    }
}

fn sets() -> &'static Sets {
    static SETS: OnceLock<Sets> = OnceLock::new();
    SETS.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults();
        Sets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            dark: themes.themes.remove(Theme::Dark.name()).unwrap_or_default(),
            light: themes
                .themes
                .remove(Theme::Light.name())
                .unwrap_or_default(),
        }
    })
}

/// The SGR code of a foreground colour: truecolor, or the nearest of the 256-colour palette.
fn colour_code(c: highlighting::Color) -> String {
    if truecolor() {
        format!("38;2;{};{};{}", c.r, c.g, c.b)
    } else {
        format!("38;5;{}", ansi256(c.r, c.g, c.b))
    }
}

/// The xterm-256 index nearest to an RGB colour: the 6x6x6 cube or the grey ramp.
pub fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| -> u8 {
        match v {
            0..48 => 0,
            48..115 => 1,
            _ => (v - 35) / 40,
        }
    };
    let steps = [0u8, 95, 135, 175, 215, 255];
    let (lr, lg, lb) = (level(r), level(g), level(b));
    let cube = 16 + 36 * lr + 6 * lg + lb;
    let cube_distance = distance(
        (r, g, b),
        (steps[lr as usize], steps[lg as usize], steps[lb as usize]),
    );
    let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_level = u8::try_from(((average.saturating_sub(3)) / 10).min(23)).unwrap_or(23);
    let grey = 8 + 10 * grey_level;
    if distance((r, g, b), (grey, grey, grey)) < cube_distance {
        232 + grey_level
    } else {
        cube
    }
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).unsigned_abs().pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
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
    // Linux's nice is per thread: this thread yields to the REPL's own (an answer that starts
    // at once, with the prompt given on the command line, is painted first on a busy machine).
    #[cfg(target_os = "linux")]
    let _ = rustix::process::setpriority_process(None, 19);
    let style = Style { color: true };
    for (lang, code) in WARM_UP {
        let _ = highlight(style, code, lang);
    }
}

/// The lines of `code`, each painted by the syntax of `lang` (a fence's info word: `rust`,
/// `py`, `sh`...; unknown or empty is plain text). Plain, unloaded, when colours are off.
pub fn highlight(style: Style, code: &str, lang: &str) -> Vec<Term> {
    let mut lines = CodeLines::new(style, lang);
    LinesWithEndings::from(code)
        .map(|line| lines.line(line))
        .collect()
}

/// One code block highlighted line by line, as it streams.
pub struct CodeLines {
    state: Option<HighlightLines<'static>>,
    /// Bytes highlighted so far.
    bytes: usize,
}

impl CodeLines {
    pub fn new(style: Style, lang: &str) -> Self {
        let state = style.color.then(|| {
            let sets = sets();
            let syntax = sets
                .syntaxes
                .find_syntax_by_token(lang)
                .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
            HighlightLines::new(syntax, sets.theme())
        });
        Self { state, bytes: 0 }
    }

    /// One line of the block (its newline included or not), painted.
    pub fn line(&mut self, line: &str) -> Term {
        let bare = line.trim_end_matches('\n');
        self.bytes += line.len();
        if self.bytes > MAX_BLOCK {
            // Past the bound the rest of the block is plain; syntect's state is let go.
            self.state = None;
        }
        let Some(state) = self.state.as_mut().filter(|_| line.len() <= MAX_LINE) else {
            return Term::plain(bare);
        };
        let with_newline = format!("{bare}\n");
        let Ok(regions) = state.highlight_line(&with_newline, &sets().syntaxes) else {
            return Term::plain(bare);
        };
        let mut painted = Term::new();
        for (region, text) in regions {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            painted.push(Term::painted(&colour_code(region.foreground), text));
        }
        painted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_coloured_by_its_language_and_plain_without_colours() {
        let rust = highlight(Style { color: true }, "fn main() {}\n", "rust");
        assert_eq!(rust.len(), 1);
        let line = rust[0].as_str();
        let code = if truecolor() {
            "\x1b[38;2;"
        } else {
            "\x1b[38;5;"
        };
        assert!(line.contains(code), "{line:?}");
        // `fn` and `main` are painted differently.
        assert!(line.matches(code).count() >= 3, "{line:?}");

        let plain = highlight(Style::plain(), "fn main() {}\nx\n", "rust");
        let plain: Vec<&str> = plain.iter().map(Term::as_str).collect();
        assert_eq!(plain, vec!["fn main() {}", "x"]);
    }

    #[test]
    fn a_colour_maps_to_the_nearest_of_the_256_palette() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 255, 255), 231);
        assert_eq!(ansi256(255, 0, 0), 196);
        assert_eq!(ansi256(0x80, 0x80, 0x80), 244);
        assert_eq!(ansi256(0x2b, 0x30, 0x3b), 236, "base16-ocean's background");
    }

    #[test]
    fn a_block_streams_line_by_line_within_its_bounds() {
        let mut lines = CodeLines::new(Style { color: true }, "rust");
        let first = lines.line("/* open\n");
        let second = lines.line("still comment */ fn x() {}\n");
        assert!(first.as_str().contains("\x1b[38;"), "{first:?}");
        // The comment's state carried over: `still comment` is painted as the comment was.
        let colour = |t: &Term| t.as_str().split('m').next().unwrap_or("").to_string();
        assert_eq!(colour(&first), colour(&second));
        let long = format!("let x = \"{}\";\n", "a".repeat(MAX_LINE));
        assert!(
            !lines.line(&long).as_str().contains('\x1b'),
            "a long line is plain"
        );
        let mut big = CodeLines::new(Style { color: true }, "rust");
        let line = "fn f() {}\n";
        for _ in 0..(MAX_BLOCK / line.len() + 1) {
            big.line(line);
        }
        assert_eq!(big.line(line).as_str(), "fn f() {}", "plain past the bound");
    }

    #[test]
    fn outside_escapes_in_code_are_neutralised() {
        let lines = highlight(Style { color: true }, "echo \x1b[2J\n", "sh");
        let line = lines[0].as_str();
        assert!(line.contains("^[") && !line.contains("\x1b[2J"), "{line:?}");
    }
}
