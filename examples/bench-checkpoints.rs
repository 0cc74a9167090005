//! What checkpoints cost (issue 31), on two made-up projects: 10,000 files of source, and
//! 1,000 files beside a 200 MB ignored build folder (`target/`, 1,000 files of 200 KB).
//!
//! Through the library: the first look of a session (cold: an empty `LING_HOME`, every file
//! read and kept; warm: a second session, whose unchanged files are not read again), a look
//! with nothing changed (what a turn adds), a call that writes one file (the look before it and
//! the look after it, the write itself left out), the storage a turn with a one-file edit adds,
//! and a look when inotify is not there (the walk). Through the binary: `ling -p` running
//! [`CALLS`] sandboxed `bash` calls against a mock model on 127.0.0.1, with checkpoints on and
//! off, and the wall time each call gains. Run through `scripts/bench-checkpoints.sh`.
//!
//!   bench-checkpoints PATH/TO/ling
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A benchmark of made-up folders: a failure is a panic with its message, as in the tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ling::checkpoint::{Checkpoints, OpenOptions};
use ling::config::checkpoints::CheckpointSettings;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// `bash` calls of the end-to-end run.
const CALLS: usize = 40;
/// Looks timed per figure.
const LOOKS: usize = 200;

fn write_tree(root: &Path, dirs: usize, per_dir: usize, size: usize, prefix: &str) {
    let content: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
    for d in 0..dirs {
        let dir = root.join(format!("{prefix}{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..per_dir {
            let mut bytes = content.clone();
            bytes.extend(format!("{d} {f}\n").as_bytes());
            std::fs::write(dir.join(format!("f{f:03}.rs")), bytes).unwrap();
        }
    }
}

fn du(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            du(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn open(home: &Path, root: &Path, id: &str) -> Checkpoints {
    Checkpoints::open(OpenOptions {
        dir: home.join("checkpoints"),
        session_id: id.into(),
        roots: vec![root.to_path_buf()],
        excluded: Vec::new(),
        settings: CheckpointSettings::default(),
        eager: true,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn library(name: &str, root: &Path) {
    let home = tempfile::tempdir().unwrap();
    let files = walk_count(root);
    println!(
        "\n## {name}: {files} files, {:.1} MB",
        du(root) as f64 / 1e6
    );

    let started = Instant::now();
    let cold = open(home.path(), root, "cold");
    cold.look().await;
    println!(
        "first look, cold (every file read and kept): {:.0} ms",
        ms(started.elapsed())
    );
    drop(cold);
    let started = Instant::now();
    let warm = open(home.path(), root, "warm");
    let mut state = warm.look().await;
    println!(
        "first look, warm (a second session):          {:.0} ms",
        ms(started.elapsed())
    );

    let mut idle = Vec::new();
    for _ in 0..LOOKS {
        let started = Instant::now();
        state = warm.look().await;
        idle.push(ms(started.elapsed()));
    }
    println!(
        "a look, nothing changed (per turn):           {:.3} ms",
        median(idle)
    );

    let target = root.join("edited.rs");
    let mut calls = Vec::new();
    for i in 0..LOOKS {
        let started = Instant::now();
        let before = warm.look().await;
        let looked = started.elapsed();
        std::fs::write(&target, format!("fn edited() {{ {i} }}\n")).unwrap();
        let started = Instant::now();
        warm.call_done("bash", "c", before).await;
        calls.push(ms(looked + started.elapsed()));
    }
    println!(
        "a call writing one file (both looks):          {:.3} ms",
        median(calls)
    );

    let sessions = home.path().join("checkpoints");
    let used = du(&sessions);
    let prompt = 1_000_000 + LOOKS as u64;
    if let Some(state) = state {
        warm.turn(prompt, state).await;
    }
    let before = warm.look().await;
    let mut text = std::fs::read_to_string(root.join("d000/f000.rs")).unwrap_or_default();
    text.push_str("// one more line\n");
    std::fs::write(root.join("d000/f000.rs"), text).unwrap();
    warm.call_done("edit_file", "e", before).await;
    println!(
        "storage of a turn editing one 2 KB file:       {} bytes (journal and blob)",
        du(&sessions) - used
    );
    println!(
        "storage of the session's base (its journal):   {:.1} MB; blobs of all: {:.1} MB",
        std::fs::metadata(sessions.join("warm.journal"))
            .unwrap()
            .len() as f64
            / 1e6,
        du(&sessions.join("blobs")) as f64 / 1e6
    );
    drop(warm);
    // The walk, in a process of its own started without inotify.
    let out = Command::new(std::env::current_exe().unwrap())
        .env("LING_CHECKPOINTS_NO_INOTIFY", "1")
        .arg("--walk")
        .arg(root)
        .output()
        .unwrap();
    print!("{}", String::from_utf8_lossy(&out.stdout));
}

/// `--walk ROOT`: a look without inotify, timed.
async fn walk_only(root: &Path) {
    let home = tempfile::tempdir().unwrap();
    let walker = open(home.path(), root, "walk");
    walker.look().await;
    let mut walks = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        walker.look().await;
        walks.push(ms(started.elapsed()));
    }
    println!(
        "a look without inotify (the walk):            {:.1} ms",
        median(walks)
    );
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            if e.file_type().unwrap().is_dir() {
                1 + walk_count(&e.path())
            } else {
                1
            }
        })
        .sum()
}

/// A chat-completions server asking for `bash` until the request carries [`CALLS`] results.
async fn mock_model(listener: TcpListener) {
    while let Ok((mut socket, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 64 * 1024];
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
            let head = String::from_utf8_lossy(&request[..head_end]).to_string();
            if !head.contains("/chat/completions") {
                let _ = socket
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    .await;
                return;
            }
            let body: Value = serde_json::from_slice(&request[head_end..]).unwrap_or_default();
            let results = body["messages"]
                .as_array()
                .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
            let calls: usize = body["messages"][1]["content"]
                .as_str()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0);
            let chunk = |delta: Value, finish: Option<&str>| {
                let event = json!({"id": "b", "object": "chat.completion.chunk", "choices":
                    [{"index": 0, "delta": delta, "finish_reason": finish}]});
                format!("data: {event}\n\n")
            };
            let mut out = String::from(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            if results < calls {
                let call = json!({"index": 0, "id": format!("c{results}"), "type": "function",
                    "function": {"name": "bash",
                        "arguments": json!({"command": format!("echo {results} >> log.txt")}).to_string()}});
                out.push_str(&chunk(
                    json!({"role": "assistant", "tool_calls": [call]}),
                    None,
                ));
                out.push_str(&chunk(json!({}), Some("tool_calls")));
            } else {
                out.push_str(&chunk(
                    json!({"role": "assistant", "content": "done"}),
                    None,
                ));
                out.push_str(&chunk(json!({}), Some("stop")));
            }
            out.push_str("data: [DONE]\n\n");
            let _ = socket.write_all(out.as_bytes()).await;
            let _ = socket.shutdown().await;
        });
    }
}

/// One `ling -p N` (N bash calls) in `root`; its wall time.
fn ling_run(ling: &Path, root: &Path, home: &Path, url: &str, calls: usize) -> Duration {
    let started = Instant::now();
    let out = Command::new(ling)
        .current_dir(root)
        .env("LING_HOME", home)
        .env("OPENAI_BASE_URL", url)
        .env_remove("OPENAI_API_KEY")
        .args(["-p", &calls.to_string(), "--max-turns", "1000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed()
}

fn end_to_end(ling: &Path, root: &Path, url: &str) {
    println!("\n## ling -p, {CALLS} sandboxed bash calls, project of 10,000 files");
    let mut per_call = Vec::new();
    for setting in ["true", "false"] {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("settings.json"),
            format!(r#"{{"checkpoints": {setting}}}"#),
        )
        .unwrap();
        // The first run pays the cold first look; the figures are from the next ones.
        ling_run(ling, root, home.path(), url, 1);
        let mut one = Vec::new();
        let mut many = Vec::new();
        for _ in 0..5 {
            one.push(ms(ling_run(ling, root, home.path(), url, 1)));
            many.push(ms(ling_run(ling, root, home.path(), url, CALLS + 1)));
        }
        let (one, many) = (median(one), median(many));
        println!(
            "checkpoints {setting:5}: a run with 1 call {one:.0} ms, with {} calls {many:.0} ms: \
             {:.2} ms per call",
            CALLS + 1,
            (many - one) / CALLS as f64
        );
        per_call.push((many - one) / CALLS as f64);
    }
    println!(
        "added per sandboxed bash call: {:.2} ms",
        per_call[0] - per_call[1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if args.get(1).map(String::as_str) == Some("--walk") {
        runtime.block_on(walk_only(Path::new(&args[2])));
        return;
    }
    let ling = PathBuf::from(args.get(1).expect("usage: bench-checkpoints PATH/TO/ling"));

    let source = tempfile::tempdir().unwrap();
    write_tree(source.path(), 100, 100, 2000, "d");
    let built = tempfile::tempdir().unwrap();
    write_tree(built.path(), 10, 100, 2000, "d");
    std::fs::write(built.path().join(".gitignore"), "target/\n").unwrap();
    write_tree(&built.path().join("target"), 10, 100, 200_000, "t");

    runtime.block_on(async {
        library("10,000 source files", source.path()).await;
        library(
            "1,000 source files and a 200 MB ignored target/",
            built.path(),
        )
        .await;
    });
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    runtime.spawn(mock_model(listener));
    end_to_end(&ling, source.path(), &url);
}
