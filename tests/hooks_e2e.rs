//! Hooks end to end: the real `ling` binary against the scripted mock model, with
//! `.ling/hooks.json` and real `sh` scripts in a temp project. Every test proves its behaviour
//! twice: by what the model was sent (the recorded requests) and by side effects on disk.

#[path = "support/ling.rs"]
mod ling;
#[path = "support/mock_openai.rs"]
mod mock_openai;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use ling::{Output, Project, run};
use mock_openai::{MockServer, Recorded, Reply};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Writes `.ling/hooks.json`.
fn hooks(project: &Project, hooks: Value) {
    project.write(".ling/hooks.json", &json!({ "hooks": hooks }).to_string());
}

/// Writes an executable `sh` script under `hooks/` in the project; returns the `command` for it
/// (hooks run with the project root as their working directory).
fn script(project: &Project, name: &str, body: &str) -> String {
    let rel = format!("hooks/{name}");
    project.write(&rel, &format!("#!/bin/sh\n{body}\n"));
    let path = project.file(&rel);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    format!("./{rel}")
}

/// `[{"matcher": m, "hooks": [{"type":"command","command": c}]}]`.
fn group(matcher: &str, command: &str) -> Value {
    json!([{ "matcher": matcher, "hooks": [{ "type": "command", "command": command }] }])
}

/// A PreToolUse hook's JSON answer.
fn pre_output(fields: Value) -> String {
    let mut specific = json!({ "hookEventName": "PreToolUse" });
    if let (Some(out), Some(fields)) = (specific.as_object_mut(), fields.as_object()) {
        out.extend(fields.clone());
    }
    let text = json!({ "hookSpecificOutput": specific }).to_string();
    format!("cat > /dev/null\necho '{text}'")
}

/// `ling -p PROMPT ARGS...` in `project` against `server`.
fn ling_p(project: &Project, server: &MockServer, prompt: &str, args: &[&str]) -> Command {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt]).args(args);
    cmd
}

fn ok(out: &Output) {
    assert_eq!(
        out.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
}

/// The tool results the model was sent in `request`, in order.
fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn last_user(request: &Recorded) -> String {
    let messages = request.messages();
    let user = messages.iter().rev().find(|m| m["role"] == "user");
    user.and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn read_json(project: &Project, rel: &str) -> Value {
    let text = project.read(rel);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not JSON ({e}): {text}"))
}

fn json_lines(project: &Project, rel: &str) -> Vec<Value> {
    project
        .read(rel)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{rel}: {e}: {l}")))
        .collect()
}

/// One bash call, then a text answer.
fn bash_then_text(command: &str) -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "bash", json!({ "command": command }))]),
        Reply::text("done"),
    ])
}

#[test]
fn exit_2_blocks_the_tool_and_the_model_reads_the_reason() {
    let project = Project::new();
    let guard = script(
        &project,
        "no.sh",
        "cat > /dev/null\necho 'no touching' >&2\nexit 2",
    );
    hooks(&project, json!({ "PreToolUse": group("bash", &guard) }));
    let server = bash_then_text("touch side-effect");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        !project.file("side-effect").exists(),
        "the blocked tool ran"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        tool_results(&requests[1]),
        ["Error: blocked by hook: no touching"]
    );
    assert!(
        out.stderr.contains("PreToolUse hook (bash): block:") && out.stderr.contains("no touching"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_json_deny_blocks_with_its_reason() {
    let project = Project::new();
    let deny = pre_output(json!({
        "permissionDecision": "deny", "permissionDecisionReason": "not today"
    }));
    let deny = script(&project, "deny.sh", &deny);
    hooks(&project, json!({ "PreToolUse": group("bash", &deny) }));
    let server = bash_then_text("touch side-effect");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(!project.file("side-effect").exists());
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["Error: blocked by hook: not today"]
    );
}

/// A PostToolUse hook that appends its stdin to `post.jsonl`.
fn post_logger(project: &Project) -> Value {
    let log = script(project, "post.sh", "cat >> post.jsonl\necho >> post.jsonl");
    group("*", &log)
}

#[test]
fn updated_input_rewrites_the_command_the_tool_runs() {
    let project = Project::new();
    let rewrite = pre_output(json!({ "updatedInput": { "command": "echo rewritten-output" } }));
    let rewrite = script(&project, "rewrite.sh", &rewrite);
    hooks(
        &project,
        json!({ "PreToolUse": group("bash", &rewrite), "PostToolUse": post_logger(&project) }),
    );
    let server = bash_then_text("touch original");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        !project.file("original").exists(),
        "the original command ran"
    );
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("rewritten-output"), "{results:?}");
    let post = json_lines(&project, "post.jsonl");
    assert_eq!(post.len(), 1);
    assert_eq!(post[0]["hook_event_name"], "PostToolUse");
    assert_eq!(
        post[0]["tool_input"],
        json!({ "command": "echo rewritten-output" })
    );
    assert!(
        post[0]["tool_response"]
            .as_str()
            .unwrap_or_default()
            .contains("rewritten-output"),
        "{}",
        post[0]
    );
}

