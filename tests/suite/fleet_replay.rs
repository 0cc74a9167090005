//! `--record FILE` and `--replay FILE`: a session with hooks and an MCP server recorded against
//! the mock model, then replayed in another project directory and `LING_HOME` with no model at
//! all gives the same answer, its hooks and MCP calls running again; a changed prompt is a
//! request the recording does not have, which fails the run with exit 4 naming the part. The
//! Anthropic Messages and OpenAI Responses APIs record and replay the same way.

use crate::support::mcp::test_server;
use crate::support::{hooks_e2e, mock_openai, project};

use hooks_e2e::{group, hooks, script};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

/// A project with a UserPromptSubmit hook that adds context, a PreToolUse hook that logs each
/// bash call, and the test MCP server.
fn configured() -> Project {
    let project = Project::new();
    let config = json!({"mcpServers": {"test": {
        "command": test_server(), "args": [], "startupTimeoutMs": 5000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    let context = script(
        &project,
        "context.sh",
        "cat > /dev/null\necho 'the build uses make'",
    );
    let log = script(
        &project,
        "log.sh",
        "cat >> bash-calls.log\necho >> bash-calls.log",
    );
    hooks(
        &project,
        json!({
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": context}]}],
            "PreToolUse": group("bash", &log),
        }),
    );
    project
}

fn session(project: &Project, base_url: &str, prompt: &str, tape: &[&str]) -> project::Output {
    let mut cmd = project.command(base_url);
    cmd.args([
        "-p",
        prompt,
        "--allowed-tools",
        "mcp__test__*,bash",
        "--sandbox",
        "off",
    ])
    .args(tape);
    run(cmd)
}

#[test]
fn a_recorded_session_replays_without_a_model_and_a_changed_prompt_fails_loudly() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__add", json!({"a": 2, "b": 3}))]),
        Reply::tool_calls(vec![("b1", "bash", json!({"command": "echo from-bash"}))]),
        Reply::text("2 + 3 = 5, and bash said hello"),
    ]);
    let tapes = tempfile::tempdir().unwrap();
    let tape = tapes.path().join("session.jsonl");
    let tape_arg = tape.to_str().unwrap();
    let recorded = session(
        &configured(),
        &server.base_url(),
        "add and echo",
        &["--record", tape_arg],
    );
    assert_eq!(recorded.code, Some(0), "{}", recorded.stderr);
    assert_eq!(recorded.stdout, "2 + 3 = 5, and bash said hello\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The hook's context and the MCP server's result reached the model through the tape.
    let last = serde_json::to_string(&requests[2].messages()).unwrap();
    assert!(
        last.contains("the build uses make") && last.contains("from-bash"),
        "{last}"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&tape)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert_eq!(lines[0]["path"], "/v1/chat/completions");
    assert!(
        lines[2]["body"]
            .as_str()
            .unwrap()
            .ends_with("data: [DONE]\n\n")
    );

    // Another project directory and LING_HOME, and no model: the same answer, hooks run again.
    drop(server);
    let elsewhere = configured();
    let replayed = session(
        &elsewhere,
        "http://127.0.0.1:9/v1",
        "add and echo",
        &["--replay", tape_arg],
    );
    assert_eq!(replayed.code, Some(0), "{}", replayed.stderr);
    assert_eq!(replayed.stdout, recorded.stdout);
    assert!(elsewhere.read("bash-calls.log").contains("echo from-bash"));

    // Without the tape the same run has no model to talk to.
    let without = session(&configured(), "http://127.0.0.1:9/v1", "add and echo", &[]);
    assert_eq!(without.code, Some(1), "{}", without.stderr);

    // A changed prompt: exit 3, the differing part named.
    let changed = session(
        &configured(),
        "http://127.0.0.1:9/v1",
        "add and print",
        &["--replay", tape_arg],
    );
    assert_eq!(changed.code, Some(4), "{}", changed.stderr);
    assert!(
        changed
            .stderr
            .contains("request 1 (POST /v1/chat/completions) is not in")
            && changed.stderr.contains("first at `messages[1]`")
            && changed.stderr.contains("add and print"),
        "{}",
        changed.stderr
    );
}

#[test]
fn a_missing_or_broken_recording_is_a_usage_error() {
    let project = Project::new();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.jsonl");
    let out = session(
        &project,
        "http://127.0.0.1:9/v1",
        "x",
        &["--replay", missing.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--replay"), "{}", out.stderr);
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"path\": 1}\n").unwrap();
    let out = session(
        &project,
        "http://127.0.0.1:9/v1",
        "x",
        &["--replay", broken.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("line 1 is not a recorded request"),
        "{}",
        out.stderr
    );
}

#[test]
fn anthropic_and_responses_sessions_record_and_replay_too() {
    for (api, path) in [
        ("anthropic", "/v1/messages"),
        ("responses", "/v1/responses"),
    ] {
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![("b1", "bash", json!({"command": "echo from-bash"}))]),
            Reply::text("bash said from-bash"),
        ]);
        let tapes = tempfile::tempdir().unwrap();
        let tape = tapes.path().join("session.jsonl");
        let tape_arg = tape.to_str().unwrap();
        let run_on = |project: &Project, base_url: &str, prompt: &str, tape: &[&str]| {
            let mut cmd = project.command(base_url);
            cmd.args([
                "--api",
                api,
                "--model",
                "test-model",
                "--base-url",
                base_url,
            ])
            .args(["-p", prompt, "--allowed-tools", "bash", "--sandbox", "off"])
            .args(tape);
            run(cmd)
        };
        let recorded = run_on(
            &Project::new(),
            &server.base_url(),
            "echo it",
            &["--record", tape_arg],
        );
        assert_eq!(recorded.code, Some(0), "{api}: {}", recorded.stderr);
        assert_eq!(recorded.stdout, "bash said from-bash\n", "{api}");
        let first: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&tape)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(first["path"], path, "{api}");
        drop(server);

        let elsewhere = Project::new();
        let replayed = run_on(
            &elsewhere,
            "http://127.0.0.1:9/v1",
            "echo it",
            &["--replay", tape_arg],
        );
        assert_eq!(replayed.code, Some(0), "{api}: {}", replayed.stderr);
        assert_eq!(replayed.stdout, recorded.stdout, "{api}");

        let changed = run_on(
            &elsewhere,
            "http://127.0.0.1:9/v1",
            "echo that",
            &["--replay", tape_arg],
        );
        assert_eq!(changed.code, Some(4), "{api}: {}", changed.stderr);
        assert!(
            changed
                .stderr
                .contains(&format!("request 1 (POST {path}) is not in")),
            "{api}: {}",
            changed.stderr
        );
    }
}
