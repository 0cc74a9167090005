//! The MCP host against the real reference servers from npm over stdio (server-everything,
//! server-filesystem, server-memory at pinned versions; `scripts/install-peers.sh`). Fails when
//! they are not installed.

use crate::support::mcp;

use ling::mcp::{McpManager, ServerState};
use mcp::{Peers, TestEnv};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn the_three_reference_servers_work() {
    let peers = Peers::require();
    let env = TestEnv::new();
    let shared = env.paths.project_root.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("hello.txt"), "hi").unwrap();
    let memory_file = env.dir.path().join("memory.jsonl");
    let configs = vec![
        peers.server(&env, "server-everything", &["stdio".into()], &[]),
        peers.server(
            &env,
            "server-filesystem",
            &[shared.display().to_string()],
            &[],
        ),
        peers.server(
            &env,
            "server-memory",
            &[],
            &[("MEMORY_FILE_PATH", memory_file.display().to_string())],
        ),
    ];
    let manager = McpManager::start(configs, env.options());
    manager.wait_ready().await;
    for status in manager.statuses() {
        assert_eq!(status.state, ServerState::Connected, "{}", status.name);
        assert!(status.tools > 5, "{}: {} tools", status.name, status.tools);
    }
    let names: Vec<String> = manager
        .tools()
        .into_iter()
        .map(|t| t.exposed_name)
        .collect();
    for expected in [
        "mcp__everything__echo",
        "mcp__filesystem__list_directory",
        "mcp__memory__read_graph",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} not in {names:?}"
        );
    }
    // Tools that need task augmentation are hidden; schemas lose `$schema`.
    assert!(!names.contains(&"mcp__everything__simulate-research-query".to_string()));
    assert!(
        manager
            .tools()
            .iter()
            .all(|t| t.input_schema.get("$schema").is_none())
    );
    let call = |tool: &'static str, args: Value| {
        let manager = manager.clone();
        async move {
            manager
                .call_tool(tool, args, &CancellationToken::new(), None)
                .await
                .unwrap()
        }
    };

    let echo = call("mcp__everything__echo", json!({"message": "hello"})).await;
    assert_eq!((echo.text.as_str(), echo.is_error), ("Echo: hello", false));

    // server-everything sends list_changed after initialized (and more once roots are used).
    manager.refresh_if_changed().await;

    // server-filesystem replaces its allowed directories with Ling's roots (the project root),
    // so list the shared dir inside it.
    let listing = call(
        "mcp__filesystem__list_directory",
        json!({"path": shared.display().to_string()}),
    )
    .await;
    assert!(!listing.is_error, "{}", listing.text);
    assert!(
        listing.text.contains("[FILE] hello.txt"),
        "{}",
        listing.text
    );
    let outside = call("mcp__filesystem__list_directory", json!({"path": "/"})).await;
    assert!(outside.is_error, "{}", outside.text);

    let created = call(
        "mcp__memory__create_entities",
        json!({"entities": [{"name": "Ling", "entityType": "agent", "observations": ["speaks MCP"]}]}),
    )
    .await;
    assert!(!created.is_error, "{}", created.text);
    let graph = call("mcp__memory__read_graph", json!({})).await;
    assert!(graph.text.contains("speaks MCP"), "{}", graph.text);
    assert!(
        std::fs::read_to_string(&memory_file)
            .unwrap()
            .contains("Ling")
    );
    manager.shutdown().await;
}