#[test]
fn two_rewrites_merge_shallowly_in_configuration_order() {
    let project = Project::new();
    let first = pre_output(json!({
        "updatedInput": { "command": "echo from-first", "timeout_ms": 5000 }
    }));
    let first = script(&project, "first.sh", &first);
    // The second also records what it was given: hooks of one event run concurrently, so it
    // sees the model's input, not the first hook's rewrite.
    let second = script(
        &project,
        "second.sh",
        &format!(
            "cat > second-input.json\necho '{}'",
            json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse", "updatedInput": { "command": "echo from-second" }
            }})
        ),
    );
    let pre = json!([{ "matcher": "bash", "hooks": [
        { "type": "command", "command": first },
        { "type": "command", "command": second },
    ]}]);
    hooks(
        &project,
        json!({ "PreToolUse": pre, "PostToolUse": post_logger(&project) }),
    );
    let server = bash_then_text("touch original");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("from-second") && !results[0].contains("from-first"),
        "{results:?}"
    );
    assert_eq!(
        read_json(&project, "second-input.json")["tool_input"],
        json!({ "command": "touch original" })
    );
    let post = json_lines(&project, "post.jsonl");
    assert_eq!(
        post[0]["tool_input"],
        json!({ "command": "echo from-second", "timeout_ms": 5000 })
    );
    assert!(!project.file("original").exists());
}

#[test]
fn allow_skips_the_permission_question_but_not_a_deny_rule_or_no_hooks() {
    let project = Project::new();
    let allow = pre_output(json!({ "permissionDecision": "allow" }));
    let allow = script(&project, "allow.sh", &allow);
    hooks(&project, json!({ "PreToolUse": group("bash", &allow) }));

    // Default mode, non-interactive: bash would be denied without the hook.
    let server = bash_then_text("touch allowed.txt");
    ok(&run(ling_p(&project, &server, "go", &[])));
    assert!(
        project.file("allowed.txt").exists(),
        "the allowed call did not run"
    );

    let server = bash_then_text("touch denied-by-rule.txt");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--disallowed-tools", "bash"],
    ));
    ok(&out);
    assert!(!project.file("denied-by-rule.txt").exists());
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: permission denied"),
        "{results:?}"
    );

    // --no-hooks: the allow is gone, so the default mode denies the call.
    let server = bash_then_text("touch unhooked.txt");
    ok(&run(ling_p(&project, &server, "go", &["--no-hooks"])));
    assert!(!project.file("unhooked.txt").exists());
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("needs approval"), "{results:?}");
}

#[test]
fn ask_is_denied_in_a_non_interactive_run_with_the_hooks_reason() {
    let project = Project::new();
    let ask = pre_output(json!({
        "permissionDecision": "ask", "permissionDecisionReason": "double-check this"
    }));
    let ask = script(&project, "ask.sh", &ask);
    hooks(&project, json!({ "PreToolUse": group("bash", &ask) }));
    // Bypass mode would run anything; the hook's ask forces the question anyway.
    let server = bash_then_text("touch asked.txt");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(!project.file("asked.txt").exists());
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: permission denied")
            && results[0].contains("non-interactive")
            && results[0].contains("double-check this"),
        "{results:?}"
    );
    assert!(out.stderr.contains("permission denied"), "{}", out.stderr);
}

