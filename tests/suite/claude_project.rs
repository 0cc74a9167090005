//! A Claude Code user's project, through the real binary: `.claude/settings.json` (hooks and
//! permission rules in Claude's syntax), `.mcp.json` and `CLAUDE.md`. Untrusted, none of the
//! config applies and the notice says what was skipped; trusted, all of it does; a change to
//! `.claude/settings.json` lapses trust; `claudeCompat: false` turns it off; `ling mcp list` and
//! `ling hooks list` say which file each entry came from; Ling's own files win a name both use;
//! `~/.claude/settings.json` hooks run only with `claudeCompat.userHooks`.

use crate::support::mcp::test_server;
use crate::support::{hooks_e2e, mock_openai, project};

use hooks_e2e::{ok, script, tool_results};
use mock_openai::{MockServer, Recorded, Reply};
use project::{Output, Project, run};
use serde_json::{Value, json};

const MEMORY: &str = "Use pnpm, never npm.";

/// The Claude Code files of a typical project, and a `.env` its rules protect.
fn claude_project() -> Project {
    let project = Project::new();
    let log = script(&project, "prompt-log.sh", "cat > /dev/null\ntouch hook-ran");
    project.write(
        ".claude/settings.json",
        &json!({
            "permissions": {
                "allow": ["Bash(echo:*)", "mcp__test", "WebFetch(domain:example.com)"],
                "deny": ["Read(./.env)"]
            },
            "hooks": { "UserPromptSubmit": [{ "hooks": [{ "type": "command", "command": log }] }] },
            "env": { "IGNORED_BY_LING": "1" }
        })
        .to_string(),
    );
    project.write(
        ".mcp.json",
        &json!({ "mcpServers": { "test": { "command": test_server(), "startupTimeoutMs": 10000 } } })
            .to_string(),
    );
    project.write("CLAUDE.md", &format!("{MEMORY}\n"));
    project.write(".env", "SECRET=hunter2\n");
    project
}

/// One reply calling bash, read_file on `.env` and an MCP tool, then a text answer.
fn model() -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("c1", "bash", json!({ "command": "echo hi" })),
            ("c2", "read_file", json!({ "path": ".env" })),
        ]),
        Reply::text("done"),
    ])
}

fn ling_p(project: &Project, server: &MockServer) -> Output {
    let mut cmd = project.command(&server.base_url());
    // Outside the shell sandbox, so that whether `bash` may run is the rules' decision.
    cmd.args(["-p", "go", "--sandbox", "off"]);
    run(cmd)
}

fn ling(project: &Project, args: &[&str]) -> Output {
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(args);
    run(cmd)
}

