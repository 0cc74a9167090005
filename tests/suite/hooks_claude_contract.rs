//! The rest of Claude Code's hook contract, through the real binary with the shapes of real
//! scripts: a Stop gate that blocks until its check passes (and the bound on one that never
//! does), a handler's `if` rule, absolute `file_path` and a Claude-shaped transcript for Claude
//! Code files' hooks, Notification, PostToolUse `updatedToolOutput`, settings `env`, and the
//! note about Claude settings Ling ignores.

use crate::support::{hooks_e2e, mock_openai, project};

use hooks_e2e::*;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run, run_with};
use serde_json::{Value, json};

/// Writes `.claude/settings.json` with these hooks (and `extra` keys) and trusts the project.
fn claude_settings(project: &Project, hooks: Value, extra: Value) {
    let mut settings = json!({ "hooks": hooks });
    if let (Some(out), Some(extra)) = (settings.as_object_mut(), extra.as_object()) {
        out.extend(extra.clone());
    }
    project.write(".claude/settings.json", &settings.to_string());
    project.trust();
}

#[test]
fn a_stop_gate_blocks_until_its_check_passes() {
    // A test gate: the suite "fails" twice, then passes; each failure sends the model back.
    let project = Project::new();
    let gate = script(
        &project,
        "gate.sh",
        "cat >> stop.jsonl\necho >> stop.jsonl\n\
         n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs\n\
         if [ $n -le 2 ]; then echo \"tests failed (run $n)\" >&2; exit 2; fi\nexit 0",
    );
    hooks(&project, json!({ "Stop": group("", &gate) }));
    let server = MockServer::start_blocking(vec![
        Reply::text("first try"),
        Reply::text("second try"),
        Reply::text("all green"),
    ]);
    let out = run(ling_p(&project, &server, "make the tests pass", &[]));
    ok(&out);
    assert_eq!(out.stdout.lines().last(), Some("all green"));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(last_user(&requests[1]), "tests failed (run 1)");
    assert_eq!(last_user(&requests[2]), "tests failed (run 2)");
    let inputs = json_lines(&project, "stop.jsonl");
    let active: Vec<Value> = inputs
        .iter()
        .map(|i| i["stop_hook_active"].clone())
        .collect();
    assert_eq!(active, [json!(false), json!(true), json!(true)]);
    assert_eq!(inputs[1]["last_assistant_message"], json!("second try"));
    assert_eq!(inputs[2]["last_assistant_message"], json!("all green"));
}

