//! Claude Code's and Codex's spellings of the command line, through the real binary: each does
//! what Ling's own flag does (asserted on what ran and what the model was sent), two spellings
//! that disagree are a usage error naming both, and Claude flags Ling has no meaning for are
//! refused by name.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

fn ling(project: &Project, server: &MockServer, args: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(args);
    run(cmd)
}

/// A run whose model writes `out.txt`, then answers; returns its output.
fn writes(project: &Project, args: &[&str]) -> (Output, MockServer) {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "x\n"}),
        )]),
        Reply::text("done"),
    ]);
    let out = ling(project, &server, args);
    (out, server)
}

#[test]
fn claudes_permission_spellings_allow_the_write() {
    for args in [
        &["-p", "w", "--permission-mode", "acceptEdits"][..],
        &["-p", "w", "--dangerously-skip-permissions"],
        &["-p", "w", "--allowedTools", "Write"],
        &["exec", "w", "--full-auto"],
        &["exec", "w", "-a", "never"],
    ] {
        let project = Project::new();
        let (out, _) = writes(&project, args);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert_eq!(project.read("out.txt"), "x\n", "{args:?}");
    }
    // Without them the write asks, which a -p run denies; dontAsk denies it in any run.
    for args in [
        &["-p", "w"][..],
        &["-p", "w", "--permission-mode", "dontAsk"],
        &[
            "-p",
            "w",
            "--disallowedTools",
            "Write",
            "--dangerously-skip-permissions",
        ],
    ] {
        let project = Project::new();
        let (out, _) = writes(&project, args);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert!(!project.file("out.txt").exists(), "{args:?} wrote");
    }
    let project = Project::new();
    let (out, _) = writes(&project, &["-p", "w", "--permission-mode", "dontAsk"]);
    assert!(
        out.stderr
            .contains("the permission mode is dont-ask, which asks nothing"),
        "{}",
        out.stderr
    );
}

#[test]
fn codex_exec_json_and_model_are_codex_s_events_and_ling_s_model() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let out = ling(
        &project,
        &server,
        &["exec", "--json", "-m", "m2", "-s", "read-only", "say hi"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines = out.json_lines();
    assert_eq!(lines[0]["type"], json!("thread.started"));
    assert_eq!(lines[2]["item"]["type"], json!("agent_message"));
    assert_eq!(lines[2]["item"]["text"], json!("hi"));
    assert_eq!(
        lines.last().map(|l| l["type"].clone()),
        Some(json!("turn.completed"))
    );
    assert_eq!(server.requests()[0].body["model"], json!("m2"));
    // `-` reads the prompt from stdin, and -o writes the last message.
    let server = MockServer::start_blocking(vec![Reply::text("from stdin")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["exec", "-o", "last.txt", "-"]);
    let out = project::run_with(
        cmd,
        Some("the prompt\n"),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(project.read("last.txt"), "from stdin");
    let sent = server.requests()[0].messages();
    assert_eq!(
        sent.last().map(|m| m["content"].clone()),
        Some(json!("the prompt"))
    );
}

#[test]
fn dash_c_and_dash_r_continue_a_session() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]);
    let first = ling(
        &project,
        &server,
        &["-p", "first", "--output-format", "json"],
    );
    let id = first.json()["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let second = ling(
        &project,
        &server,
        &["-p", "-c", "second", "--output-format", "json"],
    );
    assert_eq!(second.json()["session_id"], json!(id));
    let third = ling(
        &project,
        &server,
        &["-p", "-r", &id[..8], "third", "--output-format", "json"],
    );
    assert_eq!(third.json()["session_id"], json!(id));
    let history: Vec<Value> = server.requests()[2]
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(history, [json!("first"), json!("second"), json!("third")]);
}

