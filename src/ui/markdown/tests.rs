use super::*;
use pretty_assertions::assert_eq;

fn plain(markdown: &str) -> String {
    render(markdown, Style::plain(), 60).as_str().to_string()
}

/// Streams `text` in pieces of `size` bytes (at char boundaries) and returns what was painted
/// after each piece, then at the end.
fn streamed(text: &str, size: usize, width: usize) -> Vec<String> {
    let mut stream = MarkdownStream::new(Style::plain(), width);
    let mut painted = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        piece.push(c);
        if piece.len() >= size {
            painted.push(stream.push(&piece).as_str().to_string());
            piece.clear();
        }
    }
    painted.push(stream.push(&piece).as_str().to_string());
    painted.push(stream.finish().as_str().to_string());
    painted
}

#[test]
fn headings_emphasis_and_links_lose_their_markup_where_colours_show_them() {
    let out = plain("## Title\n\nSome **bold** and *italic* and `code`, a [link](https://x.y).\n");
    // Without colours the heading's marks and the code's backticks stay: they are the structure.
    assert_eq!(
        out,
        "## Title\n\nSome bold and italic and `code`, a link (https://x.y).\n"
    );
    let coloured = render("## Title\n\n**b** *i*\n", Style { color: true }, 60);
    assert_eq!(
        coloured.as_str(),
        "\x1b[1mTitle\x1b[0m\n\n\x1b[1mb\x1b[0m \x1b[3mi\x1b[0m\n"
    );
}

#[test]
fn lists_quotes_and_rules_are_drawn() {
    let out = plain("- one\n- two\n  - inner\n\n1. first\n2. second\n\n> quoted\n> text\n\n---\n");
    assert_eq!(
        out,
        "• one\n• two\n  ◦ inner\n\n1. first\n2. second\n\n│ quoted text\n\n\
         ────────────────────────────────────────\n"
    );
}

#[test]
fn tables_align_their_columns() {
    let out = plain("| name | n |\n|:--|--:|\n| a | 1 |\n| longer | 200 |\n| 日本 | 3 |\n");
    assert_eq!(
        out,
        "name   │   n\n───────┼────\na      │   1\nlonger │ 200\n日本   │   3\n"
    );
}

#[test]
fn paragraphs_wrap_at_the_width_inside_their_containers() {
    let out = render("> one two three four five six\n", Style::plain(), 15);
    assert_eq!(out.as_str(), "│ one two three\n│ four five six\n");
    let out = render("- alpha beta gamma delta\n", Style::plain(), 14);
    assert_eq!(out.as_str(), "• alpha beta\n  gamma delta\n");
}

#[test]
fn code_blocks_lose_their_fences_and_keep_their_lines() {
    let out = plain("```rust\nfn main() {\n    x\n}\n```\n");
    assert_eq!(out, "  fn main() {\n      x\n  }\n");
}

#[test]
fn outside_escapes_are_neutralised() {
    let out = plain("hi \x1b[2J **there\x1b]0;t\x07**\n");
    assert_eq!(out, "hi ^[[2J there^[]0;t^G\n");
}

#[test]
fn a_block_is_painted_once_it_is_complete_whatever_the_pieces() {
    let text = "# Head\n\npara one\nstill one\n\n```sh\necho a\n\necho b\n```\ntail";
    let whole = plain(text);
    for size in [1, 3, 7, 1000] {
        let painted = streamed(text, size, 60);
        assert_eq!(painted.concat(), whole, "pieces of {size}");
    }
    // Line by line: the heading shows at once, the one-row paragraph at its blank line, each
    // line of the fence at its newline, the last line at the end.
    let mut stream = MarkdownStream::new(Style::plain(), 60);
    assert_eq!(stream.push("# Head\n").as_str(), "# Head\n");
    assert_eq!(stream.push("\npara one\n").as_str(), "");
    assert!(stream.is_holding());
    assert_eq!(stream.push("\n").as_str(), "\npara one\n");
    assert_eq!(stream.push("```sh\necho a\n").as_str(), "\n  echo a\n");
    assert_eq!(stream.push("\n").as_str(), "  \n");
    assert_eq!(stream.push("```\n").as_str(), "");
    assert_eq!(stream.push("tail").as_str(), "");
    assert_eq!(stream.finish().as_str(), "\ntail\n");
    assert!(!stream.is_holding());
}

#[test]
fn a_paragraph_paints_each_row_once_the_next_words_start_another() {
    let mut stream = MarkdownStream::new(Style::plain(), 20);
    // One long source line, as models write paragraphs: rows are painted before its newline.
    assert_eq!(stream.push("alpha beta gamma ").as_str(), "");
    assert_eq!(stream.push("delta epsilon ").as_str(), "alpha beta gamma\n");
    assert_eq!(
        stream.push("zeta eta theta iota").as_str(),
        "delta epsilon zeta\n"
    );
    assert_eq!(stream.finish().as_str(), "eta theta iota\n");
    // Markup still open holds the row until it closes.
    let mut stream = MarkdownStream::new(Style::plain(), 20);
    assert_eq!(stream.push("some **bold words go on and ").as_str(), "");
    assert_eq!(stream.push("on** then ").as_str(), "some bold words go\n");
}