#[test]
fn post_tool_use_context_and_block_reason_reach_the_model() {
    let project = Project::new();
    project.write("notes.txt", "alpha\n");
    let context = script(
        &project,
        "context.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({ "hookSpecificOutput": {
                "hookEventName": "PostToolUse", "additionalContext": "remember the milk"
            }})
        ),
    );
    let block = script(
        &project,
        "block.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({ "decision": "block", "reason": "lint failed: fix line 1" })
        ),
    );
    let post = json!([{ "matcher": "read_file", "hooks": [
        { "type": "command", "command": context },
        { "type": "command", "command": block },
    ]}]);
    hooks(&project, json!({ "PostToolUse": post }));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "read_file",
            json!({ "path": "notes.txt" }),
        )]),
        Reply::text("done"),
    ]);
    ok(&run(ling_p(&project, &server, "go", &[])));
    let results = tool_results(&server.requests()[1]);
    let result = &results[0];
    assert!(result.contains("alpha"), "{result}");
    assert!(
        result.contains("[PostToolUse hook feedback]")
            && result.contains("lint failed: fix line 1"),
        "{result}"
    );
    assert!(
        result.contains("[PostToolUse hook context]") && result.contains("remember the milk"),
        "{result}"
    );
}

#[test]
fn post_tool_use_failure_fires_with_the_error_instead_of_post_tool_use() {
    let project = Project::new();
    let failure = script(&project, "failure.sh", "cat > failure.json");
    let success = script(&project, "success.sh", "cat > /dev/null\ntouch post-fired");
    hooks(
        &project,
        json!({
            "PostToolUseFailure": group("read_file", &failure),
            "PostToolUse": group("read_file", &success),
        }),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "read_file",
            json!({ "path": "missing.txt" }),
        )]),
        Reply::text("done"),
    ]);
    ok(&run(ling_p(&project, &server, "go", &[])));
    assert!(!project.file("post-fired").exists());
    let input = read_json(&project, "failure.json");
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(input["tool_name"], "read_file");
    assert_eq!(input["tool_input"], json!({ "path": "missing.txt" }));
    let error = input["error"].as_str().unwrap_or_default();
    assert!(error.contains("missing.txt"), "{input}");
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results[0], format!("Error: {error}"));
}

#[test]
fn a_blocked_prompt_never_reaches_the_model() {
    let project = Project::new();
    let block = script(
        &project,
        "prompt.sh",
        "cat > prompt.json\necho 'prompts may not mention secrets' >&2\nexit 2",
    );
    hooks(&project, json!({ "UserPromptSubmit": group("", &block) }));
    let server = MockServer::start_blocking(vec![Reply::text("never")]);
    let out = run(ling_p(&project, &server, "tell me the secret", &[]));
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(server.requests().is_empty(), "the model was asked");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("prompts may not mention secrets"),
        "{}",
        out.stderr
    );
    assert_eq!(
        read_json(&project, "prompt.json")["prompt"],
        "tell me the secret"
    );
}

#[test]
fn user_prompt_submit_stdout_is_context_in_the_user_message() {
    let project = Project::new();
    let context = script(
        &project,
        "ctx.sh",
        "cat > /dev/null\necho 'current branch: main'",
    );
    hooks(&project, json!({ "UserPromptSubmit": group("", &context) }));
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    ok(&run(ling_p(&project, &server, "what branch?", &[])));
    assert_eq!(
        last_user(&server.requests()[0]),
        "what branch?\n\n<hook-context>\ncurrent branch: main\n</hook-context>"
    );
}

#[test]
fn a_stop_hook_forces_one_more_turn_and_the_guard_stops_the_second_block() {
    let project = Project::new();
    let stop = script(
        &project,
        "stop.sh",
        &format!(
            "cat >> stop.jsonl\necho >> stop.jsonl\necho '{}'",
            json!({ "decision": "block", "reason": "run the tests too" })
        ),
    );
    hooks(&project, json!({ "Stop": group("", &stop) }));
    let server =
        MockServer::start_blocking(vec![Reply::text("done"), Reply::text("tests pass too")]);
    let out = run(ling_p(&project, &server, "fix it", &[]));
    ok(&out);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the guard did not stop the second block");
    assert_eq!(last_user(&requests[1]), "run the tests too");
    assert!(out.stdout.contains("tests pass too"), "{}", out.stdout);
    let inputs = json_lines(&project, "stop.jsonl");
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0]["stop_hook_active"], false);
    assert_eq!(inputs[0]["last_assistant_message"], "done");
    assert_eq!(inputs[1]["stop_hook_active"], true);
    assert_eq!(inputs[1]["last_assistant_message"], "tests pass too");
}