#[test]
fn a_stop_hook_that_never_allows_is_bounded_by_max_stop_hook_blocks() {
    let project = Project::new();
    let gate = script(
        &project,
        "never.sh",
        "cat > /dev/null\necho 'not yet' >&2\nexit 2",
    );
    project.write(
        ".ling/settings.json",
        &json!({ "maxStopHookBlocks": 2 }).to_string(),
    );
    hooks(&project, json!({ "Stop": group("", &gate) }));
    let server =
        MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b"), Reply::text("c")]);
    let out = run(ling_p(&project, &server, "go", &[]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(server.requests().len(), 3);
    assert!(
        out.stderr.contains(
            "the Stop hooks blocked the end of the turn 2 times in a row (settings \
             maxStopHookBlocks)"
        ) && out.stderr.contains("not yet"),
        "{}",
        out.stderr
    );
    // --max-turns bounds it too.
    let server = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    let out = run(ling_p(&project, &server, "go", &["--max-turns", "2"]));
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("stopped after 2 model requests"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_if_rule_limits_a_claude_gate_to_the_calls_it_names() {
    // The gate meant only for `git commit`: `git status` and `echo` run.
    let project = Project::new();
    let gate = script(
        &project,
        "commit-gate.sh",
        "cat >> gated.jsonl\necho >> gated.jsonl\necho 'run the tests before committing' >&2\nexit 2",
    );
    claude_settings(
        &project,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": gate, "if": "Bash(git commit*)"}]}]}),
        json!({}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("c1", "bash", json!({"command": "echo status-ran"})),
            ("c2", "bash", json!({"command": "git commit -m wip"})),
            (
                "c3",
                "bash",
                json!({"command": "echo x && git commit -am y"}),
            ),
        ]),
        Reply::text("ok"),
    ]);
    let out = run(ling_p(
        &project,
        &server,
        "commit",
        &["--permission-mode", "bypass"],
    ));
    ok(&out);
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("status-ran"), "{results:?}");
    assert!(
        results[1].contains("run the tests before committing"),
        "{results:?}"
    );
    assert!(
        results[2].contains("run the tests before committing"),
        "{results:?}"
    );
    let gated = json_lines(&project, "gated.jsonl");
    assert_eq!(gated.len(), 2, "{gated:?}");
    // A rule that does not parse stops Ling at its position.
    claude_settings(
        &project,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true", "if": "Bash(git commit"}]}]}),
        json!({}),
    );
    let out = run(ling_p(
        &project,
        &MockServer::start_blocking(vec![]),
        "x",
        &[],
    ));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(".claude/settings.json:1:") && out.stderr.contains("`if`"),
        "{}",
        out.stderr
    );
}

#[test]
fn claude_hooks_get_absolute_paths_and_a_claude_shaped_transcript() {
    let project = Project::new();
    // Records what it gets, and the last assistant text as Claude's transcript holds it.
    let record = script(
        &project,
        "record.sh",
        "input=$(cat)\necho \"$input\" >> claude-hook.jsonl\n\
         t=$(echo \"$input\" | jq -r .transcript_path)\n\
         jq -r 'select(.type==\"assistant\") | .message.content[] | select(.type==\"text\") | .text' \"$t\" | tail -n 1 > last-text.txt",
    );
    let ling_record = script(
        &project,
        "ling-record.sh",
        "cat >> ling-hook.jsonl\necho >> ling-hook.jsonl",
    );
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"PreToolUse": group("write_file", &ling_record)}}).to_string(),
    );
    claude_settings(
        &project,
        json!({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": record}]}]}),
        json!({}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls_with_text(
            "I will write it.",
            vec![(
                "c1",
                "write_file",
                json!({"path": "src/out.txt", "content": "x"}),
            )],
        ),
        Reply::text("done"),
    ]);
    let out = run(ling_p(
        &project,
        &server,
        "write",
        &["--permission-mode", "accept-edits"],
    ));
    ok(&out);
    let root = std::fs::canonicalize(project.path()).unwrap_or_default();
    let claude = json_lines(&project, "claude-hook.jsonl");
    assert_eq!(claude[0]["tool_name"], json!("Write"));
    assert_eq!(
        claude[0]["tool_input"]["file_path"],
        json!(root.join("src/out.txt").to_string_lossy())
    );
    assert_eq!(claude[0]["tool_input"]["path"], json!("src/out.txt"));
    let transcript = claude[0]["transcript_path"].as_str().unwrap_or_default();
    assert!(transcript.ends_with(".claude.jsonl"), "{transcript}");
    assert_eq!(project.read("last-text.txt").trim(), "I will write it.");
    // Ling's own file keeps Ling's shapes.
    let ling = json_lines(&project, "ling-hook.jsonl");
    assert_eq!(ling[0]["tool_input"]["file_path"], json!("src/out.txt"));
    assert!(
        ling[0]["transcript_path"]
            .as_str()
            .is_some_and(|t| t.ends_with(".jsonl") && !t.ends_with(".claude.jsonl")),
        "{}",
        ling[0]
    );
    // The rewrite of a Claude hook may answer with the absolute path it got.
    assert_eq!(project.read("src/out.txt"), "x");
}

#[test]
fn post_tool_use_updated_tool_output_is_what_the_model_reads() {
    // A lint dispatcher hands its report to the model in place of the tool's output.
    let project = Project::new();
    let lint = script(
        &project,
        "lint.sh",
        &format!(
            "cat > /dev/null\necho '{}'",
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                   "updatedToolOutput": "lint: src/out.rs:1: missing doc comment"}})
        ),
    );
    hooks(
        &project,
        json!({ "PostToolUse": group("Write|Edit", &lint) }),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "out.rs", "content": "fn a() {}"}),
        )]),
        Reply::text("fixed"),
    ]);
    let out = run(ling_p(
        &project,
        &server,
        "w",
        &["--permission-mode", "accept-edits"],
    ));
    ok(&out);
    assert_eq!(
        tool_results(&server.requests()[1]),
        ["lint: src/out.rs:1: missing doc comment"]
    );
}

