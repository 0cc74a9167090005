//! Words as bash sees them once it has parsed a command: quotes removed and escapes applied
//! (`\rm`, `'rm'`, `r''m`, `"rm"` and `$'\x72m'` are all `rm`), or marked dynamic when their
//! value is only known when the command runs (`$x`, `$(...)`, globs, brace expansion).

use tree_sitter::Node;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The value after quote removal; for a dynamic word, its source text.
    pub text: String,
    /// The value depends on the run: an expansion, a substitution, a glob.
    pub dynamic: bool,
    /// Bash may turn it into zero or several words (unquoted expansions, globs, braces), so
    /// the words after it have no fixed position.
    pub splits: bool,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            dynamic: false,
            splits: false,
        }
    }

    pub fn dynamic(text: impl Into<String>, splits: bool) -> Self {
        Self {
            text: text.into(),
            dynamic: true,
            splits,
        }
    }

    /// The literal value, if the word has one.
    pub fn lit(&self) -> Option<&str> {
        (!self.dynamic).then_some(self.text.as_str())
    }

    /// A program given by path is matched by its name: `/bin/rm` is `rm`.
    pub fn basename(&self) -> Self {
        match self.lit() {
            Some(text) => match text.rsplit('/').next() {
                Some(name) if !name.is_empty() => Word::literal(name),
                _ => self.clone(),
            },
            None => self.clone(),
        }
    }

    /// How the word is shown in a rule or a message: quoted when it holds blanks or quotes, so
    /// word boundaries stay visible (`rm 'a b'` is not `rm a b`).
    pub fn render(&self) -> String {
        if self.dynamic {
            return self.text.clone();
        }
        let plain = !self.text.is_empty()
            && !self
                .text
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\'));
        if plain {
            self.text.clone()
        } else {
            format!("'{}'", self.text.replace('\'', r"'\''"))
        }
    }
}

/// Words joined with one blank each.
pub fn render_words(words: &[Word]) -> String {
    words.iter().map(Word::render).collect::<Vec<_>>().join(" ")
}

/// The word a parse-tree node stands for.
pub fn word(node: Node, src: &str) -> Word {
    let mut builder = Builder::default();
    builder.push(node, src, false);
    let raw = node_text(node, src);
    if builder.dynamic || builder.expands() {
        Word::dynamic(raw.trim(), builder.splits || builder.expands())
    } else {
        Word::literal(builder.text)
    }
}

pub fn node_text<'a>(node: Node, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or_default()
}

#[derive(Default)]
struct Builder {
    text: String,
    dynamic: bool,
    splits: bool,
    /// The word's characters with every quoted or escaped one replaced by `_`, to find the
    /// glob and brace characters bash would expand.
    unquoted: String,
}

impl Builder {
    fn push(&mut self, node: Node, src: &str, quoted: bool) {
        let text = node_text(node, src);
        match node.kind() {
            "word" | "number" if node.named_child_count() == 0 => {
                if quoted {
                    self.literal(text, true);
                } else {
                    self.unquoted_word(text);
                }
            }
            "raw_string" => {
                let inner = text.strip_prefix('\'').unwrap_or(text);
                self.literal(inner.strip_suffix('\'').unwrap_or(inner), true);
            }
            "ansi_c_string" => {
                let inner = text.strip_prefix("$'").unwrap_or(text);
                self.literal(&ansi_c(inner.strip_suffix('\'').unwrap_or(inner)), true);
            }
            "string" | "translated_string" => {
                for i in 0..node.named_child_count() {
                    if let Some(child) = node.named_child(i as u32) {
                        self.push(child, src, true);
                    }
                }
            }
            "string_content" => self.literal(&double_quoted(text), true),
            "concatenation" | "command_name" => {
                for i in 0..node.named_child_count() {
                    if let Some(child) = node.named_child(i as u32) {
                        self.push(child, src, quoted);
                    }
                }
            }
            // A process substitution is one word (a /dev/fd path) whose content is a command.
            "process_substitution" => {
                self.dynamic = true;
                self.literal(text, true);
            }
            _ => {
                // Expansions, substitutions, arithmetic, arrays: known only when it runs.
                self.dynamic = true;
                self.splits |= !quoted;
                self.literal(text, true);
            }
        }
    }

    fn literal(&mut self, text: &str, quoted: bool) {
        self.text.push_str(text);
        if quoted {
            self.unquoted.extend(text.chars().map(|_| '_'));
        } else {
            self.unquoted.push_str(text);
        }
    }

    /// An unquoted word: a backslash quotes the next character, and a backslash-newline
    /// is a line continuation that disappears.
    fn unquoted_word(&mut self, text: &str) {
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('\n') | None => {}
                    Some(next) => {
                        self.text.push(next);
                        self.unquoted.push('_');
                    }
                }
            } else {
                self.text.push(c);
                self.unquoted.push(c);
            }
        }
    }

    /// Whether bash would expand the unquoted part: a glob (`*`, `?`, `[...]`) or a brace
    /// expansion (`{a,b}`, `{1..3}`).
    fn expands(&self) -> bool {
        let u = &self.unquoted;
        if u.contains('*') || u.contains('?') {
            return true;
        }
        if let Some(open) = u.find('[')
            && u[open + 1..].contains(']')
        {
            return true;
        }
        if let Some(open) = u.find('{')
            && let Some(close) = u[open..].find('}')
        {
            let inside = &u[open + 1..open + close];
            return inside.contains(',') || inside.contains("..");
        }
        false
    }
}

/// The content of a double-quoted string: a backslash only escapes `$`, `` ` ``, `"`, `\` and
/// a newline.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    out.push(next);
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of a `$'...'` string: C escapes, octal, hex and Unicode escapes, `\cX` controls.
fn ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(value) = simple {
            out.push(value);
            continue;
        }
        let (radix, max, start) = match e {
            '0'..='7' => (8, 3, i - 1),
            'x' => (16, 2, i),
            'u' => (16, 4, i),
            'U' => (16, 8, i),
            'c' if i < chars.len() => {
                out.push(char::from((chars[i] as u32 & 0x1f) as u8));
                i += 1;
                continue;
            }
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let digits: String = chars[start..]
            .iter()
            .take(max)
            .take_while(|d| d.is_digit(radix))
            .collect();
        if digits.is_empty() {
            out.push('\\');
            out.push(e);
            continue;
        }
        i = start + digits.chars().count();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(value) => out.push(value),
            None => out.push('\u{fffd}'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode_like_bash() {
        assert_eq!(ansi_c(r"r\x6d"), "rm");
        assert_eq!(ansi_c(r"\162\155"), "rm");
        assert_eq!(ansi_c(r"\u0072m"), "rm");
        assert_eq!(ansi_c(r"a\tb\\\'"), "a\tb\\'");
        assert_eq!(ansi_c(r"\q\x"), r"\q\x");
        assert_eq!(ansi_c(r"\cA"), "\u{1}");
    }

    #[test]
    fn double_quotes_keep_backslashes_bash_keeps() {
        assert_eq!(double_quoted(r#"a\"b\$c\\d\e"#), r#"a"b$c\d\e"#);
    }

    #[test]
    fn rendering_quotes_only_what_needs_it() {
        assert_eq!(Word::literal("rm").render(), "rm");
        assert_eq!(Word::literal("a b").render(), "'a b'");
        assert_eq!(Word::literal("").render(), "''");
        assert_eq!(Word::literal("it's").render(), r"'it'\''s'");
        assert_eq!(Word::literal("/bin/rm").basename().render(), "rm");
        assert_eq!(Word::dynamic("$x", true).basename().render(), "$x");
    }
}
