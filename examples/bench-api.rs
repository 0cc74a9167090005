//! Figures of the three wire APIs (`scripts/bench-api.sh`), against the mock model of the
//! integration tests (tests/support/), which answers each API in its real event sequence and
//! counts prompt caching as each API does:
//!
//! 1. Prompt caching over a 20-request scripted session (`ling -p`, a 30 KB system prompt and the
//!    built-in tools, 19 tool calls reading a 2 KB file each, then an answer): per request, the
//!    bytes Ling marks cacheable (Anthropic: the request's JSON up to its last `cache_control`
//!    block) and the share of its input tokens the mock reports as cache reads; for Anthropic and
//!    for the Responses API (whose caching is automatic, so it measures a stable prefix).
//! 2. One-shot wall time of `ling -p hi` for each API, against chat completions, and against
//!    `ling --version` (start-up's ratio, issue 23).
//! 3. The TLS set-up an `https://` model server costs (the system's root certificates read into a
//!    verifier), measured in-process, and how much of it a one-shot run still waits for.
//!
//! ```text
//! bench-api [all|cache|oneshot|tls] [LING_BINARY] [RUNS]
//! bench-api serve      # the mock alone, answering "ok" to every request, until killed
//! ```

// The mock model of the integration tests, as it is there (`super::` in it is this crate root;
// like all test code it may `expect`).
#[allow(dead_code)]
#[path = "../tests/support/chat_history.rs"]
mod chat_history;
#[allow(dead_code)]
#[path = "../tests/support/mock_http.rs"]
mod mock_http;
#[path = "../tests/support/mock_images.rs"]
#[allow(dead_code)]
mod mock_images;
#[allow(dead_code, clippy::expect_used)]
#[path = "../tests/support/mock_openai.rs"]
mod mock_openai;
#[allow(dead_code)]
#[path = "../tests/support/mock_overflow.rs"]
mod mock_overflow;
#[allow(dead_code)]
#[path = "../tests/support/mock_rules.rs"]
mod mock_rules;
#[allow(dead_code)]
#[path = "../tests/support/mock_wire.rs"]
mod mock_wire;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mock_openai::{Api, MockServer, Recorded, Reply};
use serde_json::{Value, json};

const TURNS: usize = 20;
const SYSTEM_BYTES: usize = 30 * 1024;

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "all".into());
    if what == "serve" {
        let server = MockServer::start_blocking(Vec::new());
        server.repeat(Reply::text("ok"));
        println!("{}", server.base_url());
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let ling = PathBuf::from(args.next().unwrap_or_else(|| "target/release/ling".into()));
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(30);
    let ling = std::fs::canonicalize(&ling).unwrap_or(ling);
    println!("ling: {}", ling.display());
    if matches!(what.as_str(), "all" | "cache") {
        cache_session(&ling);
    }
    if matches!(what.as_str(), "all" | "oneshot") {
        one_shot(&ling, runs);
    }
    if matches!(what.as_str(), "all" | "tls") {
        tls_setup(&ling, runs);
    }
}

