//! Hooks written for Claude Code, run unchanged through the real binary on a mock model run: the
//! scripts are the kind Claude Code's documentation shows (a guard on `file_path`, a command
//! validator, a formatter after `Edit|Write`, a logger of every event, JSON `permissionDecision`
//! and `updatedInput` with Claude's field names), in `.claude/settings.json` (where they are told
//! Claude's tool names) and in `.ling/hooks.json` (Ling's names, Claude's fields beside Ling's).
//! Each test asserts what ran, what is on disk and what the model was sent.

use crate::support::{hooks_e2e, mock_openai, project};

use hooks_e2e::*;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

/// Writes `.claude/settings.json` with these `hooks` (and `extra` keys), and trusts the project.
fn claude_settings(project: &Project, hooks: Value, extra: Value) {
    let mut settings = json!({ "hooks": hooks });
    if let (Some(out), Some(extra)) = (settings.as_object_mut(), extra.as_object()) {
        out.extend(extra.clone());
    }
    project.write(".claude/settings.json", &settings.to_string());
    project.trust();
}

/// The `.env` guard of the issue, as Claude Code users write it: reads `.tool_input.file_path`.
const ENV_GUARD: &str = r#"file_path=$(jq -r '.tool_input.file_path // empty')
case "$file_path" in
  *.env|.env) echo "Blocked: $file_path is protected" >&2; exit 2 ;;
esac
exit 0"#;

fn write_env_then_text() -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "write_file",
            json!({ "path": ".env", "content": "SECRET=1\n" }),
        )]),
        Reply::text("done"),
    ])
}

#[test]
fn a_file_path_guard_on_edit_or_write_blocks_from_either_file() {
    for place in ["claude", "ling"] {
        let project = Project::new();
        let guard = script(&project, "protect-env.sh", ENV_GUARD);
        let hooks = json!({ "PreToolUse": group("Edit|Write", &guard) });
        match place {
            "claude" => claude_settings(&project, hooks, json!({})),
            _ => hooks_e2e::hooks(&project, hooks),
        }
        let server = write_env_then_text();
        let out = run(ling_p(
            &project,
            &server,
            "go",
            &["--permission-mode", "bypass"],
        ));
        ok(&out);
        assert!(
            !project.file(".env").exists(),
            "{place}: the guarded write ran"
        );
        // A Claude Code file's hook gets the absolute path, as in Claude Code.
        let shown = match place {
            "claude" => format!(
                "{}/.env",
                std::fs::canonicalize(project.path())
                    .unwrap_or_default()
                    .display()
            ),
            _ => ".env".to_string(),
        };
        assert_eq!(
            tool_results(&server.requests()[1]),
            [format!(
                "Error: blocked by hook: Blocked: {shown} is protected"
            )],
            "{place}"
        );
    }
}

#[test]
fn a_python_command_validator_sees_bash_as_claude_spells_it() {
    let project = Project::new();
    // Claude Code's documented example, unchanged: it checks `tool_name == "Bash"` itself.
    let validator = script(&project, "validate.py", "");
    project.write(
        "hooks/validate.py",
        r#"#!/usr/bin/env python3
import json, re, sys
data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
if re.search(r"\bgrep\b(?!.*\|)", command):
    print("Use 'rg' (ripgrep) instead of 'grep' for better performance", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#,
    );
    claude_settings(
        &project,
        json!({ "PreToolUse": group("Bash", &validator) }),
        json!({}),
    );
    let server = bash_then_text("grep -r x . > found.txt");
    ok(&run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    )));
    assert!(
        !project.file("found.txt").exists(),
        "the blocked command ran"
    );
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["Error: blocked by hook: Use 'rg' (ripgrep) instead of 'grep' for better performance"]
    );
}

#[test]
fn a_formatter_after_edit_or_write_gets_file_path_and_claudes_response() {
    let project = Project::new();
    // The shape of Claude Code's prettier example, with `tr` as the formatter.
    let format = script(
        &project,
        "format.sh",
        r#"input=$(cat)
printf '%s\n' "$input" >> post.jsonl
printf '%s\n' "$input" | jq -r '.tool_input.file_path' | { read file_path; if echo "$file_path" | grep -q '\.txt$'; then tr a-z A-Z < "$file_path" > fmt.tmp && mv fmt.tmp "$file_path"; fi; }"#,
    );
    claude_settings(
        &project,
        json!({ "PostToolUse": group("Edit|MultiEdit|Write", &format) }),
        json!({}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "write_file",
            json!({ "path": "notes.txt", "content": "hello\n" }),
        )]),
        Reply::text("done"),
    ]);
    ok(&run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "accept-edits"],
    )));
    assert_eq!(project.read("notes.txt"), "HELLO\n");
    let post = json_lines(&project, "post.jsonl");
    assert_eq!(post.len(), 1);
    assert_eq!(post[0]["tool_name"], "Write");
    let root = std::fs::canonicalize(project.path()).unwrap_or_default();
    assert_eq!(
        post[0]["tool_input"]["file_path"],
        json!(root.join("notes.txt").to_string_lossy())
    );
    assert_eq!(post[0]["tool_input"]["path"], "notes.txt");
    let response = &post[0]["tool_response"];
    assert_eq!(response["success"], true);
    let file_path = response["filePath"].as_str().unwrap_or_default();
    assert!(
        file_path.ends_with("/notes.txt") && file_path.starts_with('/'),
        "{response}"
    );
    assert!(
        response["text"]
            .as_str()
            .unwrap_or_default()
            .contains("notes.txt"),
        "{response}"
    );
}