#[test]
fn settings_env_reaches_bash_and_hooks() {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        &json!({"env": {"LING_T_ONE": "from-ling", "OPENAI_API_KEY": "leak"}}).to_string(),
    );
    let env_hook = script(
        &project,
        "env.sh",
        "cat > /dev/null\necho \"$LING_T_TWO\" > hook-env.txt",
    );
    claude_settings(
        &project,
        json!({"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": env_hook}]}]}),
        json!({"env": {"LING_T_TWO": "from-claude", "LING_T_ONE": "claude-loses"}}),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "bash",
            json!({"command": "echo \"$LING_T_ONE $LING_T_TWO key=${OPENAI_API_KEY:-none}\""}),
        )]),
        Reply::text("ok"),
    ]);
    let out = run(ling_p(&project, &server, "env", &[]));
    ok(&out);
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("from-ling from-claude key=none"),
        "{results:?}"
    );
    assert_eq!(project.read("hook-env.txt").trim(), "from-claude");
}

#[test]
fn notification_hooks_hear_a_permission_prompt() {
    let project = Project::new();
    let notify = script(&project, "notify.sh", "cat > notified.json");
    hooks(
        &project,
        json!({ "Notification": group("permission_prompt", &notify) }),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
        )]),
        Reply::text("ok"),
    ]);
    // A program on stdin answers the questions: the write asks, so Notification fires.
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--permission-prompt-tool",
        "stdio",
    ]);
    let out = run_with(
        cmd,
        Some(&format!(
            "{}\n",
            json!({"type": "user", "message": {"role": "user", "content": "write"}})
        )),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let notified = read_json(&project, "notified.json");
    assert_eq!(notified["hook_event_name"], json!("Notification"));
    assert_eq!(notified["notification_type"], json!("permission_prompt"));
    assert_eq!(
        notified["message"],
        json!("Ling needs your permission to use write_file")
    );
    // A `-p` run asks nobody, and says nothing.
    let project = Project::new();
    let notify = script(&project, "notify.sh", "cat > notified.json");
    hooks(&project, json!({ "Notification": group("", &notify) }));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "x"}),
        )]),
        Reply::text("ok"),
    ]);
    ok(&run(ling_p(&project, &server, "write", &[])));
    assert!(!project.file("notified.json").exists());
}

#[test]
fn claude_settings_ling_ignores_are_said_once() {
    let project = Project::new();
    claude_settings(
        &project,
        json!({}),
        json!({"enabledPlugins": {"x@y": true}, "statusLine": {"type": "command", "command": "x"}}),
    );
    let listed = ling_hooks(&project, &["list"]);
    assert_eq!(listed.code, Some(0));
    let note = "Claude Code's `enabledPlugins` and `statusLine` are not used by Ling";
    assert_eq!(listed.stderr.matches(note).count(), 1, "{}", listed.stderr);
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let out = run(ling_p(&project, &server, "hi", &[]));
    ok(&out);
    assert_eq!(out.stderr.matches(note).count(), 1, "{}", out.stderr);
}

#[test]
fn notification_hooks_hear_the_repl_waiting_at_its_prompt() {
    let project = Project::new();
    let notify = script(
        &project,
        "notify.sh",
        "cat >> notified.jsonl\necho >> notified.jsonl",
    );
    project.write(
        ".ling/settings.json",
        &json!({ "idleNotifyMs": 300 }).to_string(),
    );
    hooks(&project, json!({ "Notification": group("", &notify) }));
    let server = MockServer::start_blocking(vec![]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
    p.exp_string("> ").expect("the prompt");
    // The hook's whole entry: its JSON and the newline its script writes after it.
    let log = project.file("notified.jsonl");
    crate::support::process::wait_for("the idle Notification hook's entry", || {
        let text = std::fs::read_to_string(&log).ok()?;
        let complete = text.ends_with('\n')
            && text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok());
        (complete && !text.trim().is_empty()).then_some(())
    });
    p.send_line("/exit").expect("send");
    p.exp_eof().expect("the REPL did not exit");
    let notified = json_lines(&project, "notified.jsonl");
    assert_eq!(notified.len(), 1, "{notified:?}");
    assert_eq!(notified[0]["notification_type"], json!("idle_prompt"));
    assert_eq!(
        notified[0]["message"],
        json!("Ling is waiting for your input")
    );
}

