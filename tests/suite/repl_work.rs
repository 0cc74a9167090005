//! The REPL's tool results and questions through a pseudo-terminal: output previews with the
//! true line count, `/expand`, an edit summarised and its diff shown once, a long command shown
//! whole, `n` that hands control back, and `t` that tells the model what to do instead.

use crate::support::{mock_openai, project};

use super::repl_render::{utf8, without_escapes};
use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::json;

/// The REPL outside the shell sandbox, so that a `bash` call asks as these tests need.
fn start(project: &Project, server: &MockServer, args: &[&str]) -> PtySession {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["--sandbox", "off"])
        .args(args)
        .env("TERM", "xterm");
    spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

fn expect(p: &mut PtySession, text: &str) -> String {
    let seen = p
        .exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"));
    without_escapes(&utf8(&seen))
}

#[test]
fn a_commands_output_is_previewed_with_its_true_line_count_and_expand_shows_it() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "seq 1 200000"}))]),
        Reply::text("counted"),
        Reply::tool_calls(vec![(
            "b2",
            "bash",
            json!({"command": "printf 'one\\ntwo\\n'"}),
        )]),
        Reply::text("short"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &["--allowed-tools", "bash"]);
    expect(&mut p, "> ");
    p.send_line("count").unwrap();
    let shown = expect(&mut p, "counted");
    assert!(shown.contains("✓ 200000 lines"), "{shown}");
    assert!(
        shown.contains("  │ 1\n  │ 2\n  │ 3\n  │ 4\n  │ 5\n  … +199995 lines"),
        "{shown}"
    );
    assert!(!shown.contains("│ 6\n"), "{shown}");
    expect(&mut p, "> ");
    p.send_line("again").unwrap();
    let shown = expect(&mut p, "short");
    assert!(shown.contains("✓ 2 lines\n  │ one\n  │ two\n"), "{shown}");
    assert!(!shown.contains("+0 lines"), "{shown}");
    expect(&mut p, "> ");
    p.send_line("/expand").unwrap();
    let shown = expect(&mut p, "Exit code: 0");
    assert!(shown.contains("one\ntwo\n"), "{shown}");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn an_edit_shows_its_diff_once_and_a_count_of_its_changes() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("r1", "read_file", json!({"path": "a.txt"}))]),
        Reply::tool_calls(vec![(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_string": "hello", "new_string": "goodbye"}),
        )]),
        Reply::text("edited it"),
    ]);
    let project = Project::new();
    project.write("a.txt", "hello\nworld\n");
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("change it").unwrap();
    let before = expect(&mut p, "allow?");
    assert_eq!(before.matches("+goodbye").count(), 1, "{before}");
    p.send_line("y").unwrap();
    let after = expect(&mut p, "edited it");
    assert!(after.contains("✓ +1 −1"), "{after}");
    assert!(
        !after.contains("+goodbye"),
        "the diff was shown again: {after}"
    );
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_long_command_is_shown_whole_and_n_hands_control_back_without_a_model_request() {
    let long = format!("echo {} && touch never.txt", "word ".repeat(40));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": long}))]),
        Reply::text("must not be asked for"),
    ]);
    server.expect_unasked(1);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("do it").unwrap();
    let question = expect(&mut p, "allow?");
    let joined: String = question
        .lines()
        .filter_map(|l| l.strip_prefix("  │ ").or_else(|| l.strip_prefix("  ┊ ")))
        .collect();
    assert_eq!(joined, long, "{question}");
    p.send_line("n").unwrap();
    expect(&mut p, "declined");
    expect(&mut p, "> ");
    // Back at the prompt, and the model was not asked again.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining(), 1);
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert!(!project.file("never.txt").exists());
}

#[test]
fn t_sends_what_to_do_instead_as_the_result() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "rm -rf build"}))]),
        Reply::text("ok, using cargo clean"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("clean up").unwrap();
    expect(&mut p, "allow?");
    p.send_line("t").unwrap();
    expect(&mut p, "say what to do");
    p.send_line("use cargo clean instead").unwrap();
    expect(&mut p, "ok, using cargo clean");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let requests = server.requests();
    let last = requests[1].messages().last().cloned().unwrap_or_default();
    let content = last["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("said what to do instead: use cargo clean instead"),
        "{last}"
    );
}

#[test]
fn init_has_the_model_write_agents_md_with_approval_and_diff_shows_the_change() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "AGENTS.md", "content": "# Notes\nrun cargo test\n"}),
        )]),
        Reply::text("wrote AGENTS.md"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("/init").unwrap();
    let question = expect(&mut p, "allow?");
    assert!(question.contains("write_file(AGENTS.md)"), "{question}");
    p.send_line("y").unwrap();
    expect(&mut p, "wrote AGENTS.md");
    expect(&mut p, "> ");
    p.send_line("/diff").unwrap();
    let diff = expect(&mut p, "+run cargo test");
    assert!(diff.contains("+# Notes"), "{diff}");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(project.read("AGENTS.md"), "# Notes\nrun cargo test\n");
    let asked = server.requests()[0]
        .messages()
        .last()
        .cloned()
        .unwrap_or_default();
    let text = asked["content"].as_str().unwrap_or_default();
    assert!(text.contains("Write or improve `AGENTS.md`"), "{text}");
}

#[test]
fn always_can_keep_its_rule_in_the_projects_settings_and_the_folder_stays_trusted() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "touch first.txt"}))]),
        Reply::text("made first"),
    ]);
    let project = Project::new();
    project.write(".ling/settings.json", r#"{"model": "kept-model"}"#);
    project.trust();
    let mut p = start(&project, &server, &[]);
    expect(&mut p, "> ");
    p.send_line("make it").unwrap();
    expect(&mut p, "allow?");
    p.send_line("a").unwrap();
    expect(&mut p, "keep it:");
    p.send_line("p").unwrap();
    expect(&mut p, "kept bash(touch*) in .ling/settings.json");
    expect(&mut p, "made first");
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let settings: serde_json::Value =
        serde_json::from_str(&project.read(".ling/settings.json")).unwrap();
    assert_eq!(
        settings,
        json!({"model": "kept-model", "permissions": {"allow": ["bash(touch*)"]}})
    );

    // A later run uses the kept rule: the folder is still trusted, and nobody is asked.
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b2", "bash", json!({"command": "touch second.txt"}))]),
        Reply::text("made second"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "again"]);
    let out = crate::support::project::run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(project.file("second.txt").exists(), "{out:?}");
    assert_eq!(server.requests()[0].body["model"], "kept-model");
}
