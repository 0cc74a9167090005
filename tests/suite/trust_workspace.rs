//! Workspace trust through the real binary: an untrusted project's hooks, MCP servers and
//! settings do not apply in `-p` (one stderr line says so, `project_trust` in the json outputs),
//! `ling trust` makes them apply until the config changes, `--list` and `--revoke`, the user's
//! key never goes to a project's base URL, `permissions.deny` applies anyway, and a project's
//! `disableAllHooks` never turns off the user's hooks.

use crate::support::{mock_openai, project};

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

/// `.ling/hooks.json` with a SessionStart and a PreToolUse (bash) hook touching side-effect files.
fn write_touching_hooks(project: &Project) {
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": "touch started"}]}],
            "PreToolUse": [{"matcher": "bash",
                "hooks": [{"type": "command", "command": "touch pre-tool"}]}],
        }})
        .to_string(),
    );
}

fn bash_then_done(command: &str) -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![("b1", "bash", json!({ "command": command }))]),
        Reply::text("done"),
    ]
}

fn ling_p(project: &Project, server: &MockServer, args: &[&str]) -> Command {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go"]).args(args);
    cmd
}

fn ling_cmd(project: &Project, args: &[&str]) -> Output {
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(args);
    run(cmd)
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

/// The lines of stderr that talk about trust.
fn trust_lines(out: &Output) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.contains("ling trust"))
        .collect()
}

fn remove(project: &Project, names: &[&str]) {
    for name in names {
        let _ = std::fs::remove_file(project.file(name));
    }
}

#[test]
fn project_hooks_run_only_once_trusted_and_again_only_after_a_change_is_trusted() {
    let project = Project::new();
    write_touching_hooks(&project);

    let server = MockServer::start_blocking(bash_then_done("true"));
    let out = run(ling_p(
        &project,
        &server,
        &["--allowed-tools", "bash", "--output-format", "json"],
    ));
    ok(&out);
    assert!(
        !project.file("started").exists(),
        "SessionStart ran untrusted"
    );
    assert!(
        !project.file("pre-tool").exists(),
        "PreToolUse ran untrusted"
    );
    assert_eq!(
        trust_lines(&out),
        [
            "ling: this project is not trusted; skipped .ling/hooks.json (2 hooks); run `ling \
          trust` to use them"
        ]
    );
    assert_eq!(out.json()["project_trust"], "untrusted");
    assert_eq!(server.requests().len(), 2, "the run itself goes on");

    // What CI does: `ling trust . && ling -p ...`.
    ok(&ling_cmd(&project, &["trust", "."]));
    let server = MockServer::start_blocking(bash_then_done("true"));
    let out = run(ling_p(
        &project,
        &server,
        &["--allowed-tools", "bash", "--output-format", "json"],
    ));
    ok(&out);
    assert!(project.file("started").exists());
    assert!(project.file("pre-tool").exists());
    assert_eq!(trust_lines(&out), Vec::<&str>::new());
    assert_eq!(out.json()["project_trust"], "trusted");

    // Any edit of the config lapses the trust.
    remove(&project, &["started", "pre-tool"]);
    let hooks = project.read(".ling/hooks.json");
    project.write(".ling/hooks.json", &format!("{hooks}\n"));
    let server = MockServer::start_blocking(bash_then_done("true"));
    let out = run(ling_p(
        &project,
        &server,
        &["--allowed-tools", "bash", "--output-format", "stream-json"],
    ));
    ok(&out);
    assert!(!project.file("started").exists());
    assert!(!project.file("pre-tool").exists());
    let lines = trust_lines(&out);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("changed since you trusted it"),
        "{}",
        lines[0]
    );
    let events = out.json_lines();
    assert_eq!(events[0]["subtype"], "init");
    assert_eq!(events[0]["project_trust"], "untrusted");
    assert_eq!(
        events.last().unwrap_or(&Value::Null)["project_trust"],
        "untrusted"
    );
}

