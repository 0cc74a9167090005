//! A bare MCP client over stdio for `ling mcp serve`: one JSON-RPC message per line each way,
//! requests answered by id, the server's notifications and requests kept for the test to read,
//! and a bounded wait on everything. The official clients (the MCP Inspector, the conformance
//! suite) test the same server in `tests/suite/serve_mcp.rs`; this one exists to say exactly
//! what is sent (progress tokens, cancels, the 2026-07-28 `_meta`) and to answer elicitations.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::project::Project;

/// How long any one message may take to arrive.
const WAIT: Duration = Duration::from_secs(30);

pub struct Served {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Everything received that was not yet taken.
    pending: Vec<Value>,
    next_id: i64,
}

impl Served {
    /// `ling mcp serve ARGS` in `project`, with the model at `base_url`.
    pub fn start(project: &Project, base_url: &str, args: &[&str]) -> Self {
        let mut cmd: Command = project.command(base_url);
        cmd.args(["mcp", "serve"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("starting ling mcp serve");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines: rx,
            pending: Vec::new(),
            next_id: 1,
        }
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its answer (the whole response object).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.answer(id)
    }

    /// The answer to request `id`, waiting for it.
    pub fn answer(&mut self, id: i64) -> Value {
        self.take(&format!("the answer to request {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// The first message (received or to come) that `pick` accepts.
    pub fn take(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.pending.iter().position(&pick) {
            return self.pending.remove(at);
        }
        let until = Instant::now() + WAIT;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if pick(&message) => return message,
                Ok(message) => self.pending.push(message),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {what} within {WAIT:?}; received: {:#?}", self.pending)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the server closed stdout before {what}; received: {:#?}",
                        self.pending
                    )
                }
            }
        }
    }

    /// Everything received within `wait` (and before), taken.
    pub fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let until = Instant::now() + wait;
        while let Ok(message) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.pending.push(message);
        }
        std::mem::take(&mut self.pending)
    }

    /// The `initialize` handshake of 2025-11-25, with these client capabilities.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let answer = self.call(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "ling-test", "version": "1"},
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes stdin and waits (bounded) for the server to exit; its exit code.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("ling mcp serve did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `_meta` of a 2026-07-28 request.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "ling-test", "version": "1"},
    })
}
