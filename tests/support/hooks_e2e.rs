//! Helpers for the hooks end-to-end suites (`suite::hooks_e2e*`): hooks.json and `sh` scripts in
//! a temp project, running `ling -p` / `ling hooks` there, and reading what the model was sent and
//! what the hooks wrote.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::mock_openai::{MockServer, Recorded, Reply};
use super::project::{Output, Project, run};

/// Writes `.ling/hooks.json` and trusts the project (`ling trust`), as its user would.
pub fn hooks(project: &Project, hooks: Value) {
    project.write(".ling/hooks.json", &json!({ "hooks": hooks }).to_string());
    project.trust();
}

/// Writes an executable `sh` script under `hooks/` in the project; returns the `command` for it
/// (hooks run with the project root as their working directory).
pub fn script(project: &Project, name: &str, body: &str) -> String {
    let rel = format!("hooks/{name}");
    project.write(&rel, &format!("#!/bin/sh\n{body}\n"));
    let path = project.file(&rel);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    format!("./{rel}")
}

/// `[{"matcher": m, "hooks": [{"type":"command","command": c}]}]`.
pub fn group(matcher: &str, command: &str) -> Value {
    json!([{ "matcher": matcher, "hooks": [{ "type": "command", "command": command }] }])
}

/// A PreToolUse hook's JSON answer.
pub fn pre_output(fields: Value) -> String {
    let mut specific = json!({ "hookEventName": "PreToolUse" });
    if let (Some(out), Some(fields)) = (specific.as_object_mut(), fields.as_object()) {
        out.extend(fields.clone());
    }
    let text = json!({ "hookSpecificOutput": specific }).to_string();
    format!("cat > /dev/null\necho '{text}'")
}

/// `ling -p PROMPT ARGS...` in `project` against `server`.
pub fn ling_p(project: &Project, server: &MockServer, prompt: &str, args: &[&str]) -> Command {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt]).args(args);
    cmd
}

pub fn ok(out: &Output) {
    assert_eq!(
        out.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
}

/// The tool results the model was sent in `request`, in order.
pub fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

pub fn last_user(request: &Recorded) -> String {
    let messages = request.messages();
    let user = messages.iter().rev().find(|m| m["role"] == "user");
    user.and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub fn read_json(project: &Project, rel: &str) -> Value {
    let text = project.read(rel);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel} is not JSON ({e}): {text}"))
}

pub fn json_lines(project: &Project, rel: &str) -> Vec<Value> {
    project
        .read(rel)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{rel}: {e}: {l}")))
        .collect()
}

/// One bash call, then a text answer.
pub fn bash_then_text(command: &str) -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "bash", json!({ "command": command }))]),
        Reply::text("done"),
    ])
}

/// A PostToolUse hook that appends its stdin to `post.jsonl`.
pub fn post_logger(project: &Project) -> Value {
    let log = script(project, "post.sh", "cat >> post.jsonl\necho >> post.jsonl");
    group("*", &log)
}

/// `ling hooks ARGS...` in `project` (no model involved).
pub fn ling_hooks(project: &Project, args: &[&str]) -> Output {
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.arg("hooks").args(args);
    run(cmd)
}

/// A one-request HTTP server on 127.0.0.1 answering `body` as JSON; the thread returns the
/// request body it received.
pub fn http_hook_server(body: Value) -> (String, std::thread::JoinHandle<Value>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut piece = [0u8; 4096];
        let (head_end, length) = loop {
            let n = socket.read(&mut piece).unwrap_or(0);
            assert!(n > 0, "the hook closed the connection early");
            buf.extend_from_slice(&piece[..n]);
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (end + 4, length);
            }
        };
        while buf.len() < head_end + length {
            let n = socket.read(&mut piece).unwrap_or(0);
            assert!(n > 0, "the hook closed the connection early");
            buf.extend_from_slice(&piece[..n]);
        }
        let text = body.to_string();
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        let _ = socket.write_all(reply.as_bytes());
        serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null)
    });
    (format!("http://{addr}/hook"), handle)
}

/// The process whose pid a hook wrote to `rel` is gone, or goes within 2 s.
pub fn assert_process_gone(project: &Project, rel: &str) {
    let text = project.read(rel);
    let pid: i32 = text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{rel} holds no pid ({text:?}): the hook never started"));
    assert!(
        super::process::gone_within(pid, Duration::from_secs(2)),
        "process {pid} from {rel} outlived the hook that started it"
    );
}
