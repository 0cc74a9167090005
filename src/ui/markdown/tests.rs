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
fn headings_emphasis_and_links_lose_their_markup() {
    let out = plain("## Title\n\nSome **bold** and *italic* and `code`, a [link](https://x.y).\n");
    assert_eq!(
        out,
        "Title\n\nSome bold and italic and code, a link (https://x.y).\n"
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
    // Line by line: the heading shows at once, the paragraph at its blank line, the fence at
    // its close (its blank line does not end it), the last line at the end.
    let mut stream = MarkdownStream::new(Style::plain(), 60);
    assert_eq!(stream.push("# Head\n").as_str(), "Head\n");
    assert_eq!(stream.push("\npara one\n").as_str(), "");
    assert!(stream.is_holding());
    assert_eq!(stream.push("\n").as_str(), "\npara one\n");
    assert_eq!(stream.push("```sh\necho a\n\n").as_str(), "");
    assert_eq!(stream.push("```\n").as_str(), "\n  echo a\n  \n");
    assert_eq!(stream.push("tail").as_str(), "");
    assert_eq!(stream.finish().as_str(), "\ntail\n");
    assert!(!stream.is_holding());
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
