//! Claude Code plugins already on disk, through the real binary: from `--plugin-dir` and from
//! `enabledPlugins` with a marketplace that is a local folder, their commands (`/PLUGIN:cmd`),
//! hooks (`${CLAUDE_PLUGIN_ROOT}` expanded) and MCP servers (`mcp__plugin_PLUGIN_server__tool`);
//! a project's enabled plugin only in a trusted project; `ling plugin list`, which says what a
//! GitHub source would fetch. Each with its negative.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::{Output, Project, ling_bin, run};
use serde_json::json;

/// A plugin `tools` in `dir`: a command, a hook that blocks `rm` through a script of its own,
/// and `ling mcp serve` as its MCP server `ling`.
fn write_plugin(dir: &std::path::Path) {
    let files = [
        (
            ".claude-plugin/plugin.json",
            json!({"name": "tools", "version": "1.0.0"}).to_string(),
        ),
        (
            "commands/greet.md",
            "Greet $ARGUMENTS politely.\n".to_string(),
        ),
        (
            "block.sh",
            "#!/bin/sh\necho 'plugin says no' >&2\nexit 2\n".to_string(),
        ),
        (
            "hooks/hooks.json",
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/block.sh"}]}]}})
            .to_string(),
        ),
        (
            ".mcp.json",
            json!({"mcpServers": {"ling": {"command": ling_bin(), "args": ["mcp", "serve"]}}})
                .to_string(),
        ),
    ];
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn ling(project: &Project, server: &MockServer, home: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .args(args);
    run(cmd)
}

/// Runs `/tools:greet Ada` then a bash `rm`; returns the server.
fn greet_and_remove(project: &Project, home: &std::path::Path, args: &[&str]) -> MockServer {
    project.write("notes.txt", "keep\n");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "rm notes.txt"}))]),
        Reply::text("done"),
    ]);
    let mut all = vec!["-p", "/tools:greet Ada"];
    all.extend_from_slice(args);
    let out = ling(project, &server, home, &all);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    server
}

fn first_prompt(server: &MockServer) -> String {
    server.requests()[0]
        .messages()
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn a_plugin_dir_brings_its_command_hook_and_mcp_server() {
    let plugin = tempfile::tempdir().unwrap();
    write_plugin(plugin.path());
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    let dir = plugin.path().to_string_lossy().into_owned();
    let server = greet_and_remove(&project, home.path(), &["--plugin-dir", &dir]);
    assert!(
        first_prompt(&server).contains("Greet Ada politely."),
        "{}",
        first_prompt(&server)
    );
    assert!(
        project.file("notes.txt").exists(),
        "the plugin's hook did not block rm"
    );
    let tools = server.requests()[0].tool_names();
    assert!(
        tools.contains(&"mcp__plugin_tools_ling__read_file".to_string()),
        "{tools:?}"
    );
    // Without it: no command, no hook, no server.
    let server = greet_and_remove(&project, home.path(), &[]);
    assert!(!first_prompt(&server).contains("politely"));
    assert!(!project.file("notes.txt").exists());
    let tools = server.requests()[0].tool_names();
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__plugin_")),
        "{tools:?}"
    );
}

/// A marketplace folder holding the plugin `tools`, and listing one on GitHub.
fn marketplace() -> tempfile::TempDir {
    let market = tempfile::tempdir().unwrap();
    write_plugin(&market.path().join("plugins/tools"));
    let catalog = json!({"name": "local", "plugins": [
        {"name": "tools", "source": "./plugins/tools"},
        {"name": "remote", "source": {"source": "github", "repo": "acme/remote-plugin"}},
    ]});
    let path = market.path().join(".claude-plugin/marketplace.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, catalog.to_string()).unwrap();
    market
}

fn enabling(market: &std::path::Path) -> String {
    json!({
        "enabledPlugins": {"tools@local": true, "remote@local": true},
        "extraKnownMarketplaces": {"local": {"source": {"source": "directory", "path": market}}},
    })
    .to_string()
}

#[test]
fn enabled_plugins_load_from_a_local_marketplace_and_a_remote_one_says_what_it_would_fetch() {
    let market = marketplace();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        enabling(market.path()),
    )
    .unwrap();
    let project = Project::new();
    let server = greet_and_remove(&project, home.path(), &[]);
    assert!(first_prompt(&server).contains("Greet Ada politely."));
    assert!(project.file("notes.txt").exists());
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.env("HOME", home.path()).args(["plugin", "list"]);
    let listed = run(cmd);
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    assert!(
        listed.stdout.contains("tools  (tools@local)"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains("commands 1, hooks, MCP servers 1"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains("plugin remote@local is not loaded: it would be fetched from https://github.com/acme/remote-plugin"),
        "{}",
        listed.stdout
    );
    // claudeCompat.userFiles off: not loaded.
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"claudeCompat": {"userFiles": false}}"#,
    )
    .unwrap();
    let server = greet_and_remove(&project, home.path(), &[]);
    assert!(!first_prompt(&server).contains("politely"));
}

#[test]
fn a_project_s_enabled_plugin_loads_only_when_the_project_is_trusted() {
    let market = marketplace();
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    project.write(".claude/settings.json", &enabling(market.path()));
    let server = greet_and_remove(&project, home.path(), &[]);
    assert!(!first_prompt(&server).contains("politely"));
    assert!(!project.file("notes.txt").exists());
    project.trust();
    let server = greet_and_remove(&project, home.path(), &[]);
    assert!(first_prompt(&server).contains("Greet Ada politely."));
    assert!(project.file("notes.txt").exists());
}
