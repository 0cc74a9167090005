//! The hook engine through its public API, with real `sh` scripts in temp projects.

use crate::support::hooks;

use std::time::{Duration, Instant};

use hooks::{Project, alive, command, gone, hooks_file, pre_tool, read_pid};
use ling::hooks::{Decision, HookEventName, HookInput, NoticeKind};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn project_with(event: &str, matcher: Option<&str>, handlers: Value) -> Project {
    let project = Project::new();
    project.project_hooks(&hooks_file(event, matcher, handlers));
    project
}

fn kinds(outcome: &ling::hooks::HookOutcome) -> Vec<NoticeKind> {
    outcome.notices.iter().map(|n| n.kind).collect()
}

#[tokio::test]
async fn the_handler_gets_the_input_on_stdin_and_the_env_in_the_project_root() {
    let project = Project::new();
    let cmd = project.script(
        "record.sh",
        r#"cat > got.json
printf '%s\n%s\n%s\n%s\n' "$LING_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" "$LING_SESSION_ID" "$(pwd)" > env.txt"#,
    );
    project.project_hooks(&hooks_file(
        "PreToolUse",
        Some("bash"),
        json!([command(&cmd)]),
    ));
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({"command": "ls"})), &project.ctx())
        .await;
    assert_eq!(outcome, Default::default());
    let got: Value = serde_json::from_str(&project.read("got.json")).unwrap();
    let root = project.root().to_string_lossy().to_string();
    assert_eq!(
        got,
        json!({
            "session_id": "session-1",
            "transcript_path": project.ctx().transcript_path.to_string_lossy(),
            "cwd": root,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "bash",
            "tool_input": {"command": "ls"},
            "tool_use_id": "call_1",
        })
    );
    let real_root = std::fs::canonicalize(project.root()).unwrap();
    assert_eq!(
        project.read("env.txt"),
        format!("{root}\n{root}\nsession-1\n{}\n", real_root.display())
    );
}

#[tokio::test]
async fn exit_two_blocks_with_stderr_as_the_reason() {
    let project = project_with(
        "PreToolUse",
        Some("bash"),
        json!([command("echo 'rm -rf is not allowed' >&2; exit 2")]),
    );
    let engine = project.engine();
    let outcome = engine
        .run(
            &pre_tool("bash", json!({"command": "rm -rf /"})),
            &project.ctx(),
        )
        .await;
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert_eq!(outcome.reason.as_deref(), Some("rm -rf is not allowed"));
    assert_eq!(kinds(&outcome), vec![NoticeKind::Block]);
    // The matcher is exact: another tool runs no hook at all.
    assert!(!engine.has_handlers(HookEventName::PreToolUse, Some("read_file")));
    let other = engine
        .run(&pre_tool("read_file", json!({"path": "x"})), &project.ctx())
        .await;
    assert_eq!(other, Default::default());
}

fn decision_json(decision: &str, extra: Value) -> String {
    let mut specific = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": format!("because {decision}"),
    });
    if let (Some(s), Some(e)) = (specific.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    let out = json!({ "hookSpecificOutput": specific }).to_string();
    format!("cat >/dev/null; printf '%s' '{out}'")
}

#[tokio::test]
async fn json_deny_ask_and_allow() {
    for (decision, expected) in [
        ("deny", Decision::Block),
        ("ask", Decision::Ask),
        ("allow", Decision::Allow),
    ] {
        let project = project_with(
            "PreToolUse",
            None,
            json!([command(&decision_json(decision, json!({})))]),
        );
        let outcome = project
            .engine()
            .run(&pre_tool("bash", json!({})), &project.ctx())
            .await;
        assert_eq!(outcome.decision, Some(expected), "{decision}");
        assert_eq!(outcome.reason, Some(format!("because {decision}")));
    }
}

#[tokio::test]
async fn deny_beats_allow_from_another_handler() {
    let project = project_with(
        "PreToolUse",
        Some("bash"),
        json!([
            command(&decision_json("allow", json!({}))),
            command(&decision_json("deny", json!({}))),
        ]),
    );
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert_eq!(outcome.reason.as_deref(), Some("because deny"));
}

#[tokio::test]
async fn updated_input_is_merged_over_the_tool_input() {
    let update = decision_json(
        "allow",
        json!({"updatedInput": {"command": "ls -la"}, "additionalContext": "listed long"}),
    );
    let project = project_with("PreToolUse", Some("bash"), json!([command(&update)]));
    let outcome = project
        .engine()
        .run(
            &pre_tool("bash", json!({"command": "ls", "timeout_ms": 500})),
            &project.ctx(),
        )
        .await;
    assert_eq!(
        outcome.updated_input,
        Some(json!({"command": "ls -la", "timeout_ms": 500}))
    );
    assert_eq!(outcome.additional_context, vec!["listed long"]);
    assert_eq!(
        kinds(&outcome),
        vec![NoticeKind::Allow, NoticeKind::Rewrite]
    );
}

