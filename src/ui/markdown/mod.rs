//! Markdown answers for the REPL, rendered as they stream. The text is cut into blocks (a
//! paragraph, a fenced code block, a heading, a list, a quote, a table) and painted as soon as
//! what is on screen cannot change: a code block line by line (highlighted per line, syntect's
//! state carried), a paragraph, list or quote a wrapped row at a time (all its rows but the last,
//! which the next words may still fill), a heading at its newline. Only a table is held back
//! whole, since its columns depend on every row ([`MarkdownStream::table_rows`] counts them for
//! the spinner); one that grows past [`MAX_TABLE`] bytes is painted as its lines from there on.
//!
//! The cost stays bounded: a streamed block is laid out again only when enough text came since
//! (a quarter of a row, or half again its size once it is over [`SMALL_BLOCK`]), so each byte
//! is laid out a bounded number of times; code is highlighted within syntect's bounds
//! (`highlight::MAX_LINE`, `highlight::MAX_BLOCK`). [`MarkdownStream::stop`] (Ctrl-C) drops
//! what is not painted yet.
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

pub use highlight::{Theme, set_theme, theme, warm_up};
pub use render::{render, render_rows};
pub use wrap::term_width;

/// A streamed block over this many bytes is laid out again only when it grew by half.
pub const SMALL_BLOCK: usize = 4096;
/// A table over this many bytes stops being laid out as one: the rest shows as its lines.
pub const MAX_TABLE: usize = 256 * 1024;

/// An open fenced code block, painted line by line.
struct Fence {
    c: char,
    n: usize,
    /// The fence's indentation, taken off its lines.
    indent: usize,
    lines: highlight::CodeLines,
}

/// Cuts streamed text into markdown blocks and paints each as far as it can be.
pub struct MarkdownStream {
    style: Style,
    /// The width for the next block (the terminal's, read by the caller before each push).
    width: usize,
    /// The width of the block being collected, read when it began.
    block_width: usize,
    /// The last line, not yet ended by a newline.
    partial: String,
    /// Complete lines of the block being collected.
    block: String,
    fence: Option<Fence>,
    /// The block is a list: a blank line ends it only if the next line does not go on with it.
    block_is_list: bool,
    blank_pending: bool,
    rendered_any: bool,
    /// The plain text of the rows of the current block already painted.
    painted: Vec<String>,
    /// The block's gap line (before it) is painted.
    started: bool,
    /// The size of the text laid out at the last try, to know when to try again.
    tried: usize,
    /// The rows painted no longer match a new layout: the rest waits for the block's end.
    unstable: bool,
    /// A table too big to lay out: its lines are painted as they come.
    raw_table: bool,
    stopped: bool,
    /// Ctrl-C: checked between lines, so that a huge delta stops being painted at once.
    cancel: Option<tokio_util::sync::CancellationToken>,
}

impl MarkdownStream {
    pub fn new(style: Style, width: usize) -> Self {
        Self {
            style,
            width,
            block_width: width,
            partial: String::new(),
            block: String::new(),
            fence: None,
            block_is_list: false,
            blank_pending: false,
            rendered_any: false,
            painted: Vec::new(),
            started: false,
            tried: 0,
            unstable: false,
            raw_table: false,
            stopped: false,
            cancel: None,
        }
    }

    /// Stops painting (as [`MarkdownStream::stop`]) once `cancel` is cancelled.
    pub fn stop_on(mut self, cancel: tokio_util::sync::CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// The terminal's width now: used from the next block on.
    pub fn set_width(&mut self, width: usize) {
        self.width = width.max(10);
    }

    /// Ctrl-C: nothing more is painted, what is held is dropped.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.partial.clear();
        self.block.clear();
        self.fence = None;
    }

