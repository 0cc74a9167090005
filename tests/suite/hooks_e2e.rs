//! Hooks end to end, around tool calls: the real `ling` binary against the scripted mock model,
//! with `.ling/hooks.json` and real `sh` scripts in a temp project. Every test proves its behaviour
//! by what the model was sent (the recorded requests) and by side effects on disk.

use crate::support::{hooks_e2e, mock_openai, project};

use std::time::{Duration, Instant};

use hooks_e2e::*;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

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

#[test]
fn the_user_sees_the_rewritten_input_not_the_original() {
    let project = Project::new();
    let rewrite = pre_output(json!({ "updatedInput": { "command": "echo rewritten-output" } }));
    let rewrite = script(&project, "rewrite.sh", &rewrite);
    hooks(&project, json!({ "PreToolUse": group("bash", &rewrite) }));
    let server = bash_then_text("touch original");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &[
            "--permission-mode",
            "bypass",
            "--output-format",
            "ling-stream-json",
        ],
    ));
    ok(&out);
    let uses: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|e| e["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1);
    assert_eq!(
        uses[0]["input"],
        json!({ "command": "echo rewritten-output" })
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
        out.stderr.contains("bash(echo rewritten-output)"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("bash(touch original)"),
        "{}",
        out.stderr
    );
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
        post[0]["tool_response"]["text"]
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
        // Claude Code's spelling beside Ling's (docs/hooks.md#claude-codes-names).
        json!({ "command": "echo from-second", "timeout_ms": 5000, "timeout": 5000 })
    );
    assert!(!project.file("original").exists());
}

#[test]
fn allow_skips_the_permission_question_but_not_a_deny_rule_or_no_hooks() {
    let project = Project::new();
    let allow = pre_output(json!({ "permissionDecision": "allow" }));
    let allow = script(&project, "allow.sh", &allow);
    hooks(&project, json!({ "PreToolUse": group("bash", &allow) }));

    // Default mode, non-interactive, no sandbox: bash would be denied without the hook.
    let server = bash_then_text("touch allowed.txt");
    ok(&run(ling_p(&project, &server, "go", &["--sandbox", "off"])));
    assert!(
        project.file("allowed.txt").exists(),
        "the allowed call did not run"
    );

    let server = bash_then_text("touch denied-by-rule.txt");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--disallowed-tools", "bash", "--sandbox", "off"],
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
    ok(&run(ling_p(
        &project,
        &server,
        "go",
        &["--no-hooks", "--sandbox", "off"],
    )));
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

    // In default mode without the sandbox the call asks anyway; the hook's reason still
    // reaches the model.
    let server = bash_then_text("touch asked-default.txt");
    ok(&run(ling_p(&project, &server, "go", &["--sandbox", "off"])));
    assert!(!project.file("asked-default.txt").exists());
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("needs approval") && results[0].contains("double-check this"),
        "{results:?}"
    );
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
    assert_eq!(
        input["tool_input"],
        json!({ "path": "missing.txt", "file_path": "missing.txt" })
    );
    let error = input["error"].as_str().unwrap_or_default();
    assert!(error.contains("missing.txt"), "{input}");
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results[0], format!("Error: {error}"));
}

fn timing_out(project: &Project, fail_closed: bool) {
    // `sleep` in the background of the script: the kill must reach the whole process group.
    let slow = script(
        project,
        "slow.sh",
        "cat > /dev/null\nsleep 30 &\necho $! > sleep.pid\nwait",
    );
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
    assert_process_gone(&project, "sleep.pid");
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
    let body = received.join().expect("hook server panicked");
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
        "cat > /dev/null\nsleep 5 &\necho $! > async.pid\nwait",
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
    assert_process_gone(&project, "async.pid");
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
    let root = std::fs::canonicalize(project.path()).unwrap();
    let input = read_json(&project, "pre.json");
    assert_eq!(input["session_id"], session_id);
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["cwd"], json!(root));
    assert_eq!(input["permission_mode"], "acceptEdits");
    assert_eq!(input["tool_name"], "read_file");
    assert_eq!(
        input["tool_input"],
        json!({ "path": "notes.txt", "file_path": "notes.txt" })
    );
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

#[test]
fn pre_tool_use_context_and_system_messages_are_delivered() {
    let project = Project::new();
    let hook = script(
        &project,
        "note.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({ "systemMessage": "guard checked this call", "hookSpecificOutput": {
                "hookEventName": "PreToolUse", "additionalContext": "the tests live in tests/"
            }})
        ),
    );
    hooks(&project, json!({ "PreToolUse": group("bash", &hook) }));
    let server = bash_then_text("echo hi");
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    let result = &tool_results(&server.requests()[1])[0];
    assert!(
        result.contains("hi") && result.contains("the tests live in tests/"),
        "{result}"
    );
    assert!(
        out.stderr
            .contains("PreToolUse hook (bash): message: guard checked this call"),
        "{}",
        out.stderr
    );
}