#[tokio::test]
async fn two_rewrites_apply_in_configuration_order_not_finishing_order() {
    let slow_first = r#"cat >/dev/null; sleep 0.4; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"first","a":1}}}'"#;
    let fast_second = r#"cat >/dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"second","b":2}}}'"#;
    let project = project_with(
        "PreToolUse",
        Some("bash"),
        json!([command(slow_first), command(fast_second)]),
    );
    let started = Instant::now();
    let outcome = project
        .engine()
        .run(
            &pre_tool("bash", json!({"command": "orig", "c": 3})),
            &project.ctx(),
        )
        .await;
    assert_eq!(
        outcome.updated_input,
        Some(json!({"command": "second", "c": 3, "a": 1, "b": 2}))
    );
    // They ran at the same time: well under two sequential runs of the slow one.
    assert!(started.elapsed() < Duration::from_millis(2000));
}

#[tokio::test]
async fn post_tool_use_context_and_block() {
    let context = r#"printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted src/a.rs"}}'"#;
    let block = r#"printf '%s' '{"decision":"block","reason":"the build is broken now"}'"#;
    let project = project_with(
        "PostToolUse",
        Some("write_file|edit_file"),
        json!([command(context), command(block)]),
    );
    let input = HookInput::PostToolUse {
        tool_name: "edit_file".into(),
        tool_input: json!({"path": "src/a.rs"}),
        tool_response: json!("edited"),
        tool_use_id: "call_2".into(),
    };
    let outcome = project.engine().run(&input, &project.ctx()).await;
    assert_eq!(outcome.additional_context, vec!["formatted src/a.rs"]);
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert_eq!(outcome.reason.as_deref(), Some("the build is broken now"));
}

#[tokio::test]
async fn user_prompt_submit_block_and_plain_stdout_context() {
    let prompt = |text: &str| HookInput::UserPromptSubmit {
        prompt: text.into(),
    };
    let project = project_with(
        "UserPromptSubmit",
        None,
        json!([command(
            r#"if grep -q secret; then echo 'prompts must not contain secrets' >&2; exit 2; fi; echo 'the branch is main'"#
        )]),
    );
    let engine = project.engine();
    let blocked = engine.run(&prompt("my secret key"), &project.ctx()).await;
    assert_eq!(blocked.decision, Some(Decision::Block));
    assert_eq!(
        blocked.reason.as_deref(),
        Some("prompts must not contain secrets")
    );
    let passed = engine.run(&prompt("hello"), &project.ctx()).await;
    assert_eq!(passed.decision, None);
    assert_eq!(passed.additional_context, vec!["the branch is main"]);
}

#[tokio::test]
async fn session_start_stdout_is_context_and_the_matcher_tests_the_source() {
    let project = project_with(
        "SessionStart",
        Some("startup|clear"),
        json!([command("echo 'remember: run cargo fmt'")]),
    );
    let engine = project.engine();
    let start = |source: &str| HookInput::SessionStart {
        source: source.into(),
    };
    let outcome = engine.run(&start("startup"), &project.ctx()).await;
    assert_eq!(outcome.additional_context, vec!["remember: run cargo fmt"]);
    let resumed = engine.run(&start("resume"), &project.ctx()).await;
    assert_eq!(resumed, Default::default());
}