#[test]
fn session_start_context_is_in_the_system_prompt_and_session_end_fires() {
    let project = Project::new();
    let start = script(
        &project,
        "start.sh",
        "cat > start.json\necho 'This repo uses tabs, not spaces.'",
    );
    let end = script(&project, "end.sh", "cat > end.json");
    hooks(
        &project,
        json!({ "SessionStart": group("", &start), "SessionEnd": group("", &end) }),
    );
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    ok(&run(ling_p(&project, &server, "hi", &[])));
    let messages = server.requests()[0].messages();
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert!(
        system.contains("This repo uses tabs, not spaces."),
        "{system}"
    );
    assert_eq!(read_json(&project, "start.json")["source"], "startup");
    let end = read_json(&project, "end.json");
    assert_eq!(end["hook_event_name"], "SessionEnd");
    assert_eq!(end["reason"], "other");
}

fn timing_out(project: &Project, fail_closed: bool) {
    let slow = script(project, "slow.sh", "cat > /dev/null\nsleep 30");
    hooks(
        project,
        json!({ "PreToolUse": [{ "matcher": "bash", "hooks": [{
            "type": "command", "command": slow, "timeout": 1, "failClosed": fail_closed
        }]}]}),
    );
}

#[test]
fn a_hook_that_times_out_is_killed_and_the_tool_runs() {
    let project = Project::new();
    timing_out(&project, false);
    let server = bash_then_text("touch ran.txt");
    let started = Instant::now();
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(project.file("ran.txt").exists(), "the tool did not run");
    assert!(
        out.stderr.contains("PreToolUse hook (bash): timeout:"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_fail_closed_hook_that_times_out_blocks_the_tool() {
    let project = Project::new();
    timing_out(&project, true);
    let server = bash_then_text("touch ran.txt");
    let started = Instant::now();
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!project.file("ran.txt").exists(), "the tool ran");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: blocked by hook:"),
        "{results:?}"
    );
}

#[test]
fn garbage_output_is_a_notice_and_the_tool_runs() {
    let project = Project::new();
    let garbage = script(&project, "garbage.sh", "cat > /dev/null\necho '{not json'");
    hooks(&project, json!({ "PreToolUse": group("bash", &garbage) }));
    let server = bash_then_text("touch ran.txt");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(project.file("ran.txt").exists(), "the tool did not run");
    assert!(
        out.stderr.contains("PreToolUse hook (bash): error:"),
        "{}",
        out.stderr
    );
}

/// A one-request HTTP server on 127.0.0.1 answering `body` as JSON; the thread returns the
/// request body it received.
fn http_hook_server(body: Value) -> (String, std::thread::JoinHandle<Value>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|e| panic!("bind 127.0.0.1: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("local addr: {e}"));
    let handle = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap_or_else(|e| panic!("accept: {e}"));
        let mut buf = Vec::new();
        let mut piece = [0u8; 4096];
        let (head_end, length) = loop {
            let n = socket.read(&mut piece).unwrap_or(0);
            assert!(n > 0, "the hook closed the connection early");
            buf.extend_from_slice(&piece[..n]);
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (end + 4, length);
            }
        };
        while buf.len() < head_end + length {
            let n = socket.read(&mut piece).unwrap_or(0);
            assert!(n > 0, "the hook closed the connection early");
            buf.extend_from_slice(&piece[..n]);
        }
        let text = body.to_string();
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        let _ = socket.write_all(reply.as_bytes());
        serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null)
    });
    (format!("http://{addr}/hook"), handle)
}

#[test]
fn an_http_hook_denies_by_its_json_body() {
    let project = Project::new();
    let (url, received) = http_hook_server(json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "denied over http"
    }}));
    hooks(
        &project,
        json!({ "PreToolUse": [{ "matcher": "bash", "hooks": [{ "type": "http", "url": url }] }] }),
    );
    let server = bash_then_text("touch side-effect");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(!project.file("side-effect").exists());
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["Error: blocked by hook: denied over http"]
    );
    let body = received
        .join()
        .unwrap_or_else(|_| panic!("hook server panicked"));
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(
        body["tool_input"],
        json!({ "command": "touch side-effect" })
    );
}

