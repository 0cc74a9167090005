//! The REPL's tool results and questions through a pseudo-terminal: output previews with the
//! true line count, `/expand`, an edit summarised and its diff shown once, a long command shown
//! whole, `n` that hands control back, `t` that tells the model what to do instead, and
//! "always" that keeps its rule in a settings file but never overwrites a read-only one.

use crate::support::{mock_openai, project};

use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::json;

/// The REPL outside the shell sandbox, so that a `bash` call asks as these tests need.
fn start(project: &Project, server: &MockServer, args: &[&str]) -> Repl {
    let mut all = vec!["--sandbox", "off"];
    all.extend_from_slice(args);
    repl::start(project, server, &all, &[])
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
    p.expect("> ");
    p.send_line("count");
    let shown = p.expect("counted");
    assert!(shown.contains("✓ 200000 lines"), "{shown}");
    assert!(
        shown.contains("  │ 1\n  │ 2\n  │ 3\n  │ 4\n  │ 5\n  … +199995 lines"),
        "{shown}"
    );
    assert!(!shown.contains("│ 6\n"), "{shown}");
    p.expect("> ");
    p.send_line("again");
    let shown = p.expect("short");
    assert!(shown.contains("✓ 2 lines\n  │ one\n  │ two\n"), "{shown}");
    assert!(!shown.contains("+0 lines"), "{shown}");
    p.expect("> ");
    p.send_line("/expand");
    let shown = p.expect("Exit code: 0");
    assert!(shown.contains("one\ntwo\n"), "{shown}");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("change it");
    let before = p.expect("allow?");
    assert_eq!(before.matches("+goodbye").count(), 1, "{before}");
    p.send_line("y");
    let after = p.expect("edited it");
    assert!(after.contains("✓ +1 −1"), "{after}");
    assert!(
        !after.contains("+goodbye"),
        "the diff was shown again: {after}"
    );
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("do it");
    let question = p.expect("allow?");
    let joined: String = question
        .lines()
        .filter_map(|l| l.strip_prefix("  │ ").or_else(|| l.strip_prefix("  ┊ ")))
        .collect();
    assert_eq!(joined, long, "{question}");
    p.send_line("n");
    p.expect("declined");
    p.expect("> ");
    // Back at the prompt, the turn over (a command answers after it), and the model was not
    // asked again.
    p.send_line("/cost");
    p.expect("model requests");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining(), 1);
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("clean up");
    p.expect("allow?");
    p.send_line("t");
    p.expect("say what to do");
    p.send_line("use cargo clean instead");
    p.expect("ok, using cargo clean");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("/init");
    let question = p.expect("allow?");
    assert!(question.contains("╭─ Create AGENTS.md"), "{question}");
    p.send_line("y");
    p.expect("wrote AGENTS.md");
    p.expect("> ");
    p.send_line("/diff");
    let diff = p.expect("+run cargo test");
    assert!(diff.contains("+# Notes"), "{diff}");
    p.send_line("/exit");
    p.eof();
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
    p.expect("> ");
    p.send_line("make it");
    p.expect("allow?");
    p.send_line("a");
    p.expect("keep it:");
    p.send_line("p");
    p.expect("kept bash(touch*) in .ling/settings.json");
    p.expect("made first");
    p.send_line("/exit");
    p.eof();
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

/// A settings file made read-only (0444) is the user's "leave it": "always" does not replace it
/// behind that, says so, and the call still runs (the rule holds for the session).
#[test]
fn always_never_overwrites_a_read_only_settings_file() {
    use std::os::unix::fs::PermissionsExt;
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "touch first.txt"}))]),
        Reply::text("made first"),
    ]);
    let project = Project::new();
    let original = r#"{"model": "kept-model"}"#;
    project.write(".ling/settings.json", original);
    project.trust();
    let file = project.file(".ling/settings.json");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut p = start(&project, &server, &[]);
    p.expect("> ");
    p.send_line("make it");
    p.expect("allow?");
    p.send_line("a");
    p.expect("keep it:");
    p.send_line("p");
    let said = p.expect("made first");
    assert!(
        said.contains("is read-only (mode 0444), so Ling left it unchanged")
            && said.contains("chmod u+w"),
        "{said}"
    );
    assert!(!said.contains("kept bash(touch*)"), "{said}");
    p.send_line("/exit");
    p.eof();
    assert_eq!(project.read(".ling/settings.json"), original);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);
    assert!(project.file("first.txt").exists());
}

