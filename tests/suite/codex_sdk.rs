//! The published Codex SDK (`@openai/codex-sdk`, installed by scripts/install-peers.sh) drives
//! the real `ling` as its Codex, through its `codexPathOverride` option, against the mock model:
//! `Thread.run()` gets the items, the final answer and the usage; `runStreamed()` Codex's events
//! in order; `resumeThread(id)` continues the session; `outputSchema` is checked (and asked
//! again once). The SDK spawns `ling exec --experimental-json ... --config
//! openai_base_url="..."` with the prompt on stdin. The driver is tests/peers/codex_sdk.mjs.

use crate::support::{mock_openai, peers, project};

use std::process::Command;
use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, ling_bin, run_with};
use serde_json::{Value, json};

/// Runs one scenario of the driver; returns its lines. `OPENAI_BASE_URL` points nowhere: the
/// model is reached only through the SDK's `baseUrl` (Codex's `openai_base_url` override).
fn sdk(project: &Project, server: &MockServer, scenario: Value) -> Vec<Value> {
    let (node, entry) = peers::codex_sdk();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/codex_sdk.mjs");
    let mut scenario = scenario;
    scenario["codex"]["baseUrl"] = Value::from(server.base_url());
    scenario["thread"]["workingDirectory"] = Value::from(project.path().to_string_lossy());
    scenario["thread"]["skipGitRepoCheck"] = Value::from(true);
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg(entry)
        .arg(scenario.to_string())
        .env("LING_BIN", ling_bin())
        .env("LING_HOME", project.home.path())
        .env("HOME", home.path())
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("LING_RETRY_BASE_MS", "5")
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_HOME")
        .env_remove("LING_BASE_URL")
        .env_remove("LING_MODEL")
        .env_remove("LING_LOG");
    let out = run_with(cmd, None, Duration::from_secs(90));
    out.stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nstderr: {}", out.stderr))
        })
        .collect()
}

fn ended_ok(lines: &[Value]) {
    assert_eq!(lines.last(), Some(&json!({"end": "ok"})), "{lines:#?}");
}

fn turns(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| l.get("turn").cloned())
        .collect()
}

/// A command, a new file, then reasoning and the answer.
fn working_replies() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "echo hi"}))]).usage(10, 2),
        Reply::tool_calls(vec![(
            "c2",
            "write_file",
            json!({"path": "note.txt", "content": "written\n"}),
        )])
        .usage(20, 3),
        Reply::reasoning_then_text("Thinking it over.", "Done: note.txt").usage(30, 4),
    ]
}

#[test]
fn run_returns_the_items_the_final_response_and_the_usage() {
    let project = Project::new();
    let server = MockServer::start_blocking(working_replies());
    let lines = sdk(
        &project,
        &server,
        json!({"thread": {"model": "m1", "sandboxMode": "workspace-write"},
               "turns": [{"input": "make a note"}]}),
    );
    ended_ok(&lines);
    let turn = &turns(&lines)[0];
    assert_eq!(turn["finalResponse"], json!("Done: note.txt"));
    let items = turn["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "command_execution",
            "file_change",
            "reasoning",
            "agent_message"
        ]
    );
    let command = &items[0];
    assert_eq!(
        (
            &command["command"],
            &command["exit_code"],
            &command["status"]
        ),
        (&json!("echo hi"), &json!(0), &json!("completed"))
    );
    assert_eq!(command["aggregated_output"], json!("hi"));
    assert_eq!(
        items[1]["changes"],
        json!([{"path": "note.txt", "kind": "add"}])
    );
    assert_eq!(items[1]["status"], json!("completed"));
    assert_eq!(items[2]["text"], json!("Thinking it over."));
    // Every item has its own id.
    let ids: std::collections::BTreeSet<&str> =
        items.iter().filter_map(|i| i["id"].as_str()).collect();
    assert_eq!(ids.len(), items.len(), "{items:#?}");
    assert_eq!(turn["usage"]["input_tokens"], json!(60));
    assert_eq!(turn["usage"]["output_tokens"], json!(9));
    // `--sandbox workspace-write`: the file was written without a question.
    assert_eq!(project.read("note.txt"), "written\n");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], json!("m1"));
}

#[test]
fn a_read_only_thread_cannot_write_and_says_so_in_an_error_item() {
    let project = Project::new();
    let server = MockServer::start_blocking(working_replies());
    let lines = sdk(
        &project,
        &server,
        json!({"thread": {"model": "m1", "sandboxMode": "read-only"},
               "turns": [{"input": "make a note"}]}),
    );
    ended_ok(&lines);
    let turn = &turns(&lines)[0];
    let items = turn["items"].as_array().unwrap();
    let errors: Vec<&Value> = items.iter().filter(|i| i["type"] == "error").collect();
    assert!(
        errors.iter().any(|e| e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("write_file")),
        "{items:#?}"
    );
    assert!(!project.file("note.txt").exists());
}

