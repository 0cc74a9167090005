//! `ling mcp` through the real binary: `add` takes its flags where the docs write them, and `get`
//! and `list` never show a secret, in the config or in an error.

use crate::support::{mcp, project};

use std::time::Duration;

use mcp::test_server;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

fn ling(project: &project::Project, args: &[&str]) -> project::Output {
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(args).env("SECRET_TOK", "hunter2");
    project::run_with(cmd, None, LIMIT)
}

fn servers(project: &project::Project) -> Value {
    let text = project.read(".ling/mcp.json");
    let file: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    file["mcpServers"].clone()
}

#[test]
fn add_takes_headers_after_the_url_and_stdio_flags_before_the_command() {
    let project = project::Project::new();
    let args = [
        "mcp",
        "add",
        "--transport",
        "http",
        "remote",
        "http://127.0.0.1:9/mcp",
        "-H",
        "Authorization: Bearer t",
        "--header",
        "X-A: 1",
    ];
    let out = ling(&project, &args);
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = ling(
        &project,
        &["mcp", "add", "local", "-e", "K=V", "--", "srv", "-H", "x"],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = ling(
        &project,
        &[
            "mcp",
            "add",
            "-H",
            "X-B: 2",
            "--transport",
            "sse",
            "old",
            "http://h/sse",
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        servers(&project),
        json!({
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer t", "X-A": "1"}},
            "local": {"command": "srv", "args": ["-H", "x"], "env": {"K": "V"}},
            "old": {"type": "sse", "url": "http://h/sse", "headers": {"X-B": "2"}},
        })
    );
    let out = ling(
        &project,
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "r2",
            "http://a",
            "http://b",
        ],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("exactly one URL"), "{out:?}");
}

#[test]
fn get_and_list_show_templates_not_secrets() {
    let project = project::Project::new();
    let config = json!({"mcpServers": {
        "local": {"command": test_server().display().to_string(),
            "args": ["--api-key", "${SECRET_TOK}", "--exit-immediately"]},
        "missing": {"command": "/nonexistent/${SECRET_TOK}/server"},
        "remote": {"url": "http://user:pw@127.0.0.1:9/mcp?api_key=${SECRET_TOK}",
            "headers": {"Authorization": "Bearer ${SECRET_TOK}"}},
    }});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut shown = String::new();
    for args in [
        &["mcp", "get", "local"][..],
        &["mcp", "get", "local", "--json"],
        &["mcp", "get", "remote"],
        &["mcp", "get", "remote", "--json"],
        &["mcp", "get", "missing"],
        &["mcp", "list"],
        &["mcp", "list", "--json"],
    ] {
        let out = ling(&project, args);
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        shown.push_str(&out.stdout);
        shown.push_str(&out.stderr);
    }
    for secret in ["hunter2", "pw@", "user:"] {
        assert!(!shown.contains(secret), "{secret:?} shown:\n{shown}");
    }
    let local = ling(&project, &["mcp", "get", "local", "--json"]).json();
    assert_eq!(
        local["config"]["args"],
        json!(["--api-key", "${SECRET_TOK}", "--exit-immediately"])
    );
    let remote = ling(&project, &["mcp", "get", "remote", "--json"]).json();
    assert_eq!(
        remote["config"]["url"],
        json!("http://***@127.0.0.1:9/mcp?api_key=***")
    );
    assert_eq!(remote["status"], json!("failed"), "{remote}");
    let missing = ling(&project, &["mcp", "get", "missing", "--json"]).json();
    let error = missing["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("/nonexistent/${SECRET_TOK}/server"),
        "{missing}"
    );
}