#[test]
fn esc_means_no_and_enter_or_another_key_approves_nothing() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "touch esc.txt"}))]),
        Reply::tool_calls(vec![("b2", "bash", json!({"command": "touch yes.txt"}))]),
        Reply::text("made it"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.send_line("make a file");
    let question = p.expect("allow?");
    assert!(question.contains("╭─ Run command"), "{question}");
    assert!(question.contains("1. Yes, once (y)"), "{question}");
    assert!(question.contains("always allow bash(touch*)"), "{question}");
    // Esc, then Enter, Enter: the Esc said no, and the Enters approve nothing.
    p.key("\x1b");
    let after = p.expect("declined");
    assert!(after.contains("✗ denied by you"), "{after}");
    assert!(
        !after.contains("the user denied permission"),
        "the model's words shown: {after}"
    );
    p.typ("\r\r");
    p.prompt();
    assert!(!project.file("esc.txt").exists(), "Esc ran the command");

    p.send_line("another");
    p.expect("allow?");
    p.key("\r");
    p.expect("Enter is not a choice");
    p.key("x");
    p.expect("\"x\" is not a choice");
    assert!(
        !project.file("yes.txt").exists(),
        "a key that is no choice ran it"
    );
    p.key("1");
    p.expect("made it");
    p.exit();
    assert!(project.file("yes.txt").exists());
}

#[test]
fn a_failed_command_shows_as_failure_with_the_end_of_its_output() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "seq 1 20; echo 'FAILED test_parse'; exit 3"}),
        )]),
        Reply::text("it failed"),
    ]);
    let project = Project::new();
    let mut p = repl::start(
        &project,
        &server,
        &["--sandbox", "off", "--allowed-tools", "bash"],
        &[("NO_COLOR", "")],
    );
    p.prompt();
    p.send_line("run the tests");
    let raw = p.raw("it failed");
    let shown = crate::support::repl::without_escapes(&raw);
    assert!(shown.contains("  ✗ exit 3 · 21 lines"), "{shown}");
    assert!(raw.contains("\x1b[31m✗"), "not red: {raw:?}");
    assert!(!shown.contains("✓"), "{shown}");
    assert!(
        shown.contains("  … 16 lines above (/expand shows the output)\n  │ 17\n  │ 18\n  │ 19\n  │ 20\n  │ FAILED test_parse\n"),
        "{shown}"
    );
    p.exit();
}

#[test]
fn after_a_yes_the_spinner_runs_again_with_the_way_out() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo started; sleep 2; echo done"}),
        )]),
        Reply::text("finished"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.send_line("run it");
    p.expect("allow?");
    p.key("y");
    // The spinner comes back at once, naming the call, with its seconds and last line.
    let spun = p.raw("esc to interrupt · started");
    assert!(
        spun.contains("bash(echo started; sleep 2; echo done) "),
        "{spun:?}"
    );
    p.expect("finished");
    p.exit();
}

#[test]
fn a_line_typed_right_after_an_empty_enter_is_kept() {
    // The Enter and the next line come in one read of the terminal: the line editor must keep
    // what followed the Enter for the next prompt, not drop it with the first line's reader.
    let server = MockServer::start_blocking(vec![Reply::text("TYPED-AHEAD-SEEN")]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.prompt();
    p.typ("\rsecond line typed at once\r");
    p.expect("TYPED-AHEAD-SEEN");
    p.exit();
    let asked = server.requests_for("second line typed at once");
    assert_eq!(asked.len(), 1, "the line typed after the Enter was lost");
}