#[tokio::test]
async fn stop_can_be_blocked_and_sees_stop_hook_active() {
    let project = project_with(
        "Stop",
        Some("ignored-for-stop"),
        json!([command(
            r#"if grep -q '"stop_hook_active":true'; then exit 0; fi; printf '%s' '{"decision":"block","reason":"run the tests first"}'"#
        )]),
    );
    let engine = project.engine();
    let stop = |active| HookInput::Stop {
        stop_hook_active: active,
        last_assistant_message: "done".into(),
    };
    let first = engine.run(&stop(false), &project.ctx()).await;
    assert_eq!(first.decision, Some(Decision::Block));
    assert_eq!(first.reason.as_deref(), Some("run the tests first"));
    let again = engine.run(&stop(true), &project.ctx()).await;
    assert_eq!(again.decision, None);
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group_and_does_not_block() {
    let project = Project::new();
    let cmd = project.script("hang.sh", "sleep 30 & echo $! > sleep.pid\nwait");
    project.project_hooks(&hooks_file(
        "PreToolUse",
        None,
        json!([{"type": "command", "command": cmd, "timeout": 1}]),
    ));
    let started = Instant::now();
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(took < Duration::from_secs(5), "run took {took:?}");
    assert_eq!(outcome.decision, None);
    assert_eq!(kinds(&outcome), vec![NoticeKind::Timeout]);
    let sleep = read_pid(&project, "sleep.pid", 1.0).await;
    assert!(
        gone(sleep, 2.0).await,
        "the hook's child sleep {sleep} survived the timeout"
    );
}

#[tokio::test]
async fn fail_closed_turns_a_timeout_into_a_block() {
    let project = project_with(
        "PreToolUse",
        None,
        json!([{"type": "command", "command": "sleep 10", "timeout": 0.3, "failClosed": true}]),
    );
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert!(
        outcome
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("failClosed"),
        "{outcome:?}"
    );
    assert_eq!(kinds(&outcome), vec![NoticeKind::Timeout]);
}

#[tokio::test]
async fn garbage_json_and_bad_exits_are_notices_that_do_not_block() {
    let project = project_with(
        "PreToolUse",
        None,
        json!([command("echo '{oops'"), command("echo broken >&2; exit 1")]),
    );
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    assert_eq!(outcome.decision, None);
    assert_eq!(kinds(&outcome), vec![NoticeKind::Error, NoticeKind::Error]);
    assert!(outcome.notices[1].message.contains("status 1: broken"));
}

#[tokio::test]
async fn a_background_child_holding_stdout_does_not_stall_the_hook() {
    let project = Project::new();
    let cmd = project.script(
        "daemon.sh",
        "sleep 3 & echo $! > bg.pid\necho 'context from a hook with a child'",
    );
    project.project_hooks(&hooks_file("SessionStart", None, json!([command(&cmd)])));
    let started = Instant::now();
    let outcome = project
        .engine()
        .run(
            &HookInput::SessionStart {
                source: "startup".into(),
            },
            &project.ctx(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        outcome.additional_context,
        vec!["context from a hook with a child"]
    );
    let pid = read_pid(&project, "bg.pid", 1.0).await;
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[tokio::test]
async fn async_hooks_never_delay_run_and_are_killed_after_the_grace() {
    let project = Project::new();
    let cmd = project.script("slow.sh", "sleep 5 & echo $! > async.pid\nwait");
    project.project_hooks(&hooks_file(
        "PostToolUse",
        None,
        json!([{"type": "command", "command": cmd, "async": true}]),
    ));
    let engine = project.engine();
    let input = HookInput::PostToolUse {
        tool_name: "bash".into(),
        tool_input: json!({}),
        tool_response: json!("ok"),
        tool_use_id: "c".into(),
    };
    let started = Instant::now();
    let outcome = engine.run(&input, &project.ctx()).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(outcome, Default::default());

    let pid = read_pid(&project, "async.pid", 3.0).await;
    assert!(alive(pid));
    let started = Instant::now();
    engine.wait_async(Duration::from_millis(300)).await;
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(
        gone(pid, 2.0).await,
        "the async hook's child survived wait_async"
    );
}

#[tokio::test]
async fn wait_async_returns_as_soon_as_async_hooks_finish_and_keeps_their_errors() {
    let project = project_with(
        "SessionEnd",
        None,
        json!([
            {"type": "command", "command": "sleep 0.2; echo done > finished.txt", "async": true},
            {"type": "command", "command": "exit 3", "async": true},
        ]),
    );
    let engine = project.engine();
    let end = HookInput::SessionEnd {
        reason: "exit".into(),
    };
    let outcome = engine.run(&end, &project.ctx()).await;
    assert_eq!(outcome, Default::default());
    let started = Instant::now();
    engine.wait_async(Duration::from_secs(10)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(project.read("finished.txt"), "done\n");
    let notices = engine.take_async_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].kind, NoticeKind::Error);
    assert!(notices[0].message.contains("status 3"));
    assert!(engine.take_async_notices().is_empty());
}

#[tokio::test]
async fn has_handlers_follows_matchers_and_events() {
    let project = Project::new();
    project.project_hooks(&json!({"hooks": {
        "PreToolUse": [{"matcher": "mcp__sqlite__.*", "hooks": [command("true")]}],
        "Stop": [{"hooks": [command("true")]}],
    }}));
    let engine = project.engine();
    assert!(!engine.is_empty());
    assert!(engine.has_handlers(HookEventName::PreToolUse, Some("mcp__sqlite__query")));
    assert!(!engine.has_handlers(HookEventName::PreToolUse, Some("mcp__sqlite")));
    assert!(!engine.has_handlers(HookEventName::PostToolUse, Some("mcp__sqlite__query")));
    assert!(engine.has_handlers(HookEventName::Stop, None));
    assert!(!engine.has_handlers(HookEventName::SessionEnd, None));
    let empty = ling::hooks::HookEngine::empty();
    assert!(empty.is_empty());
    assert!(!empty.has_handlers(HookEventName::PreToolUse, Some("bash")));
}