#[test]
fn a_logger_of_every_event_sees_claudes_names_and_shapes() {
    let project = Project::new();
    let log = script(&project, "log.sh", "jq -c . >> events.jsonl");
    let every = |events: &[&str]| {
        let mut hooks = serde_json::Map::new();
        for event in events {
            hooks.insert(
                event.to_string(),
                json!([{ "hooks": [{ "type": "command", "command": log }] }]),
            );
        }
        Value::Object(hooks)
    };
    // PermissionRequest and PostCompact are Claude Code events Ling does not have: warnings.
    // Notification and SubagentStop it has, but this run fires neither.
    claude_settings(
        &project,
        every(&[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd",
            "Notification",
            "SubagentStop",
            "PermissionRequest",
            "PostCompact",
        ]),
        json!({}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "bash",
            json!({ "command": "echo out; echo err >&2; exit 3", "description": "Prints twice" }),
        )]),
        Reply::text("done"),
    ]);
    let out = run(ling_p(
        &project,
        &server,
        "go",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    assert!(
        out.stderr
            .contains("Claude Code hook event Ling does not have: `PermissionRequest` ignored"),
        "{}",
        out.stderr
    );
    let events = json_lines(&project, "events.jsonl");
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    let pre = &events[2];
    assert_eq!(pre["tool_name"], "Bash");
    assert_eq!(pre["tool_input"]["description"], "Prints twice");
    let response = &events[3]["tool_response"];
    assert_eq!(response["interrupted"], false);
    assert_eq!(response["exitCode"], 3);
    assert_eq!(response["stdout"], "out\nerr");
    assert_eq!(response["stderr"], "");
    // The model got Ling's text, not the object.
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["out\nerr\nExit code: 3"]
    );
}

#[test]
fn permission_decision_allow_runs_what_would_ask() {
    let project = Project::new();
    let allow = script(
        &project,
        "allow.sh",
        &pre_output(json!({
            "permissionDecision": "allow",
            "permissionDecisionReason": "echo is harmless"
        })),
    );
    claude_settings(
        &project,
        json!({ "PreToolUse": group("Bash", &allow) }),
        json!({}),
    );
    let server = bash_then_text("echo allowed > allowed.txt");
    // Default mode in -p: without the hook this call would be denied (nobody to ask).
    ok(&run(ling_p(&project, &server, "go", &[])));
    assert_eq!(project.read("allowed.txt"), "allowed\n");
}

#[test]
fn updated_input_with_claudes_field_names_reaches_the_tool() {
    let project = Project::new();
    let redirect = script(
        &project,
        "redirect.sh",
        &pre_output(json!({
            "permissionDecision": "allow",
            "updatedInput": { "file_path": "redirected.txt", "content": "safe" }
        })),
    );
    claude_settings(
        &project,
        json!({ "PreToolUse": group("Write", &redirect) }),
        json!({}),
    );
    let server = write_env_then_text();
    ok(&run(ling_p(&project, &server, "go", &[])));
    assert!(
        !project.file(".env").exists(),
        "the original path was written"
    );
    assert_eq!(project.read("redirected.txt"), "safe");
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("redirected.txt"), "{results:?}");
}

#[test]
fn grep_hooks_get_claudes_flags_and_may_answer_in_them() {
    let project = Project::new();
    project.write("src/a.txt", "Needle\n");
    let widen = script(
        &project,
        "widen.sh",
        r#"input=$(cat)
printf '%s\n' "$input" >> pre.jsonl
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"-i":true,"output_mode":"files_with_matches"}}}'"#,
    );
    claude_settings(
        &project,
        json!({ "PreToolUse": group("Grep", &widen) }),
        json!({}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "grep", json!({ "pattern": "needle" }))]),
        Reply::text("done"),
    ]);
    ok(&run(ling_p(&project, &server, "go", &[])));
    let pre = json_lines(&project, "pre.jsonl");
    assert_eq!(pre[0]["tool_name"], "Grep");
    assert_eq!(pre[0]["tool_input"]["-i"], false);
    assert_eq!(pre[0]["tool_input"]["output_mode"], "content");
    assert_eq!(pre[0]["tool_input"]["-n"], true);
    // Case-insensitive, file names only: the hook's Claude-named answer was applied.
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("src/a.txt"), "{results:?}");
    assert!(!results[0].contains("Needle"), "{results:?}");
}

#[test]
fn hooks_list_says_which_file_each_hook_came_from() {
    let project = Project::new();
    let log = script(&project, "log.sh", "cat > /dev/null");
    project.write(
        ".ling/hooks.json",
        &json!({ "hooks": { "Stop": group("", &log) } }).to_string(),
    );
    claude_settings(
        &project,
        json!({ "PreToolUse": group("Bash", "./hooks/other.sh") }),
        json!({}),
    );
    let out = ling_hooks(&project, &["list", "--json"]);
    ok(&out);
    let list: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let sources: Vec<(String, String)> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            let source = h["source"].as_str().unwrap_or_default();
            let file = source
                .rsplit_once(".ling/")
                .or(source.rsplit_once(".claude/"));
            (
                h["event"].as_str().unwrap_or_default().to_string(),
                format!(
                    "{} {}",
                    file.map_or(source, |f| f.1),
                    h["dialect"].as_str().unwrap_or_default()
                ),
            )
        })
        .collect();
    assert_eq!(
        sources,
        [
            ("PreToolUse".to_string(), "settings.json claude".to_string()),
            ("Stop".to_string(), "hooks.json ling".to_string()),
        ]
    );
}
