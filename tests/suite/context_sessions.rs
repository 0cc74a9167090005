//! Sessions that survive: `kill -9` in the middle of a streamed answer, of a tool call and of a
//! compaction leaves a transcript that `--continue` resumes, the API accepting its history and
//! nothing the user typed lost; `ling sessions list [--json]` lists this project's sessions.

use std::time::Duration;

use crate::support::{mock_openai, process, project};

use super::context_compaction::{prompt, user_settings};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

/// Starts `ling -p PROMPT --model local ARGS`, waits until `ready` is true, then kills it with
/// SIGKILL (no chance to clean up).
fn kill_when(
    project: &Project,
    server: &MockServer,
    prompt: &str,
    args: &[&str],
    ready: impl Fn() -> bool,
) {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt, "--model", "local"]).args(args);
    let mut child = process::spawn_captured(cmd);
    process::wait_for("the run to reach the point to kill it", || {
        ready().then_some(())
    });
    // Killed at once: what `ready` saw must already be safe in the transcript.
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `ling -p PROMPT --continue --output-format json`; asserts it succeeded.
fn continue_with(project: &Project, server: &MockServer, prompt: &str) -> Value {
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        prompt,
        "--continue",
        "--model",
        "local",
        "--output-format",
        "json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    out.json()
}

fn history(server: &MockServer) -> Vec<Value> {
    server.requests().last().unwrap().messages()[1..].to_vec()
}

#[test]
fn killed_mid_stream_the_prompt_is_kept_and_the_session_resumes() {
    let slow =
        Reply::text("a long answer that never finishes").chunk_delay(Duration::from_secs(30));
    let server = MockServer::start_blocking(vec![slow, Reply::text("fine")]);
    let project = Project::new();
    kill_when(&project, &server, "first question", &[], || {
        server.requests().len() == 1
    });
    let result = continue_with(&project, &server, "second question");
    assert_eq!(result["result"], "fine");
    assert_eq!(
        history(&server),
        vec![
            json!({"role": "user", "content": "first question"}),
            json!({"role": "user", "content": "second question"}),
        ]
    );
}

#[test]
fn killed_mid_tool_the_call_gets_an_interrupted_result() {
    let marker = "started.txt";
    let call = Reply::tool_calls(vec![(
        "call_1",
        "bash",
        json!({"command": format!("echo go > {marker}; sleep 30")}),
    )]);
    let server = MockServer::start_blocking(vec![call, Reply::text("resumed")]);
    let project = Project::new();
    let marker_path = project.file(marker);
    kill_when(
        &project,
        &server,
        "run it",
        &["--allowed-tools", "bash"],
        || marker_path.exists(),
    );
    let result = continue_with(&project, &server, "what happened?");
    assert_eq!(result["result"], "resumed");
    let sent = history(&server);
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(sent[0], json!({"role": "user", "content": "run it"}));
    assert_eq!(sent[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(sent[2]["role"], "tool");
    assert!(sent[2]["content"].as_str().unwrap().contains("interrupted"));
    assert_eq!(
        sent[3],
        json!({"role": "user", "content": "what happened?"})
    );
}

#[test]
fn killed_mid_compaction_the_session_resumes_from_before_it() {
    let replies = (1..=2)
        .map(|n| Reply::text(&format!("answer {n}")))
        .collect();
    let server = MockServer::start_blocking(replies);
    server.answer_summaries("SUMMARY");
    server.summary_delay(Duration::from_secs(30));
    let project = Project::new();
    user_settings(&project, json!({ "contextWindow": 7000 }));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", &prompt(1, 12_000), "--model", "local"]);
    assert_eq!(run(cmd).code, Some(0));
    // The second prompt takes the context past 85%: Ling is killed while summarising.
    let summarising = || {
        server
            .requests()
            .iter()
            .any(|r| r.body.get("tools").is_none())
    };
    kill_when(
        &project,
        &server,
        &prompt(2, 12_000),
        &["--continue"],
        summarising,
    );
    server.summary_delay(Duration::ZERO);

    let result = continue_with(&project, &server, "third");
    assert_eq!(result["result"], "answer 2", "{result}");
    let sessions = project.home.path().join("sessions");
    let path = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(path).unwrap();
    // Every prompt the user typed is in the transcript, the killed run's included.
    for typed in [prompt(1, 12_000), prompt(2, 12_000), "third".to_string()] {
        let line = json!({"type": "message", "message": {"role": "user", "content": typed}});
        assert!(text.contains(&line.to_string()), "{typed:.20} lost");
    }
    // The resumed run compacted (the killed one never recorded its compaction) and the model
    // got the summary and the latest prompt.
    assert_eq!(text.matches(r#""type":"compaction""#).count(), 1);
    let sent = history(&server);
    assert!(sent[0]["content"].as_str().unwrap().contains("SUMMARY #"));
    assert_eq!(
        sent.last().unwrap(),
        &json!({"role": "user", "content": "third"})
    );
}

#[test]
fn sessions_list_shows_this_project_s_sessions_newest_first() {
    let server = MockServer::start_blocking(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]);
    let project = Project::new();
    let other = Project::new();
    let run_p = |project: &Project, prompt: &str| {
        let mut cmd = project.command(&server.base_url());
        cmd.args(["-p", prompt, "--output-format", "json"]);
        // Both projects share one LING_HOME.
        cmd.env("LING_HOME", project_home(&other));
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out.json()["session_id"].as_str().unwrap().to_string()
    };
    let first = run_p(&project, "fix the parser\nplease");
    std::thread::sleep(Duration::from_millis(1100));
    let second = run_p(&project, "add a test");
    run_p(&other, "elsewhere");

    let mut cmd = project.command(&server.base_url());
    cmd.args(["sessions", "list", "--json"])
        .env("LING_HOME", project_home(&other));
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let listed = out.json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0]["id"], second.as_str());
    assert_eq!(listed[0]["first_prompt"], "add a test");
    assert_eq!(listed[0]["messages"], 2);
    assert_eq!(listed[1]["id"], first.as_str());
    assert_eq!(listed[1]["first_prompt"], "fix the parser");
    for entry in listed {
        for key in ["started", "last_activity"] {
            let time = entry[key].as_str().unwrap();
            assert!(time.ends_with('Z') && time.contains('T'), "{key}: {time}");
        }
    }

    let mut cmd = project.command(&server.base_url());
    cmd.args(["sessions", "list"])
        .env("LING_HOME", project_home(&other));
    let out = run(cmd);
    assert_eq!(out.code, Some(0));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("id") && lines[0].contains("first prompt"),
        "{}",
        out.stdout
    );
    assert!(lines[1].starts_with(&second) && lines[1].ends_with("add a test"));
    assert!(lines[2].starts_with(&first));
    assert!(out.stdout.contains("ling --resume ID"));
    assert!(!out.stdout.contains("elsewhere"));
}

fn project_home(project: &Project) -> &std::path::Path {
    project.home.path()
}
