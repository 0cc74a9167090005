//! Model-facing tool names are stable: servers that sanitise alike are told apart by the config
//! alone (whichever connects first), a collision suffix never takes a real tool's name, and
//! `ling mcp get` shows the names the agent offers.

use crate::support::{mcp, project};

use std::time::Duration;

use ling::mcp::McpManager;
use mcp::{TestEnv, test_server};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn names(manager: &McpManager, server: &str) -> Vec<String> {
    manager
        .tools()
        .into_iter()
        .filter(|t| t.server == server)
        .map(|t| t.exposed_name)
        .filter(|n| !n.contains("__tool_"))
        .collect()
}

fn named(manager: &McpManager, server: &str, name: &str) -> bool {
    names(manager, server).iter().any(|n| n == name)
}

#[tokio::test]
async fn a_servers_names_do_not_move_when_a_lookalike_connects_later() {
    let env = TestEnv::new();
    // `a.b` comes first in the config but connects last.
    let configs = vec![
        env.server("a.b", &["--slow-start", "1500"]),
        env.server(
            "a_b",
            &[
                "--tool-name",
                "x.y",
                "--tool-name",
                "x_y_2",
                "--tool-name",
                "x/y",
            ],
        ),
    ];
    let manager = McpManager::start(configs, env.options());
    let mut status = manager.subscribe();
    status
        .wait_for(|all| all.iter().any(|s| s.name == "a_b" && s.tools > 0))
        .await
        .unwrap();
    let early = names(&manager, "a_b");
    assert!(names(&manager, "a.b").is_empty(), "a.b connected too soon");
    manager.wait_ready().await;
    assert_eq!(names(&manager, "a_b"), early);
    assert!(named(&manager, "a_b", "mcp__a_b__echo"));
    assert!(named(&manager, "a.b", "mcp__a_b_2__echo"));
    // The genuine `x_y_2` keeps its name; the collision of `x.y` and `x/y` goes around it.
    for name in ["mcp__a_b__x_y", "mcp__a_b__x_y_2", "mcp__a_b__x_y_3"] {
        assert!(named(&manager, "a_b", name), "{name} in {early:?}");
    }
    let tools = manager.tools();
    let genuine = tools
        .iter()
        .find(|t| t.exposed_name == "mcp__a_b__x_y_2")
        .expect("no x_y_2");
    assert_eq!(genuine.original_name, "x_y_2");
    manager.shutdown().await;
}

#[test]
fn mcp_get_shows_the_names_the_agent_offers() {
    let project = project::Project::new();
    let server = test_server().display().to_string();
    let config = json!({"mcpServers": {
        "a.b": {"command": server},
        "a_b": {"command": server},
    }});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let exposed = |name: &str| -> Vec<String> {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.args(["mcp", "get", name, "--json"]);
        let out = project::run_with(cmd, None, Duration::from_secs(30));
        assert_eq!(out.code, Some(0), "{out:?}");
        let got: Value = out.json();
        got["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {got}"))
            .iter()
            .filter_map(|t| t["exposedName"].as_str().map(str::to_string))
            .collect()
    };
    let first = exposed("a.b");
    let second = exposed("a_b");
    assert!(first.contains(&"mcp__a_b_2__echo".to_string()), "{first:?}");
    assert!(second.contains(&"mcp__a_b__echo".to_string()), "{second:?}");
}