#[test]
fn run_streamed_yields_codex_events_in_order() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "exit 3"}))]),
        Reply::text("It failed with 3."),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"thread": {"sandboxMode": "workspace-write"},
               "turns": [{"input": "run it", "streamed": true}]}),
    );
    ended_ok(&lines);
    let events: Vec<&Value> = lines.iter().filter_map(|l| l.get("event")).collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            let item = e["item"]["type"].as_str().map(|t| format!(" {t}"));
            format!(
                "{}{}",
                e["type"].as_str().unwrap_or("?"),
                item.unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "thread.started",
            "turn.started",
            "item.started command_execution",
            "item.completed command_execution",
            "item.completed agent_message",
            "turn.completed",
        ]
    );
    assert_eq!(events[2]["item"]["status"], json!("in_progress"));
    assert_eq!(events[3]["item"]["exit_code"], json!(3));
    assert_eq!(events[3]["item"]["status"], json!("failed"));
    assert_eq!(events[2]["item"]["id"], events[3]["item"]["id"]);
    let thread_id = events[0]["thread_id"].as_str().unwrap_or_default();
    assert_eq!(
        lines.iter().find_map(|l| l.get("thread_id")),
        Some(&json!(thread_id))
    );
    assert!(
        events[5]["usage"]["cached_input_tokens"].is_number(),
        "{:?}",
        events[5]
    );
}

#[test]
fn resume_thread_continues_the_session() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("The word is lilac."),
        Reply::text("You said lilac."),
    ]);
    let first = sdk(
        &project,
        &server,
        json!({"turns": [{"input": "remember lilac"}]}),
    );
    ended_ok(&first);
    let id = first
        .iter()
        .find_map(|l| l.get("thread_id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert!(!id.is_empty(), "{first:#?}");
    let second = sdk(
        &project,
        &server,
        json!({"resume": id, "turns": [{"input": "what was the word?"}]}),
    );
    ended_ok(&second);
    assert_eq!(turns(&second)[0]["finalResponse"], json!("You said lilac."));
    assert_eq!(
        second.iter().find_map(|l| l.get("thread_id")),
        Some(&json!(id))
    );
    // The second request carries the first turn.
    let sent = server.requests()[1].messages();
    let texts: Vec<String> = sent.iter().map(|m| m["content"].to_string()).collect();
    assert!(
        texts.iter().any(|t| t.contains("remember lilac")),
        "{texts:#?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("The word is lilac.")),
        "{texts:#?}"
    );
    // An unknown thread is an error the SDK reports.
    let third = sdk(
        &project,
        &server,
        json!({"resume": "00000000-0000-4000-8000-000000000000",
               "turns": [{"input": "again"}]}),
    );
    let error = third
        .last()
        .and_then(|l| l.get("error"))
        .and_then(Value::as_str);
    assert!(
        error.is_some_and(|e| e.contains("exited with code 2")),
        "{third:#?}"
    );
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    })
}

#[test]
fn an_output_schema_is_told_checked_and_asked_again_once() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("The answer is 42."),
        Reply::text("```json\n{\"answer\": 42}\n```"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"turns": [{"input": "the answer?", "outputSchema": schema()}]}),
    );
    ended_ok(&lines);
    let turn = &turns(&lines)[0];
    assert_eq!(turn["finalResponse"], json!("{\"answer\":42}"));
    let requests = server.requests();
    let system = requests[0].messages()[0]["content"].to_string();
    assert!(
        system.contains("\\\"additionalProperties\\\":false"),
        "{system}"
    );
    let retry = requests[1]
        .messages()
        .last()
        .map(|m| m["content"].to_string());
    assert!(
        retry.is_some_and(|r| r.contains("does not match the required JSON Schema")),
        "{:?}",
        requests[1].messages()
    );
    // Two answers that do not match: the turn fails, and run() throws.
    let server = MockServer::start_blocking(vec![Reply::text("no"), Reply::text("still no")]);
    let lines = sdk(
        &project,
        &server,
        json!({"turns": [{"input": "the answer?", "outputSchema": schema()}]}),
    );
    let error = lines
        .last()
        .and_then(|l| l.get("error"))
        .and_then(Value::as_str);
    assert!(
        error.is_some_and(|e| e.contains("does not match --output-schema")),
        "{lines:#?}"
    );
}
