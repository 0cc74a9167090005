//! `ling-sqlite-mcp` driven through raw JSON-RPC over its stdio: the handshake and version
//! negotiation, the tools and resources, logging levels, the command line, and bad input of every
//! kind. The read-only guarantees and the timeout are in `readonly.rs`.

use std::time::Duration;

use crate::support::{Server, demo, path_str, row_counts, run, text};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[test]
fn initialize_negotiates_the_protocol_version() {
    let d = demo();
    for (offered, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut s = Server::spawn(&d.db, &[]);
        let resp = s.initialize(offered);
        let result = &resp["result"];
        assert_eq!(result["protocolVersion"], answered, "offered {offered}");
        assert_eq!(result["serverInfo"]["name"], "ling-sqlite-mcp");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        let caps = result["capabilities"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut keys: Vec<&str> = caps.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["logging", "resources", "tools"]);
        let instructions = result["instructions"].as_str().unwrap_or_default();
        assert!(instructions.contains("list_tables"), "{instructions}");
    }
}

#[test]
fn initialize_without_a_version_is_invalid_params() {
    let d = demo();
    let mut s = Server::spawn(&d.db, &[]);
    let resp = s.request("initialize", json!({"capabilities": {}}));
    assert_eq!(resp["error"]["code"], -32602, "{resp}");
}

#[test]
fn tools_list_declares_schemas_and_read_only_annotations() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let tools = s.ok("tools/list", json!({}))["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["list_tables", "describe_table", "query"]);
    for tool in tools.as_array().into_iter().flatten() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        let a = &tool["annotations"];
        assert_eq!(
            (
                &a["readOnlyHint"],
                &a["destructiveHint"],
                &a["idempotentHint"],
                &a["openWorldHint"]
            ),
            (&json!(true), &json!(false), &json!(true), &json!(false)),
            "{tool}"
        );
    }
    let query = &tools[2];
    assert_eq!(query["inputSchema"]["required"], json!(["sql"]));
    assert_eq!(
        query["outputSchema"]["required"],
        json!(["columns", "rows", "row_count", "truncated"])
    );
    let cursor = s.request("tools/list", json!({"cursor": "bogus"}));
    assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
}

#[test]
fn list_tables_gives_names_kinds_and_row_counts() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let result = s.call_tool("list_tables", json!({}));
    assert_eq!(result["isError"], false);
    let listed: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(
        listed,
        json!({"tables": [
            {"name": "customers", "type": "table", "row_count": 8},
            {"name": "order_items", "type": "table", "row_count": 24},
            {"name": "order_totals", "type": "view", "row_count": 12},
            {"name": "orders", "type": "table", "row_count": 12},
            {"name": "products", "type": "table", "row_count": 10},
        ]})
    );
}

#[test]
fn describe_table_gives_columns_keys_and_indexes() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let result = s.call_tool("describe_table", json!({"table": "orders"}));
    assert_eq!(result["isError"], false, "{result}");
    let t: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(t["name"], "orders");
    assert_eq!(t["type"], "table");
    assert!(
        t["sql"]
            .as_str()
            .unwrap_or_default()
            .starts_with("CREATE TABLE orders")
    );
    assert_eq!(
        t["columns"],
        json!([
            {"name": "id", "type": "INTEGER", "not_null": false, "default": null,
             "primary_key": true, "primary_key_position": 1},
            {"name": "customer_id", "type": "INTEGER", "not_null": true, "default": null,
             "primary_key": false, "primary_key_position": 0},
            {"name": "ordered_at", "type": "TEXT", "not_null": true, "default": null,
             "primary_key": false, "primary_key_position": 0},
            {"name": "status", "type": "TEXT", "not_null": true, "default": "'pending'",
             "primary_key": false, "primary_key_position": 0},
        ])
    );
    assert_eq!(
        t["foreign_keys"],
        json!([{"id": 0, "column": "customer_id", "references_table": "customers",
                "references_column": "id", "on_update": "NO ACTION", "on_delete": "CASCADE"}])
    );
    assert_eq!(
        t["indexes"],
        json!([{"name": "idx_orders_customer", "unique": false, "origin": "c",
                "partial": false, "columns": ["customer_id"]}])
    );
}

#[test]
fn describe_unknown_table_is_an_error_listing_the_tables() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let result = s.call_tool("describe_table", json!({"table": "invoices"}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        text(&result),
        "no table or view named \"invoices\"; existing: customers, order_items, order_totals, \
         orders, products"
    );
}

#[test]
fn query_returns_text_and_structured_content() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let result = s.query("SELECT id, name, price_cents FROM products WHERE id <= 2 ORDER BY id");
    assert_eq!(result["isError"], false, "{result}");
    let expected = json!({
        "columns": ["id", "name", "price_cents"],
        "row_count": 2,
        "truncated": false,
        "rows": [[1, "Mechanical keyboard", 12900], [2, "Trackball", 7900]],
    });
    assert_eq!(result["structuredContent"], expected);
    let from_text: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(from_text, expected);
}

