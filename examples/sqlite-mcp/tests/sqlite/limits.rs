//! The server's resource limits: a result's rows are cut at a size with a note, one value cannot
//! grow past SQLite's length limit, a query needing more memory than the heap limit fails (in
//! bounded time and memory, with the limit named), the bundled SQLite has CVE-2025-6965 fixed,
//! and `--create-demo-if-missing` makes a missing database before serving it.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Server, demo, text};

/// Far below what the unbounded queries would take (minutes, gigabytes).
const BOUND: Duration = Duration::from_secs(20);

#[test]
fn rows_over_the_result_size_limit_are_cut_with_a_note() {
    let d = demo();
    let mut s = Server::ready(&d.db, &["--max-result-bytes", "20000"]);
    // 10,000 rows of ~110 bytes each: about 1.1 MB of JSON unbounded.
    let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) \
               SELECT i, printf('%.100c', 'x') FROM n";
    let result = s.call_tool("query", json!({"sql": sql, "limit": 10000}));
    assert_eq!(result["isError"], false, "{result}");
    let structured = &result["structuredContent"];
    let rows = structured["row_count"].as_u64().unwrap();
    assert!((100..200).contains(&rows), "{rows} rows");
    assert_eq!(structured["truncated"], true);
    let note = structured["note"].as_str().unwrap();
    assert!(note.contains(&format!("rows cut after {rows}")), "{note}");
    assert!(note.contains("20000-byte size limit"), "{note}");
    assert!(
        text(&result).len() <= 21_000,
        "{} bytes",
        text(&result).len()
    );
    // Under the limit nothing is cut and there is no note.
    let small = s.query("SELECT 1");
    assert_eq!(small["structuredContent"]["truncated"], false);
    assert!(small["structuredContent"].get("note").is_none(), "{small}");
}

#[test]
fn a_first_row_over_the_limit_is_an_error_saying_what_to_select() {
    let d = demo();
    let mut s = Server::ready(&d.db, &["--max-result-bytes", "2048"]);
    let result = s.query("SELECT printf('%.5000c', 'x')");
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).contains("over this server's 2048-byte result limit"),
        "{result}"
    );
    assert!(text(&result).contains("substr("), "{result}");
}

#[test]
fn one_value_cannot_grow_past_the_length_limit() {
    // 20 MB in one string: the value itself is refused, before any result is built.
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let started = Instant::now();
    let result = s.query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) \
         SELECT group_concat(printf('%.1000c', 'x')) FROM n",
    );
    assert!(started.elapsed() < BOUND, "took {:?}", started.elapsed());
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("8 MiB length limit"), "{result}");
}

#[test]
fn a_query_needing_more_than_the_heap_limit_fails_naming_it() {
    let d = demo();
    let mut s = Server::ready(&d.db, &["--heap-limit-mib", "32"]);
    // Eight 7 MB blobs held at once in one row: 56 MB, fine without a heap limit.
    let blobs = ["randomblob(7000000)"; 8].join(", ");
    let started = Instant::now();
    let result = s.query(&format!("SELECT {blobs}"));
    assert!(started.elapsed() < BOUND, "took {:?}", started.elapsed());
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text(&result).contains("32 MiB limit (--heap-limit-mib)"),
        "{result}"
    );
    // The server is still fine afterwards.
    assert_eq!(s.query("SELECT 1")["isError"], false);
}

#[test]
fn the_bundled_sqlite_has_cve_2025_6965_fixed() {
    let version = rusqlite::version_number();
    assert!(
        version >= 3_050_002,
        "bundled SQLite {}",
        rusqlite::version()
    );
    let d = demo();
    let mut s = Server::ready(&d.db, &[]);
    let served = s.query("SELECT sqlite_version()");
    let served = served["structuredContent"]["rows"][0][0]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(served, rusqlite::version());
}

#[test]
fn create_demo_if_missing_makes_the_database_then_serves_it_and_keeps_an_existing_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/demo.sqlite");
    let mut s = Server::ready(&db, &["--create-demo-if-missing"]);
    let result = s.query("SELECT count(*) FROM customers");
    assert_eq!(result["structuredContent"]["rows"][0][0], 8, "{result}");
    s.finish();
    // An existing file is served as it is, never replaced.
    let before = std::fs::read(&db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("DELETE FROM order_items", []).unwrap();
    drop(conn);
    let mut s = Server::ready(&db, &["--create-demo-if-missing"]);
    let result = s.query("SELECT count(*) FROM order_items");
    assert_eq!(result["structuredContent"]["rows"][0][0], 0, "{result}");
    assert_ne!(std::fs::read(&db).unwrap(), before);
}
