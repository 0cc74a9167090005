//! Markdown answers for the REPL, rendered as they stream: the text is cut into blocks (a
//! paragraph, a fenced code block, a heading, a list, a table) and each block is rendered once,
//! when it is complete, so the work stays linear in the answer's length. Text of a block still
//! open is held back until the block ends (or the answer does).
//!
//! Everything comes out as [`Term`]: the model's text is neutralised on the way in (before it
//! is parsed, so a `\r` shows as `^M` rather than breaking a line) and only the
//! colours added here (by `render` and `highlight`) carry escape sequences. `-p` never renders:
//! its answer is the model's text, byte for byte.

mod highlight;
mod render;
mod wrap;

use super::safe_text::neutralise;
use super::style::Style;
use super::term::Term;

pub use highlight::warm_up;
pub use render::render;

/// Cuts streamed text into complete markdown blocks and renders each as soon as it is complete.
pub struct MarkdownStream {
    style: Style,
    width: usize,
    /// The last line, not yet ended by a newline.
    partial: String,
    /// Complete lines of the block being collected.
    block: String,
    /// The open fence of a code block: its character and length.
    fence: Option<(char, usize)>,
    /// The block is a list: a blank line ends it only if the next line does not go on with it.
    block_is_list: bool,
    blank_pending: bool,
    rendered_any: bool,
}

impl MarkdownStream {
    pub fn new(style: Style, width: usize) -> Self {
        Self {
            style,
            width,
            partial: String::new(),
            block: String::new(),
            fence: None,
            block_is_list: false,
            blank_pending: false,
            rendered_any: false,
        }
    }

    /// Takes one delta of the answer; returns what can be painted now (often nothing).
    pub fn push(&mut self, delta: &str) -> Term {
        let mut out = Term::new();
        // Neutralised before parsing: a `\r` must show as `^M`, not end a markdown line.
        self.partial.push_str(&neutralise(delta));
        let mut start = 0;
        while let Some(end) = self.partial[start..].find('\n') {
            let end = start + end + 1;
            let line = self.partial[start..end].to_string();
            self.line(&line, &mut out);
            start = end;
        }
        self.partial.drain(..start);
        out
    }

    /// The answer ended: renders whatever is left.
    pub fn finish(&mut self) -> Term {
        let mut out = Term::new();
        if !self.partial.is_empty() {
            let mut line = std::mem::take(&mut self.partial);
            line.push('\n');
            self.line(&line, &mut out);
        }
        self.flush(&mut out);
        self.fence = None;
        self.rendered_any = false;
        out
    }

    /// Whether text has arrived that is not painted yet.
    pub fn is_holding(&self) -> bool {
        !self.partial.is_empty() || !self.block.trim().is_empty()
    }

    fn line(&mut self, line: &str, out: &mut Term) {
        if let Some((c, n)) = self.fence {
            self.block.push_str(line);
            if closes_fence(line, c, n) {
                self.fence = None;
                if !self.block_is_list {
                    self.flush(out);
                }
            }
            return;
        }
        if line.trim().is_empty() {
            if self.block.trim().is_empty() {
                self.block.clear();
            } else if self.block_is_list {
                self.blank_pending = true;
                self.block.push_str(line);
            } else {
                self.flush(out);
            }
            return;
        }
        let indented = line.starts_with([' ', '\t']);
        if self.blank_pending {
            self.blank_pending = false;
            if !(indented || is_list_item(line)) {
                self.flush(out);
            }
        }
        let inside_list = self.block_is_list && indented;
        if let Some(fence) = opens_fence(line) {
            if !inside_list {
                self.flush(out);
            }
            self.fence = Some(fence);
            self.block.push_str(line);
            return;
        }
        if is_heading(line) && !inside_list {
            self.flush(out);
            self.block.push_str(line);
            self.flush(out);
            return;
        }
        if self.block.is_empty() {
            self.block_is_list = is_list_item(line);
        }
        self.block.push_str(line);
    }

    fn flush(&mut self, out: &mut Term) {
        let block = std::mem::take(&mut self.block);
        self.block_is_list = false;
        self.blank_pending = false;
        if block.trim().is_empty() {
            return;
        }
        if self.rendered_any {
            out.push("\n");
        }
        out.push(render(&block, self.style, self.width));
        self.rendered_any = true;
    }
}

/// A line that opens a fenced code block: up to three spaces, then three or more backticks or
/// tildes (a backtick fence's info string has no backtick).
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let body = line.trim_start();
    let c = body.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = body.chars().take_while(|x| *x == c).count();
    if n < 3 || (c == '`' && body[n..].contains('`')) {
        return None;
    }
    Some((c, n))
}

fn closes_fence(line: &str, c: char, n: usize) -> bool {
    let body = line.trim();
    body.chars().take_while(|x| *x == c).count() >= n && body.chars().all(|x| x == c)
}

fn is_heading(line: &str) -> bool {
    let body = line.trim_start_matches(' ');
    if line.len() - body.len() > 3 {
        return false;
    }
    let hashes = body.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && body[hashes..].starts_with([' ', '\t', '\n'])
}

fn is_list_item(line: &str) -> bool {
    let body = line.trim_start();
    if body.starts_with("- ") || body.starts_with("* ") || body.starts_with("+ ") {
        return true;
    }
    let digits = body.chars().take_while(char::is_ascii_digit).count();
    (1..=9).contains(&digits)
        && (body[digits..].starts_with(". ") || body[digits..].starts_with(") "))
}

#[cfg(test)]
mod tests;
