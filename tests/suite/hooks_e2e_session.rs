//! Hooks end to end, around the session and the prompt, in stream-json, and the `ling hooks`
//! commands: the real `ling` binary against the scripted mock model, with `.ling/hooks.json` and
//! real `sh` scripts.

use crate::support::{hooks_e2e, mock_openai, project};

use std::os::unix::fs::PermissionsExt;

use hooks_e2e::*;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

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
    server.expect_unasked(1);
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
fn a_stop_hook_that_honours_stop_hook_active_forces_one_more_turn() {
    // The usual guard of Claude Code's docs: block once, let go when already continuing.
    let project = Project::new();
    let stop = script(
        &project,
        "stop.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> stop.jsonl\n\
             case \"$input\" in *'\"stop_hook_active\":true'*) exit 0;; esac\necho '{}'",
            json!({ "decision": "block", "reason": "run the tests too" })
        ),
    );
    hooks(&project, json!({ "Stop": group("", &stop) }));
    let server =
        MockServer::start_blocking(vec![Reply::text("done"), Reply::text("tests pass too")]);
    let out = run(ling_p(&project, &server, "fix it", &[]));
    ok(&out);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
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

#[test]
fn an_invalid_hooks_json_is_a_configuration_error_with_its_position() {
    let project = Project::new();
    project.write(
        ".ling/hooks.json",
        "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n",
    );
    project.trust();
    let server = MockServer::start_blocking(vec![Reply::text("never")]);
    server.expect_unasked(1);
    let out = run(ling_p(&project, &server, "hi", &[]));
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("hooks.json:3:"), "{}", out.stderr);

    project.write(
        ".ling/hooks.json",
        &json!({ "hooks": { "PreToolUsage": group("bash", "true") } }).to_string(),
    );
    project.trust();
    let out = run(ling_p(&project, &server, "hi", &[]));
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("PreToolUsage"), "{}", out.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn hooks_list_shows_each_handler_with_its_source_file() {
    let project = Project::new();
    hooks(
        &project,
        json!({ "PreToolUse": group("bash", "./guard.sh") }),
    );
    let source = std::fs::canonicalize(project.path())
        .unwrap()
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
    .unwrap();
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
    project.trust();
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
fn continue_false_stops_the_run_with_its_reason() {
    let project = Project::new();
    let stop = script(
        &project,
        "halt.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({ "continue": false, "stopReason": "budget exhausted" })
        ),
    );
    hooks(&project, json!({ "Stop": group("", &stop) }));
    let server = MockServer::start_blocking(vec![Reply::text("done"), Reply::text("never")]);
    server.expect_unasked(1);
    let out = run(ling_p(&project, &server, "go", &[]));
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("budget exhausted"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 1);

    hooks(&project, json!({ "PostToolUse": group("bash", &stop) }));
    let server = bash_then_text("echo hi");
    server.expect_unasked(1);
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("budget exhausted"), "{}", out.stderr);
    assert_eq!(
        server.requests().len(),
        1,
        "the run went on after continue:false"
    );
}

#[test]
fn continue_false_before_a_tool_keeps_the_tool_from_running() {
    let project = Project::new();
    let stop = script(
        &project,
        "halt.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({ "continue": false, "stopReason": "frozen" })
        ),
    );
    hooks(&project, json!({ "PreToolUse": group("bash", &stop) }));
    let server = bash_then_text("touch side-effect");
    server.expect_unasked(1);
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(out.stderr.contains("frozen"), "{}", out.stderr);
    assert!(
        !project.file("side-effect").exists(),
        "the tool ran after continue:false"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn session_start_says_resume_for_a_continued_session() {
    let project = Project::new();
    let start = script(
        &project,
        "start.sh",
        "cat >> start.jsonl\necho >> start.jsonl",
    );
    hooks(&project, json!({ "SessionStart": group("", &start) }));
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    ok(&run(ling_p(&project, &server, "first", &[])));
    ok(&run(ling_p(&project, &server, "second", &["--continue"])));
    let starts = json_lines(&project, "start.jsonl");
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["source"], "startup");
    assert_eq!(starts[1]["source"], "resume");
    assert_eq!(starts[0]["session_id"], starts[1]["session_id"]);
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
            "ling-stream-json",
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

#[test]
fn hooks_run_shows_an_async_hooks_error() {
    let project = Project::new();
    let failing = script(
        &project,
        "failing.sh",
        "cat > /dev/null\necho 'async audit failed' >&2\nexit 1",
    );
    hooks(
        &project,
        json!({ "PostToolUse": [{ "hooks": [{
            "type": "command", "command": failing, "async": true
        }]}]}),
    );
    let out = ling_hooks(&project, &["run", "PostToolUse", "--tool", "bash"]);
    ok(&out);
    assert!(out.stdout.contains("decision: none"), "{}", out.stdout);
    assert!(out.stdout.contains("async audit failed"), "{}", out.stdout);
}
