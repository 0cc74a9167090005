//! Test helpers for `ling-sqlite-mcp`: a demo database in a temp dir, the server spawned on it
//! and spoken to in raw JSON-RPC lines (with timeouts, so a hung server fails the test instead of
//! hanging it), and a byte-for-byte snapshot of the database directory to prove nothing changed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_ling-sqlite-mcp");
const RECV_TIMEOUT: Duration = Duration::from_secs(20);

/// A temp dir holding `demo.sqlite`, made by the binary's own `--init-demo`.
pub struct Demo {
    pub dir: TempDir,
    pub db: PathBuf,
}

pub fn demo() -> Demo {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.sqlite");
    let out = run(&["--init-demo", path_str(&db)]);
    assert!(out.status.success(), "--init-demo failed: {out:?}");
    Demo { dir, db }
}

pub fn path_str(p: &Path) -> &str {
    p.to_str()
        .unwrap_or_else(|| panic!("non-UTF-8 temp path {p:?}"))
}

/// Runs the binary to completion with no stdin.
pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {BIN}: {e}"))
}

/// Every file directly in the directory with its bytes: equal snapshots mean nothing was written, created
/// (a journal, a VACUUM INTO target) or deleted.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        // Subdirectories (the Inspector's HOME) are not the database's business.
        if entry.path().is_dir() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        files.insert(entry.file_name().to_string_lossy().into_owned(), bytes);
    }
    files
}

/// Row counts of the demo tables, read through a separate read-only connection.
pub fn row_counts(db: &Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("open {db:?}: {e}"));
    ["customers", "products", "orders", "order_items"]
        .iter()
        .map(|t| {
            let n = conn
                .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap_or_else(|e| panic!("count {t}: {e}"));
            (t.to_string(), n)
        })
        .collect()
}

/// A running server with its stdout read line by line on a thread.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    /// Notifications seen while waiting for responses.
    pub notifications: Vec<Value>,
}

impl Server {
    pub fn spawn(db: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(extra)
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {BIN}: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("no stdout pipe");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            next_id: 100,
            notifications: Vec::new(),
        }
    }

    /// Spawned and initialized (protocol 2025-11-25, `notifications/initialized` sent).
    pub fn ready(db: &Path, extra: &[&str]) -> Self {
        let mut server = Self::spawn(db, extra);
        let init = server.initialize("2025-11-25");
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin closed");
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .expect("write to server");
    }

    pub fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// The next stdout line as JSON; panics on timeout or a non-JSON line.
    pub fn recv(&mut self) -> Value {
        self.recv_within(RECV_TIMEOUT)
            .unwrap_or_else(|| panic!("no message from the server within {RECV_TIMEOUT:?}"))
    }

    pub fn recv_within(&mut self, timeout: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(timeout).ok()?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line:?}")),
        )
    }

    /// The next response (a message with an `id`), keeping notifications on the way.
    pub fn response(&mut self) -> Value {
        loop {
            let msg = self.recv();
            if msg.get("id").is_some() {
                return msg;
            }
            self.notifications.push(msg);
        }
    }

    /// Sends a request with a fresh id and returns the whole response, checking the id matches.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let resp = self.response();
        assert_eq!(
            resp["id"],
            json!(id),
            "response to the wrong request: {resp}"
        );
        resp
    }

    /// `result` of a request that must succeed.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request(method, params);
        assert!(resp.get("error").is_none(), "{method} failed: {resp}");
        resp["result"].clone()
    }

    pub fn initialize(&mut self, version: &str) -> Value {
        self.next_id += 1;
        self.send(&json!({
            "jsonrpc": "2.0", "id": self.next_id, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "sqlite-mcp-tests", "version": "0"},
            },
        }));
        self.response()
    }

    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.ok("tools/call", json!({"name": name, "arguments": arguments}))
    }

    pub fn query(&mut self, sql: &str) -> Value {
        self.call_tool("query", json!({"sql": sql}))
    }

    /// Closes stdin and waits for the exit, killing the server if it lingers.
    pub fn finish(mut self) -> std::process::ExitStatus {
        self.stdin.take();
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        panic!("the server did not exit within 5 s of stdin closing");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The one text block of a tool result.
pub fn text(result: &Value) -> String {
    let content = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"));
    assert_eq!(content.len(), 1, "expected one content block: {result}");
    assert_eq!(content[0]["type"], "text", "{result}");
    content[0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
        .to_string()
}
