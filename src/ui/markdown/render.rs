//! One complete markdown block → terminal lines, from pulldown-cmark's events: headings bold,
//! emphasis, lists with bullets or numbers, block quotes behind a bar, links with their target,
//! tables with aligned columns, code highlighted ([`super::highlight`]), paragraphs wrapped.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthStr;

use super::super::style::Style;
use super::super::term::Term;
use super::highlight::highlight;
use super::wrap::{Span, Tone, one_line, term_width, width_of, wrap};

/// `markdown` rendered for a terminal `width` columns wide; every line ends with a newline.
pub fn render(markdown: &str, style: Style, width: usize) -> Term {
    let mut out = Term::new();
    for line in render_rows(markdown, style, width) {
        out.push(line);
        out.push("\n");
    }
    out
}

/// `markdown` rendered as rows of at most `width` columns (tables and code aside), without
/// their newlines.
pub fn render_rows(markdown: &str, style: Style, width: usize) -> Vec<Term> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut r = Renderer::new(style, width);
    for event in Parser::new_ext(markdown, options) {
        r.event(event);
    }
    r.flush();
    r.lines
}

enum Container {
    Quote,
    /// A list and the number of its next item (`None`: bullets).
    List(Option<u64>),
    /// An item, indented by its marker's width.
    Item(usize),
}

#[derive(Default)]
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span>>>,
    row: Vec<Vec<Span>>,
    cell: Option<Vec<Span>>,
    header_rows: usize,
}

struct Renderer {
    style: Style,
    width: usize,
    lines: Vec<Term>,
    spans: Vec<Span>,
    containers: Vec<Container>,
    /// The marker of an item just begun, shown on its first line.
    marker: Option<String>,
    /// A blank line is due before the next thing shown.
    gap: bool,
    strong: usize,
    emphasis: usize,
    strike: usize,
    heading: Option<HeadingLevel>,
    /// Open links: their target and where their text starts in `spans`.
    links: Vec<(String, usize)>,
    code: Option<(String, String)>,
    table: Option<Table>,
}

impl Renderer {
    fn new(style: Style, width: usize) -> Self {
        Self {
            style,
            width,
            lines: Vec::new(),
            spans: Vec::new(),
            containers: Vec::new(),
            marker: None,
            gap: false,
            strong: 0,
            emphasis: 0,
            strike: 0,
            heading: None,
            links: Vec::new(),
            code: None,
            table: None,
        }
    }

    fn tone(&self) -> Tone {
        Tone {
            bold: self.strong > 0 || self.heading.is_some(),
            italic: self.emphasis > 0,
            strike: self.strike > 0,
            underline: !self.links.is_empty() || self.heading == Some(HeadingLevel::H1),
            dim: false,
            cyan: false,
        }
    }

    fn text(&mut self, text: &str, tone: Tone) {
        let span = Span {
            text: text.to_string(),
            tone,
        };
        if let Some(code) = &mut self.code {
            code.1.push_str(text);
        } else if let Some(cell) = self.table.as_mut().and_then(|t| t.cell.as_mut()) {
            cell.push(span);
        } else {
            self.spans.push(span);
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text, self.tone()),
            Event::Code(text) => {
                let tone = Tone {
                    cyan: true,
                    ..self.tone()
                };
                if self.style.color {
                    self.text(&text, tone);
                } else {
                    // Without colours the backticks are what shows it is code.
                    self.text(&format!("`{text}`"), tone);
                }
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                self.text(text.trim_end_matches('\n'), self.tone())
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text, self.tone()),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), self.tone()),
            Event::SoftBreak => self.text(" ", self.tone()),
            Event::HardBreak => self.text("\n", Tone::default()),
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, self.tone())
            }
            Event::Rule => {
                self.flush();
                self.gap_line();
                let rule = "─".repeat(self.available().min(40));
                let line = self.style.dim(&rule);
                self.emit(line);
                self.gap = true;
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.heading = Some(level);
                if !self.style.color {
                    // Without bold, the marks are what shows it is a heading.
                    let marks = "#".repeat(level as usize);
                    self.text(&format!("{marks} "), Tone::default());
                }
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap_line();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                self.flush();
                self.containers.push(Container::List(first));
            }
            Tag::Item => {
                self.flush();
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List(_)))
                    .count();
                let marker = match self.containers.last_mut() {
                    Some(Container::List(Some(n))) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ if depth > 1 => "◦ ".to_string(),
                    _ => "• ".to_string(),
                };
                self.containers.push(Container::Item(marker.width()));
                self.marker = Some(marker);
            }
            Tag::Table(aligns) => {
                self.flush();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {}
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell = Some(Vec::new());
                }
            }
            Tag::Emphasis => self.emphasis += 1,
            Tag::Strong => self.strong += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let at = self.spans.len();
                self.links.push((dest_url.to_string(), at));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.heading = None;
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.gap_line();
                    for line in highlight(self.style, &code, &lang) {
                        self.emit(crate::term!["  ", line]);
                    }
                    self.gap = true;
                }
            }
            TagEnd::List(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
                self.marker = None;
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = table.cell.take().unwrap_or_default();
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.gap_line();
                    for line in table_lines(self.style, &table, self.available()) {
                        self.emit(line);
                    }
                    self.gap = true;
                }
            }
            TagEnd::Emphasis => self.emphasis = self.emphasis.saturating_sub(1),
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link | TagEnd::Image => {
                if let Some((dest, at)) = self.links.pop() {
                    let shown: String = self.spans[at.min(self.spans.len())..]
                        .iter()
                        .map(|s| s.text.as_str())
                        .collect();
                    if !dest.is_empty() && shown != dest {
                        let tone = Tone {
                            dim: true,
                            ..Tone::default()
                        };
                        self.text(&format!(" ({dest})"), tone);
                    }
                }
            }
            _ => {}
        }
    }

    /// Columns left for text after the containers' prefixes.
    fn available(&self) -> usize {
        let used: usize = self
            .containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::Item(w) => *w,
                Container::List(_) => 0,
            })
            .sum();
        self.width.saturating_sub(used).max(10)
    }

    /// The containers' prefix for the next line: quote bars, item indents, a new item's marker.
    fn prefix(&mut self) -> Term {
        let mut out = Term::new();
        let innermost_item = self
            .containers
            .iter()
            .rposition(|c| matches!(c, Container::Item(_)));
        let marker = self.marker.take();
        for (i, container) in self.containers.iter().enumerate() {
            match container {
                Container::Quote => out.push(self.style.dim("│ ")),
                Container::Item(w) => match (&marker, Some(i) == innermost_item) {
                    (Some(marker), true) => out.push(self.style.dim(marker)),
                    _ => out.push(" ".repeat(*w)),
                },
                Container::List(_) => {}
            }
        }
        out
    }

    fn emit(&mut self, line: Term) {
        let prefix = self.prefix();
        self.lines.push(prefix + line);
    }

    /// The blank line due between two blocks (quote bars kept), if one is due.
    fn gap_line(&mut self) {
        if std::mem::take(&mut self.gap) && !self.lines.is_empty() {
            let mut bars = Term::new();
            for c in &self.containers {
                if matches!(c, Container::Quote) {
                    bars.push(self.style.dim("│"));
                }
            }
            self.lines.push(bars);
        }
    }

    /// Wraps and emits the text collected so far.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        self.gap_line();
        for line in wrap(self.style, &spans, self.available()) {
            self.emit(line);
        }
    }
}

