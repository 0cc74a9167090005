//! What a Claude Agent SDK program supplies in-process, through the published SDK and the real
//! `ling`: callback `hooks` (Anthropic's hello-world PreToolUse write guard blocks a script
//! written outside its folder and lets one inside it through), an in-process MCP server made
//! with `createSdkMcpServer` (its tool called by the model, each JSON-RPC message over the
//! control channel), and `agents` (a sub-agent the program defined runs with its prompt).

use super::claude_sdk::{messages, of_type, sdk, sdk_lines};
use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::{Value, json};

fn tool_results(messages: &[Value]) -> Vec<Value> {
    of_type(messages, "user")
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

#[test]
fn the_hello_world_write_guard_blocks_a_script_outside_its_folder() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "agent/custom_scripts/ok.js", "content": "1\n"}),
        )]),
        Reply::tool_calls(vec![(
            "w2",
            "write_file",
            json!({"path": "hello.js", "content": "2\n"}),
        )]),
        Reply::text("done"),
    ]);
    server.expect_unasked(1);
    let (lines, stderr) = sdk_lines(
        &project,
        &server,
        json!({"prompts": ["write scripts"], "helloWorldGuard": true,
               "options": {"permissionMode": "acceptEdits"}}),
    );
    // The guard's `continue: false` ends the session, with its `stopReason` as the error.
    let last = lines.last().cloned().unwrap_or_default();
    assert!(
        last["error"]
            .as_str()
            .is_some_and(|e| e.contains("must be written to the custom_scripts directory")),
        "{last}\n{stderr}"
    );
    let hooks: Vec<&Value> = lines.iter().filter_map(|l| l.get("hook")).collect();
    assert_eq!(hooks.len(), 2, "{lines:#?}");
    assert_eq!(hooks[0]["toolName"], json!("Write"));
    assert_eq!(hooks[0]["event"], json!("PreToolUse"));
    // The negative: the guard lets a script inside its folder through.
    assert!(project.file("agent/custom_scripts/ok.js").exists());
    assert!(!project.file("hello.js").exists(), "the guard did not bite");
    let messages = messages(&lines);
    let results = tool_results(&messages);
    assert!(
        results
            .iter()
            .any(|r| r["tool_use_id"] == json!("w2") && r["is_error"] == json!(true)),
        "{results:#?}"
    );
}

#[test]
fn a_tool_of_an_in_process_mcp_server_is_called() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__calc__add", json!({"a": 2, "b": 40}))]),
        Reply::text("42"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["add"], "sdkMcpServer": true,
               "options": {"allowedTools": ["mcp__calc__add"]}}),
    );
    let calls: Vec<&Value> = lines.iter().filter_map(|l| l.get("sdkTool")).collect();
    assert_eq!(calls, [&json!({"name": "add", "args": {"a": 2, "b": 40}})]);
    let requests = server.requests();
    assert!(
        requests[0]
            .tool_names()
            .contains(&"mcp__calc__add".to_string()),
        "{:?}",
        requests[0].tool_names()
    );
    let results = tool_results(&messages(&lines));
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["is_error"], json!(false), "{results:#?}");
    assert!(
        results[0]["content"].to_string().contains("42"),
        "{results:#?}"
    );
    let init = &messages(&lines)[0];
    assert!(init["mcp_servers"].to_string().contains("calc"), "{init}");
}

#[test]
fn an_agent_the_program_defines_runs_with_its_prompt_and_tools() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({"description": "review", "prompt": "review a.txt", "subagent_type": "reviewer"}),
        )]),
        Reply::text("REVIEWED"),
        Reply::text("the reviewer said REVIEWED"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["get a review"],
               "agents": {"reviewer": {"description": "Reviews code",
                                        "prompt": "You are the REVIEWER-7 agent.",
                                        "tools": ["Read", "Grep"]}}}),
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{lines:#?}");
    // The parent is told the agent exists; the child runs on its prompt with its tools only.
    assert!(requests[0].body.to_string().contains("Reviews code"));
    let child = &requests[1];
    assert!(
        child.messages()[0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("REVIEWER-7")),
        "{:?}",
        child.messages()[0]
    );
    let mut names = child.tool_names();
    names.sort();
    assert_eq!(names, ["grep", "read_file"]);
    let results = tool_results(&messages(&lines));
    assert!(
        results[0]["content"].to_string().contains("REVIEWED"),
        "{results:#?}"
    );
}

#[test]
fn an_agent_option_ling_cannot_honour_ends_the_session_with_the_reason() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    let (lines, stderr) = sdk_lines(
        &project,
        &server,
        json!({"prompts": ["hi"],
               "agents": {"x": {"description": "d", "prompt": "p", "skills": ["a"]}}}),
    );
    let last = lines.last().cloned().unwrap_or_default();
    assert!(
        last["error"]
            .as_str()
            .is_some_and(|e| e.contains("`skills`")),
        "{last}\n{stderr}"
    );
    assert!(server.requests().is_empty(), "the prompt ran anyway");
}