#[test]
fn settings_flag_takes_a_file_or_json_and_its_hooks_run() {
    let project = Project::new();
    project.write(
        "gate.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
            {"type": "command", "command": "echo 'settings hook said no' >&2; exit 2"}]}]}})
        .to_string(),
    );
    let (out, server) = writes(
        &project,
        &[
            "-p",
            "w",
            "--settings",
            "gate.json",
            "--permission-mode",
            "bypass",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("out.txt").exists());
    let tool = server.requests()[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_default();
    assert!(
        tool["content"]
            .as_str()
            .is_some_and(|c| c.contains("settings hook said no")),
        "{tool}"
    );
    // Inline JSON: a deny rule.
    let project = Project::new();
    let (out, _) = writes(
        &project,
        &[
            "-p",
            "w",
            "--settings",
            r#"{"permissions":{"deny":["Write"]}}"#,
            "--yolo",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("out.txt").exists());
    // A mistake in it is a usage error with its position.
    let out = ling(
        &project,
        &MockServer::start_blocking(vec![]),
        &["-p", "x", "--settings", "{\"model\": 3}"],
    );
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("--settings:1:"), "{}", out.stderr);
}

#[test]
fn setting_sources_leaves_the_project_s_files_out() {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        &json!({"permissions": {"allow": ["write_file"]}}).to_string(),
    );
    project.trust();
    let (out, _) = writes(&project, &["-p", "w"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        project.read("out.txt"),
        "x\n",
        "the trusted allow rule applies"
    );
    std::fs::remove_file(project.file("out.txt")).unwrap_or_default();
    let (out, _) = writes(&project, &["-p", "w", "--setting-sources", "user,local"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        !project.file("out.txt").exists(),
        "the project's settings were read"
    );
    let out = ling(
        &project,
        &MockServer::start_blocking(vec![]),
        &["-p", "w", "--setting-sources", "team"],
    );
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("`team` is not a source"),
        "{}",
        out.stderr
    );
}

#[test]
fn model_aliases_name_the_id_sent() {
    let project = Project::new();
    project.write(
        "home-settings.json",
        &json!({"modelAliases": {"sonnet": "anthropic/claude-sonnet-4.5"}}).to_string(),
    );
    std::fs::copy(
        project.file("home-settings.json"),
        project.home.path().join("settings.json"),
    )
    .unwrap_or_default();
    let server = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    let out = ling(&project, &server, &["-p", "x", "--model", "sonnet"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(
        server.requests()[0].body["model"],
        json!("anthropic/claude-sonnet-4.5")
    );
    let out = ling(&project, &server, &["-p", "x", "--model", "opus"]);
    assert_eq!(server.requests()[1].body["model"], json!("opus"));
    assert!(
        out.stderr.contains("one of Claude Code's aliases"),
        "{}",
        out.stderr
    );
}

#[test]
fn disagreeing_spellings_and_unsupported_flags_are_usage_errors() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    for (args, says) in [
        (
            &[
                "-p",
                "x",
                "--permission-mode",
                "plan",
                "--dangerously-skip-permissions",
            ][..],
            "--permission-mode plan and --dangerously-skip-permissions (Claude Code: bypass)",
        ),
        (
            &["exec", "x", "--json", "--output-format", "text"],
            "--output-format text and --json (Codex: codex-json)",
        ),
        (
            &["-p", "x", "-s", "read-only", "--yolo"],
            "--sandbox read-only and --dangerously-bypass-approvals-and-sandbox",
        ),
        (
            &["-p", "x", "--fallback-model", "m"],
            "--fallback-model is a Claude Code flag Ling does not support",
        ),
        (&["-p", "x", "-c", "-r", "abc"], "cannot be used with"),
    ] {
        let out = ling(&project, &server, args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    assert!(server.requests().is_empty());
}

#[test]
fn help_says_where_each_spelling_comes_from() {
    let out = run({
        let mut cmd = std::process::Command::new(project::ling_bin());
        cmd.arg("--help");
        cmd
    });
    for text in [
        "(--allowedTools: Claude Code)",
        "(-m: Codex)",
        "(-c: Claude Code)",
        "--dangerously-skip-permissions",
        "--full-auto",
        "--settings <FILE|JSON>",
        "Claude Code: acceptEdits",
        "Codex: danger-full-access",
    ] {
        assert!(
            out.stdout.contains(text),
            "--help lacks {text}:\n{}",
            out.stdout
        );
    }
}
