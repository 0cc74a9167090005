//! MCP servers changed while Ling runs, through the real binary: config files edited during a
//! session are picked up at the next turn (a trusted project's change lapses its trust, so its
//! servers do not start until it is trusted again), the model's tool list follows, a server is
//! switched off and on (`/mcp disable|enable`, the SDK's `mcp_toggle`) and the choice is kept
//! for the project, and each status change is a `system`/`mcp_status` message.

use crate::support::mcp::test_server;
use crate::support::stream_json::StreamSession;
use crate::support::{mock_openai, project};

use std::time::Duration;

use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::spawn_command;
use serde_json::{Value, json};

fn server_entry() -> Value {
    json!({"command": test_server(), "startupTimeoutMs": 10000})
}

fn is_result(line: &Value) -> bool {
    line["type"] == "result"
}

fn mcp_tools(request: &mock_openai::Recorded) -> Vec<String> {
    let mut names: Vec<String> = request
        .tool_names()
        .into_iter()
        .filter(|n| n.starts_with("mcp__") && n.ends_with("__echo"))
        .collect();
    names.sort();
    names
}

#[test]
fn config_edits_apply_at_the_next_turn_and_a_switch_is_kept() {
    let project = Project::new();
    let user_file = project.home.path().join("mcp.json");
    std::fs::write(
        &user_file,
        json!({"mcpServers": {"a": server_entry()}}).to_string(),
    )
    .unwrap();
    project.write(
        ".ling/mcp.json",
        &json!({"mcpServers": {"p": server_entry()}}).to_string(),
    );
    project.trust();
    let server = MockServer::start_blocking(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ]);
    let mut session = StreamSession::start(&project, &server, &[]);
    session.prompt("first");
    session.read_until(is_result);
    assert_eq!(
        mcp_tools(&server.requests()[0]),
        ["mcp__a__echo", "mcp__p__echo"]
    );

    // The user's file now names `b` instead of `a`; the project's adds `q`, which lapses its
    // trust: nobody can be asked here, so the project's servers stop.
    std::fs::write(
        &user_file,
        json!({"mcpServers": {"b": server_entry()}}).to_string(),
    )
    .unwrap();
    project.write(
        ".ling/mcp.json",
        &json!({"mcpServers": {"p": server_entry(), "q": server_entry()}}).to_string(),
    );
    session.prompt("second");
    let lines = session.read_until(is_result);
    let statuses: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "mcp_status")
        .map(|l| {
            (
                l["name"].as_str().unwrap_or_default().to_string(),
                l["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("a".into(), "disabled".into())),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("p".into(), "disabled".into())),
        "{statuses:?}"
    );
    assert_eq!(mcp_tools(&server.requests()[1]), ["mcp__b__echo"]);

    // mcp_status and mcp_toggle through the control channel.
    session.send(json!({"type": "control_request", "request_id": "s1",
                        "request": {"subtype": "mcp_status"}}));
    let status = session.read_until(|l| l["type"] == "control_response");
    let servers = &status
        .last()
        .map(|l| l["response"]["response"]["mcpServers"].clone());
    assert_eq!(
        servers.clone().unwrap_or_default()[0]["status"],
        json!("connected"),
        "{servers:?}"
    );
    session.send(json!({"type": "control_request", "request_id": "t1",
                        "request": {"subtype": "mcp_toggle", "serverName": "b", "enabled": false}}));
    let toggled = session.read_until(|l| l["type"] == "control_response");
    assert_eq!(
        toggled.last().map(|l| l["response"]["subtype"].clone()),
        Some(json!("success")),
        "{toggled:?}"
    );
    session.prompt("third");
    session.read_until(is_result);
    assert!(mcp_tools(&server.requests()[2]).is_empty());
    session.finish();
    // The switch is kept for this project, in the user's settings.
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.home.path().join("settings.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    let root = std::fs::canonicalize(project.path()).unwrap_or_default();
    assert_eq!(
        settings["projects"][root.to_string_lossy().as_ref()]["disabledMcpServers"],
        json!(["b"])
    );
}

#[test]
fn the_repl_asks_again_before_a_changed_project_config_starts_and_keeps_a_switch() {
    let project = Project::new();
    project.write(
        ".ling/mcp.json",
        &json!({"mcpServers": {"p": server_entry()}}).to_string(),
    );
    project.trust();
    let server = MockServer::start_blocking(vec![Reply::text("one")]);
    let repl = |project: &Project| {
        let mut cmd = project.command(&server.base_url());
        cmd.env("TERM", "xterm");
        spawn_command(cmd, Some(30_000)).expect("spawn in a pty")
    };
    let mut p = repl(&project);
    p.exp_string("> ").unwrap();
    p.send_line("/mcp disable p").unwrap();
    p.exp_string("disabled").unwrap();
    p.exp_string("> ").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();

    // The next session keeps it off; enable turns it on again.
    let mut p = repl(&project);
    p.exp_string("> ").unwrap();
    p.send_line("/mcp").unwrap();
    p.exp_string("disabled").unwrap();
    p.exp_string("> ").unwrap();
    p.send_line("/mcp enable p").unwrap();
    p.exp_string("connected").unwrap();
    p.exp_string("> ").unwrap();

    // An edit of the project's file asks again before the next turn.
    project.write(
        ".ling/mcp.json",
        &json!({"mcpServers": {"p": server_entry(), "q": server_entry()}}).to_string(),
    );
    p.send_line("go").unwrap();
    p.exp_string("changed since you trusted it").unwrap();
    p.exp_string("[t]").unwrap();
    p.send_line("t").unwrap();
    p.exp_string("one").unwrap();
    p.exp_string("> ").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(
        mcp_tools(&server.requests()[0]),
        ["mcp__p__echo", "mcp__q__echo"]
    );
}

#[test]
fn apply_restarts_only_the_servers_whose_config_changed() {
    use crate::support::mcp::TestEnv;
    let env = TestEnv::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let keep = env.server("keep", &[]);
        let change = env.server("change", &[]);
        let manager = env.start(vec![keep.clone(), change.clone()]).await;
        let mut changed = env.server("change", &["--extra-tools", "1"]);
        changed.startup_timeout = Duration::from_secs(11);
        let gone = env.server("new", &[]);
        let applied = manager.apply(vec![keep.clone(), changed, gone]).await;
        assert_eq!(applied.added, ["new"]);
        assert_eq!(applied.changed, ["change"]);
        assert!(applied.removed.is_empty());
        manager.wait_ready().await;
        let initializes = |name: &str| {
            std::fs::read_to_string(env.received_log(name))
                .unwrap_or_default()
                .matches("\"initialize\"")
                .count()
        };
        assert_eq!(initializes("keep"), 1, "an unchanged server was restarted");
        assert_eq!(initializes("change"), 2);
        assert!(
            manager
                .tools()
                .iter()
                .any(|t| t.exposed_name == "mcp__change__tool_0")
        );
        let applied = manager.apply(vec![keep]).await;
        assert_eq!(applied.removed, ["change", "new"]);
        assert!(manager.tools().iter().all(|t| t.server == "keep"));
        manager.set_enabled("keep", false).await.unwrap();
        assert!(manager.tools().is_empty());
        manager.set_enabled("keep", true).await.unwrap();
        assert!(!manager.tools().is_empty());
        assert!(manager.set_enabled("nope", true).await.is_err());
        manager.shutdown().await;
    });
}
