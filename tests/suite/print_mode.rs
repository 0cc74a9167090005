//! `ling -p` end to end: the real binary against the scripted mock model, asserting both what
//! the user got (stdout, stderr, exit code) and what the model was sent.

use crate::support::{mock_openai, process, project};

use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run, run_with};
use serde_json::json;

const BUILTINS: [&str; 12] = [
    "read_file",
    "write_file",
    "edit_file",
    "bash",
    "grep",
    "glob",
    "bash_output",
    "kill_shell",
    "web_fetch",
    "task",
    "todo_write",
    "ask_user",
];

/// The tool messages of a recorded request, as (tool_call_id, content).
fn tool_messages(request: &mock_openai::Recorded) -> Vec<(String, String)> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_text_answer_goes_to_stdout_and_the_request_is_well_formed() {
    let server =
        MockServer::start_blocking(vec![Reply::text("Hello from the model.").usage(12, 5)]);
    let project = Project::new();
    project.write("AGENTS.md", "Use tabs.\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "say hello", "--model", "test-model"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "Hello from the model.\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    let mut names = requests[0].tool_names();
    names.sort();
    let mut expected: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
    let messages = requests[0].messages();
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert!(
        system.contains("Use tabs."),
        "AGENTS.md missing from: {system}"
    );
    assert_eq!(messages[1], json!({"role": "user", "content": "say hello"}));
    assert_eq!(requests[0].header("authorization"), None);
}

#[test]
fn the_api_key_is_sent_as_a_bearer_token() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("OPENAI_API_KEY", "sk-test-123").args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-test-123")
    );
}

#[test]
fn a_multi_step_tool_loop_sends_results_back_in_order() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "read_file", json!({"path": "notes.txt"}))]),
        Reply::tool_calls(vec![("call_2", "grep", json!({"pattern": "beta"}))]),
        Reply::text("The file mentions beta."),
    ]);
    let project = Project::new();
    project.write("notes.txt", "alpha\nbeta\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "what is in notes.txt?"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "The file mentions beta.\n");
    assert!(
        out.stderr.contains("read_file(notes.txt)"),
        "{}",
        out.stderr
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].messages();
    let assistant = &second[second.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    let results = tool_messages(&requests[1]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_1");
    assert!(
        results[0].1.contains("alpha") && results[0].1.contains("beta"),
        "{}",
        results[0].1
    );
    let results = tool_messages(&requests[2]);
    assert_eq!(results.len(), 2);
    assert_eq!(results[1].0, "call_2");
    assert!(results[1].1.contains("notes.txt"), "{}", results[1].1);
}

#[test]
fn parallel_tool_calls_get_their_results_in_call_order() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("call_a", "read_file", json!({"path": "a.txt"})),
            ("call_b", "read_file", json!({"path": "b.txt"})),
            ("call_c", "glob", json!({"pattern": "*.txt"})),
        ]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    project.write("a.txt", "content of a\n");
    project.write("b.txt", "content of b\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "read both"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_messages(&server.requests()[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert!(results[0].1.contains("content of a"));
    assert!(results[1].1.contains("content of b"));
    assert!(results[2].1.contains("a.txt") && results[2].1.contains("b.txt"));
}

#[test]
fn builtin_tool_errors_reach_the_model_and_the_run_goes_on() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("e0", "read_file", json!({"path": "x.txt"})),
            ("e1", "read_file", json!({"path": "missing.txt"})),
            (
                "e2",
                "edit_file",
                json!({"path": "x.txt", "old_string": "nope", "new_string": "y"}),
            ),
            (
                "e3",
                "write_file",
                json!({"path": "unread.txt", "content": "overwrite"}),
            ),
            ("e4", "grep", json!({"pattern": "(unclosed"})),
            ("e5", "read_file", json!({"path": "../outside.txt"})),
            ("e6", "read_file", json!({})),
            ("e7", "no_such_tool", json!({})),
        ]),
        Reply::text("recovered"),
    ]);
    let project = Project::new();
    project.write("x.txt", "original\n");
    project.write("unread.txt", "keep me\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "break things", "--permission-mode", "accept-edits"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "recovered\n");
    let mut results = tool_messages(&server.requests()[1]);
    assert_eq!(results.len(), 8);
    let (_, first) = results.remove(0);
    assert!(first.contains("original"), "{first}");
    for (id, content) in &results {
        assert!(content.starts_with("Error:"), "{id}: {content}");
    }
    assert!(results[0].1.contains("missing.txt"), "{}", results[0].1);
    assert!(
        results[1].1.contains("nope") || results[1].1.contains("not found"),
        "{}",
        results[1].1
    );
    assert!(results[2].1.contains("read"), "{}", results[2].1);
    assert!(
        results[3].1.to_lowercase().contains("regex"),
        "{}",
        results[3].1
    );
    assert!(results[4].1.contains("outside"), "{}", results[4].1);
    assert!(results[5].1.contains("path"), "{}", results[5].1);
    assert!(results[6].1.contains("no_such_tool"), "{}", results[6].1);
    assert_eq!(project.read("x.txt"), "original\n");
    assert_eq!(project.read("unread.txt"), "keep me\n");
}