#[test]
fn query_binds_params_positionally() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let result = s.call_tool(
        "query",
        json!({
            "sql": "SELECT name, ?3 AS flag, ?4 AS nil, ?5 AS num FROM customers \
                    WHERE country = ?1 AND id > ?2 ORDER BY id",
            "params": ["GB", 1, true, null, 2.5],
        }),
    );
    assert_eq!(
        result["structuredContent"]["rows"],
        json!([["Alan Turing", 1, null, 2.5]]),
        "{result}"
    );
    // Text that looks like SQL is bound as a value, never spliced in.
    let injected = s.call_tool(
        "query",
        json!({"sql": "SELECT count(*) FROM customers WHERE name = ?", "params": ["x' OR '1'='1"]}),
    );
    assert_eq!(injected["structuredContent"]["rows"], json!([[0]]));
    let wrong_count = s.call_tool("query", json!({"sql": "SELECT ?, ?", "params": [1]}));
    assert_eq!(wrong_count["isError"], true);
    assert!(text(&wrong_count).contains("2 parameter placeholder(s) but 1 value(s)"));
    let nested = s.call_tool("query", json!({"sql": "SELECT ?", "params": [[1]]}));
    assert_eq!(nested["isError"], true);
    assert!(
        text(&nested).starts_with("parameter 1: only JSON scalars"),
        "{nested}"
    );
}

#[test]
fn query_limit_truncates_and_is_bounded() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let cut = s.call_tool(
        "query",
        json!({"sql": "SELECT id FROM customers ORDER BY id", "limit": 3}),
    );
    assert_eq!(
        cut["structuredContent"],
        json!({"columns": ["id"], "row_count": 3, "truncated": true, "rows": [[1], [2], [3]]})
    );
    let exact = s.call_tool(
        "query",
        json!({"sql": "SELECT id FROM customers", "limit": 8}),
    );
    assert_eq!(exact["structuredContent"]["truncated"], false);
    assert_eq!(exact["structuredContent"]["row_count"], 8);
    let many =
        s.query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n");
    assert_eq!(many["structuredContent"]["row_count"], 500, "default limit");
    assert_eq!(many["structuredContent"]["truncated"], true);
    for bad in [0, 10_001] {
        let r = s.call_tool("query", json!({"sql": "SELECT 1", "limit": bad}));
        assert_eq!(r["isError"], true);
        assert_eq!(
            text(&r),
            format!("limit must be between 1 and 10000; got {bad}")
        );
    }
}

#[test]
fn query_renders_blobs_nulls_and_infinities() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let r = s.query("SELECT x'00ff10', NULL, 1e999, zeroblob(5000), 'text'");
    assert_eq!(
        r["structuredContent"]["rows"],
        json!([[
            "base64:AP8Q",
            null,
            "Infinity",
            "<blob: 5000 bytes>",
            "text"
        ]])
    );
}

#[test]
fn bad_tool_arguments_are_tool_errors_and_unknown_tools_protocol_errors() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let missing = s.call_tool("query", json!({}));
    assert_eq!(missing["isError"], true);
    assert!(text(&missing).contains("missing field `sql`"), "{missing}");
    let extra = s.call_tool("describe_table", json!({"table": "orders", "x": 1}));
    assert_eq!(extra["isError"], true);
    let unknown = s.request(
        "tools/call",
        json!({"name": "drop_everything", "arguments": {}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let no_name = s.request("tools/call", json!({"arguments": {}}));
    assert_eq!(no_name["error"]["code"], -32602, "{no_name}");
    let sql_error = s.query("SELECT * FROM invoices");
    assert_eq!(sql_error["isError"], true);
    assert_eq!(text(&sql_error), "SQL error: no such table: invoices");
    let empty = s.query("  -- nothing here\n");
    assert_eq!(
        text(&empty),
        "the query is empty; pass exactly one SQL statement"
    );
}

#[test]
fn garbage_lines_get_parse_errors_and_the_server_survives() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    for line in [&b"not json\n"[..], b"{\"jsonrpc\":\n", b"\xff\xfe{}\n"] {
        s.send_raw(line);
        let resp = s.recv();
        assert_eq!(resp["id"], Value::Null, "{resp}");
        assert_eq!(resp["error"]["code"], -32700, "{resp}");
    }
    s.send_raw(b"\n   \n");
    for (msg, code) in [
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            -32600,
        ),
        (json!(42), -32600),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            -32600,
        ),
        (json!({"jsonrpc": "2.0", "id": 9}), -32600),
        (json!({"jsonrpc": "1.0", "id": 9, "method": "ping"}), -32600),
        (
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": [1]}),
            -32602,
        ),
    ] {
        s.send(&msg);
        let resp = s.recv();
        assert_eq!(resp["error"]["code"], code, "{msg} -> {resp}");
    }
    assert_eq!(s.ok("ping", json!({})), json!({}));
}

