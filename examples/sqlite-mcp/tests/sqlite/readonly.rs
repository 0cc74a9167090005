//! `ling-sqlite-mcp` stays read-only and bounded: every write attempt (DML, DDL, ATTACH, setting
//! pragmas, load_extension, VACUUM INTO, several statements, transactions) is refused with a
//! message naming it and the database directory left byte-for-byte unchanged; a long query is
//! interrupted at the timeout; a cancelled one stops at once.

use std::time::{Duration, Instant};

use crate::support::{Server, demo, path_str, row_counts, snapshot, text};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Runs `sql` through the query tool and asserts it was refused with `expected` in the message
/// and that the database directory is byte-for-byte what it was, with the same row counts.
fn assert_refused(sql: &str, expected: &str) {
    assert_refused_in(|_| sql.to_string(), expected);
}

/// `assert_refused` for SQL that names a file in the database's directory.
fn assert_refused_in(sql_for: impl FnOnce(&std::path::Path) -> String, expected: &str) {
    let d = demo();
    let sql = &sql_for(d.dir.path());
    let before = snapshot(d.dir.path());
    let counts = row_counts(&d.db);
    let mut s = Server::ready(&d.db, &[]);
    let result = s.query(sql);
    assert_eq!(result["isError"], true, "{sql} was not refused: {result}");
    let message = text(&result);
    assert!(message.contains(expected), "{sql}: {message}");
    assert!(result.get("structuredContent").is_none());
    // The server still works after the refusal.
    assert_eq!(
        s.query("SELECT 1")["structuredContent"]["rows"],
        json!([[1]])
    );
    let status = s.finish();
    assert!(status.success(), "{status}");
    assert_eq!(row_counts(&d.db), counts);
    assert!(
        snapshot(d.dir.path()) == before,
        "{sql} changed the database directory"
    );
}

#[test]
fn refuses_insert() {
    assert_refused(
        "INSERT INTO customers (name, email, country, created_at) VALUES ('x', 'x@x', 'X', 'now')",
        "refused: this server is read-only; INSERT into customers is not allowed",
    );
}

#[test]
fn refuses_update() {
    assert_refused(
        "UPDATE orders SET status = 'cancelled'",
        "UPDATE of orders is not allowed",
    );
}

#[test]
fn refuses_delete() {
    assert_refused(
        "DELETE FROM order_items",
        "DELETE from order_items is not allowed",
    );
}

#[test]
fn refuses_delete_inside_with() {
    assert_refused(
        "WITH doomed AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN doomed",
        "DELETE from orders is not allowed",
    );
}

#[test]
fn refuses_replace() {
    assert_refused(
        "REPLACE INTO products (id, name, category, price_cents) VALUES (1, 'x', 'y', 1)",
        "INSERT into products is not allowed",
    );
}

#[test]
fn refuses_drop() {
    assert_refused("DROP TABLE order_items", "changing the schema");
}

#[test]
fn refuses_create_temp_table() {
    assert_refused("CREATE TEMP TABLE scratch (x)", "changing the schema");
}

#[test]
fn refuses_attach() {
    assert_refused_in(
        |dir| {
            let target = dir.join("attached.sqlite");
            format!("ATTACH DATABASE '{}' AS other", path_str(&target))
        },
        "attached.sqlite\" is not allowed",
    );
}

#[test]
fn refuses_writable_schema() {
    assert_refused(
        "PRAGMA writable_schema = ON",
        "setting PRAGMA writable_schema is not allowed",
    );
}

#[test]
fn refuses_turning_query_only_off() {
    assert_refused(
        "PRAGMA query_only = OFF",
        "setting PRAGMA query_only is not allowed",
    );
}

#[test]
fn refuses_multiple_statements() {
    assert_refused(
        "SELECT 1; DELETE FROM orders",
        "only one SQL statement is allowed per query",
    );
}

#[test]
fn refuses_load_extension() {
    assert_refused(
        "SELECT load_extension('/tmp/evil')",
        "load_extension() is disabled",
    );
}

#[test]
fn refuses_vacuum_into() {
    // The copy would land in the snapshotted directory if it were written.
    assert_refused_in(
        |dir| format!("VACUUM INTO '{}'", path_str(&dir.join("copy.sqlite"))),
        "this statement would modify the database",
    );
}