#[test]
fn trust_list_and_revoke() {
    let project = Project::new();
    write_touching_hooks(&project);
    let root = std::fs::canonicalize(project.path()).unwrap();
    let root = root.display().to_string();

    let out = ling_cmd(&project, &["trust", "--list"]);
    ok(&out);
    assert!(out.stdout.contains("No trusted folders"), "{}", out.stdout);

    let out = ling_cmd(&project, &["trust"]);
    ok(&out);
    assert!(
        out.stdout.contains(&format!("Trusted {root}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("runs `touch started`"),
        "{}",
        out.stdout
    );
    let trust_file = project.home.path().join("trust.json");
    let mode = std::fs::metadata(&trust_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let out = ling_cmd(&project, &["trust", "--list"]);
    ok(&out);
    assert!(out.stdout.starts_with(&root), "{}", out.stdout);
    assert!(out.stdout.contains("config unchanged"), "{}", out.stdout);

    project.write(".ling/settings.json", "{}");
    let out = ling_cmd(&project, &["trust", "--list"]);
    assert!(
        out.stdout.contains("config changed since"),
        "{}",
        out.stdout
    );
    ok(&ling_cmd(&project, &["trust"]));

    let out = ling_cmd(&project, &["trust", "--revoke"]);
    ok(&out);
    assert!(out.stdout.contains("Revoked"), "{}", out.stdout);
    let out = ling_cmd(&project, &["trust", "--list"]);
    assert!(out.stdout.contains("No trusted folders"), "{}", out.stdout);
    let out = ling_cmd(&project, &["trust", "--revoke"]);
    ok(&out);
    assert!(out.stdout.contains("was not trusted"), "{}", out.stdout);

    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let out = run(ling_p(&project, &server, &[]));
    ok(&out);
    assert!(
        !project.file("started").exists(),
        "a revoked project's hook ran"
    );
}

#[test]
fn trust_with_nothing_to_trust_says_so_and_writes_nothing() {
    let project = Project::new();
    let out = ling_cmd(&project, &["trust"]);
    ok(&out);
    assert!(out.stdout.contains("Nothing to trust"), "{}", out.stdout);
    assert!(!project.home.path().join("trust.json").exists());
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let out = run(ling_p(&project, &server, &["--output-format", "json"]));
    ok(&out);
    assert_eq!(out.json()["project_trust"], "none");
    assert_eq!(trust_lines(&out), Vec::<&str>::new());
}

#[test]
fn a_corrupt_trust_file_is_an_error_not_trust() {
    let project = Project::new();
    write_touching_hooks(&project);
    std::fs::write(project.home.path().join("trust.json"), "{ not json").unwrap();
    let server = MockServer::start_blocking(vec![]);
    let out = run(ling_p(&project, &server, &[]));
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("trust.json"), "{}", out.stderr);
    assert!(out.stderr.contains("delete it"), "{}", out.stderr);
    assert!(!project.file("started").exists());
    assert!(server.requests().is_empty());
}

#[test]
fn ling_home_is_created_owner_only_for_the_trust_file() {
    let project = Project::new();
    write_touching_hooks(&project);
    let home = project.home.path().join("fresh/ling");
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.env("LING_HOME", &home).arg("trust");
    ok(&run(cmd));
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("trust.json")), 0o600);
}

/// User settings (in LING_HOME) say where the model is; the environment does not, so that a
/// trusted project's `baseUrl` could win.
fn user_base_url(project: &Project, server: &MockServer) -> Command {
    std::fs::write(
        project.home.path().join("settings.json"),
        json!({ "baseUrl": server.base_url() }).to_string(),
    )
    .unwrap();
    let mut cmd = project.command("unused");
    cmd.env_remove("OPENAI_BASE_URL").args(["-p", "hi"]);
    cmd
}

#[test]
fn an_untrusted_base_url_never_receives_the_key() {
    let user = MockServer::start_blocking(vec![Reply::text("from the user's server")]);
    let other = MockServer::start_blocking(vec![Reply::text("from the project's server")]);
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        &json!({ "baseUrl": other.base_url() }).to_string(),
    );
    let mut cmd = user_base_url(&project, &user);
    cmd.env("OPENAI_API_KEY", "sk-user-secret");
    let out = run(cmd);
    ok(&out);
    assert_eq!(out.stdout.trim(), "from the user's server");
    assert!(
        other.requests().is_empty(),
        "the project's base URL was used"
    );
    assert_eq!(
        user.requests()[0].header("authorization"),
        Some("Bearer sk-user-secret")
    );

    // Trusted, the project's base URL applies: the check above can fail.
    project.trust();
    let mut cmd = user_base_url(&project, &user);
    cmd.env("OPENAI_API_KEY", "sk-user-secret");
    let out = run(cmd);
    ok(&out);
    assert_eq!(out.stdout.trim(), "from the project's server");
    assert_eq!(other.requests().len(), 1);
}