#[test]
fn unknown_methods_and_notifications() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let resp = s.request("prompts/list", json!({}));
    assert_eq!(resp["error"]["code"], -32601, "{resp}");
    // Notifications (known or not) are never answered: the next line is the ping's answer.
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}));
    s.send(&json!({"jsonrpc": "2.0", "method": "tools/list"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}));
    assert_eq!(s.recv(), json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    assert!(s.recv_within(Duration::from_millis(200)).is_none());
    assert!(s.finish().success());
}

#[test]
fn logging_level_filters_notifications() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    assert_eq!(
        s.ok("logging/setLevel", json!({"level": "debug"})),
        json!({})
    );
    s.query("SELECT 1");
    let logs = std::mem::take(&mut s.notifications);
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0]["method"], "notifications/message");
    assert_eq!(logs[0]["params"]["level"], "debug");
    assert!(
        logs[0]["params"]["data"]
            .as_str()
            .unwrap_or_default()
            .starts_with("query finished")
    );

    assert_eq!(
        s.ok("logging/setLevel", json!({"level": "error"})),
        json!({})
    );
    s.query("DELETE FROM orders");
    s.query("SELECT 1");
    assert_eq!(s.notifications, Vec::<Value>::new());

    assert_eq!(
        s.ok("logging/setLevel", json!({"level": "warning"})),
        json!({})
    );
    s.query("DELETE FROM orders");
    assert_eq!(s.notifications.len(), 1, "{:?}", s.notifications);
    assert_eq!(s.notifications[0]["params"]["level"], "warning");

    let bad = s.request("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[test]
fn resources_list_and_read_table_schemas() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let list = s.ok("resources/list", json!({}));
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "sqlite:///customers/schema",
            "sqlite:///order_items/schema",
            "sqlite:///order_totals/schema",
            "sqlite:///orders/schema",
            "sqlite:///products/schema",
        ]
    );
    let read = s.ok("resources/read", json!({"uri": "sqlite:///orders/schema"}));
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "sqlite:///orders/schema");
    assert_eq!(contents["mimeType"], "text/plain");
    let body = contents["text"].as_str().unwrap_or_default();
    assert!(
        body.starts_with("-- table orders\nCREATE TABLE orders ("),
        "{body}"
    );
    assert!(
        body.contains("CREATE INDEX idx_orders_customer ON orders(customer_id);"),
        "{body}"
    );
    assert!(
        body.contains("--   status TEXT NOT NULL DEFAULT 'pending'\n"),
        "{body}"
    );
    assert!(
        body.contains("-- foreign key: customer_id -> customers(id)\n"),
        "{body}"
    );

    let missing = s.request(
        "resources/read",
        json!({"uri": "sqlite:///invoices/schema"}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let foreign = s.request("resources/read", json!({"uri": "file:///etc/passwd"}));
    assert_eq!(foreign["error"]["code"], -32002, "{foreign}");
    let no_uri = s.request("resources/read", json!({}));
    assert_eq!(no_uri["error"]["code"], -32602, "{no_uri}");
    let templates = s.ok("resources/templates/list", json!({}));
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "sqlite:///{table}/schema"
    );
}

#[test]
fn a_missing_or_bad_database_fails_before_any_protocol_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "hello").unwrap();
    let missing = dir.path().join("missing.sqlite");
    let cases: [(Vec<&str>, &str); 3] = [
        (vec![], "missing <DATABASE-PATH>"),
        (vec![path_str(&missing)], "does not exist"),
        (vec![path_str(&not_db)], "file is not a database"),
    ];
    for (args, expected) in cases {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?} wrote to stdout: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!missing.exists(), "opening must never create the file");
}

#[test]
fn help_and_version() {
    let help = run(&["--help"]);
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--init-demo") && help.contains("--query-timeout-ms"),
        "{help}"
    );
    let version = run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("ling-sqlite-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn init_demo_refuses_to_overwrite_without_force_and_is_deterministic() {
    let d = demo();
    let before = std::fs::read(&d.db).unwrap();
    let again = run(&["--init-demo", path_str(&d.db)]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists; pass --force"));
    assert_eq!(std::fs::read(&d.db).unwrap(), before);

    let dump = |s: &mut Server| {
        s.query("SELECT * FROM order_totals ORDER BY order_id")["structuredContent"].clone()
    };
    let first = dump(&mut Server::ready(&d.db, &[]));
    let forced = run(&["--init-demo", path_str(&d.db), "--force"]);
    assert!(forced.status.success(), "{forced:?}");
    assert_eq!(dump(&mut Server::ready(&d.db, &[])), first);
    assert_eq!(first["row_count"], 12);
    let total: i64 = row_counts(&d.db).iter().map(|(_, n)| n).sum();
    assert_eq!(total, 54);
}

#[test]
fn stdin_eof_ends_the_server_cleanly() {
    let d = demo();
    let s = Server::ready(&d.db, &[]);
    assert!(s.finish().success());
}
