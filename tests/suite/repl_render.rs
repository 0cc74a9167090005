//! The REPL's rendered answers through a pseudo-terminal: markdown drawn instead of typed,
//! code coloured by language, tables aligned, plain text under `NO_COLOR` and `TERM=dumb`.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::{PtySession, spawn_command};

const ANSWER: &str = "## Findings\n\nThe **main** function is *short*.\n\n\
                      ```rust\nfn main() { println!(\"hi\"); }\n```\n\n\
                      | name | size |\n|------|-----:|\n| a | 1 |\n| longer | 200 |\n\n> quoted end\n";

fn start(project: &Project, server: &MockServer, env: &[(&str, &str)]) -> PtySession {
    let mut cmd = project.command(&server.base_url());
    cmd.env("TERM", "xterm").env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

fn expect(p: &mut PtySession, text: &str) -> String {
    p.exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"))
}

/// What the REPL printed after `prompt` was typed, up to `last` (rexpect reads bytes as
/// Latin-1 characters: they are decoded as the UTF-8 they are).
pub fn answer_to(p: &mut PtySession, prompt: &str, last: &str) -> String {
    expect(p, "> ");
    p.send_line(prompt).unwrap();
    let shown = utf8(&expect(p, last));
    expect(p, "> ");
    shown + last
}

pub fn utf8(latin1: &str) -> String {
    let bytes: Vec<u8> = latin1.chars().map(|c| c as u32 as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub fn without_escapes(text: &str) -> String {
    // A spinner frame is wiped by `\r ESC[K`: what it wiped is not part of the text.
    let wiped = regex::Regex::new("[^\n]*\r\x1b\\[K").unwrap();
    let sgr = regex::Regex::new("\x1b\\[[0-9;?]*[A-Za-z]").unwrap();
    let text = wiped.replace_all(text, "");
    sgr.replace_all(&text, "").replace('\r', "")
}

#[test]
fn an_answer_is_rendered_with_colour_in_its_code_and_aligned_tables() {
    let server = MockServer::start_blocking(vec![Reply::text(ANSWER)]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    let shown = answer_to(&mut p, "explain", "quoted end");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();

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
fn no_color_and_a_dumb_terminal_give_plain_rendered_text() {
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    for env in [("NO_COLOR", "1"), ("TERM", "dumb")] {
        let server = MockServer::start_blocking(vec![Reply::text(ANSWER)]);
        let project = Project::new();
        let mut p = start(&project, &server, &[env]);
        let shown = answer_to(&mut p, "explain", "quoted end");
        p.send_line("/exit").unwrap();
        p.exp_eof().unwrap();
        assert!(!sgr.is_match(&shown), "{env:?}: colour in {shown:?}");
        let text = without_escapes(&shown);
        assert!(
            !text.contains("## ") && !text.contains("**"),
            "{env:?}: {text}"
        );
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
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
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
