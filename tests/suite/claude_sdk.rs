//! The published Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, installed by
//! scripts/install-peers.sh) drives the real `ling` as its Claude Code, through its
//! `pathToClaudeCodeExecutable` option, against the mock model: `query()` gets a text answer, a
//! tool call and its result, a permission question answered by its `canUseTool` callback (allow,
//! deny, a changed input), several turns of one session, and its control calls
//! (`setPermissionMode`, `mcpServerStatus`, `interrupt`). The driver is tests/peers/claude_sdk.mjs.

use crate::support::{mock_openai, peers, project};

use std::process::Command;
use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, ling_bin, run_with};
use serde_json::{Value, json};

/// Runs one scenario of the driver; returns its lines (`{"message"}`, `{"canUseTool"}`,
/// `{"control"}`, and the last: `{"end"}` or `{"error"}`).
pub(super) fn sdk(project: &Project, server: &MockServer, scenario: Value) -> Vec<Value> {
    let (lines, stderr) = sdk_lines(project, server, scenario);
    assert_eq!(
        lines.last().cloned(),
        Some(json!({"end": "ok"})),
        "the query did not end well; stderr:\n{stderr}"
    );
    lines
}

/// [`sdk`] without the check that the query ended well; with Ling's stderr.
pub(super) fn sdk_lines(
    project: &Project,
    server: &MockServer,
    scenario: Value,
) -> (Vec<Value>, String) {
    let (node, entry) = peers::claude_agent_sdk();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/claude_sdk.mjs");
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg(entry)
        .arg(scenario.to_string())
        .current_dir(project.path())
        .env("LING_BIN", ling_bin())
        .env("LING_HOME", project.home.path())
        .env("OPENAI_BASE_URL", server.base_url())
        .env("LING_RETRY_BASE_MS", "5")
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LING_BASE_URL")
        .env_remove("LING_MODEL")
        .env_remove("LING_LOG");
    let out = run_with(cmd, None, Duration::from_secs(90));
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nstderr: {}", out.stderr))
        })
        .collect();
    (lines, out.stderr)
}

pub(super) fn messages(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| l.get("message").cloned())
        .collect()
}

pub(super) fn of_type<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["type"] == kind).collect()
}

/// The text blocks of the `assistant` messages.
fn texts(messages: &[Value]) -> Vec<String> {
    of_type(messages, "assistant")
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn query_gets_a_text_answer_and_its_result() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("Hi there.").usage(12, 3)]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["hello"], "options": {"model": "m1"}}),
    );
    let messages = messages(&lines);
    let init = &messages[0];
    assert_eq!(
        (&init["type"], &init["subtype"]),
        (&json!("system"), &json!("init"))
    );
    let session = init["session_id"].as_str().unwrap_or_default().to_string();
    assert!(!session.is_empty(), "{init}");
    assert_eq!(init["model"], json!("m1"));
    for tool in ["Bash", "Read", "Write", "Edit", "Grep", "Glob"] {
        assert!(
            init["tools"]
                .as_array()
                .is_some_and(|t| t.contains(&json!(tool))),
            "{init}"
        );
    }
    assert_eq!(texts(&messages), ["Hi there."]);
    let results = of_type(&messages, "result");
    assert_eq!(results.len(), 1, "{messages:#?}");
    let result = results[0];
    assert_eq!(result["subtype"], json!("success"));
    assert_eq!(result["is_error"], json!(false));
    assert_eq!(result["result"], json!("Hi there."));
    assert_eq!(result["num_turns"], json!(1));
    assert_eq!(result["session_id"], json!(session));
    assert_eq!(result["usage"]["input_tokens"], json!(12));
    assert_eq!(result["usage"]["output_tokens"], json!(3));
    assert!(result["total_cost_usd"].is_number(), "{result}");
    // Every message of the run is of the session.
    assert!(
        messages.iter().all(|m| m["session_id"] == json!(session)),
        "{messages:#?}"
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], json!("m1"));
    let user = sent[0].messages().last().cloned().unwrap_or_default();
    assert_eq!(user["content"], json!("hello"));
}