#[test]
fn a_subagent_s_end_of_turn_fires_subagent_stop_which_loops_like_stop() {
    use ling::agent::{Agent, AgentOptions, NonInteractive, PromptOptions, RunEnd, Session};
    use ling::config::hooks::HooksConfig;
    use ling::config::{Paths, PermissionMode};
    use ling::hooks::{HookEngine, SubagentInfo};
    use ling::llm::{LlmClient, LlmConfig};
    use ling::permissions::Permissions;
    use ling::tools::ToolRegistry;

    let project = Project::new();
    let gate = script(
        &project,
        "sub-gate.sh",
        "cat >> sub.jsonl\necho >> sub.jsonl\n\
         n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs\n\
         [ $n -le 1 ] && { echo 'check your work' >&2; exit 2; }\nexit 0",
    );
    let stop = script(&project, "stop.sh", "cat > stop-fired.json");
    let hooks = json!({"hooks": {
        "SubagentStop": [{"matcher": "reviewer", "hooks": [{"type": "command", "command": gate}]}],
        "Stop": group("", &stop),
    }});
    let server =
        MockServer::start_blocking(vec![Reply::text("looks fine"), Reply::text("checked")]);
    let root = std::fs::canonicalize(project.path()).unwrap_or_default();
    let paths = Paths::with_home(root.clone(), project.home.path().to_path_buf());
    let config = HooksConfig::parse(&root.join("hooks.json"), &hooks.to_string()).unwrap();
    let (engine, _) = HookEngine::from_config(config).unwrap();
    let options = AgentOptions {
        root: root.clone(),
        max_turns: Some(10),
        tool_output_limit: ling::config::DEFAULT_TOOL_OUTPUT_LIMIT,
        prompt: PromptOptions::default(),
        child_env: ling::process::ChildEnv::default(),
        context: Default::default(),
        add_dirs: Vec::new(),
        never_ask: false,
        stop_hook_limit: 20,
        background_buffer: 1 << 20,
        subagent: Some(SubagentInfo {
            agent_id: "agent-1".into(),
            agent_type: "reviewer".into(),
        }),
        idle_notify_after: std::time::Duration::from_secs(60),
        budget: Default::default(),
    };
    let llm = LlmClient::new(LlmConfig::new(server.base_url(), "m")).unwrap();
    let permissions = Permissions::new(PermissionMode::Default, &[], &[], &paths).unwrap();
    let session = Session::new(&paths.sessions_dir(), &root, "m");
    let mut agent =
        Agent::new(llm, ToolRegistry::builtins(), permissions, options, session).with_hooks(engine);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime
        .block_on(agent.run(
            "review",
            &|_: ling::agent::AgentEvent| {},
            &NonInteractive,
            &tokio_util::sync::CancellationToken::new(),
        ))
        .unwrap();
    assert_eq!(result.end, RunEnd::Completed);
    assert_eq!(result.text, "checked");
    let inputs = json_lines(&project, "sub.jsonl");
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0]["hook_event_name"], json!("SubagentStop"));
    assert_eq!(inputs[0]["agent_type"], json!("reviewer"));
    assert_eq!(inputs[0]["agent_id"], json!("agent-1"));
    assert_eq!(inputs[0]["stop_hook_active"], json!(false));
    assert_eq!(inputs[1]["stop_hook_active"], json!(true));
    assert_eq!(inputs[1]["last_assistant_message"], json!("checked"));
    assert!(
        !project.file("stop-fired.json").exists(),
        "Stop fired for a subagent"
    );
}
