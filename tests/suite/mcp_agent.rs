//! MCP tools through the whole agent: the real `ling` binary, the mock model, and the
//! misbehaving test server. The tools are offered as `mcp__<server>__<tool>`, permissions and
//! hooks apply to them at the same dispatch point as builtin tools, and a broken server never
//! takes the run down.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, process, project};

use std::path::PathBuf;
use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

/// `.ling/mcp.json` with one test server named `test` started with `args`.
fn configure(project: &Project, args: &[&str], env: Value) {
    let config = json!({"mcpServers": {"test": {
        "command": test_server(), "args": args, "env": env, "startupTimeoutMs": 5000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
}

fn tool_results(request: &mock_openai::Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn mcp_tools_are_offered_and_called_with_an_allow_rule() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__add", json!({"a": 2, "b": 3}))]),
        Reply::text("2 + 3 = 5"),
    ]);
    let project = Project::new();
    configure(&project, &[], json!({}));
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "add",
        "--allowed-tools",
        "mcp__test__*",
        "--output-format",
        "json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(
        result["mcp_servers"],
        json!([{"name": "test", "status": "connected"}])
    );

    let first = &server.requests()[0];
    let names = first.tool_names();
    assert!(names.contains(&"mcp__test__echo".to_string()), "{names:?}");
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    let tools = first.body["tools"].as_array().cloned().unwrap_or_default();
    let echo = tools
        .iter()
        .find(|t| t["function"]["name"] == "mcp__test__echo")
        .cloned()
        .unwrap_or_default();
    let description = echo["function"]["description"].as_str().unwrap_or_default();
    assert!(description.starts_with("[MCP:test] "), "{description}");
    assert!(
        echo["function"]["parameters"].get("$schema").is_none(),
        "{echo}"
    );
    assert_eq!(echo["function"]["parameters"]["type"], "object");

    let results = tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains('5'), "{}", results[0]);
}

#[test]
fn mcp_tools_ask_in_default_mode_and_plan_mode_allows_only_read_only_ones() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__add", json!({"a": 1, "b": 1}))]),
        Reply::text("denied"),
        Reply::tool_calls(vec![
            ("p1", "mcp__test__echo", json!({"text": "hello"})),
            ("p2", "mcp__test__add", json!({"a": 1, "b": 1})),
        ]),
        Reply::text("planned"),
    ]);
    let project = Project::new();
    configure(&project, &[], json!({}));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "add"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("--allowed-tools"), "{}", out.stderr);
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("permission denied"), "{}", results[0]);
    assert!(results[0].contains("mcp__test__add"), "{}", results[0]);

    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "plan", "--permission-mode", "plan"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server.requests()[3]);
    assert!(results[0].contains("hello"), "{}", results[0]);
    assert!(results[1].contains("permission denied"), "{}", results[1]);
}

#[test]
fn hooks_run_around_mcp_tools_too() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__echo", json!({"text": "secret"}))]),
        Reply::text("blocked"),
    ]);
    let project = Project::new();
    let log = project.file("server.log");
    configure(&project, &[], json!({"MCP_TEST_LOG": log}));
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "mcp__test__.*", "hooks": [
            {"type": "command", "command": "echo 'no MCP today' >&2; exit 2"}
        ]}]}})
        .to_string(),
    );
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "echo", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results, ["Error: blocked by hook: no MCP today"]);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !calls.contains("tools/call"),
        "the blocked call reached the server: {calls}"
    );
}

#[test]
fn a_server_that_fails_to_start_is_reported_and_the_run_goes_on() {
    let server = MockServer::start_blocking(vec![Reply::text("fine without it")]);
    let project = Project::new();
    configure(&project, &["--exit-immediately"], json!({}));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(result["result"], "fine without it");
    assert_eq!(result["mcp_servers"][0]["status"], "failed");
    let error = result["mcp_servers"][0]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.contains("exiting immediately"),
        "stderr tail missing: {error}"
    );
    assert!(out.stderr.contains("mcp test: failed"), "{}", out.stderr);
    assert!(
        !server.requests()[0]
            .tool_names()
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
}

#[test]
fn an_is_error_result_reaches_the_model_as_an_error() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__error", json!({}))]),
        Reply::text("saw the error"),
    ]);
    let project = Project::new();
    configure(&project, &[], json!({}));
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "fail",
        "--permission-mode",
        "bypass",
        "--output-format",
        "ling-stream-json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].starts_with("Error:"), "{}", results[0]);
    let events = out.json_lines();
    assert_eq!(
        events[0]["mcp_servers"],
        json!([{"name": "test", "status": "connected"}])
    );
    let tools: Vec<&str> = events[0]["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(tools.contains(&"mcp__test__error"), "{tools:?}");
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .cloned()
        .unwrap_or_default();
    assert_eq!(result["is_error"], true);
}