#[test]
fn an_async_hook_does_not_delay_the_run_and_is_killed_at_exit() {
    let project = Project::new();
    let slow = script(
        &project,
        "slow.sh",
        "cat > /dev/null\necho $$ > async.pid\nsleep 5",
    );
    hooks(
        &project,
        json!({ "PreToolUse": [{ "matcher": "bash", "hooks": [{
            "type": "command", "command": slow, "async": true
        }]}]}),
    );
    let server = bash_then_text("touch ran.txt");
    let started = Instant::now();
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    // The run itself is fast; only the bounded exit grace (1.5 s) waits for the async hook.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(project.file("ran.txt").exists());
    let pid = project.read("async.pid");
    let pid = pid.trim();
    assert!(!pid.is_empty(), "the async hook never started");
    let until = Instant::now() + Duration::from_secs(2);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    assert!(
        stat.is_empty() || matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X')),
        "the async hook outlived ling: {stat}"
    );
}

#[test]
fn an_invalid_hooks_json_is_a_configuration_error_with_its_position() {
    let project = Project::new();
    project.write(
        ".ling/hooks.json",
        "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n",
    );
    let server = MockServer::start_blocking(vec![Reply::text("never")]);
    let out = run(ling_p(&project, &server, "hi", &[]));
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("hooks.json:3:"), "{}", out.stderr);

    project.write(
        ".ling/hooks.json",
        &json!({ "hooks": { "PreToolUsage": group("bash", "true") } }).to_string(),
    );
    let out = run(ling_p(&project, &server, "hi", &[]));
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("PreToolUsage"), "{}", out.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn stream_json_reports_a_block_as_a_hook_event() {
    let project = Project::new();
    let guard = script(
        &project,
        "no.sh",
        "cat > /dev/null\necho 'no touching' >&2\nexit 2",
    );
    hooks(&project, json!({ "PreToolUse": group("bash", &guard) }));
    let server = bash_then_text("touch side-effect");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &[
            "--permission-mode",
            "bypass",
            "--output-format",
            "stream-json",
        ],
    ));
    ok(&out);
    let lines = out.json_lines();
    let hook = lines
        .iter()
        .find(|l| l["type"] == "hook")
        .unwrap_or_else(|| panic!("no hook event in:\n{}", out.stdout));
    assert_eq!(hook["event"], "PreToolUse");
    assert_eq!(hook["decision"], "block");
    assert_eq!(hook["tool"], "bash");
    let message = hook["message"].as_str().unwrap_or_default();
    assert!(message.contains("no touching"), "{hook}");
    let result = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result in:\n{}", out.stdout));
    assert_eq!(result["is_error"], true);
}

/// `ling hooks ARGS...` in `project` (no model involved).
fn ling_hooks(project: &Project, args: &[&str]) -> Output {
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.arg("hooks").args(args);
    run(cmd)
}

#[test]
fn hooks_list_shows_each_handler_with_its_source_file() {
    let project = Project::new();
    hooks(
        &project,
        json!({ "PreToolUse": group("bash", "./guard.sh") }),
    );
    let source = std::fs::canonicalize(project.path())
        .unwrap_or_else(|e| panic!("canonicalize: {e}"))
        .join(".ling/hooks.json");
    let out = ling_hooks(&project, &["list"]);
    ok(&out);
    for expected in ["PreToolUse", "bash", "./guard.sh"] {
        assert!(out.stdout.contains(expected), "{expected}: {}", out.stdout);
    }
    assert!(
        out.stdout.contains(&source.display().to_string()),
        "{}",
        out.stdout
    );

    let out = ling_hooks(&project, &["list", "--json"]);
    ok(&out);
    let listing = out.json();
    assert_eq!(listing.as_array().map(Vec::len), Some(1), "{listing}");
    assert_eq!(listing[0]["event"], "PreToolUse");
    assert_eq!(listing[0]["matcher"], "bash");
    assert_eq!(listing[0]["source"], json!(source));
    assert!(
        listing[0]["handler"]
            .as_str()
            .unwrap_or_default()
            .contains("./guard.sh"),
        "{listing}"
    );
}