#[test]
fn malformed_tool_arguments_are_a_tool_error_not_a_crash() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls_raw(vec![("bad_1", "read_file", "{\"path\": \"a.txt\"")]),
        Reply::text("fixed it"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_messages(&server.requests()[1]);
    assert_eq!(results[0].0, "bad_1");
    assert!(results[0].1.contains("not valid JSON"), "{}", results[0].1);
}

#[test]
fn a_permission_denial_in_print_mode_tells_the_model_and_the_user() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "touch ran.txt"}))]),
        Reply::text("I could not run it."),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    // Without the shell sandbox (which would let it run), bash asks.
    cmd.args(["-p", "touch a file", "--sandbox", "off"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(!project.file("ran.txt").exists(), "the denied command ran");
    assert!(out.stderr.contains("--allowed-tools"), "{}", out.stderr);
    assert!(out.stderr.contains("bash(touch"), "{}", out.stderr);
    let results = tool_messages(&server.requests()[1]);
    assert!(
        results[0].1.contains("permission denied"),
        "{}",
        results[0].1
    );
    assert!(results[0].1.contains("--allowed-tools"), "{}", results[0].1);
    assert_eq!(out.stdout, "I could not run it.\n");
}

#[test]
fn an_allow_rule_lets_the_command_run() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("b1", "bash", json!({"command": "touch ran.txt"})),
            ("b0", "bash", json!({"command": "echo a,b > comma.txt"})),
        ]),
        Reply::tool_calls(vec![
            (
                "b2",
                "bash",
                json!({"command": "touch x.txt && mkdir chained"}),
            ),
            (
                "b3",
                "bash",
                json!({"command": "touch y.txt && touch both.txt"}),
            ),
        ]),
        Reply::text("ok"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    // A comma inside a rule's parentheses does not split it.
    cmd.args(["-p", "touch", "--allowed-tools", "glob,bash(touch*)"]);
    cmd.args([
        "--allowed-tools",
        "bash(echo a,b > comma.txt)",
        "--sandbox",
        "off",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(project.file("ran.txt").exists() && project.file("comma.txt").exists());
    let results = tool_messages(&server.requests()[1]);
    assert!(!results[0].1.starts_with("Error:"), "{}", results[0].1);
    // A chain is allowed only when every command in it is: `mkdir` is not, two `touch`es are.
    assert!(
        !project.file("chained").exists() && !project.file("x.txt").exists(),
        "a chained command slipped through"
    );
    assert!(
        project.file("both.txt").exists(),
        "an allowed chain did not run"
    );
    let results = tool_messages(&server.requests()[2]);
    assert!(
        results[2].1.contains("permission denied"),
        "{}",
        results[2].1
    );
}

#[test]
fn max_turns_stops_the_loop_with_exit_1() {
    let call = || Reply::tool_calls(vec![("g", "glob", json!({"pattern": "*"}))]);
    let server = MockServer::start_blocking(vec![call(), call(), call()]);
    server.expect_unasked(1);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "loop", "--max-turns", "2", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_429_is_retried_then_the_answer_arrives() {
    let server = MockServer::start_blocking(vec![
        Reply::status(429).retry_after(0),
        Reply::text("after retry"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "after retry\n");
    assert_eq!(server.requests().len(), 2);
    assert!(out.stderr.contains("retrying"), "{}", out.stderr);
}

/// A spent quota (OpenAI's 429 `insufficient_quota`), a wrong key and a model that does not
/// exist are final: one request, no retries, and the error says what to do. The negative: a 429
/// without such a code is retried (above).
#[test]
fn a_spent_quota_a_wrong_key_and_a_missing_model_are_final() {
    let cases = [
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            "no quota or credit left",
        ),
        (
            400,
            r#"{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            "key",
        ),
        (
            400,
            r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}"#,
            "--model",
        ),
    ];
    for (status, body, advice) in cases {
        let server = MockServer::start_blocking(vec![
            Reply::status(status).raw_error_body(body),
            Reply::text("never asked"),
        ]);
        server.expect_unasked(1);
        let project = Project::new();
        let mut cmd = project.command(&server.base_url());
        cmd.args(["-p", "hi"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
        assert_eq!(server.requests().len(), 1, "{body}: retried");
        assert!(!out.stderr.contains("retrying"), "{}", out.stderr);
        assert!(out.stderr.contains(advice), "{advice}: {}", out.stderr);
    }
}

#[test]
fn persistent_500s_fail_with_exit_1_and_a_clear_message() {
    // Five attempts (the first and four retries, the default maxRetries), each answered 500.
    let replies = (0..5).map(|_| Reply::status(500)).collect();
    let server = MockServer::start_blocking(replies);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("500"), "{}", out.stderr);
    assert_eq!(
        server.requests().len(),
        5,
        "the default retries, and no more"
    );
}

#[test]
fn a_stream_cut_mid_answer_is_reported_not_retried() {
    let server = MockServer::start_blocking(vec![
        Reply::cut_after_text("partial ans"),
        Reply::text("should not be used"),
    ]);
    server.expect_unasked(1);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(out.stdout.starts_with("partial ans"), "{}", out.stdout);
    assert!(!out.stdout.contains("should not be used"));
    assert!(out.stderr.contains("incomplete"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn json_output_is_one_result_object() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "glob", json!({"pattern": "*.md"}))]).usage(10, 2),
        Reply::text("final answer").usage(20, 3),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "final answer");
    assert_eq!(result["num_turns"], 2);
    // Ling's token counts, and Claude Code's names of them beside.
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 30, "output_tokens": 5, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 0, "prompt_tokens": 30, "completion_tokens": 5})
    );
    // gpt-4o-mini (the default model) at the price of Ling's table: $0.15 in, $0.60 out.
    let cost = result["total_cost_usd"].as_f64().unwrap_or(-1.0);
    assert!(
        (cost - (30.0 * 0.15 + 5.0 * 0.6) / 1e6).abs() < 1e-12,
        "{result}"
    );
    assert_eq!(result["permission_denials"], json!([]));
    assert_eq!(result["mcp_servers"], json!([]));
    assert!(result["duration_ms"].is_u64());
    let id = result["session_id"].as_str().unwrap_or_default();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "session_id {id}");
}