#[test]
fn ctrl_c_during_an_mcp_call_cancels_it_at_the_server() {
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "h1",
        "mcp__test__hang",
        json!({}),
    )])]);
    let project = Project::new();
    let log = project.file("server.log");
    configure(&project, &[], json!({"MCP_TEST_LOG": log}));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hang", "--permission-mode", "bypass"]);
    let child = process::spawn_captured(cmd);
    process::wait_for_text(&log, "tools/call", "the call never reached the server");
    process::interrupt(&child);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        calls.contains("notifications/cancelled"),
        "no cancel reached the server: {calls}"
    );
}

#[test]
fn ctrl_c_while_waiting_for_a_slow_server_exits_130_at_once() {
    let server = MockServer::start_blocking(vec![Reply::text("never asked")]);
    server.expect_unasked(1);
    let project = Project::new();
    // The server says it started (so Ling is waiting for its answer) before it stalls.
    let started = project.file("started.txt");
    let config = json!({"mcpServers": {"slow": {
        "command": "sh",
        "args": ["-c", "echo up > \"$1\"; exec \"$0\" --slow-start 20000", test_server(), started],
        "startupTimeoutMs": 30000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let child = process::spawn_captured(cmd);
    process::wait_for_text(&started, "up", "the slow server never started");
    let started = std::time::Instant::now();
    process::interrupt(&child);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        server.requests().is_empty(),
        "the model was asked after Ctrl-C"
    );
}

#[test]
fn a_big_mcp_result_is_cut_once_with_the_path_of_the_whole_output() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "mcp__test__big", json!({"chars": 150_000}))]),
        Reply::text("ok"),
    ]);
    let project = Project::new();
    configure(&project, &[], json!({}));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "big", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server.requests()[1]);
    let result = &results[0];
    assert!(
        !result.contains("cut from the middle"),
        "cut twice: {}",
        &result[..200]
    );
    assert!(result.len() <= 101_000, "{}", result.len());
    let spill = project.home.path().join("tool-output");
    let files: Vec<_> = std::fs::read_dir(&spill)
        .unwrap_or_else(|e| panic!("no spill dir {}: {e}", spill.display()))
        .collect();
    assert_eq!(files.len(), 1);
    let tail: String = result
        .chars()
        .rev()
        .take(400)
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    assert!(
        tail.contains("tool-output"),
        "the note does not give the file: {tail}"
    );
}

/// `.ling/mcp.json` with the test server started through `sh`, which writes its own pid and,
/// like some real servers, lives on after its stdin closes: only a signal from Ling ends it.
fn configure_with_pid(project: &Project, log: &std::path::Path) -> PathBuf {
    let pid_file = project.file("server.pid");
    let script = format!(
        "echo $$ > '{}'; '{}'; sleep 300",
        pid_file.display(),
        test_server().display()
    );
    let config = json!({"mcpServers": {"test": {
        "command": "sh", "args": ["-c", script], "env": {"MCP_TEST_LOG": log},
        "startupTimeoutMs": 5000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    pid_file
}

fn read_pid(path: &std::path::Path) -> i32 {
    process::read_pid(path, &format!("no pid in {}", path.display()))
}

#[test]
fn sigterm_ends_a_run_cleanly_with_143() {
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "h1",
        "mcp__test__hang",
        json!({}),
    )])]);
    let project = Project::new();
    let log = project.file("server.log");
    let pid_file = configure_with_pid(&project, &log);
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"SessionEnd": [{"hooks": [
            {"type": "command", "command": "touch session-ended"}
        ]}]}})
        .to_string(),
    );
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hang", "--permission-mode", "bypass"]);
    let child = process::spawn_captured(cmd);
    let server_pid = read_pid(&pid_file);
    process::wait_for_text(&log, "tools/call", "the call never reached the server");
    let pid = i32::try_from(child.id()).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        project.file("session-ended").exists(),
        "SessionEnd did not run"
    );
    assert!(
        process::gone_within(server_pid, Duration::from_secs(5)),
        "the MCP server {server_pid} outlived ling"
    );
}

#[test]
fn sigterm_at_the_repl_prompt_shuts_the_servers_down() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    let pid_file = configure_with_pid(&project, &project.file("server.log"));
    let mut cmd = project.command(&server.base_url());
    cmd.env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
    p.exp_string("> ").unwrap();
    let server_pid = read_pid(&pid_file);
    p.process_mut()
        .signal(rexpect::process::Signal::SIGTERM)
        .unwrap();
    p.exp_eof().expect("ling did not exit on SIGTERM");
    assert!(
        process::gone_within(server_pid, Duration::from_secs(5)),
        "the MCP server {server_pid} outlived the REPL"
    );
}
