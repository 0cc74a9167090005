//! The figures of background commands and goals (`scripts/bench-background.sh`), measured on
//! the real `ling` binary against the tests' scripted mock model on 127.0.0.1:
//!
//! 1. Ling's peak RSS while a background command prints 1 GiB (and, for comparison, 1 MiB):
//!    its output is kept in a ring of settings `backgroundOutputBytes` (default 1 MiB) and the
//!    rest spilled to a file, so the peak should not grow with the output. The peak is the
//!    `VmHWM` (high-water mark) of Ling's `/proc/PID/status`, read every 20 ms while it runs.
//! 2. A `--until` goal on the mock: a check that passes on round N, the rounds the result
//!    line reports, and the wall time per round.
//!
//! `bench-background [LING_BINARY] [BYTES]` (default `target/debug/ling`, 1 GiB).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

// The tests' mock model, as siblings at the root (it names them as `super::...`).
#[path = "../tests/support/chat_history.rs"]
mod chat_history;
#[path = "../tests/support/mock_http.rs"]
#[allow(dead_code)]
mod mock_http;
#[path = "../tests/support/mock_images.rs"]
#[allow(dead_code)]
mod mock_images;
#[path = "../tests/support/mock_openai.rs"]
#[allow(dead_code)]
mod mock_openai;
#[path = "../tests/support/mock_overflow.rs"]
#[allow(dead_code)]
mod mock_overflow;
#[path = "../tests/support/mock_rules.rs"]
#[allow(dead_code)]
mod mock_rules;
#[path = "../tests/support/mock_wire.rs"]
#[allow(dead_code)]
mod mock_wire;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock_openai::{MockServer, Reply};
use serde_json::{Value, json};

fn ling(bin: &Path, root: &Path, home: &Path, tmp: &Path, server: &MockServer) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(root)
        .env("LING_HOME", home)
        .env("TMPDIR", tmp)
        .env("OPENAI_BASE_URL", server.base_url())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LING_MODEL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// kB of a `/proc/PID/status` field.
fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Ling's peak RSS (MiB) and the seconds of a run whose background command prints `bytes`.
fn peak_rss(bin: &Path, bytes: u64) -> (f64, f64, String) {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let print = format!(
        "yes 'a line of background output, seventy characters or so, again and again' | head -c {bytes}; touch printed"
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b",
            "bash",
            json!({"command": print, "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![(
            "w",
            "bash",
            json!({"command": "until [ -e printed ]; do sleep 0.05; done", "timeout_ms": 600000}),
        )]),
        Reply::tool_calls(vec![("o", "bash_output", json!({"id": "bash_1"}))]),
        Reply::text("done"),
    ]);
    let started = Instant::now();
    let mut child = ling(bin, root.path(), home.path(), tmp.path(), &server)
        .args(["-p", "print", "--allowed-tools", "bash"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut sampled = 0;
    loop {
        if let Some(kb) = status_kb(pid, "VmHWM:") {
            sampled = sampled.max(kb);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let seconds = started.elapsed().as_secs_f64();
    let read = server.requests().last().unwrap().messages();
    let result = read
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .lines()
        .take(4)
        .collect::<Vec<_>>()
        .join(" | ");
    (sampled as f64 / 1024.0, seconds, result)
}

/// A `--until` run whose check passes on round `n`: the rounds reported and the seconds.
fn goal(bin: &Path, n: usize) -> (Value, f64) {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut replies: Vec<Reply> = (1..n).map(|i| Reply::text(&format!("try {i}"))).collect();
    replies.push(Reply::tool_calls(vec![(
        "t",
        "bash",
        json!({"command": "touch ok"}),
    )]));
    replies.push(Reply::text("fixed"));
    let server = MockServer::start_blocking(replies);
    let started = Instant::now();
    let out = ling(bin, root.path(), home.path(), tmp.path(), &server)
        .args([
            "-p",
            "make it pass",
            "--allowed-tools",
            "bash",
            "--until",
            "test -f ok",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (result["until"].clone(), seconds)
}

fn main() {
    let mut args = std::env::args().skip(1);
    // Absolute: each run starts in a project folder of its own.
    let bin = std::fs::canonicalize(PathBuf::from(
        args.next().unwrap_or_else(|| "target/debug/ling".into()),
    ))
    .expect("no ling binary; build it first");
    let bytes: u64 = args.next().and_then(|b| b.parse().ok()).unwrap_or(1 << 30);
    println!("ling: {}", bin.display());
    println!("1. Ling's peak RSS while a background command prints (ring: 1 MiB default)");
    for size in [1 << 20, bytes] {
        let (mib, seconds, result) = peak_rss(&bin, size);
        println!(
            "   {:>6} MiB printed: peak RSS {mib:.1} MiB, {seconds:.1} s; bash_output: {result}",
            size >> 20
        );
    }
    println!("2. --until on the mock: a check that passes on round N");
    for n in [1, 3, 5] {
        let (until, seconds) = goal(&bin, n);
        let rounds = until["rounds"].as_u64().unwrap_or(0);
        println!(
            "   N={n}: until = {until}, {seconds:.2} s ({:.0} ms a round)",
            seconds * 1000.0 / rounds.max(1) as f64
        );
    }
}