#[test]
fn an_untrusted_api_key_env_never_sends_that_variable() {
    let server = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    let project = Project::new();
    project.write(".ling/settings.json", r#"{"apiKeyEnv": "GITHUB_TOKEN"}"#);
    let with_env = |project: &Project| {
        let mut cmd = ling_p(project, &server, &[]);
        cmd.env("GITHUB_TOKEN", "ghp_not_for_the_model")
            .env("OPENAI_API_KEY", "sk-user");
        cmd
    };
    ok(&run(with_env(&project)));
    let first = &server.requests()[0];
    assert_eq!(first.header("authorization"), Some("Bearer sk-user"));
    let sent = format!("{:?} {}", first.headers, first.body);
    assert!(!sent.contains("ghp_not_for_the_model"), "{sent}");

    project.trust();
    ok(&run(with_env(&project)));
    assert_eq!(
        server.requests()[1].header("authorization"),
        Some("Bearer ghp_not_for_the_model")
    );
}

#[test]
fn an_untrusted_default_mode_is_ignored_but_its_deny_rules_apply() {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        r#"{"permissions": {"defaultMode": "bypass"}}"#,
    );
    let server = MockServer::start_blocking(bash_then_done("touch bypassed"));
    // Without the shell sandbox, which would let bash run in the project root anyway.
    let out = run(ling_p(&project, &server, &["--sandbox", "off"]));
    ok(&out);
    assert!(
        !project.file("bypassed").exists(),
        "project bypass applied untrusted"
    );
    assert!(out.stderr.contains("permission denied"), "{}", out.stderr);

    project.trust();
    let server = MockServer::start_blocking(bash_then_done("touch bypassed"));
    ok(&run(ling_p(&project, &server, &[])));
    assert!(
        project.file("bypassed").exists(),
        "trusted bypass did not apply"
    );

    // Deny rules only narrow: they apply untrusted, even over the user's own bypass flag.
    project.write(
        ".ling/settings.json",
        r#"{"permissions": {"deny": ["bash(touch*)"]}}"#,
    );
    let server = MockServer::start_blocking(bash_then_done("touch denied"));
    let out = run(ling_p(&project, &server, &["--permission-mode", "bypass"]));
    ok(&out);
    assert!(
        !project.file("denied").exists(),
        "an untrusted deny rule did not apply"
    );
    assert!(
        out.stderr
            .contains(".ling/settings.json (except permissions.deny)"),
        "{}",
        out.stderr
    );
}

#[test]
fn project_disable_all_hooks_leaves_the_users_hooks_running() {
    let project = Project::new();
    std::fs::write(
        project.home.path().join("hooks.json"),
        json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "touch user-hook"}]}]}})
        .to_string(),
    )
    .unwrap();
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "touch project-hook"}]}]}})
        .to_string(),
    );
    project.write(".ling/settings.json", r#"{"disableAllHooks": true}"#);
    project.trust();
    let server = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    ok(&run(ling_p(&project, &server, &[])));
    assert!(
        project.file("user-hook").exists(),
        "the user's hook was turned off"
    );
    assert!(!project.file("project-hook").exists());

    let out = ling_cmd(&project, &["hooks", "list"]);
    ok(&out);
    assert!(out.stdout.contains("touch user-hook"), "{}", out.stdout);
    assert!(!out.stdout.contains("touch project-hook"), "{}", out.stdout);

    // --no-hooks still turns off every hook.
    remove(&project, &["user-hook"]);
    ok(&run(ling_p(&project, &server, &["--no-hooks"])));
    assert!(!project.file("user-hook").exists());
}

