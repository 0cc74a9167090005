//! Finds where a value or key sits in a JSON text, given its path, so that `hooks.json`
//! and `mcp.json` mistakes found after parsing still point at a line and column.

use super::resolved::Position;

/// One step of a path into a JSON document.
#[derive(Clone)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// Where the value at `trail` starts in `text` (or its key, with `key`), which must be valid JSON.
/// Falls back to the start of the file if the path is not found.
pub(crate) fn locate(text: &str, trail: &[Seg], key: bool) -> Position {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        at: 0,
    };
    scanner.skip_ws();
    let offset = scanner.find(trail, key).unwrap_or(0);
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    Position {
        line,
        column: offset - line_start + 1,
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// At the start of a value: the offset of the value (or key) at `trail` under it.
    fn find(&mut self, trail: &[Seg], key: bool) -> Option<usize> {
        let Some((first, rest)) = trail.split_first() else {
            return Some(self.at);
        };
        match (first, self.peek()?) {
            (Seg::Key(wanted), b'{') => {
                self.at += 1;
                loop {
                    self.skip_ws();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    let key_at = self.at;
                    let name = self.string()?;
                    self.skip_ws();
                    self.at += 1; // the ':'
                    self.skip_ws();
                    if name == *wanted {
                        return if rest.is_empty() && key {
                            Some(key_at)
                        } else {
                            self.find(rest, key)
                        };
                    }
                    self.skip_value()?;
                    self.skip_ws();
                    if self.peek()? != b',' {
                        return None;
                    }
                    self.at += 1;
                }
            }
            (Seg::Index(wanted), b'[') => {
                self.at += 1;
                for _ in 0..*wanted {
                    self.skip_ws();
                    self.skip_value()?;
                    self.skip_ws();
                    if self.peek()? != b',' {
                        return None;
                    }
                    self.at += 1;
                }
                self.skip_ws();
                self.find(rest, key)
            }
            _ => None,
        }
    }

    /// Reads a string token and returns its decoded text.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => {
                    escaped = true;
                    self.at += 1;
                }
                b'"' => {
                    let raw = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
                    return if escaped {
                        serde_json::from_str(raw).ok()
                    } else {
                        Some(raw[1..raw.len() - 1].to_string())
                    };
                }
                _ => {}
            }
        }
        None
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}