/// A temporary project and `LING_HOME`, removed on drop.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let root =
            std::env::temp_dir().join(format!("ling-bench-api-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["project", "home"] {
            std::fs::create_dir_all(root.join(dir)).unwrap_or_else(|e| panic!("{e}"));
        }
        Self { root }
    }

    fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn command(&self, ling: &Path, api: &str, base_url: &str) -> Command {
        let mut cmd = Command::new(ling);
        cmd.current_dir(self.project())
            .env("LING_HOME", self.home())
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("LING_LOG")
            .args([
                "--api",
                api,
                "--base-url",
                base_url,
                "--model",
                "bench-model",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The request's JSON up to the end of its last block marked `cache_control` (tools, then
/// system, then messages, as the cache orders them): what Ling asks Anthropic to cache.
fn cacheable_bytes(body: &Value) -> usize {
    let mut parts: Vec<(String, bool)> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        parts.push((tool.to_string(), tool.get("cache_control").is_some()));
    }
    for block in body["system"].as_array().into_iter().flatten() {
        parts.push((block.to_string(), block.get("cache_control").is_some()));
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            parts.push((block.to_string(), block.get("cache_control").is_some()));
        }
    }
    let last = parts.iter().rposition(|(_, marked)| *marked);
    last.map_or(0, |end| parts[..=end].iter().map(|(p, _)| p.len()).sum())
}

fn cache_session(ling: &Path) {
    println!(
        "\n## Prompt caching: {TURNS} requests, a {} KB system prompt, the built-in tools\n",
        SYSTEM_BYTES / 1024
    );
    for (api, name) in [(Api::Anthropic, "anthropic"), (Api::Responses, "responses")] {
        let scratch = Scratch::new(name);
        let paragraph = "You are working in a large Rust code base. Keep every change small, \
                         explain what you change and why, and run the tests before you answer. ";
        let system: String = paragraph.chars().cycle().take(SYSTEM_BYTES).collect();
        let file: String = "fn handler(request: &Request) -> Response { todo!() }\n"
            .chars()
            .cycle()
            .take(2048)
            .collect();
        let mut replies = Vec::new();
        for n in 1..TURNS {
            let path = format!("src/file_{n}.rs");
            std::fs::create_dir_all(scratch.project().join("src"))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(scratch.project().join(&path), &file).unwrap_or_else(|e| panic!("{e}"));
            replies.push(Reply::tool_calls_with_text(
                &format!("Reading file {n}."),
                vec![(&*format!("call_{n}"), "read_file", json!({"path": path}))],
            ));
        }
        replies.push(Reply::text("All files read."));
        // `tool_calls_with_text` borrows the id only for the call.
        let server = MockServer::start_blocking(replies);
        let mut cmd = scratch.command(ling, name, &server.base_url());
        cmd.args([
            "-p",
            "read the files one by one",
            "--system-prompt",
            &system,
        ]);
        let status = cmd.status().unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{name}: ling failed");
        let requests: Vec<Recorded> = server.requests();
        let reported = server.reported();
        assert_eq!(requests.len(), TURNS, "{name}");
        println!("### {name}\n");
        println!(
            "| request | request bytes | marked cacheable | input tokens | cache reads | cache writes | read share |"
        );
        println!("|---|---|---|---|---|---|---|");
        let (mut read, mut total, mut min_share) = (0u64, 0u64, f64::MAX);
        let mut marked_total = 0usize;
        for (n, (request, report)) in requests.iter().zip(&reported).enumerate() {
            let bytes = request.body.to_string().len();
            let marked = if api == Api::Anthropic {
                cacheable_bytes(&request.body)
            } else {
                0
            };
            marked_total += marked;
            let input = report.input;
            let share = input.cache_read as f64 / input.total().max(1) as f64;
            if n >= 2 {
                read += input.cache_read;
                total += input.total();
                min_share = min_share.min(share);
            }
            println!(
                "| {} | {bytes} | {} | {} | {} | {} | {:.1}% |",
                n + 1,
                if api == Api::Anthropic {
                    marked.to_string()
                } else {
                    "(automatic)".into()
                },
                input.total(),
                input.cache_read,
                input.cache_write,
                share * 100.0
            );
        }
        println!(
            "\n{name}: from the third request on, {:.1}% of the input tokens were cache reads \
             (the lowest request {:.1}%){}\n",
            read as f64 / total.max(1) as f64 * 100.0,
            min_share * 100.0,
            if api == Api::Anthropic {
                format!("; {marked_total} bytes marked cacheable over the {TURNS} requests")
            } else {
                String::new()
            }
        );
    }
}

/// A command to time, and how to make it afresh.
type Timed = (String, Box<dyn FnMut() -> Command>);

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs each command `runs` times after two warm-up rounds, the commands in turn within a
/// round: each one's samples, round by round (so that ratios are taken pair by pair, as the
/// machine's speed drifts).
fn time_all(commands: &mut [Timed], runs: usize) -> Vec<Vec<Duration>> {
    let mut samples = vec![Vec::new(); commands.len()];
    for round in 0..runs + 2 {
        for (i, (name, make)) in commands.iter_mut().enumerate() {
            let began = Instant::now();
            let status = make().status().unwrap_or_else(|e| panic!("{name}: {e}"));
            let took = began.elapsed();
            assert!(status.success(), "{name} failed");
            if round >= 2 {
                samples[i].push(took);
            }
        }
    }
    samples
}

/// The median of `a[i] / b[i]`.
fn median_ratio(a: &[Duration], b: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64().max(1e-9))
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn one_shot(ling: &Path, runs: usize) {
    println!("## One-shot `ling -p hi` on the mock, {runs} rounds (the commands in turn)\n");
    let server = MockServer::start_blocking(Vec::new());
    server.repeat(Reply::text("ok"));
    let base = server.base_url();
    let scratch = Scratch::new("oneshot");
    let mut commands: Vec<Timed> = Vec::new();
    let version_bin = ling.to_path_buf();
    commands.push((
        "ling --version".into(),
        Box::new(move || {
            let mut cmd = Command::new(&version_bin);
            cmd.arg("--version").stdout(Stdio::null());
            cmd
        }),
    ));
    for api in ["chat", "anthropic", "responses"] {
        let ling = ling.to_path_buf();
        let base = base.clone();
        let project = scratch.project();
        let home = scratch.home();
        commands.push((
            format!("ling -p hi --api {api}"),
            Box::new(move || {
                let mut cmd = Command::new(&ling);
                cmd.current_dir(&project)
                    .env("LING_HOME", &home)
                    .env("NO_COLOR", "1")
                    .env_remove("LING_LOG")
                    .args([
                        "-p",
                        "hi",
                        "--api",
                        api,
                        "--base-url",
                        &base,
                        "--model",
                        "bench-model",
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                cmd
            }),
        ));
    }
    let samples = time_all(&mut commands, runs);
    println!(
        "| command | median | vs --version (median of the pairs) | vs chat (median of the pairs) |"
    );
    println!("|---|---|---|---|");
    for ((name, _), taken) in commands.iter().zip(&samples) {
        println!(
            "| {name} | {:.2} ms | {:.2}x | {:.3} |",
            median(taken.clone()).as_secs_f64() * 1e3,
            median_ratio(taken, &samples[0]),
            median_ratio(taken, &samples[1])
        );
    }
    println!();
}

fn tls_setup(ling: &Path, runs: usize) {
    use ling::http_client::{ClientOptions, Target, build};
    println!("## TLS set-up of an https:// model server\n");
    let time = |plain: bool| {
        let samples: Vec<Duration> = (0..runs.max(5))
            .map(|_| {
                let began = Instant::now();
                let client = build(ClientOptions::new(Target::Model).plain_http(plain));
                let took = began.elapsed();
                assert!(client.is_ok());
                took
            })
            .collect();
        median(samples)
    };
    let with_roots = time(false);
    let plain = time(true);
    println!(
        "building the HTTP client: {:.2} ms with the system's root certificates, {:.3} ms without \
         (an http:// server's); median of {}",
        with_roots.as_secs_f64() * 1e3,
        plain.as_secs_f64() * 1e3,
        runs.max(5)
    );
    // How much of it a one-shot run waits for: an https:// server on a closed port fails at
    // once, after the wait for the TLS set-up the log records.
    let scratch = Scratch::new("tls");
    std::fs::write(scratch.home().join("settings.json"), r#"{"maxRetries": 0}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut waited = Vec::new();
    for _ in 0..runs.max(5) {
        let log = scratch.home().join("logs");
        let _ = std::fs::remove_dir_all(&log);
        let mut cmd = scratch.command(ling, "chat", "https://127.0.0.1:1/v1");
        cmd.env("LING_LOG", "debug").args(["-p", "hi"]);
        let _ = cmd.status();
        let text = std::fs::read_dir(&log)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .collect::<String>();
        let micros = |needle: &str| {
            text.lines()
                .find_map(|l| l.split(needle).nth(1))
                .and_then(|rest| rest.trim().split(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
        };
        let took = micros("TLS set-up took ").unwrap_or(0);
        let wait = micros("waited ").unwrap_or(0);
        waited.push((took, wait));
    }
    waited.sort_by_key(|(_, w)| *w);
    let (took, wait) = waited[waited.len() / 2];
    println!(
        "in a one-shot run (median by wait): the set-up took {:.2} ms on its own thread, of which \
         the first request waited {:.2} ms",
        took as f64 / 1e3,
        wait as f64 / 1e3
    );
}