#[test]
fn ling_stream_json_output_is_one_event_per_line_in_order() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls_with_text(
            "Looking.",
            vec![("c1", "read_file", json!({"path": "a.txt"}))],
        ),
        Reply::text("It says hi."),
    ]);
    let project = Project::new();
    project.write("a.txt", "hi\n");
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "read",
        "--output-format",
        "ling-stream-json",
        "--model",
        "m2",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let events = out.json_lines();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        [
            "system",
            "assistant",
            "tool_use",
            "tool_result",
            "assistant",
            "result"
        ]
    );
    assert_eq!(events[0]["subtype"], "init");
    assert_eq!(events[0]["model"], "m2");
    assert_eq!(events[0]["tools"].as_array().map(Vec::len), Some(13));
    assert_eq!(events[1]["text"], "Looking.");
    assert_eq!(
        events[2],
        json!({"type":"tool_use","id":"c1","name":"read_file","input":{"path":"a.txt"}})
    );
    assert_eq!(events[3]["tool_use_id"], "c1");
    assert_eq!(events[3]["is_error"], false);
    assert!(
        events[3]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("hi")
    );
    assert_eq!(events[4]["text"], "It says hi.");
    assert_eq!(events[5]["result"], "It says hi.");
    assert_eq!(events[5]["session_id"], events[0]["session_id"]);
}

