//! Work until a check passes (issue 33, item 5): `ling -p --until CMD` runs CMD after each answer
//! and, while it fails, sends its output back to the model, which goes on; the run says how many
//! rounds it took and whether the check passed (a stderr line in text mode, `until` in the json
//! result), and a check that never passes exits 3. The REPL's `/goal` and `/tasks` are in
//! `repl_tasks.rs`.

use crate::support::mock_openai::{MockServer, Reply, first_user_text};
use crate::support::project::{Project, run};

use serde_json::json;

/// The model answers twice without fixing anything, then creates `ok` and answers a third
/// time: the check `test -f ok` passes on round 3.
fn passes_on_round_three() -> MockServer {
    MockServer::start_blocking(vec![
        Reply::text("first try"),
        Reply::text("second try"),
        Reply::tool_calls(vec![("t", "bash", json!({"command": "touch ok"}))]),
        Reply::text("fixed"),
    ])
}

#[test]
fn a_check_that_passes_on_round_three_ends_the_run_well_and_says_so() {
    let project = Project::new();
    let server = passes_on_round_three();
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "make the check pass",
        "--allowed-tools",
        "bash",
        "--until",
        "echo checking; test -f ok",
        "--output-format",
        "json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(
        result["until"],
        json!({"command": "echo checking; test -f ok", "rounds": 3, "passed": true})
    );
    assert_eq!(result["result"], json!("fixed"));
    assert_eq!(result["num_turns"], json!(4));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // Each failed check went back as the next user message, with its output and status.
    let sent = requests[1].messages();
    let back = sent
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        back.contains("The check `echo checking; test -f ok` does not pass yet (round 1)"),
        "{back}"
    );
    assert!(back.contains("checking\nExit code: 1"), "{back}");
    assert_eq!(first_user_text(&requests[0]), "make the check pass");
}

#[test]
fn a_check_that_never_passes_stops_at_max_turns_and_exits_3() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "try",
        "--until",
        "echo still failing; exit 1",
        "--max-turns",
        "2",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(3), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains(
            "ling: --until: the check `echo still failing; exit 1` never passed (2 rounds); exit 3"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("check `echo still failing; exit 1` failed (round 2: Exit code: 1)"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_passing_check_in_text_mode_says_its_rounds_and_a_run_without_until_has_no_line() {
    let project = Project::new();
    let server = passes_on_round_three();
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "go",
        "--allowed-tools",
        "bash",
        "--until",
        "test -f ok",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(
        out.stderr
            .contains("ling: --until: the check passed after 3 rounds"),
        "{}",
        out.stderr
    );
    // Each round's answer streams to stdout; the last is the run's.
    assert!(
        out.stdout.starts_with("first try") && out.stdout.trim_end().ends_with("fixed"),
        "{}",
        out.stdout
    );
    // The same answers without --until: one round, no check, no line.
    let server = passes_on_round_three();
    server.expect_unasked(3);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(!out.stderr.contains("--until"), "{}", out.stderr);
    assert_eq!(out.stdout.trim_end(), "first try");
}

#[test]
fn the_check_runs_in_the_sandbox() {
    let project = Project::new();
    let outside = tempfile::tempdir().unwrap();
    // Ling's temp dir of its own, so that `/tmp`, where `outside` is, is no writable root.
    let tmp = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped");
    let server = MockServer::start_blocking(vec![Reply::text("done")]);
    let mut cmd = project.command(&server.base_url());
    let check = format!("echo x > '{}'", escaped.display());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--until", &check, "--max-turns", "1"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(3), "stderr: {}", out.stderr);
    assert!(!escaped.exists(), "the check wrote outside the sandbox");
    // With the sandbox off the same check writes and passes.
    let server = MockServer::start_blocking(vec![Reply::text("done")]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--until", &check, "--sandbox", "off"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(escaped.exists());
}

#[test]
fn until_is_refused_in_the_repl_and_with_stream_json_input() {
    let project = Project::new();
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args([
        "-p",
        "--until",
        "true",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("/goal CMD"), "{}", out.stderr);
}