#[test]
fn hooks_run_with_the_example_guard_prints_a_block() {
    let project = Project::new();
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hooks/guard.sh");
    let guard = std::fs::read_to_string(example).unwrap_or_else(|e| panic!("{example}: {e}"));
    project.write("guard.sh", &guard);
    std::fs::set_permissions(
        project.file("guard.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap_or_else(|e| panic!("chmod: {e}"));
    hooks(
        &project,
        json!({ "PreToolUse": group("bash", "./guard.sh") }),
    );

    let rm = r#"{"command":"rm -rf /"}"#;
    let out = ling_hooks(
        &project,
        &["run", "PreToolUse", "--tool", "bash", "--input", rm],
    );
    ok(&out);
    assert!(out.stdout.contains("decision: block"), "{}", out.stdout);
    assert!(out.stdout.contains("rm -rf"), "{}", out.stdout);

    let args = [
        "run",
        "PreToolUse",
        "--tool",
        "bash",
        "--input",
        rm,
        "--json",
    ];
    let out = ling_hooks(&project, &args);
    ok(&out);
    assert_eq!(out.json()["decision"], "block", "{}", out.stdout);

    let ls = r#"{"command":"ls -la"}"#;
    let out = ling_hooks(
        &project,
        &["run", "PreToolUse", "--tool", "bash", "--input", ls],
    );
    ok(&out);
    assert!(out.stdout.contains("decision: none"), "{}", out.stdout);

    let out = ling_hooks(&project, &["run", "PreToolUsage", "--tool", "bash"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("unknown hook event"), "{}", out.stderr);
}

#[test]
fn disable_all_hooks_in_settings_turns_every_hook_off() {
    let project = Project::new();
    let guard = script(
        &project,
        "no.sh",
        "cat > /dev/null\necho 'no touching' >&2\nexit 2",
    );
    hooks(&project, json!({ "PreToolUse": group("bash", &guard) }));
    project.write(".ling/settings.json", r#"{"disableAllHooks": true}"#);
    let server = bash_then_text("touch side-effect");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        project.file("side-effect").exists(),
        "a disabled hook blocked"
    );
    assert!(!out.stderr.contains("hook"), "{}", out.stderr);
    let out = ling_hooks(&project, &["list"]);
    ok(&out);
    assert!(out.stdout.contains("disabled"), "{}", out.stdout);
}

#[test]
fn pre_tool_use_input_and_environment_describe_the_session() {
    let project = Project::new();
    let log = script(
        &project,
        "log.sh",
        "cat > pre.json\nprintf '%s\\n%s\\n%s\\n' \"$LING_PROJECT_DIR\" \"$CLAUDE_PROJECT_DIR\" \"$LING_SESSION_ID\" > env.txt",
    );
    hooks(&project, json!({ "PreToolUse": group("read_file", &log) }));
    project.write("notes.txt", "alpha\n");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_7",
            "read_file",
            json!({ "path": "notes.txt" }),
        )]),
        Reply::text("done"),
    ]);
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &[
            "--output-format",
            "json",
            "--permission-mode",
            "accept-edits",
        ],
    ));
    ok(&out);
    let session_id = out.json()["session_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!session_id.is_empty(), "{}", out.stdout);
    let root = std::fs::canonicalize(project.path()).unwrap_or_else(|e| panic!("{e}"));
    let input = read_json(&project, "pre.json");
    assert_eq!(input["session_id"], session_id);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["cwd"], json!(root));
    assert_eq!(input["permission_mode"], "acceptEdits");
    assert_eq!(input["tool_name"], "read_file");
    assert_eq!(input["tool_input"], json!({ "path": "notes.txt" }));
    assert_eq!(input["tool_use_id"], "call_7");
    let transcript = input["transcript_path"].as_str().unwrap_or_default();
    assert!(
        transcript.ends_with(&format!("{session_id}.jsonl"))
            && std::path::Path::new(transcript).exists(),
        "{input}"
    );
    let root = root.display().to_string();
    let env = project.read("env.txt");
    assert_eq!(env.lines().collect::<Vec<_>>(), [&root, &root, &session_id]);
    assert!(tool_results(&server.requests()[1])[0].contains("alpha"));
}

#[test]
fn an_async_hooks_error_is_shown_even_when_no_other_hook_fires() {
    let project = Project::new();
    let failing = script(
        &project,
        "failing.sh",
        "cat > /dev/null\necho 'async audit failed' >&2\nexit 1",
    );
    hooks(
        &project,
        json!({ "PreToolUse": [{ "matcher": "bash", "hooks": [{
            "type": "command", "command": failing, "async": true
        }]}]}),
    );
    let server = bash_then_text("touch ran.txt");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(project.file("ran.txt").exists());
    assert!(out.stderr.contains("async audit failed"), "{}", out.stderr);
}
