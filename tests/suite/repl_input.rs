//! The REPL's input through a pseudo-terminal: Shift-Tab and `/mode` change the mode (shown in
//! the prompt, and really applied), `/permissions` lists and edits rules with their origin,
//! `@file` attaches the file, a continued line loses its `\`, Tab completes commands, a pasted
//! block of lines shows as `[pasted N lines]` and is sent whole.

use crate::support::{mock_openai, project};

use super::repl_render::{utf8, without_escapes};
use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> PtySession {
    let mut cmd = project.command(&server.base_url());
    cmd.args(args).env("TERM", "xterm");
    spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

fn expect(p: &mut PtySession, text: &str) -> String {
    let seen = p
        .exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"));
    without_escapes(&utf8(&seen))
}

/// Types `text` without Enter (rexpect buffers until flushed).
fn typ(p: &mut PtySession, text: &str) {
    p.send(text).unwrap();
    p.flush().unwrap();
}

const SHIFT_TAB: &str = "\x1b[Z";

#[test]
fn shift_tab_cycles_the_mode_shown_in_the_prompt_and_the_mode_applies() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "plan.txt", "content": "x"}),
        )]),
        Reply::text("could not write in plan mode"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    typ(&mut p, "draft");
    typ(&mut p, SHIFT_TAB);
    expect(&mut p, "accept-edits > ");
    typ(&mut p, SHIFT_TAB);
    expect(&mut p, "plan > ");
    // What was typed before the Shift-Tabs is still there.
    p.send_line(" a plan").unwrap();
    expect(&mut p, "could not write in plan mode");
    expect(&mut p, "plan > ");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert!(!project.file("plan.txt").exists());
    let first = server.requests()[0].messages();
    assert_eq!(first.last().unwrap()["content"], "draft a plan");
}

#[test]
fn mode_sets_the_mode_and_permissions_lists_and_edits_rules() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        r#"{"permissions": {"deny": ["bash(rm*)"]}}"#,
    );
    project.trust();
    let mut p = start(&project, &server, &["--allowed-tools", "bash(git status*)"]);
    expect(&mut p, "> ");
    p.send_line("/mode bypass").unwrap();
    expect(&mut p, "bypass > ");
    p.send_line("/mode nonsense").unwrap();
    expect(&mut p, "no mode");
    expect(&mut p, "bypass > ");
    p.send_line("/permissions allow read_file").unwrap();
    expect(&mut p, "for this session");
    expect(&mut p, "bypass > ");
    p.send_line("/permissions").unwrap();
    let listing = expect(&mut p, "bypass > ");
    assert!(listing.contains("mode: bypass"), "{listing}");
    assert!(
        listing.contains("allow bash(git status*)  flag"),
        "{listing}"
    );
    assert!(
        listing.contains("allow read_file          session"),
        "{listing}"
    );
    assert!(
        listing.contains("deny  bash(rm*)          project settings"),
        "{listing}"
    );
    p.send_line("/permissions remove read_file").unwrap();
    expect(&mut p, "removed read_file");
    p.send_line("/permissions allow bash(").unwrap();
    expect(&mut p, "error:");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn an_at_mention_attaches_the_file_and_a_continued_line_loses_its_backslash() {
    let server = MockServer::start_blocking(vec![Reply::text("seen"), Reply::text("joined")]);
    let project = Project::new();
    project.write("notes/todo.md", "buy milk\nfix bug\n");
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("summarise @notes/todo.md please").unwrap();
    expect(&mut p, "attached notes/todo.md (2 lines)");
    expect(&mut p, "seen");
    expect(&mut p, "> ");
    p.send_line("first line \\").unwrap();
    p.send_line("second line").unwrap();
    expect(&mut p, "joined");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let requests = server.requests();
    let sent = requests[0].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        sent,
        "summarise @notes/todo.md please\n\n<file path=\"notes/todo.md\">\nbuy milk\nfix bug\n</file>"
    );
    let joined = requests[1].messages().last().unwrap()["content"].clone();
    assert_eq!(joined, "first line \nsecond line");
}

#[test]
fn a_pasted_block_shows_as_one_line_and_is_sent_whole() {
    let server = MockServer::start_blocking(vec![Reply::text("got it"), Reply::text("short")]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    // A terminal with bracketed paste wraps what is pasted in ESC[200~ ... ESC[201~.
    typ(
        &mut p,
        "explain \x1b[200~fn a() {}\nfn b() {}\nfn c() {}\n\x1b[201~ briefly",
    );
    let shown = expect(&mut p, "briefly");
    assert!(shown.contains("explain [pasted 3 lines]"), "{shown}");
    assert!(!shown.contains("fn b()"), "the paste was echoed: {shown}");
    typ(&mut p, "\r");
    expect(&mut p, "got it");
    expect(&mut p, "> ");
    // One pasted line is inserted as it is.
    typ(&mut p, "\x1b[200~just one line\x1b[201~\r");
    expect(&mut p, "short");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let requests = server.requests();
    let sent = requests[0].messages().last().unwrap()["content"].clone();
    assert_eq!(sent, "explain fn a() {}\nfn b() {}\nfn c() {} briefly");
    let sent = requests[1].messages().last().unwrap()["content"].clone();
    assert_eq!(sent, "just one line");
}

#[test]
fn tab_completes_slash_commands_and_project_files() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let project = Project::new();
    project.write("src/lib_file.rs", "x\n");
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    typ(&mut p, "/perm\t");
    expect(&mut p, "/permissions");
    p.send_line("").unwrap();
    expect(&mut p, "mode: default");
    expect(&mut p, "> ");
    typ(&mut p, "look at @src/lib_\t");
    expect(&mut p, "lib_file.rs");
    p.send_line("").unwrap();
    expect(&mut p, "attached src/lib_file.rs");
    expect(&mut p, "ok");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn the_first_run_without_a_key_shows_a_guide_with_the_commands() {
    let project = Project::new();
    let mut cmd = project.command("https://api.openai.com/v1");
    cmd.env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
    let shown = expect(&mut p, "settings.json");
    for part in [
        "no API key is set for https://api.openai.com/v1, so nothing was sent.",
        "    export OPENAI_API_KEY=...",
        "    ling --base-url http://127.0.0.1:8080/v1",
        "    ling --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder",
    ] {
        assert!(shown.contains(part), "{part:?} not in {shown}");
    }
    p.exp_eof().unwrap();
}

#[test]
fn type_ahead_stays_out_of_the_answer_and_fills_the_next_prompt() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the slow answer").delay(std::time::Duration::from_millis(1500)),
        Reply::text("second answer"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("first").unwrap();
    expect(&mut p, "thinking");
    typ(&mut p, "next question");
    let answer = expect(&mut p, "the slow answer");
    assert!(
        !answer.contains("next"),
        "type-ahead echoed into the answer: {answer:?}"
    );
    // The typed text is in the next prompt; Enter sends it.
    expect(&mut p, "> next question");
    p.send_line("").unwrap();
    expect(&mut p, "second answer");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let sent = server.requests()[1].messages().last().unwrap()["content"].clone();
    assert_eq!(sent, "next question");
}

#[test]
fn esc_interrupts_a_running_turn() {
    let server = MockServer::start_blocking(vec![
        Reply::text("never shown").delay(std::time::Duration::from_secs(30)),
        Reply::text("after esc"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("slow").unwrap();
    expect(&mut p, "thinking");
    std::thread::sleep(std::time::Duration::from_millis(200));
    typ(&mut p, "\x1b");
    expect(&mut p, "interrupted");
    expect(&mut p, "> ");
    p.send_line("again").unwrap();
    expect(&mut p, "after esc");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}
