//! The real `ling` binary against the npm reference servers over stdio (server-everything,
//! server-filesystem, server-memory at pinned versions, run by Node 22 from `.cache/npm`;
//! `scripts/install-peers.sh`): `ling mcp list --json`, `ling mcp call` on each, and a `ling -p`
//! run in which the mock model calls two of their tools. Fails when the servers are not installed.

use crate::support::{mcp, mock_openai, project};

use std::process::Command;
use std::time::Duration;

use mcp::Peers;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run_with};
use serde_json::{Value, json};

/// A loaded 2-core machine starts three Node servers slowly; this bounds each `ling` run.
const LIMIT: Duration = Duration::from_secs(90);

/// A project whose `.ling/mcp.json` names the three servers, with `shared/hello.txt` inside the
/// project root (server-filesystem narrows its allowed directories to Ling's root) and the
/// memory server's file in the project's temp dir.
fn configured(peers: &Peers) -> Project {
    let project = Project::new();
    project.write("shared/hello.txt", "hello from the project\n");
    let script = |package: &str| {
        peers
            .modules
            .join("@modelcontextprotocol")
            .join(package)
            .join("dist/index.js")
            .display()
            .to_string()
    };
    let node = peers.node.display().to_string();
    let config = json!({"mcpServers": {
        "everything": {"command": node, "args": [script("server-everything"), "stdio"],
                       "startupTimeoutMs": 60000},
        "filesystem": {"command": node,
                       "args": [script("server-filesystem"), shared(&project)],
                       "startupTimeoutMs": 60000},
        "memory": {"command": node, "args": [script("server-memory")],
                   "env": {"MEMORY_FILE_PATH": memory_file(&project)},
                   "startupTimeoutMs": 60000},
    }});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    project
}

fn shared(project: &Project) -> String {
    project.file("shared").display().to_string()
}

fn memory_file(project: &Project) -> String {
    project.file("memory.jsonl").display().to_string()
}

/// `ling <args>` in the project; no model is contacted by the `mcp` subcommands.
fn ling(project: &Project, base_url: &str, args: &[&str]) -> Output {
    let mut cmd: Command = project.command(base_url);
    cmd.args(args);
    run_with(cmd, None, LIMIT)
}

fn call(project: &Project, server: &str, tool: &str, args: Value) -> Output {
    let args = args.to_string();
    let out = ling(
        project,
        "http://127.0.0.1:9",
        &["mcp", "call", server, tool, &args],
    );
    assert_eq!(
        out.code,
        Some(0),
        "ling mcp call {server} {tool}: stdout {}\nstderr {}",
        out.stdout,
        out.stderr
    );
    out
}

#[test]
fn mcp_list_shows_the_three_servers_connected_with_their_tools() {
    let peers = Peers::require();
    let project = configured(&peers);
    let out = ling(&project, "http://127.0.0.1:9", &["mcp", "list", "--json"]);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let servers = out.json()["servers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for server in &servers {
        let name = server["name"].as_str().unwrap_or_default().to_string();
        let tools = server["tools"].as_u64().unwrap_or(0);
        assert!(tools >= 5, "{name} lists {tools} tools: {server}");
        seen.push((
            name,
            server["transport"].as_str().unwrap_or_default().to_string(),
            server["status"].as_str().unwrap_or_default().to_string(),
        ));
    }
    seen.sort();
    let expected: Vec<(String, String, String)> = ["everything", "filesystem", "memory"]
        .iter()
        .map(|n| (n.to_string(), "stdio".to_string(), "connected".to_string()))
        .collect();
    assert_eq!(seen, expected, "{}", out.stdout);
}

#[test]
fn mcp_call_reaches_each_reference_server() {
    let peers = Peers::require();
    let project = configured(&peers);

    let echo = call(&project, "everything", "echo", json!({"message": "hi"}));
    assert_eq!(echo.stdout.trim(), "Echo: hi", "stderr: {}", echo.stderr);

    let listing = call(
        &project,
        "filesystem",
        "list_directory",
        json!({"path": shared(&project)}),
    );
    assert!(
        listing.stdout.contains("[FILE] hello.txt"),
        "{}",
        listing.stdout
    );

    // Two processes: the entity must survive in MEMORY_FILE_PATH (given through mcp.json's env).
    let entities = json!({"entities": [
        {"name": "Ling", "entityType": "agent", "observations": ["speaks MCP over stdio"]}
    ]});
    call(&project, "memory", "create_entities", entities);
    let saved =
        std::fs::read_to_string(memory_file(&project)).expect("the memory server wrote no file");
    assert!(saved.contains("speaks MCP over stdio"), "{saved}");
    let graph = call(&project, "memory", "read_graph", json!({}));
    assert!(
        graph.stdout.contains("speaks MCP over stdio"),
        "{}",
        graph.stdout
    );
}

#[test]
fn the_model_calls_reference_server_tools_in_print_mode() {
    let peers = Peers::require();
    let project = configured(&peers);
    let hello = project.file("shared/hello.txt").display().to_string();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("c1", "mcp__everything__echo", json!({"message": "ping"})),
            (
                "c2",
                "mcp__filesystem__read_text_file",
                json!({"path": hello}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let out = ling(
        &project,
        &server.base_url(),
        &[
            "-p",
            "use the tools",
            "--allowed-tools",
            "mcp__*",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(result["result"], "done", "{result}");
    let mut statuses: Vec<Value> = result["mcp_servers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    statuses.sort_by_key(|s| s["name"].to_string());
    assert_eq!(
        Value::Array(statuses),
        json!([
            {"name": "everything", "status": "connected"},
            {"name": "filesystem", "status": "connected"},
            {"name": "memory", "status": "connected"},
        ])
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one tool round, one answer");
    let offered = requests[0].tool_names();
    for name in [
        "mcp__everything__echo",
        "mcp__filesystem__read_text_file",
        "mcp__memory__read_graph",
    ] {
        assert!(
            offered.contains(&name.to_string()),
            "{name} not in {offered:?}"
        );
    }
    let results: Vec<(String, String)> = requests[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("c1".to_string(), "Echo: ping".to_string()),
            ("c2".to_string(), "hello from the project\n".to_string()),
        ]
    );
}