#[test]
fn stdout_stays_clean_in_text_mode() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "bash",
            json!({"command": "echo TOOL-NOISE; echo ERR-NOISE >&2"}),
        )]),
        Reply::text("clean"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "x", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "clean\n");
    assert!(
        out.stderr.contains("bash(echo TOOL-NOISE"),
        "{}",
        out.stderr
    );
    let results = tool_messages(&server.requests()[1]);
    assert!(results[0].1.contains("TOOL-NOISE") && results[0].1.contains("ERR-NOISE"));
}

#[test]
fn the_prompt_can_come_from_stdin_and_piped_stdin_is_context() {
    let server = MockServer::start_blocking(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]);
    let project = Project::new();

    let mut cmd = project.command(&server.base_url());
    cmd.arg("-p");
    let out = run_with(cmd, Some("prompt from stdin\n"), Duration::from_secs(30));
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);

    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "summarise this"]);
    let out = run_with(cmd, Some("line one\nline two\n"), Duration::from_secs(30));
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);

    // Piped stdin without -p behaves as -p instead of waiting for a terminal.
    let cmd = project.command(&server.base_url());
    let out = run_with(cmd, Some("no dash p\n"), Duration::from_secs(30));
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "three\n");

    let user = |i: usize| {
        let messages = server.requests()[i].messages();
        messages[1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(user(0), "prompt from stdin");
    assert!(user(1).starts_with("summarise this"), "{}", user(1));
    assert!(user(1).contains("line one\nline two"), "{}", user(1));
    assert_eq!(user(2), "no dash p");
}

#[test]
fn usage_and_configuration_errors_exit_2() {
    let project = Project::new();
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(["-p", "x", "--permission-mode", "yolo"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{}", out.stderr);

    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.arg("-p");
    let out = run(cmd);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("no prompt"), "{}", out.stderr);

    project.write(".ling/settings.json", "{\n  \"model\": \"x\",\n  oops\n}\n");
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(["-p", "x"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("settings.json:3:"), "{}", out.stderr);
}

#[test]
fn no_key_for_openai_says_how_to_set_one_before_sending_anything() {
    let project = Project::new();
    let mut cmd = project.command("https://api.openai.com/v1");
    cmd.args(["-p", "x"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("OPENAI_API_KEY"), "{}", out.stderr);
    assert!(out.stderr.contains("--base-url"), "{}", out.stderr);
}

#[test]
fn a_closed_stdout_pipe_exits_quietly() {
    let long: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    let server = MockServer::start_blocking(vec![Reply::text(&long)]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "long"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdin(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Read one byte, then close our end, like `| head -c1`.
    let mut stdout = child.stdout.take().expect("no stdout");
    let mut byte = [0u8; 1];
    let _ = std::io::Read::read(&mut stdout, &mut byte);
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        output.status.code() == Some(0),
        "{:?} {stderr}",
        output.status
    );
}

#[test]
fn ctrl_c_during_bash_kills_its_children_and_exits_130() {
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "b1",
        "bash",
        json!({"command": "sleep 300 & echo $! > child.pid; wait"}),
    )])]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "sleep", "--permission-mode", "bypass"]);
    let child = process::spawn_captured(cmd);
    let pid_file = project.file("child.pid");
    let grandchild = process::read_pid(&pid_file, "bash never started");
    process::interrupt(&child);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        process::gone_within(grandchild, Duration::from_secs(5)),
        "the background sleep {grandchild} survived Ctrl-C"
    );
}
