//! The setups people already have at user level, through the real binary with a temp HOME:
//! `~/.claude/settings.json` `permissions` and `env`, `~/.claude/commands`, Codex's
//! `~/.codex/AGENTS.md`, `prompts/*.md` and execpolicy `rules/*.rules` (a forbidden `rm -rf` is
//! refused), and a project's `CLAUDE.local.md`, `.claude/rules/*.md` and `.agents/skills/`.
//! Each with its negative: the switch that turns it off (`claudeCompat`, `codexCompat`,
//! `--ignore-rules`) lets the same run through.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::{Output, Project, run};
use serde_json::json;

/// A HOME with these files (relative paths, text).
fn home_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    home
}

fn ling(project: &Project, server: &MockServer, home: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.env("HOME", home)
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .args(args);
    run(cmd)
}

/// The model runs `command` with bash, then answers.
fn runs(command: &str) -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": command}))]),
        Reply::text("done"),
    ])
}

/// What the model was told of the call (the tool result of the second request).
fn tool_result(server: &MockServer) -> String {
    let messages = server.requests()[1].messages();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

fn system_prompt(server: &MockServer) -> String {
    server.requests()[0].messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn turn_off(project: &Project, setting: serde_json::Value) {
    std::fs::write(
        project.home.path().join("settings.json"),
        setting.to_string(),
    )
    .unwrap();
}

#[test]
fn claude_user_settings_deny_rules_and_env_apply() {
    let home = home_with(&[(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}, "env": {"FROM_CLAUDE": "lilac"}}"#,
    )]);
    let project = Project::new();
    project.write("notes.txt", "keep\n");
    let server = runs("rm notes.txt");
    let out = ling(&project, &server, home.path(), &["-p", "tidy up"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(project.file("notes.txt").exists(), "{}", out.stderr);
    let server = runs("echo $FROM_CLAUDE");
    let out = ling(&project, &server, home.path(), &["-p", "echo"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        tool_result(&server).contains("lilac"),
        "{}",
        tool_result(&server)
    );
    // claudeCompat.userFiles off: neither applies.
    turn_off(&project, json!({"claudeCompat": {"userFiles": false}}));
    let server = runs("rm notes.txt");
    let out = ling(&project, &server, home.path(), &["-p", "tidy up"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("notes.txt").exists());
    let server = runs("echo \"[$FROM_CLAUDE]\"");
    ling(&project, &server, home.path(), &["-p", "echo"]);
    assert!(
        tool_result(&server).contains("[]"),
        "{}",
        tool_result(&server)
    );
}

const FORBID_RM: &str = r#"prefix_rule(
    pattern = ["rm", ["-rf", "-fr"]],
    decision = "forbidden",
    justification = "move it to the trash instead",
)
"#;

#[test]
fn a_forbidden_codex_rule_refuses_rm_rf() {
    let home = home_with(&[(".codex/rules/default.rules", FORBID_RM)]);
    let project = Project::new();
    project.write("build/out.o", "x");
    // Even in bypass mode, and inside a compound command.
    for args in [&["-p", "clean"][..], &["exec", "--yolo", "clean"]] {
        let server = runs("cd . && rm -rf build");
        let out = ling(&project, &server, home.path(), args);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert!(
            project.file("build/out.o").exists(),
            "{args:?}: {}",
            out.stderr
        );
    }
    // --ignore-rules, or codexCompat off: the same command runs.
    let server = runs("rm -rf build");
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--ignore-rules", "clean"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("build").exists());
    project.write("build/out.o", "x");
    turn_off(&project, json!({"codexCompat": false}));
    let server = runs("rm -rf build");
    let out = ling(&project, &server, home.path(), &["-p", "clean"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("build").exists());
}

#[test]
fn a_rules_file_ling_cannot_read_is_an_error_at_load() {
    let home = home_with(&[(
        ".codex/rules/bad.rules",
        "prefix_rule(pattern = [\"rm\"], decision = \"never\")\n",
    )]);
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    let out = ling(&project, &server, home.path(), &["-p", "x"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("bad.rules") && out.stderr.contains("line 1"),
        "{}",
        out.stderr
    );
}

#[test]
fn codex_agents_md_and_prompts_and_claude_commands_load() {
    let home = home_with(&[
        (".codex/AGENTS.md", "Codex user rule: answer in haiku.\n"),
        (
            ".codex/prompts/fixit.md",
            "---\ndescription: fix\n---\nFix the bug in $ARGUMENTS now.\n",
        ),
        (
            ".claude/commands/hello.md",
            "Say hello to $ARGUMENTS warmly.\n",
        ),
    ]);
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("ok"), Reply::text("ok")]);
    let out = ling(
        &project,
        &server,
        home.path(),
        &["-p", "/prompts:fixit main.rs"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(system_prompt(&server).contains("answer in haiku"));
    let sent = server.requests()[0]
        .messages()
        .last()
        .map(|m| m["content"].to_string());
    assert!(
        sent.is_some_and(|s| s.contains("Fix the bug in main.rs now.")),
        "{:?}",
        server.requests()[0].messages()
    );
    let out = ling(&project, &server, home.path(), &["-p", "/hello Ada"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = server.requests()[1]
        .messages()
        .last()
        .map(|m| m["content"].to_string());
    assert!(sent.is_some_and(|s| s.contains("Say hello to Ada warmly.")));
    // Off: none of them.
    turn_off(
        &project,
        json!({"codexCompat": false, "claudeCompat": {"userFiles": false}}),
    );
    let server = MockServer::start_blocking(vec![Reply::text("ok"), Reply::text("ok")]);
    ling(
        &project,
        &server,
        home.path(),
        &["-p", "/prompts:fixit main.rs"],
    );
    assert!(!system_prompt(&server).contains("answer in haiku"));
    ling(&project, &server, home.path(), &["-p", "/hello Ada"]);
    for request in server.requests() {
        let all = serde_json::Value::from(request.messages()).to_string();
        assert!(
            !all.contains("Fix the bug in") && !all.contains("warmly"),
            "{all}"
        );
    }
}

#[test]
fn claude_local_memory_path_scoped_rules_and_agents_skills_reach_the_model() {
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    project.write(
        "CLAUDE.local.md",
        "Local note: my sandbox DB is on port 5433.\n",
    );
    project.write(
        ".claude/rules/api.md",
        "---\npaths:\n  - \"src/api/**\"\n---\nValidate every request body.\n",
    );
    project.write(
        ".agents/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship the service to staging\n---\nRun make deploy.\n",
    );
    project.trust();
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let out = ling(&project, &server, home.path(), &["-p", "x"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let system = system_prompt(&server);
    assert!(system.contains("port 5433"), "{system}");
    assert!(
        system.contains("matching: src/api/**") && system.contains("Validate every request body."),
        "{system}"
    );
    // The skill is listed in the `skill` tool's description.
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("Ship the service to staging"), "{tools}");
    // claudeCompat off: neither Claude file.
    turn_off(&project, json!({"claudeCompat": false}));
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    ling(&project, &server, home.path(), &["-p", "x"]);
    let system = system_prompt(&server);
    assert!(
        !system.contains("port 5433") && !system.contains("Validate every"),
        "{system}"
    );
}

#[test]
fn codex_hooks_json_runs_with_codex_compat_user_hooks() {
    let home = home_with(&[(
        ".codex/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo 'no deleting here' >&2; exit 2"}]}]}}"#,
    )]);
    let project = Project::new();
    project.write("notes.txt", "keep\n");
    // Off by default: hooks are code, run only when asked for.
    let server = runs("rm notes.txt");
    let out = ling(&project, &server, home.path(), &["-p", "tidy"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("notes.txt").exists());
    project.write("notes.txt", "keep\n");
    turn_off(&project, json!({"codexCompat": {"userHooks": true}}));
    let server = runs("rm notes.txt");
    let out = ling(&project, &server, home.path(), &["-p", "tidy"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(project.file("notes.txt").exists(), "{}", out.stderr);
    assert!(
        tool_result(&server).contains("no deleting here"),
        "{}",
        tool_result(&server)
    );
}