#[test]
fn query_sees_a_tool_call_and_its_result() {
    let project = Project::new();
    project.write("a.txt", "hello from a\n");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "read_file", json!({"path": "a.txt"}))]),
        Reply::text("It says hello."),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["read a.txt"], "options": {}}),
    );
    let messages = messages(&lines);
    let uses: Vec<Value> = of_type(&messages, "assistant")
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1, "{messages:#?}");
    assert_eq!(uses[0]["id"], json!("call_1"));
    assert_eq!(uses[0]["name"], json!("Read"));
    assert_eq!(uses[0]["input"]["file_path"], json!("a.txt"));
    let results: Vec<Value> = of_type(&messages, "user")
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(results.len(), 1, "{messages:#?}");
    assert_eq!(results[0]["type"], json!("tool_result"));
    assert_eq!(results[0]["tool_use_id"], json!("call_1"));
    assert_eq!(results[0]["is_error"], json!(false));
    assert!(
        results[0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("hello from a")),
        "{results:?}"
    );
    assert_eq!(texts(&messages), ["It says hello."]);
    let result = of_type(&messages, "result")[0];
    assert_eq!(
        (&result["subtype"], &result["num_turns"]),
        (&json!("success"), &json!(2))
    );
}

/// A write asks in the default mode: the SDK's `canUseTool` answers. Returns the driver's lines
/// and what the model was sent.
fn asked(answer: Value) -> (Project, Vec<Value>, Vec<mock_openai::Recorded>) {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "out.txt", "content": "x\n"}),
        )]),
        Reply::text("Done."),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["write it"], "options": {}, "canUseTool": answer}),
    );
    let requests = server.requests();
    (project, lines, requests)
}

#[test]
fn can_use_tool_answers_the_permission_question() {
    let (project, lines, _) = asked(json!({"behavior": "allow"}));
    let asks: Vec<&Value> = lines.iter().filter_map(|l| l.get("canUseTool")).collect();
    assert_eq!(asks.len(), 1, "{lines:#?}");
    assert_eq!(asks[0]["toolName"], json!("Write"));
    assert_eq!(asks[0]["toolUseID"], json!("call_w"));
    assert_eq!(asks[0]["input"]["file_path"], json!("out.txt"));
    assert_eq!(asks[0]["input"]["content"], json!("x\n"));
    assert_eq!(project.read("out.txt"), "x\n");
    let first = messages(&lines);
    assert_eq!(texts(&first), ["Done."]);
    assert_eq!(
        of_type(&first, "result")[0]["permission_denials"],
        json!([])
    );

    // A deny is the tool's result, and the model goes on.
    let (project, lines, requests) = asked(json!({"behavior": "deny", "message": "not today"}));
    assert!(!project.file("out.txt").exists(), "a denied write ran");
    let tool_message = requests[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_default();
    assert!(
        tool_message["content"]
            .as_str()
            .is_some_and(|c| c.contains("not today")),
        "{tool_message}"
    );
    assert_eq!(texts(&messages(&lines)), ["Done."]);

    // The callback may change the input, in Claude's field names.
    let (project, _, _) = asked(json!({"behavior": "allow",
        "updatedInput": {"file_path": "other.txt", "content": "y\n"}}));
    assert!(!project.file("out.txt").exists());
    assert_eq!(project.read("other.txt"), "y\n");
}

#[test]
fn a_session_of_several_turns_keeps_its_history_and_takes_control_calls() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("One."),
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "two.txt", "content": "2\n"}),
        )]),
        Reply::text("Two."),
    ]);
    // canUseTool would deny: the write goes through only because the mode was changed between
    // the turns.
    let lines = sdk(
        &project,
        &server,
        json!({
            "prompts": ["first", "second"],
            "options": {},
            "canUseTool": {"behavior": "deny", "message": "asked"},
            "afterFirstTurn": ["acceptEdits", "mcpServerStatus"],
        }),
    );
    let messages = messages(&lines);
    let results = of_type(&messages, "result");
    assert_eq!(results.len(), 2, "{messages:#?}");
    assert_eq!(results[0]["result"], json!("One."));
    assert_eq!(results[1]["result"], json!("Two."));
    assert_eq!(results[0]["session_id"], results[1]["session_id"]);
    assert_eq!(results[1]["num_turns"], json!(2));
    let controls: Vec<&Value> = lines.iter().filter_map(|l| l.get("control")).collect();
    assert_eq!(controls[0], &json!({"mode": "acceptEdits"}));
    assert_eq!(controls[1], &json!([]));
    assert!(
        lines.iter().all(|l| l.get("canUseTool").is_none()),
        "{lines:#?}"
    );
    assert_eq!(project.read("two.txt"), "2\n");
    // The second turn's request carries the first exchange.
    let sent = server.requests();
    let history: Vec<Value> = sent[1]
        .messages()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| json!([m["role"], m["content"]]))
        .collect();
    assert_eq!(
        history,
        [
            json!(["user", "first"]),
            json!(["assistant", "One."]),
            json!(["user", "second"])
        ]
    );
}

