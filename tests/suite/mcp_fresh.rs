//! A new user's first commands: the repository's own `.ling/mcp.json` on a fresh clone (the
//! build alone, then `ling trust`, then `ling mcp list` shows the SQLite server connected, its
//! demo database created on the way), and `ling mcp get --url` against an ad-hoc server.

use crate::support::{mcphttp, peers, project};

use std::time::Duration;

use project::{Project, run_with};
use serde_json::json;

/// The repository's `.ling/mcp.json` in a temp project whose `target/release/` holds the built
/// server, as a fresh clone has it after `cargo build --release --workspace`.
fn fresh_clone() -> Project {
    let project = Project::new();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(repo.join(".ling/mcp.json")).unwrap();
    project.write(".ling/mcp.json", &config);
    let server = peers::package_bin("ling-sqlite-mcp", "ling-sqlite-mcp");
    let release = project.file("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::os::unix::fs::symlink(&server, release.join("ling-sqlite-mcp")).unwrap();
    project
}

#[test]
fn the_repositorys_own_mcp_json_connects_on_a_fresh_clone() {
    let project = fresh_clone();
    assert!(!project.file("data/demo.sqlite").exists());
    project.trust();
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(["mcp", "list", "--json"]);
    let out = run_with(cmd, None, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{out:?}");
    let servers = out.json()["servers"].clone();
    assert_eq!(
        servers,
        json!([{"name": "sqlite", "transport": "stdio", "status": "connected", "tools": 3, "source": ".ling/mcp.json"}]),
        "{}",
        out.stderr
    );
    assert!(project.file("data/demo.sqlite").is_file());
    // The second run serves the database the first one made.
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args([
        "mcp",
        "call",
        "sqlite",
        "query",
        r#"{"sql":"SELECT count(*) FROM products"}"#,
    ]);
    let out = run_with(cmd, None, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains(r#""rows":[[10]]"#), "{}", out.stdout);
}

fn echo_server(request: &mcphttp::Recorded) -> mcphttp::Reply {
    let id = request.json()["id"].clone();
    match (request.method.as_str(), request.rpc_method().as_str()) {
        ("GET", _) => mcphttp::Reply::Status(405),
        ("DELETE", _) => mcphttp::Reply::Status(200),
        (_, "initialize") => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "adhoc", "version": "7"}}})),
        (_, "tools/list") => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": {
            "tools": [{"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}}]}})),
        (_, "notifications/initialized") | (_, "response") => mcphttp::Reply::Status(202),
        _ => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601, "message": "Method not found"}})),
    }
}

#[test]
fn mcp_get_takes_a_url_as_mcp_call_does() {
    let project = Project::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcphttp::TestServer::start(echo_server));
    let url = format!("{}/mcp", server.base);
    let get = |args: &[&str]| {
        let mut cmd = project.command("http://127.0.0.1:9/v1");
        cmd.args([
            "mcp",
            "get",
            "--url",
            &url,
            "-H",
            "X-Api-Key: GETHEADERMARK",
        ])
        .args(args);
        run_with(cmd, None, Duration::from_secs(30))
    };
    let out = get(&["--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let got = out.json();
    assert_eq!(got["status"], "connected", "{got}");
    assert_eq!(got["serverInfo"]["name"], "adhoc");
    assert_eq!(got["tools"][0]["name"], "echo");
    assert_eq!(got["config"]["url"], url.as_str());
    let text = get(&[]);
    assert_eq!(text.code, Some(0), "{text:?}");
    assert!(text.stdout.contains("server: adhoc 7"), "{}", text.stdout);
    assert!(text.stdout.contains("tools (1):"), "{}", text.stdout);
    assert!(text.stdout.contains("Echoes"), "{}", text.stdout);
    for out in [&out, &text] {
        assert!(!out.stdout.contains("GETHEADERMARK"), "{}", out.stdout);
    }
    // The header reached the server.
    let sent = server.with_method("POST");
    assert!(
        sent.iter()
            .all(|r| r.header("x-api-key") == Some("GETHEADERMARK"))
    );
    // A name and --url together is a usage error.
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(["mcp", "get", "both", "--url", &url]);
    assert_eq!(run_with(cmd, None, Duration::from_secs(10)).code, Some(2));
}
