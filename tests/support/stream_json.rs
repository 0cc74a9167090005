//! `ling --input-format stream-json --output-format stream-json` driven line by line, as the
//! Claude Agent SDK drives it: user messages, control requests and the answers to Ling's own
//! requests (`can_use_tool`) written to its stdin while its lines are read as they come.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::mock_openai::MockServer;
use super::project::Project;

pub struct StreamSession {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl StreamSession {
    /// Starts the session in `project` against `server`, with these flags added.
    pub fn start(project: &Project, server: &MockServer, args: &[&str]) -> Self {
        let mut cmd = project.command(&server.base_url());
        cmd.args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn ling");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(value);
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to ling");
        stdin.flush().expect("flush");
    }

    pub fn prompt(&mut self, text: &str) {
        self.send(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    /// Sends a control request and waits for its answer (the `response` object).
    pub fn control(&mut self, id: &str, request: Value) -> Value {
        self.send(json!({"type": "control_request", "request_id": id, "request": request}));
        let lines = self
            .read_until(|l| l["type"] == "control_response" && l["response"]["request_id"] == id);
        lines
            .last()
            .map(|l| l["response"].clone())
            .unwrap_or_default()
    }

    /// Answers Ling's control request `request_id` with a success carrying `response`.
    pub fn answer(&mut self, request_id: &str, response: Value) {
        self.send(json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": response}}));
    }

    /// Lines until one `until` accepts (included); fails after 30 s.
    pub fn read_until(&self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no such line; got {seen:#?}"));
            let done = until(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Closes stdin and waits for the end.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

impl Drop for StreamSession {
    fn drop(&mut self) {
        // A test that failed half-way leaves no process behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
