//! The REPL's rendered answers through a pseudo-terminal: markdown drawn instead of typed,
//! code coloured by language, tables aligned, plain text under `NO_COLOR` and `TERM=dumb`.

use crate::support::{mock_openai, project};

use crate::support::repl::{self, Repl, without_escapes};
use mock_openai::{MockServer, Reply};
use project::Project;

const ANSWER: &str = "## Findings\n\nThe **main** function is *short*.\n\n\
                      ```rust\nfn main() { println!(\"hi\"); }\n```\n\n\
                      | name | size |\n|------|-----:|\n| a | 1 |\n| longer | 200 |\n\n> quoted end\n";

fn start(project: &Project, server: &MockServer, env: &[(&str, &str)]) -> Repl {
    let mut env = env.to_vec();
    env.insert(0, ("NO_COLOR", ""));
    repl::start(project, server, &[], &env)
}

/// What the REPL printed after `prompt` was typed, up to `last` (rexpect reads bytes as
/// Latin-1 characters: they are decoded as the UTF-8 they are).
pub fn answer_to(p: &mut Repl, prompt: &str, last: &str) -> String {
    p.raw("> ");
    p.send_line(prompt);
    let shown = p.raw(last);
    p.raw("> ");
    shown + last
}

#[test]
fn an_answer_is_rendered_with_colour_in_its_code_and_aligned_tables() {
    let server = MockServer::start_blocking(vec![Reply::text(ANSWER)]);
    let project = Project::new();
    let mut p = start(&project, &server, &[("COLORTERM", "truecolor")]);
    let shown = answer_to(&mut p, "explain", "quoted end");
    p.send_line("/exit");
    p.eof();

    let text = without_escapes(&shown);
    assert!(text.contains("Findings"), "{text}");
    assert!(!text.contains("## "), "heading markup shown: {text}");
    assert!(!text.contains("**"), "emphasis markup shown: {text}");
    assert!(!text.contains("```"), "fence shown: {text}");
    assert!(
        shown.contains("\x1b[38;2;"),
        "no colour in the code block: {shown:?}"
    );
    assert!(
        shown.contains("\x1b[1mFindings"),
        "heading not bold: {shown:?}"
    );
    assert!(text.contains("name   │ size\n"), "{text}");
    assert!(text.contains("a      │    1\n"), "{text}");
    assert!(text.contains("longer │  200\n"), "{text}");
    assert!(text.contains("│ quoted end"), "{text}");
}

#[test]
fn without_truecolor_code_is_painted_from_the_256_palette_and_theme_switches_it() {
    let server = MockServer::start_blocking(vec![
        Reply::text("```rust\nfn main() {}\n```\n"),
        Reply::text("```rust\nfn main() {}\n```\n"),
    ]);
    let project = Project::new();
    let mut p = start(
        &project,
        &server,
        &[("COLORTERM", ""), ("COLORFGBG", "0;15")],
    );
    let dark_or_light = answer_to(&mut p, "code", "main");
    assert!(dark_or_light.contains("\x1b[38;5;"), "{dark_or_light:?}");
    assert!(!dark_or_light.contains("\x1b[38;2;"), "{dark_or_light:?}");
    p.send_line("/theme");
    // COLORFGBG says the background is white.
    p.raw("theme: light");
    p.send_line("/theme dark");
    p.raw("theme: dark");
    let dark = answer_to(&mut p, "again", "main");
    assert_ne!(
        colours(&dark_or_light),
        colours(&dark),
        "the light and the dark theme paint the same"
    );
    p.exit();
}

fn colours(shown: &str) -> Vec<String> {
    regex::Regex::new("\x1b\\[38;5;[0-9]+m")
        .unwrap()
        .find_iter(shown)
        .map(|m| m.as_str().to_string())
        .collect()
}

#[test]
fn no_color_and_a_dumb_terminal_give_plain_rendered_text() {
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    for env in [("NO_COLOR", "1"), ("TERM", "dumb")] {
        let server = MockServer::start_blocking(vec![Reply::text(ANSWER)]);
        let project = Project::new();
        let mut p = start(&project, &server, &[env]);
        let shown = answer_to(&mut p, "explain", "quoted end");
        p.send_line("/exit");
        p.eof();
        assert!(!sgr.is_match(&shown), "{env:?}: colour in {shown:?}");
        let text = without_escapes(&shown);
        // The structure stays: the heading's marks (no bold to show it), no emphasis markup.
        assert!(text.contains("## Findings"), "{env:?}: {text}");
        assert!(!text.contains("**"), "{env:?}: {text}");
        assert!(
            text.contains("  fn main() { println!(\"hi\"); }\n"),
            "{text}"
        );
        assert!(text.contains("longer │  200\n"), "{text}");
    }
}

#[test]
fn a_long_paragraph_is_wrapped_at_the_terminal_width_between_words() {
    let words = "alpha beta gamma delta epsilon zeta eta theta iota kappa ".repeat(4);
    let server = MockServer::start_blocking(vec![Reply::text(&words)]);
    let project = Project::new();
    // The pty has no size set, so Ling wraps at 80 columns.
    let mut p = start(&project, &server, &[]);
    let shown = without_escapes(&answer_to(&mut p, "go", "kappa\r\n"));
    p.send_line("/exit");
    p.eof();
    let lines: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("alpha") || l.contains("kappa"))
        .collect();
    assert_eq!(lines.len(), 3, "{shown}");
    for line in lines {
        assert!(line.chars().count() <= 80, "too wide: {line:?}");
        for word in line.split_whitespace() {
            assert!(
                words.contains(&format!("{word} ")),
                "cut word {word:?} in {line:?}"
            );
        }
    }
}

#[test]
fn a_code_block_is_painted_line_by_line_as_it_streams() {
    use mock_openai::chunk;
    use serde_json::json;
    let pieces = [
        "Here it is:\n\n```rust\nfn first_line() {}\n",
        "fn second_line() {}\n",
        "```\n\nDone.",
    ];
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    chunks.extend(pieces.iter().map(|p| chunk(json!({ "content": p }), None)));
    chunks.push(chunk(json!({}), Some("stop")));
    let gap = std::time::Duration::from_millis(1500);
    let server = MockServer::start_blocking(vec![Reply::chunks(chunks).chunk_delay(gap)]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.send_line("show me");
    p.raw("first_line");
    let first = std::time::Instant::now();
    // While the block is still open the spinner says the answer is being written.
    let between = p.raw("second_line");
    let apart = first.elapsed();
    assert!(
        apart > std::time::Duration::from_millis(700),
        "the first line waited for the second: {apart:?}"
    );
    assert!(between.contains("writing"), "{between:?}");
    assert!(!between.contains("thinking"), "{between:?}");
    p.raw("Done.");
    p.exit();
}