#[test]
fn hooks_list_and_run_leave_an_untrusted_projects_hooks_out_and_say_so() {
    let project = Project::new();
    write_touching_hooks(&project);
    let out = ling_cmd(&project, &["hooks", "list"]);
    ok(&out);
    assert!(!out.stdout.contains("touch started"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains(".ling/hooks.json (2 hooks) not loaded: this project is not trusted"),
        "{}",
        out.stdout
    );
    let out = ling_cmd(&project, &["hooks", "run", "SessionStart"]);
    ok(&out);
    assert!(!project.file("started").exists());
    assert!(out.stderr.contains("not trusted"), "{}", out.stderr);

    project.trust();
    let out = ling_cmd(&project, &["hooks", "list"]);
    assert!(out.stdout.contains("touch started"), "{}", out.stdout);
    ok(&ling_cmd(&project, &["hooks", "run", "SessionStart"]));
    assert!(project.file("started").exists());
}

/// A project server whose start would leave a file behind.
fn write_touching_server(project: &Project) {
    project.write(
        ".ling/mcp.json",
        &json!({"mcpServers": {"srv": {"command": "sh",
            "args": ["-c", "touch server-started; exit 1"]}}})
        .to_string(),
    );
}

#[test]
fn an_untrusted_projects_servers_are_listed_untrusted_and_never_started() {
    let project = Project::new();
    write_touching_server(&project);
    let out = ling_cmd(&project, &["mcp", "list"]);
    ok(&out);
    assert!(
        out.stdout.contains("srv (stdio): untrusted"),
        "{}",
        out.stdout
    );
    let out = ling_cmd(&project, &["mcp", "list", "--json"]);
    ok(&out);
    assert_eq!(
        out.json(),
        json!({"servers": [{"name": "srv", "transport": "stdio", "status": "untrusted", "tools": 0}]})
    );
    for args in [
        &["mcp", "call", "srv", "tool", "{}"][..],
        &["mcp", "get", "srv"],
    ] {
        let out = ling_cmd(&project, args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(out.stderr.contains("ling trust"), "{}", out.stderr);
    }
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let out = run(ling_p(&project, &server, &[]));
    ok(&out);
    assert!(
        out.stderr.contains(".ling/mcp.json (1 server)"),
        "{}",
        out.stderr
    );
    assert!(
        !project.file("server-started").exists(),
        "an untrusted server started"
    );

    project.trust();
    let out = ling_cmd(&project, &["mcp", "list"]);
    ok(&out);
    assert!(out.stdout.contains("srv (stdio): failed"), "{}", out.stdout);
    assert!(project.file("server-started").exists());
}

#[test]
fn mcp_add_in_a_folder_without_project_config_keeps_it_usable() {
    let project = Project::new();
    let out = ling_cmd(
        &project,
        &[
            "mcp",
            "add",
            "srv",
            "--",
            "sh",
            "-c",
            "touch server-started; exit 1",
        ],
    );
    ok(&out);
    let out = ling_cmd(&project, &["mcp", "list"]);
    assert!(out.stdout.contains("srv (stdio): failed"), "{}", out.stdout);

    // An untrusted folder stays untrusted after an edit.
    let other = Project::new();
    write_touching_hooks(&other);
    ok(&ling_cmd(&other, &["mcp", "add", "srv", "--", "true"]));
    let out = ling_cmd(&other, &["mcp", "list"]);
    assert!(
        out.stdout.contains("srv (stdio): untrusted"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_dot_ling_that_is_ling_home_is_user_config_loaded_once() {
    let project = Project::new();
    let home = project.path().join(".ling");
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "echo ran >> hook-runs"}]}]}})
        .to_string(),
    );
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let mut cmd = ling_p(&project, &server, &["--output-format", "json"]);
    cmd.env("LING_HOME", &home);
    let out = run(cmd);
    ok(&out);
    assert_eq!(out.json()["project_trust"], "none");
    assert_eq!(project.read("hook-runs"), "ran\n");
    assert_eq!(trust_lines(&out), Vec::<&str>::new());
}

#[test]
fn a_project_at_home_is_never_a_project_layer() {
    let project = Project::new();
    write_touching_hooks(&project);
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    // HOME is the project root; LING_HOME (the user's config) is elsewhere: `~/.ling` there is
    // not a project layer, so nothing is asked, skipped or run.
    let mut cmd = ling_p(&project, &server, &["--output-format", "json"]);
    cmd.env("HOME", project.path());
    let out = run(cmd);
    ok(&out);
    assert_eq!(out.json()["project_trust"], "none");
    assert_eq!(trust_lines(&out), Vec::<&str>::new());
    assert!(!project.file("started").exists());
}
