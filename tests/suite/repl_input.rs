//! The REPL's input through a pseudo-terminal: Shift-Tab and `/mode` change the mode (shown in
//! the prompt, and really applied), `/permissions` lists and edits rules with their origin,
//! `@file` attaches the file, a continued line loses its `\`, Tab completes commands, a pasted
//! block of lines shows as `[pasted N lines]` and is sent whole.

use crate::support::{mock_openai, project};

use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> Repl {
    repl::start(project, server, args, &[])
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
    p.expect("> ");
    p.typ("draft");
    p.typ(SHIFT_TAB);
    p.expect("accept-edits > ");
    p.typ(SHIFT_TAB);
    p.expect("plan > ");
    // What was typed before the Shift-Tabs is still there.
    p.send_line(" a plan");
    p.expect("could not write in plan mode");
    p.expect("plan > ");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("/mode bypass");
    p.expect("bypass > ");
    p.send_line("/mode nonsense");
    p.expect("no mode");
    p.expect("bypass > ");
    p.send_line("/permissions allow read_file");
    p.expect("for this session");
    p.expect("bypass > ");
    p.send_line("/permissions");
    let listing = p.expect("bypass > ");
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
    p.send_line("/permissions remove read_file");
    p.expect("removed read_file");
    p.send_line("/permissions allow bash(");
    p.expect("error:");
    p.send_line("/exit");
    p.eof();
}

#[test]
fn an_at_mention_attaches_the_file_and_a_continued_line_loses_its_backslash() {
    let server = MockServer::start_blocking(vec![Reply::text("seen"), Reply::text("joined")]);
    let project = Project::new();
    project.write("notes/todo.md", "buy milk\nfix bug\n");
    let mut p = start(&project, &server, &[]);
    p.expect("> ");
    p.send_line("summarise @notes/todo.md please");
    p.expect("attached notes/todo.md (2 lines)");
    p.expect("seen");
    p.expect("> ");
    p.send_line("first line \\");
    p.send_line("second line");
    p.expect("joined");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    // A terminal with bracketed paste wraps what is pasted in ESC[200~ ... ESC[201~.
    p.typ("explain \x1b[200~fn a() {}\nfn b() {}\nfn c() {}\n\x1b[201~ briefly");
    let shown = p.expect("briefly");
    assert!(shown.contains("explain [pasted 3 lines]"), "{shown}");
    assert!(!shown.contains("fn b()"), "the paste was echoed: {shown}");
    p.typ("\r");
    p.expect("got it");
    p.expect("> ");
    // One pasted line is inserted as it is.
    p.typ("\x1b[200~just one line\x1b[201~\r");
    p.expect("short");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.typ("/perm\t");
    p.expect("/permissions");
    p.send_line("");
    p.expect("mode: default");
    p.expect("> ");
    p.typ("look at @src/lib_\t");
    p.expect("lib_file.rs");
    p.send_line("");
    p.expect("attached src/lib_file.rs");
    p.expect("ok");
    p.send_line("/exit");
    p.eof();
}

#[test]
fn the_first_run_without_a_key_shows_a_guide_with_the_commands() {
    let project = Project::new();
    let mut p = repl::start_url(&project, "https://api.openai.com/v1", &[], &[]);
    let shown = p.expect("settings.json");
    for part in [
        "no API key is set for https://api.openai.com/v1, so nothing was sent.",
        "    export OPENAI_API_KEY=...",
        "    ling --base-url http://127.0.0.1:8080/v1",
        "    ling --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder",
    ] {
        assert!(shown.contains(part), "{part:?} not in {shown}");
    }
    p.eof();
}

#[test]
fn type_ahead_stays_out_of_the_answer_and_fills_the_next_prompt() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the slow answer").delay(std::time::Duration::from_millis(1500)),
        Reply::text("second answer"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.expect("> ");
    p.send_line("first");
    p.expect("thinking");
    p.typ("next question");
    let answer = p.expect("the slow answer");
    assert!(
        !answer.contains("next"),
        "type-ahead echoed into the answer: {answer:?}"
    );
    // The typed text is in the next prompt; Enter sends it.
    p.expect("> next question");
    p.send_line("");
    p.expect("second answer");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("slow");
    // The spinner shows once the turn's key reader runs; the request is with the model.
    p.expect("thinking");
    server.wait_until_remaining(1);
    p.typ("\x1b");
    p.expect("interrupted");
    p.expect("> ");
    p.send_line("again");
    p.expect("after esc");
    p.send_line("/exit");
    p.eof();
}

#[test]
fn every_line_typed_ahead_shows_under_the_spinner_and_is_sent_in_order() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the slow answer").delay(std::time::Duration::from_millis(2500)),
        Reply::text("answer to a"),
        Reply::text("answer to b"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.send_line("first");
    p.raw("thinking");
    p.typ("a\rb\r");
    let shown = p.raw("⏎ queued: b");
    assert!(shown.contains("⏎ queued: a"), "{shown:?}");
    p.expect("the slow answer");
    p.expect("answer to a");
    p.expect("answer to b");
    p.prompt();
    p.exit();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].messages().last().unwrap()["content"], "a");
    assert_eq!(requests[2].messages().last().unwrap()["content"], "b");
}

#[test]
fn an_interrupted_answer_stays_marked_as_cut_and_leaving_says_how_to_resume() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the first words of a long answer and then much more text")
            .chunk_delay(std::time::Duration::from_millis(300)),
        Reply::text("second answer"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.send_line("go");
    p.raw("writing");
    p.control('c');
    p.expect("interrupted");
    p.prompt();
    p.send_line("next");
    p.expect("second answer");
    p.prompt();
    p.control('d');
    let end = without(&p.eof());
    assert!(end.contains("resume with: ling --resume "), "{end}");
    let sent = server.requests()[1].messages();
    let roles: Vec<&str> = sent.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(
        roles[roles.len() - 3..],
        ["user", "assistant", "user"],
        "{sent:?}"
    );
    let cut = sent[sent.len() - 2]["content"].as_str().unwrap_or_default();
    assert!(cut.contains("[interrupted by the user"), "{cut}");
}

fn without(text: &str) -> String {
    crate::support::repl::without_escapes(text)
}

#[test]
fn at_completion_finds_a_file_a_tool_wrote_and_matches_fuzzily() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "notes/created_later.md", "content": "x\n"}),
        )]),
        Reply::text("wrote it"),
        Reply::text("seen"),
    ]);
    let project = Project::new();
    project.write("src/main.rs", "fn main() {}\n");
    let mut p = start(&project, &server, &["--allowed-tools", "write_file"]);
    p.prompt();
    // The index is listed at the first completion, before the file exists.
    p.typ("@srmai\t");
    p.expect("@src/main.rs");
    p.typ("\x15");
    p.send_line("write the notes");
    p.expect("wrote it");
    p.prompt();
    p.typ("look at @crelat\t");
    p.expect("@notes/created_later.md");
    p.send_line("");
    p.expect("attached notes/created_later.md");
    p.expect("seen");
    p.exit();
}

#[test]
fn a_missing_at_file_is_said() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.send_line("read @typo.txt please");
    p.expect("@typo.txt was not attached: there is no such file in the project");
    p.expect("ok");
    p.exit();
}