#[test]
fn interrupt_ends_the_turn_at_once() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "call_s",
        "bash",
        json!({"command": "sleep 30"}),
    )])]);
    let started = std::time::Instant::now();
    let lines = sdk(
        &project,
        &server,
        json!({
            "prompts": ["wait"],
            "options": {"permissionMode": "bypassPermissions"},
            "interruptOnFirstToolUse": true,
        }),
    );
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let messages = messages(&lines);
    let result = of_type(&messages, "result")[0];
    assert_eq!(
        result["subtype"],
        json!("error_during_execution"),
        "{result}"
    );
    assert_eq!(result["is_error"], json!(true));
    assert!(
        lines.iter().any(|l| l.get("control").is_some()),
        "{lines:#?}"
    );
}

#[test]
fn query_options_reach_ling_through_flags_and_initialize() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__echo", json!({"text": "hi"}))]),
        Reply::text("Echoed."),
    ]);
    let session_id = "6b0f6a2e-3c1d-4f7e-9a55-0d8c2b7e4a11";
    let lines = sdk(
        &project,
        &server,
        json!({
            "prompts": ["echo hi"],
            "options": {
                "systemPrompt": "Be terse.",
                "includePartialMessages": true,
                "mcpServers": {"test": {"type": "stdio", "command": crate::support::mcp::test_server()}},
                "allowedTools": ["mcp__test__echo"],
                "tools": ["Read"],
                "sessionId": session_id,
                "maxTurns": 4,
            },
        }),
    );
    let messages = messages(&lines);
    let init = &messages[0];
    assert_eq!(init["session_id"], json!(session_id));
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "test", "status": "connected"}])
    );
    let tools = init["tools"].as_array().cloned().unwrap_or_default();
    assert!(
        tools.contains(&json!("Read")) && !tools.contains(&json!("Bash")),
        "{init}"
    );
    assert!(tools.contains(&json!("mcp__test__echo")), "{init}");
    let sent = server.requests();
    let system = sent[0].messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(system.starts_with("Be terse.\n"), "{system}");
    assert!(!sent[0].tool_names().contains(&"bash".to_string()));
    let deltas: String = of_type(&messages, "stream_event")
        .iter()
        .filter(|m| m["event"]["type"] == "content_block_delta")
        .filter_map(|m| m["event"]["delta"]["text"].as_str())
        .collect();
    assert_eq!(deltas, "Echoed.");
    let result = of_type(&messages, "result")[0];
    assert_eq!(result["subtype"], json!("success"), "{result}");
    let tool_result = sent[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_default();
    assert!(
        tool_result["content"]
            .as_str()
            .is_some_and(|c| c.contains("hi")),
        "{tool_result}"
    );
}

#[test]
fn rewind_files_puts_the_files_back_as_before_a_message() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "first\n"}),
        )]),
        Reply::text("wrote it"),
        Reply::tool_calls(vec![(
            "w2",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "first", "new_string": "second"}),
        )]),
        Reply::text("changed it"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({
            "prompts": ["write the notes", "change them"],
            "options": {
                "permissionMode": "acceptEdits",
                "enableFileCheckpointing": true,
                "extraArgs": {"replay-user-messages": null},
            },
            "afterLastTurn": [
                {"rewindFiles": 1, "dryRun": true},
                {"rewindFiles": 1},
                {"rewindFiles": 0},
            ],
        }),
    );
    let controls: Vec<&Value> = lines.iter().filter_map(|l| l.get("control")).collect();
    assert_eq!(controls.len(), 3, "{lines:?}");
    // The dry run says what it would put back and changes nothing.
    assert_eq!(controls[0]["canRewind"], json!(true), "{controls:?}");
    assert_eq!(
        controls[0]["filesChanged"],
        json!(["notes.txt"]),
        "{controls:?}"
    );
    assert_eq!(controls[1]["canRewind"], json!(true), "{controls:?}");
    assert_eq!(
        controls[1]["filesChanged"],
        json!(["notes.txt"]),
        "{controls:?}"
    );
    assert_eq!(
        controls[2]["filesChanged"],
        json!(["notes.txt"]),
        "{controls:?}"
    );
    assert!(
        !project.file("notes.txt").exists(),
        "before the first message there was no notes.txt"
    );
}
