//! Sessions end to end: a `-p` run recorded in `LING_HOME/sessions`, then continued with
//! `--continue` and `--resume ID`, asserting what the model is sent on the second run; unknown
//! ids and projects without a session are usage errors; a transcript cut mid-tool is repaired.

use crate::support::{mock_openai, project};

use std::path::PathBuf;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use rexpect::session::spawn_command;
use serde_json::{Value, json};

/// Runs `ling -p PROMPT --output-format json` with `extra` flags.
fn run_json(project: &Project, server: &MockServer, prompt: &str, extra: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt, "--output-format", "json"])
        .args(extra);
    run(cmd)
}

fn session_id(out: &Output) -> String {
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    out.json()["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session_id in {}", out.stdout))
        .to_string()
}

fn transcript(project: &Project, id: &str) -> PathBuf {
    project
        .home
        .path()
        .join("sessions")
        .join(format!("{id}.jsonl"))
}

fn canonical_root(project: &Project) -> String {
    std::fs::canonicalize(project.path())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The messages of a request without the system prompt, which is rebuilt on every run.
fn history(request: &mock_openai::Recorded) -> Vec<Value> {
    let messages = request.messages();
    assert_eq!(messages[0]["role"], "system");
    messages[1..].to_vec()
}

#[test]
fn continue_sends_the_first_exchange_and_keeps_the_session() {
    let server = MockServer::start_blocking(vec![
        Reply::text("The answer is 42."),
        Reply::text("Yes, still 42."),
    ]);
    let project = Project::new();
    let first = session_id(&run_json(&project, &server, "what is the answer?", &[]));
    let second = session_id(&run_json(&project, &server, "next", &["--continue"]));
    assert_eq!(second, first);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        history(&requests[1]),
        vec![
            json!({"role": "user", "content": "what is the answer?"}),
            json!({"role": "assistant", "content": "The answer is 42."}),
            json!({"role": "user", "content": "next"}),
        ]
    );

    let text = std::fs::read_to_string(transcript(&project, &first)).expect("read transcript");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // The header, then each turn: its `turn` line, the prompt and the answer.
    assert_eq!(lines.len(), 7, "{text}");
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["id"], first.as_str());
    assert_eq!(lines[0]["cwd"], canonical_root(&project).as_str());
    assert!(
        lines[0]["created"]
            .as_str()
            .is_some_and(|c| c.ends_with('Z'))
    );
    assert_eq!(lines[4]["type"], "turn");
    assert_eq!(lines[6]["type"], "message");
    assert_eq!(
        lines[6]["message"],
        json!({"role": "assistant", "content": "Yes, still 42."})
    );
}

#[test]
fn resume_takes_an_id_prefix_from_any_project_and_continue_stays_in_its_project() {
    let server = MockServer::start_blocking(vec![Reply::text("first"), Reply::text("second")]);
    let project = Project::new();
    let id = session_id(&run_json(&project, &server, "remember blue", &[]));

    // Another project sharing the same LING_HOME.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = project.command(&server.base_url());
    cmd.current_dir(elsewhere.path())
        .args(["-p", "x", "--continue"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains("no session to continue"),
        "{}",
        out.stderr
    );

    let mut cmd = project.command(&server.base_url());
    cmd.current_dir(elsewhere.path())
        .args(["-p", "which colour?", "--output-format", "json", "--resume"])
        .arg(&id[..8]);
    assert_eq!(session_id(&run(cmd)), id);
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "the failed --continue must not reach the model"
    );
    assert_eq!(
        history(&requests[1]),
        vec![
            json!({"role": "user", "content": "remember blue"}),
            json!({"role": "assistant", "content": "first"}),
            json!({"role": "user", "content": "which colour?"}),
        ]
    );
}

#[test]
fn an_unknown_id_is_a_usage_error_that_says_where_ids_come_from() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi", "--resume", "0000-not-a-session"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains("no session 0000-not-a-session in")
            && out.stderr.contains("session_id"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    assert!(server.requests().is_empty());
}

#[test]
fn a_tool_call_without_a_result_is_repaired_and_corrupt_lines_skipped() {
    let server = MockServer::start_blocking(vec![Reply::text("Recovered.")]);
    let project = Project::new();
    let id = "11111111-2222-3333-4444-555555555555";
    let header = json!({"type": "session", "id": id, "cwd": canonical_root(&project),
        "created": "2024-01-01T00:00:00Z", "model": "m"});
    let user = json!({"type": "message", "message": {"role": "user", "content": "list files"}});
    let call = json!({"type": "message", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}});
    let path = transcript(&project, id);
    std::fs::create_dir_all(path.parent().expect("no parent")).unwrap();
    std::fs::write(
        &path,
        format!("{header}\n{user}\n{{\"type\":\"message\",\"mess\n{call}\n"),
    )
    .unwrap();

    let out = run_json(&project, &server, "go on", &["--continue"]);
    assert_eq!(session_id(&out), id);
    assert!(
        out.stderr.contains("skipped line 3") && out.stderr.contains("had no result"),
        "{}",
        out.stderr
    );
    let requests = server.requests();
    assert_eq!(
        history(&requests[0]),
        vec![
            json!({"role": "user", "content": "list files"}),
            call["message"].clone(),
            json!({"role": "tool", "tool_call_id": "call_1",
                "content": "error: this tool call was interrupted (Ling stopped before it finished); its result is unknown"}),
            json!({"role": "user", "content": "go on"}),
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with("{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"Recovered.\"}}\n"),
        "{text}"
    );
}

#[test]
fn the_repl_banner_names_the_resumed_session() {
    let server = MockServer::start_blocking(vec![Reply::text("noted")]);
    let project = Project::new();
    let id = session_id(&run_json(&project, &server, "note this", &[]));
    let mut cmd = project.command(&server.base_url());
    cmd.arg("--continue").env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
    p.exp_string(&format!("resumed session {id} (2 messages)"))
        .expect("no resume line in the banner");
    p.exp_string("> ").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().expect("the REPL did not exit");
}
