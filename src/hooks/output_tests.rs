//! Unit tests of output parsing: one handler's exit status and text into its effect.

use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

use HookEventName::*;

fn exited(code: i32, stdout: &str, stderr: &str) -> RunResult {
    RunResult::Exited {
        code: Some(code),
        signal: None,
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

fn read(event: HookEventName, result: RunResult) -> Effect {
    interpret(event, "command `h`", false, result)
}

fn kinds(effect: &Effect) -> Vec<NoticeKind> {
    effect.notices.iter().map(|n| n.kind).collect()
}

#[test]
fn exit_two_blocks_with_stderr_where_the_event_can_block() {
    for event in [PreToolUse, UserPromptSubmit, PostToolUse, Stop, PreCompact] {
        let effect = read(
            event,
            exited(2, "{\"decision\":\"approve\"}", "no rm -rf\n"),
        );
        assert_eq!(effect.decision, Some(Decision::Block), "{event}");
        assert_eq!(effect.reason.as_deref(), Some("no rm -rf"), "{event}");
        assert_eq!(kinds(&effect), vec![NoticeKind::Block]);
    }
    let effect = read(PreToolUse, exited(2, "", ""));
    assert_eq!(
        effect.reason.as_deref(),
        Some("blocked by hook command `h`")
    );
}

#[test]
fn exit_two_on_an_event_that_cannot_block_is_only_a_notice() {
    for event in [SessionStart, SessionEnd, PostToolUseFailure] {
        let effect = read(event, exited(2, "", "nope"));
        assert_eq!(effect.decision, None, "{event}");
        assert_eq!(kinds(&effect), vec![NoticeKind::Ignored]);
        assert!(effect.notices[0].message.contains("nope"));
    }
}

#[test]
fn other_exits_crashes_and_timeouts_are_errors_that_do_not_block() {
    let crash = RunResult::Exited {
        code: None,
        signal: Some(9),
        stdout: String::new(),
        stderr: String::new(),
    };
    for (result, kind) in [
        (
            exited(1, "{\"decision\":\"block\"}", "boom"),
            NoticeKind::Error,
        ),
        (crash, NoticeKind::Error),
        (
            RunResult::TimedOut(Duration::from_secs(3)),
            NoticeKind::Timeout,
        ),
        (RunResult::Failed("cannot start".into()), NoticeKind::Error),
        (
            RunResult::Http {
                status: 500,
                body: "oops".into(),
            },
            NoticeKind::Error,
        ),
    ] {
        let effect = read(PreToolUse, result);
        assert_eq!(effect.decision, None);
        assert_eq!(kinds(&effect), vec![kind]);
    }
}

#[test]
fn fail_closed_turns_errors_into_blocks_on_blocking_events() {
    let effect = interpret(
        PreToolUse,
        "command `h`",
        true,
        RunResult::TimedOut(Duration::from_secs(1)),
    );
    assert_eq!(effect.decision, Some(Decision::Block));
    assert!(effect.reason.unwrap_or_default().contains("failClosed"));
    let effect = interpret(SessionEnd, "command `h`", true, exited(1, "", ""));
    assert_eq!(effect.decision, None);
}

#[test]
fn plain_stdout_is_context_only_for_session_start_and_prompts() {
    assert_eq!(
        read(SessionStart, exited(0, "branch main\n", "")).context,
        Some("branch main".into())
    );
    assert_eq!(
        read(UserPromptSubmit, exited(0, "today is monday", "")).context,
        Some("today is monday".into())
    );
    let effect = read(PreToolUse, exited(0, "some log line", ""));
    assert_eq!(effect, Effect::default());
}

#[test]
fn garbage_json_is_an_error_notice() {
    let effect = read(PreToolUse, exited(0, "{not json", ""));
    assert_eq!(effect.decision, None);
    assert_eq!(kinds(&effect), vec![NoticeKind::Error]);
    assert!(effect.notices[0].message.contains("unreadable JSON"));
}

#[test]
fn pre_tool_use_json_decisions_and_updates() {
    let out = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "not here",
    }});
    let effect = read(PreToolUse, exited(0, &out.to_string(), ""));
    assert_eq!(effect.decision, Some(Decision::Block));
    assert_eq!(effect.reason.as_deref(), Some("not here"));

    let out = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "ls -la"},
        "additionalContext": "rewrote ls",
    }});
    let effect = read(PreToolUse, exited(0, &out.to_string(), ""));
    assert_eq!(effect.decision, Some(Decision::Allow));
    assert_eq!(
        effect.updated_input,
        json!({"command": "ls -la"}).as_object().cloned()
    );
    assert_eq!(effect.context.as_deref(), Some("rewrote ls"));
    assert_eq!(kinds(&effect), vec![NoticeKind::Allow, NoticeKind::Rewrite]);

    let legacy = read(PreToolUse, exited(0, r#"{"decision":"approve"}"#, ""));
    assert_eq!(legacy.decision, Some(Decision::Allow));
    let legacy = read(
        PreToolUse,
        exited(0, r#"{"decision":"block","reason":"r"}"#, ""),
    );
    assert_eq!(legacy.decision, Some(Decision::Block));
    assert_eq!(legacy.reason.as_deref(), Some("r"));
}

#[test]
fn json_for_another_event_is_ignored_visibly() {
    let out = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}});
    let effect = read(PreToolUse, exited(0, &out.to_string(), ""));
    assert_eq!(effect.decision, None);
    assert_eq!(kinds(&effect), vec![NoticeKind::Ignored]);
}

#[test]
fn universal_fields_continue_stop_reason_and_system_message() {
    let out = json!({"continue": false, "stopReason": "quota", "systemMessage": "careful"});
    let effect = read(PostToolUse, exited(0, &out.to_string(), ""));
    assert_eq!(effect.stop.as_deref(), Some("quota"));
    assert_eq!(effect.system_message.as_deref(), Some("careful"));
    assert_eq!(kinds(&effect), vec![NoticeKind::Stop]);

    let effect = read(
        Stop,
        exited(0, r#"{"decision":"block","reason":"run the tests"}"#, ""),
    );
    assert_eq!(effect.decision, Some(Decision::Block));
    assert_eq!(effect.reason.as_deref(), Some("run the tests"));

    let effect = read(SessionEnd, exited(0, r#"{"decision":"block"}"#, ""));
    assert_eq!(effect.decision, None);
    assert_eq!(kinds(&effect), vec![NoticeKind::Ignored]);
}

#[test]
fn http_success_bodies_read_like_stdout() {
    let effect = read(
        PreToolUse,
        RunResult::Http {
            status: 200,
            body: r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#.into(),
        },
    );
    assert_eq!(effect.decision, Some(Decision::Ask));
}

#[test]
fn long_context_is_cut() {
    let long = "x".repeat(TEXT_LIMIT + 50);
    let effect = read(SessionStart, exited(0, &long, ""));
    let context = effect.context.unwrap_or_default();
    assert!(context.starts_with(&"x".repeat(TEXT_LIMIT)));
    assert!(context.ends_with("characters]"));
}
