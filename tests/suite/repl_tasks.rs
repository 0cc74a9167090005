//! The REPL's `/tasks` (background commands with their state and last line, counted in
//! `/status`) and `/goal` (a check after each answer until it passes), in a pseudo-terminal.

use crate::support::mock_openai::{MockServer, Reply};
use crate::support::process;
use crate::support::project::Project;
use crate::support::repl;

use std::time::Duration;

use serde_json::json;

#[test]
fn tasks_lists_a_background_command_with_its_state_and_last_line_and_status_counts_it() {
    let project = Project::new();
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = project.path().join("server.pid");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo $$ >server.pid; echo booting; echo serving-on-8080; exec sleep 1000", "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![(
            "w",
            "bash",
            json!({"command": "until grep -qs serving \"$TMPDIR\"/ling-bg-*/bash_1.log; do sleep 0.02; done"}),
        )]),
        Reply::text("the server runs"),
    ]);
    let tmp_dir = tmp.path().to_string_lossy().to_string();
    let mut p = repl::start(
        &project,
        &server,
        &["--allowed-tools", "bash"],
        &[("TMPDIR", &tmp_dir)],
    );
    p.prompt();
    p.send_line("/tasks");
    let none = p.expect("> ");
    assert!(none.contains("no background commands"), "{none}");
    p.send_line("start the server");
    p.expect("the server runs");
    p.prompt();
    p.send_line("/tasks");
    let listed = p.expect("> ");
    assert!(
        listed.contains("bash_1  running  echo $$ >server.pid"),
        "{listed}"
    );
    assert!(listed.contains("\n      serving-on-8080\n"), "{listed}");
    assert!(
        !listed.contains("\n      booting"),
        "only the last line: {listed}"
    );
    p.send_line("/status");
    let status = p.expect("> ");
    assert!(
        status.contains("1 running of 1 started (/tasks)"),
        "{status}"
    );
    let pid = process::read_pid(&pid_file, "the background command wrote no pid");
    assert!(process::alive(pid));
    p.exit();
    assert!(
        process::gone_within(pid, Duration::from_secs(5)),
        "the background command (pid {pid}) outlived the REPL"
    );
}

#[test]
fn goal_runs_its_check_after_each_answer_until_it_passes_and_off_drops_it() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("looked at it"),
        Reply::tool_calls(vec![("t", "bash", json!({"command": "touch ok"}))]),
        Reply::text("fixed it"),
        Reply::text("plain answer"),
    ]);
    let mut p = repl::start(&project, &server, &["--allowed-tools", "bash"], &[]);
    p.prompt();
    p.send_line("/goal test -f ok");
    let set = p.expect("> ");
    assert!(
        set.contains("goal set: after each answer `test -f ok` runs"),
        "{set}"
    );
    p.send_line("make it pass");
    let turn = p.expect("passed after 2 rounds");
    assert!(
        turn.contains("check `test -f ok` failed (round 1: Exit code: 1)"),
        "{turn}"
    );
    assert!(
        turn.contains("check `test -f ok` passed (round 2)"),
        "{turn}"
    );
    p.prompt();
    p.send_line("/goal");
    let shown = p.expect("> ");
    assert!(
        shown.contains("`test -f ok` runs until it passes"),
        "{shown}"
    );
    p.send_line("/goal off");
    p.expect("goal dropped");
    p.prompt();
    std::fs::remove_file(project.path().join("ok")).unwrap();
    p.send_line("again");
    let plain = p.expect("plain answer");
    p.prompt();
    assert!(!plain.contains("check `"), "{plain}");
    p.exit();
    // The model was sent the failed check as the message after its first answer.
    let requests = server.requests();
    let sent = requests[1].messages();
    let back = sent
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(back.contains("does not pass yet (round 1)"), "{back}");
}

#[test]
fn a_command_past_its_timeout_is_kept_running_in_the_background_when_the_user_says_so() {
    let project = Project::new();
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = project.path().join("slow.pid");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "s",
            "bash",
            json!({"command": "echo $$ >slow.pid; echo started-slow; exec sleep 1000", "timeout_ms": 300}),
        )]),
        Reply::text("kept it"),
    ]);
    let tmp_dir = tmp.path().to_string_lossy().to_string();
    let mut p = repl::start(
        &project,
        &server,
        &["--allowed-tools", "bash"],
        &[("TMPDIR", &tmp_dir)],
    );
    p.prompt();
    p.send_line("run the slow one");
    let question = p.expect("allow?");
    assert!(
        question.contains("it reached its timeout; keep it running in the background"),
        "{question}"
    );
    p.send_line("y");
    p.expect("kept it");
    p.prompt();
    p.send_line("/tasks");
    let listed = p.expect("> ");
    assert!(listed.contains("bash_1  running"), "{listed}");
    let pid = process::read_pid(&pid_file, "the slow command wrote no pid");
    assert!(process::alive(pid), "the command was killed at its timeout");
    let result = server.requests()[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    assert!(
        result.contains("the user moved it to the background") && result.contains("id: bash_1"),
        "{result}"
    );
    assert!(result.contains("started-slow"), "{result}");
    p.exit();
    assert!(
        process::gone_within(pid, Duration::from_secs(5)),
        "the kept command (pid {pid}) outlived the REPL"
    );
}