fn system_prompt(request: &Recorded) -> String {
    request.messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn untrusted_nothing_of_claudes_config_applies() {
    let project = claude_project();
    let server = model();
    let out = ling_p(&project, &server);
    ok(&out);
    assert!(!project.file("hook-ran").exists(), "an untrusted hook ran");
    let requests = server.requests();
    let results = tool_results(&requests[1]);
    assert!(
        results[0].starts_with("Error: permission denied"),
        "{results:?}"
    );
    assert!(
        results[1].contains("hunter2"),
        "an untrusted deny rule applied: {results:?}"
    );
    assert!(
        !requests[0]
            .tool_names()
            .iter()
            .any(|t| t.starts_with("mcp__test__")),
        "an untrusted .mcp.json server started"
    );
    assert!(
        out.stderr.contains(".claude/settings.json (5 items)")
            && out.stderr.contains(".mcp.json (1 server)"),
        "{}",
        out.stderr
    );
    let hooks = ling(&project, &["hooks", "list"]);
    assert!(
        hooks
            .stdout
            .contains(".claude/settings.json (1 hook) not loaded: this project is not trusted"),
        "{}",
        hooks.stdout
    );
    // CLAUDE.md is instructions, like AGENTS.md: read in any project.
    assert!(system_prompt(&requests[0]).contains(MEMORY));
}

#[test]
fn trusted_everything_applies_and_a_change_lapses_trust() {
    let project = claude_project();
    let listing = ling(&project, &["trust"]);
    ok(&listing);
    assert!(
        listing.stdout.contains(".claude/settings.json") && listing.stdout.contains("Bash(echo:*)"),
        "{}",
        listing.stdout
    );
    assert!(listing.stdout.contains(".mcp.json"), "{}", listing.stdout);
    let server = model();
    let out = ling_p(&project, &server);
    ok(&out);
    // Its `WebFetch(domain:example.com)` is a rule of Ling's web_fetch, not an ignored one.
    assert!(
        !out.stderr
            .contains("names a Claude Code tool Ling does not have"),
        "{}",
        out.stderr
    );
    assert!(
        project.file("hook-ran").exists(),
        "the Claude hook did not run"
    );
    let requests = server.requests();
    let results = tool_results(&requests[1]);
    assert_eq!(results[0], "hi\nExit code: 0");
    assert!(
        results[1].contains("permission denied") && results[1].contains("`Read(./.env)`"),
        "{results:?}"
    );
    assert!(!results[1].contains("hunter2"));
    assert!(
        requests[0]
            .tool_names()
            .contains(&"mcp__test__echo".to_string()),
        "{:?}",
        requests[0].tool_names()
    );
    assert!(system_prompt(&requests[0]).contains(MEMORY));

    let list = ling(&project, &["mcp", "list"]);
    ok(&list);
    assert!(
        list.stdout.contains("test (stdio): connected") && list.stdout.contains("[from .mcp.json]"),
        "{}",
        list.stdout
    );
    let hooks = ling(&project, &["hooks", "list"]);
    assert!(
        hooks.stdout.contains(".claude/settings.json"),
        "{}",
        hooks.stdout
    );

    // Any change to a Claude file, as to Ling's, needs trust again.
    let settings = project.read(".claude/settings.json");
    project.write(
        ".claude/settings.json",
        &settings.replace("echo:*", "ech:*"),
    );
    std::fs::remove_file(project.file("hook-ran")).unwrap();
    let server = model();
    let out = ling_p(&project, &server);
    ok(&out);
    assert!(
        !project.file("hook-ran").exists(),
        "a changed Claude file still applied"
    );
    assert!(
        out.stderr.contains("changed since you trusted it"),
        "{}",
        out.stderr
    );
}

#[test]
fn lings_own_files_win_a_name_both_use() {
    let project = claude_project();
    project.write(
        ".ling/mcp.json",
        &json!({ "mcpServers": { "test": { "command": test_server(), "startupTimeoutMs": 10000 } } })
            .to_string(),
    );
    project.trust();
    let out = ling(&project, &["mcp", "list", "--json"]);
    ok(&out);
    let servers = out.json()["servers"].clone();
    let sources: Vec<&str> = servers
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["source"].as_str())
        .collect();
    assert_eq!(sources, [".ling/mcp.json"], "{servers}");
}

#[test]
fn claude_compat_false_turns_it_all_off() {
    let project = claude_project();
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"claudeCompat": false}"#,
    )
    .unwrap();
    // Nothing to trust: the Claude files are not project config any more.
    let server = model();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "json"]);
    let out = run(cmd);
    ok(&out);
    assert_eq!(out.json()["project_trust"], "none");
    assert!(!project.file("hook-ran").exists());
    let requests = server.requests();
    assert!(!system_prompt(&requests[0]).contains(MEMORY));
    assert!(
        !requests[0]
            .tool_names()
            .iter()
            .any(|t| t.starts_with("mcp__"))
    );
}

#[test]
fn user_claude_hooks_run_only_with_claude_compat_user_hooks() {
    let project = Project::new();
    let fake_home = tempfile::tempdir().unwrap();
    let marker = project.file("user-hook-ran");
    std::fs::create_dir_all(fake_home.path().join(".claude")).unwrap();
    let hook = json!({ "hooks": { "Stop": [{ "hooks": [{ "type": "command",
        "command": format!("cat > /dev/null; touch '{}'", marker.display()) }] }] } });
    std::fs::write(
        fake_home.path().join(".claude/settings.json"),
        hook.to_string(),
    )
    .unwrap();
    let run_once = |settings: Option<Value>| {
        if let Some(settings) = settings {
            std::fs::write(
                project.home.path().join("settings.json"),
                settings.to_string(),
            )
            .unwrap();
        }
        let server = MockServer::start_blocking(vec![Reply::text("done")]);
        let mut cmd = project.command(&server.base_url());
        cmd.env("HOME", fake_home.path()).args(["-p", "go"]);
        ok(&run(cmd));
    };
    run_once(None);
    assert!(
        !marker.exists(),
        "~/.claude hooks ran without claudeCompat.userHooks"
    );
    run_once(Some(json!({ "claudeCompat": { "userHooks": true } })));
    assert!(
        marker.exists(),
        "~/.claude hooks did not run with claudeCompat.userHooks"
    );
}