    /// Takes one delta of the answer; returns what can be painted now.
    pub fn push(&mut self, delta: &str) -> Term {
        let mut out = Term::new();
        if self.stopped {
            return out;
        }
        // Neutralised before parsing: a `\r` must show as `^M`, not end a markdown line.
        self.partial.push_str(&neutralise(delta));
        let mut start = 0;
        while let Some(end) = self.partial[start..].find('\n') {
            if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                self.stop();
                return out;
            }
            let end = start + end + 1;
            let line = self.partial[start..end].to_string();
            self.line(&line, &mut out);
            start = end;
        }
        self.partial.drain(..start);
        self.stream(&mut out);
        out
    }

    /// The answer ended: renders whatever is left.
    pub fn finish(&mut self) -> Term {
        let mut out = Term::new();
        if self.stopped {
            self.stopped = false;
            self.rendered_any = false;
            return out;
        }
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

    /// The body rows of the table being held back, or `None` when none is.
    pub fn table_rows(&self) -> Option<usize> {
        (!self.raw_table && self.fence.is_none() && is_table_start(&self.block))
            .then(|| self.block.lines().count().saturating_sub(2))
    }

    fn line(&mut self, line: &str, out: &mut Term) {
        if let Some(fence) = &mut self.fence {
            if closes_fence(line, fence.c, fence.n) {
                self.fence = None;
                self.rendered_any = true;
                return;
            }
            let lead = line.len() - line.trim_start_matches(' ').len();
            let body = &line[lead.min(fence.indent)..];
            out.push("  ");
            out.push(fence.lines.line(body));
            out.push("\n");
            return;
        }
        if self.raw_table {
            if line.trim().is_empty() {
                self.raw_table = false;
                self.rendered_any = true;
                return;
            }
            out.push(Term::plain(line));
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
        if !inside_list && let Some((c, n)) = opens_fence(line) {
            self.flush(out);
            self.gap(out);
            let indent = line.len() - line.trim_start_matches(' ').len();
            let lang = line.trim_start().trim_start_matches(c);
            let lang = lang.split_whitespace().next().unwrap_or("");
            self.fence = Some(Fence {
                c,
                n,
                indent,
                lines: highlight::CodeLines::new(self.style, lang),
            });
            return;
        }
        if is_heading(line) && !inside_list {
            self.flush(out);
            self.begin_block();
            self.block.push_str(line);
            self.flush(out);
            return;
        }
        if self.block.is_empty() {
            if !self.started {
                self.begin_block();
            }
            self.block_is_list = is_list_item(line);
        }
        self.block.push_str(line);
        if self.block.len() > MAX_TABLE && is_table_start(&self.block) {
            // Too big to lay out as a table: what came is drawn as one, the rest as lines.
            self.flush(out);
            self.raw_table = true;
        }
    }

    fn begin_block(&mut self) {
        self.block_width = self.width;
        self.painted.clear();
        self.started = false;
        self.tried = 0;
        self.unstable = false;
    }

    /// The blank line between two blocks, once.
    fn gap(&mut self, out: &mut Term) {
        if self.rendered_any {
            out.push("\n");
        }
        self.rendered_any = true;
    }

    /// Paints the rows of the open block that cannot change any more: every row of its layout
    /// but the last, when the rows painted before are still laid out the same.
    fn stream(&mut self, out: &mut Term) {
        if self.fence.is_some() || self.raw_table || self.unstable {
            return;
        }
        // The partial line up to its last space: its words are whole. It goes on the block
        // when it can only continue it (or start a paragraph).
        let continues = if self.block.trim().is_empty() {
            starts_paragraph(&self.partial)
        } else {
            !self.block_is_list || self.partial.starts_with([' ', '\t'])
        };
        let whole = match self.partial.rfind(char::is_whitespace) {
            Some(at) if continues => self.partial[..at].to_string(),
            _ => String::new(),
        };
        if (self.block.trim().is_empty() && whole.trim().is_empty()) || is_table_start(&self.block)
        {
            return;
        }
        if self.block.trim().is_empty() && !self.started && self.painted.is_empty() {
            self.begin_block();
        }
        let size = self.block.len() + whole.len();
        let due = if size > SMALL_BLOCK {
            size >= self.tried + self.tried / 2
        } else {
            size >= self.tried + (self.block_width / 4).max(8)
        };
        if !due {
            return;
        }
        self.tried = size;
        let mut text = self.block.clone();
        text.push_str(&whole);
        let rows = render::render_rows(&text, self.style, self.block_width);
        let Some((_, settled)) = rows.split_last() else {
            return;
        };
        if settled.len() <= self.painted.len() {
            return;
        }
        let same = settled
            .iter()
            .zip(&self.painted)
            .all(|(row, painted)| plain(row) == *painted);
        if !same {
            self.unstable = true;
            return;
        }
        for row in &settled[self.painted.len()..] {
            let shown = plain(row);
            if may_change(&shown) {
                // Markup that may still open or close (`*`, a backtick...): wait for more.
                return;
            }
            if !self.started {
                self.started = true;
                self.gap(out);
            }
            out.push(row.clone());
            out.push("\n");
            self.painted.push(shown);
        }
    }

    fn flush(&mut self, out: &mut Term) {
        let block = std::mem::take(&mut self.block);
        self.block_is_list = false;
        self.blank_pending = false;
        let painted = std::mem::take(&mut self.painted);
        let started = std::mem::replace(&mut self.started, false);
        if block.trim().is_empty() {
            return;
        }
        let rows = render::render_rows(&block, self.style, self.block_width);
        // Skip the rows already painted (and a gap row a later layout put between them).
        let mut skip = 0;
        let mut matched = 0;
        while matched < painted.len() && skip < rows.len() {
            let row = plain(&rows[skip]);
            if row == painted[matched] {
                matched += 1;
            } else if !row.trim().is_empty() {
                break;
            }
            skip += 1;
        }
        if !started {
            self.gap(out);
        }
        for row in &rows[skip..] {
            out.push(row.clone());
            out.push("\n");
        }
    }
}

/// A painted row's text without Ling's colours (only they can be escape sequences in it).
fn plain(row: &Term) -> String {
    wrap::without_colours(row)
}

/// Whether a row shows a character that more text could still turn into markup (an emphasis
/// not closed yet, a code span, a link): such a row waits.
fn may_change(row: &str) -> bool {
    if row.contains(['*', '`', '[', ']', '~', '<']) {
        return true;
    }
    // `_` inside a word (`snake_case`) never opens an emphasis; at a word's edge it may.
    let chars: Vec<char> = row.chars().collect();
    chars.iter().enumerate().any(|(i, c)| {
        *c == '_'
            && !(i > 0
                && chars[i - 1].is_alphanumeric()
                && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric()))
    })
}

/// Whether a line still being written can only be a paragraph's: not a heading, a fence, a
/// list item, a table row, indented code or HTML.
fn starts_paragraph(line: &str) -> bool {
    let Some(c) = line.chars().next() else {
        return false;
    };
    !matches!(
        c,
        ' ' | '\t' | '#' | '`' | '~' | '|' | '-' | '*' | '+' | '<' | '=' | '>' | '_'
    ) && !c.is_ascii_digit()
        && !line.contains('|')
}

/// A block that starts as a table: its first line has a `|`.
fn is_table_start(block: &str) -> bool {
    block.lines().next().is_some_and(|l| l.contains('|'))
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
