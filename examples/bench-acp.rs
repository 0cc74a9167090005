//! Benchmarks `ling acp` as an editor sees it: the time from sending `session/prompt` to the
//! first `session/update` (the first chunk of the answer), against the time the model's first
//! byte left a mock model on 127.0.0.1, over [`PROMPTS`] prompts of one session; and the memory
//! (RSS, from /proc) of an idle `ling acp`: just started and initialized, and with one session
//! open after its prompts. Run through `scripts/bench-acp.sh` (release build).
//!
//!   bench-acp PATH/TO/ling [PROMPTS]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PROMPTS: usize = 200;

/// When the mock wrote the first byte of each chat answer.
type FirstBytes = Arc<Mutex<Vec<Instant>>>;

/// A chat-completions server that streams one short answer per request and notes when its
/// first byte went out; anything else (`/models`) is a 404.
async fn mock_model(listener: TcpListener, first: FirstBytes) {
    while let Ok((mut socket, _)) = listener.accept().await {
        let first = first.clone();
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            // Head, then as much body as Content-Length says.
            let (head_end, length) = loop {
                let Ok(n) = socket.read(&mut buf).await else {
                    return;
                };
                if n == 0 {
                    return;
                }
                request.extend_from_slice(&buf[..n]);
                if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    break (end + 4, length);
                }
            };
            while request.len() < head_end + length {
                let Ok(n) = socket.read(&mut buf).await else {
                    return;
                };
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&request[..head_end]);
            if !head.starts_with("POST") || !head.contains("/chat/completions") {
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                return;
            }
            let chunk = |delta: Value, finish: Option<&str>| {
                let event = json!({"id": "b", "object": "chat.completion.chunk", "choices":
                    [{"index": 0, "delta": delta, "finish_reason": finish}]});
                format!("data: {event}\n\n")
            };
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            let body = [
                chunk(json!({"role": "assistant", "content": "Hello"}), None),
                chunk(json!({"content": " there."}), None),
                chunk(json!({}), Some("stop")),
                "data: [DONE]\n\n".to_string(),
            ];
            let mut first_piece = head.to_string();
            first_piece.push_str(&body[0]);
            if let Ok(mut times) = first.lock() {
                times.push(Instant::now());
            }
            if socket.write_all(first_piece.as_bytes()).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
            for piece in &body[1..] {
                let _ = socket.write_all(piece.as_bytes()).await;
            }
            let _ = socket.shutdown().await;
        });
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn summary(name: &str, mut values: Vec<f64>) {
    values.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name}: p50 {:.3} ms, p95 {:.3} ms, p99 {:.3} ms, max {:.3} ms (n = {})",
        percentile(&values, 0.5),
        percentile(&values, 0.95),
        percentile(&values, 0.99),
        values.last().copied().unwrap_or(0.0),
        values.len()
    );
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let ling = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: bench-acp PATH/TO/ling [PROMPTS]"))?;
    let prompts: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(PROMPTS);
    let runtime = tokio::runtime::Runtime::new()?;
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0"))?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    let first_bytes: FirstBytes = Arc::default();
    runtime.spawn(mock_model(listener, first_bytes.clone()));

    let home = tempfile::tempdir()?;
    let project = tempfile::tempdir()?;
    let root = std::fs::canonicalize(project.path())?;
    let mut child = Command::new(&ling)
        .arg("acp")
        .env("LING_HOME", home.path())
        .env("OPENAI_BASE_URL", &base_url)
        .env_remove("OPENAI_API_KEY")
        .env_remove("LING_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id();
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let (tx, rx) = mpsc::channel::<(Instant, Value)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let at = Instant::now();
            if let Ok(value) = serde_json::from_str(&line)
                && tx.send((at, value)).is_err()
            {
                break;
            }
        }
    });
    let mut send = move |value: Value| -> anyhow::Result<Instant> {
        let line = format!("{value}\n");
        let at = Instant::now();
        stdin.write_all(line.as_bytes())?;
        stdin.flush()?;
        Ok(at)
    };
    let wait_for = |pick: &dyn Fn(&Value) -> bool| -> anyhow::Result<(Instant, Value)> {
        loop {
            let (at, value) = rx.recv_timeout(Duration::from_secs(30))?;
            if pick(&value) {
                return Ok((at, value));
            }
        }
    };

    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}))?;
    wait_for(&|v| v["id"] == 0)?;
    std::thread::sleep(Duration::from_millis(500));
    let rss_started = rss_kib(pid);
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": {"cwd": root, "mcpServers": []}}))?;
    let (_, new) = wait_for(&|v| v["id"] == 1)?;
    let session = new["result"]["sessionId"].clone();

    let mut from_prompt = Vec::new();
    let mut from_first_byte = Vec::new();
    for i in 0..prompts {
        let id = 100 + i;
        let sent = send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}}),
        )?;
        let (update_at, _) = wait_for(&|v| {
            v["method"] == "session/update"
                && v["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        })?;
        wait_for(&|v| v["id"] == id)?;
        let first = first_bytes
            .lock()
            .ok()
            .and_then(|t| t.last().copied())
            .ok_or_else(|| anyhow::anyhow!("the model was not asked"))?;
        from_prompt.push(update_at.duration_since(sent).as_secs_f64() * 1000.0);
        from_first_byte.push(update_at.saturating_duration_since(first).as_secs_f64() * 1000.0);
    }
    std::thread::sleep(Duration::from_millis(500));
    let rss_session = rss_kib(pid);
    drop(send);
    let _ = child.wait();

    println!("ling acp, {prompts} prompts of one session against a mock model on 127.0.0.1");
    summary("session/prompt -> first session/update", from_prompt);
    summary(
        "model's first byte -> first session/update",
        from_first_byte,
    );
    println!(
        "idle RSS: {} KiB after initialize, {} KiB with one session open",
        rss_started, rss_session
    );
    Ok(())
}