/// The narrowest a column is squeezed to before the table is drawn as a list instead.
const MIN_COLUMN: usize = 6;

/// A table's rows with each column as wide as its widest cell, aligned as the delimiter row
/// says, the header bold and ruled off. When that is wider than `width`, the widest columns are
/// narrowed and their cells wrapped inside them (a row then takes several lines); when even
/// columns of [`MIN_COLUMN`] cannot fit, each row is drawn as a list of `header: value`.
fn table_lines(style: Style, table: &Table, width: usize) -> Vec<Term> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in &table.rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width_of(cell));
        }
    }
    let separators = 3 * columns.saturating_sub(1);
    let available = width.saturating_sub(separators);
    if widths.iter().sum::<usize>() > available {
        if columns * MIN_COLUMN > available {
            return table_as_list(style, table, width);
        }
        while widths.iter().sum::<usize>() > available {
            let Some(widest) = (0..columns).max_by_key(|i| widths[*i]) else {
                break;
            };
            widths[widest] -= 1;
        }
    }
    let mut lines = Vec::new();
    for (r, row) in table.rows.iter().enumerate() {
        let header = r < table.header_rows;
        let cells: Vec<Vec<Term>> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let cell = row.get(i).map(Vec::as_slice).unwrap_or(&[]);
                let cell = if header { bolded(cell) } else { cell.to_vec() };
                if width_of(&cell) <= *w {
                    vec![one_line(style, &cell)]
                } else {
                    wrap(style, &cell, *w)
                }
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut line = Term::new();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    line.push(style.dim(" │ "));
                }
                let part = cells[i].get(k).cloned().unwrap_or_default();
                let pad = width.saturating_sub(term_width(&part));
                let (left, right) = match table.aligns.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                line.push(" ".repeat(left));
                line.push(part);
                if i + 1 < widths.len() {
                    line.push(" ".repeat(right));
                }
            }
            lines.push(line);
        }
        if r + 1 == table.header_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            lines.push(style.dim(&rule.join("─┼─")));
        }
    }
    lines
}

fn bolded(cell: &[Span]) -> Vec<Span> {
    cell.iter()
        .map(|s| Span {
            text: s.text.clone(),
            tone: Tone {
                bold: true,
                ..s.tone
            },
        })
        .collect()
}

/// A table too wide for the terminal: each body row as `• header: value` lines, wrapped.
fn table_as_list(style: Style, table: &Table, width: usize) -> Vec<Term> {
    let headers: Vec<String> = table
        .rows
        .iter()
        .take(table.header_rows)
        .next_back()
        .map(|row| {
            row.iter()
                .map(|cell| cell.iter().map(|s| s.text.as_str()).collect())
                .collect()
        })
        .unwrap_or_default();
    let mut lines = Vec::new();
    for row in table.rows.iter().skip(table.header_rows) {
        for (i, cell) in row.iter().enumerate() {
            let name = headers.get(i).cloned().unwrap_or_default();
            let mut spans = vec![Span {
                text: format!("{name}: "),
                tone: Tone {
                    bold: true,
                    ..Tone::default()
                },
            }];
            spans.extend(cell.iter().cloned());
            for (k, line) in wrap(style, &spans, width.saturating_sub(2))
                .into_iter()
                .enumerate()
            {
                let lead = if i == 0 && k == 0 { "• " } else { "  " };
                lines.push(crate::term![style.dim(lead), line]);
            }
        }
    }
    lines
}