#[test]
fn streamed_and_whole_rendering_agree_on_lists_quotes_and_long_paragraphs() {
    let text = "intro words that run on past the end of one row of the terminal and more\n\n\
                - one item that is long enough to wrap over two rows\n- two\n\n\
                > a quote that also wraps because it is long enough\n\nend\n";
    let whole = render(text, Style::plain(), 30).as_str().to_string();
    for size in [1, 2, 5, 13, 1000] {
        assert_eq!(streamed(text, size, 30).concat(), whole, "pieces of {size}");
    }
}

#[test]
fn a_table_is_held_whole_and_its_rows_counted() {
    let mut stream = MarkdownStream::new(Style::plain(), 60);
    assert_eq!(
        stream.push("| a | b |\n|---|---|\n| 1 | 2 |\n").as_str(),
        ""
    );
    assert_eq!(stream.table_rows(), Some(1));
    assert_eq!(stream.push("| 3 | 4 |\n").as_str(), "");
    assert_eq!(stream.table_rows(), Some(2));
    let painted = stream.push("\n");
    assert_eq!(painted.as_str(), "a │ b\n──┼──\n1 │ 2\n3 │ 4\n");
    assert_eq!(stream.table_rows(), None);
}

#[test]
fn a_huge_table_is_drawn_as_its_lines_past_its_bound() {
    let mut stream = MarkdownStream::new(Style::plain(), 60);
    let mut painted = stream.push("| a | b |\n|---|---|\n").as_str().to_string();
    let row = "| 1 | 2 |\n";
    for _ in 0..(MAX_TABLE / row.len() + 10) {
        painted.push_str(stream.push(row).as_str());
    }
    // Past the bound the rows come as they are, at once, without holding the whole table.
    assert!(
        painted.ends_with("| 1 | 2 |\n"),
        "{}",
        &painted[painted.len() - 40..]
    );
    assert_eq!(stream.table_rows(), None);
    assert!(stream.block.len() < MAX_TABLE);
}

#[test]
fn a_huge_code_block_is_highlighted_only_within_its_bound() {
    // The cost is bounded by work, not by a clock: past `highlight::MAX_BLOCK` bytes a block is
    // plain text (scripts/bench-markdown.sh times a 10 MB block).
    let line = "let value = compute(alpha, beta); // comment\n";
    let mut stream = MarkdownStream::new(Style { color: true }, 80);
    let mut painted = stream.push("```rust\n").as_str().to_string();
    let lines = 2 * highlight::MAX_BLOCK / line.len();
    for _ in 0..lines {
        painted.push_str(stream.push(line).as_str());
    }
    painted.push_str(stream.push("```\n").as_str());
    let rows: Vec<&str> = painted.lines().collect();
    assert_eq!(rows.len(), lines, "every line painted");
    assert!(rows[0].contains("\x1b[38;"), "{:?}", rows[0]);
    assert_eq!(
        rows[rows.len() - 1],
        "  let value = compute(alpha, beta); // comment"
    );
}

#[test]
fn a_stop_drops_what_is_not_painted() {
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut stream = MarkdownStream::new(Style::plain(), 60).stop_on(cancel.clone());
    assert_eq!(stream.push("```\na\n").as_str(), "  a\n");
    cancel.cancel();
    assert_eq!(stream.push("b\nc\n").as_str(), "");
    assert_eq!(stream.finish().as_str(), "");
}

#[test]
fn the_width_is_read_per_block() {
    let mut stream = MarkdownStream::new(Style::plain(), 40);
    let words = "one two three four five six seven eight nine ten";
    let first = stream.push(&format!("{words}\n\n"));
    stream.set_width(20);
    let second = stream.push(&format!("{words}\n\n"));
    let widest = |t: &Term| {
        t.as_str()
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    };
    assert!(widest(&first) > 20 && widest(&first) <= 40, "{first:?}");
    assert!(widest(&second) <= 20, "{second:?}");
}

#[test]
fn a_wide_table_wraps_its_cells_or_becomes_a_list() {
    let table = "| name | description |\n|---|---|\n| parser | reads the header before the body and fails |\n";
    let out = render(table, Style::plain(), 30).as_str().to_string();
    for line in out.lines() {
        assert!(line.chars().count() <= 30, "too wide: {line:?} in\n{out}");
    }
    assert!(out.contains("parser │ reads the header"), "{out}");
    let many = "| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 |\n";
    let out = render(many, Style::plain(), 20).as_str().to_string();
    assert_eq!(out, "• a: 1\n  b: 2\n  c: 3\n  d: 4\n  e: 5\n  f: 6\n");
}

#[test]
fn a_loose_list_stays_one_list_across_its_blank_lines() {
    let text = "1. one\n\n2. two\n   more\n\nafter\n";
    let painted = streamed(text, 1, 60).concat();
    assert_eq!(painted, "1. one\n\n2. two more\n\nafter\n");
}

#[test]
fn streamed_rendering_is_linear() {
    // 100 KB of mixed markdown in 20-byte deltas: each block is rendered once, so this stays
    // fast (a quadratic re-render of the whole answer per delta would take many seconds).
    let block = "## Section\n\nSome *text* with `code` and **bold**, long enough to wrap.\n\n\
                 - item one\n- item two\n\n```rust\nfn f() -> u32 { 1 }\n```\n\n";
    let text = block.repeat(100_000 / block.len());
    let start = std::time::Instant::now();
    let painted = streamed(&text, 20, 80).concat();
    assert!(painted.contains("Section"));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}