#[test]
fn refuses_transactions() {
    assert_refused("BEGIN IMMEDIATE", "transaction control is not allowed");
}

#[test]
fn a_trailing_comment_is_not_a_second_statement() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let r = s.query("SELECT 42; -- the answer\n/* and a block */  ");
    assert_eq!(r["structuredContent"]["rows"], json!([[42]]), "{r}");
}

#[test]
fn a_long_query_is_interrupted_at_the_timeout() {
    let d = demo();
    let mut s = Server::ready(&d.db, &["--query-timeout-ms", "300"]);
    let started = Instant::now();
    let r = s.query(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000000) \
         SELECT count(*) FROM c",
    );
    let elapsed = started.elapsed();
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "the query was interrupted after the 300 ms time limit; narrow it or add a LIMIT"
    );
    assert!(elapsed >= Duration::from_millis(250), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(
        s.query("SELECT 7")["structuredContent"]["rows"],
        json!([[7]])
    );
}

#[test]
fn a_cancelled_query_stops_and_gets_no_answer() {
    let d = demo();
    let mut s = Server::ready(&d.db, &["--query-timeout-ms", "60000"]);
    s.send(&json!({
        "jsonrpc": "2.0", "id": "slow", "method": "tools/call",
        "params": {"name": "query", "arguments": {"sql":
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"}},
    }));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": "slow", "reason": "test"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "id": "after", "method": "ping"}));
    let next = s.response();
    assert_eq!(next, json!({"jsonrpc": "2.0", "id": "after", "result": {}}));
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The SQLite the server is built with (bundled by rusqlite) has the fix for CVE-2025-6965
/// (memory corruption from aggregate terms exceeding the column limit), released in 3.50.2.
#[test]
fn the_bundled_sqlite_is_3_50_2_or_newer() {
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let rows = s.query("SELECT sqlite_version()")["structuredContent"]["rows"].clone();
    let version = rows[0][0].as_str().unwrap_or_default().to_string();
    let parts: Vec<u32> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    assert!(
        parts.len() == 3 && parts >= vec![3, 50, 2],
        "SQLite {version:?}"
    );
    assert!(s.finish().success());
}

/// A database in WAL mode: reading it, and asking its journal mode, leaves no `-wal` or `-shm`
/// file beside it (nor changes it), and setting the journal mode is refused.
#[test]
fn a_wal_database_is_read_without_leaving_wal_or_shm_files() {
    let d = demo();
    {
        let conn = rusqlite::Connection::open(&d.db).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
    let before = snapshot(d.dir.path());
    assert_eq!(before.len(), 1, "{:?}", before.keys().collect::<Vec<_>>());
    let mut s = Server::ready(&d.db, &[]);
    let counted = s.query("SELECT count(*) FROM customers");
    assert_eq!(counted["isError"], false, "{counted}");
    let mode = s.query("PRAGMA journal_mode");
    assert!(
        text(&mode).contains("PRAGMA journal_mode is not allowed"),
        "{mode}"
    );
    for sql in [
        "PRAGMA journal_mode=DELETE",
        "PRAGMA main.journal_mode = 'delete'",
        "PRAGMA journal_mode('wal')",
        "PRAGMA wal_checkpoint(TRUNCATE)",
    ] {
        let result = s.query(sql);
        assert_eq!(result["isError"], true, "{sql}: {result}");
    }
    let status = s.finish();
    assert!(status.success(), "{status}");
    assert!(
        snapshot(d.dir.path()) == before,
        "the directory changed: {:?} (journal_mode said {mode})",
        snapshot(d.dir.path()).keys().collect::<Vec<_>>()
    );
}

/// A database whose file name looks like URI parameters is opened as that file, read-only.
#[test]
fn a_file_name_with_uri_characters_is_only_a_name() {
    let d = demo();
    let odd = d.dir.path().join("a?mode=rw&immutable=0#x %.sqlite");
    std::fs::rename(&d.db, &odd).unwrap();
    let before = snapshot(d.dir.path());
    let mut s = Server::ready(&odd, &[]);
    assert_eq!(
        s.query("SELECT count(*) > 0 FROM customers")["structuredContent"]["rows"],
        json!([[1]])
    );
    assert_eq!(s.query("DELETE FROM customers")["isError"], true);
    assert!(s.finish().success());
    assert!(snapshot(d.dir.path()) == before);
}
