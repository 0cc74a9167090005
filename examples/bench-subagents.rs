//! The figures of sub-agents and skills (`scripts/bench-subagents.sh`), measured on the real
//! `ling` binary (release) against the tests' scripted mock model on 127.0.0.1:
//!
//! 1. Four sub-agents of one response, each a few tool calls (every model reply 150 ms late),
//!    against the slowest of them alone: the time from the parent's `task` calls to its next
//!    request.
//! 2. How much the parent's next request grows: by the children's answers plus a fixed
//!    overhead (the `task` calls themselves, each result's wrapper and its one-line usage
//!    note), the same whether the children did little or much.
//! 3. The first request with 100 skills and 20 agent definitions against the one without them.
//!
//! `bench-subagents [LING_BINARY]` (default `target/release/ling`).

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
use std::time::Duration;

use mock_openai::{MockServer, Reply};
use serde_json::{Value, json};

const DELAY: Duration = Duration::from_millis(150);
const RUNS: usize = 3;

struct Dirs {
    _root: tempfile::TempDir,
    _home: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    Dirs {
        root: root.path().to_path_buf(),
        home: home.path().to_path_buf(),
        _root: root,
        _home: home,
    }
}

fn ling(bin: &Path, dirs: &Dirs, server: &MockServer, prompt: &str) {
    let status = Command::new(bin)
        .current_dir(&dirs.root)
        .env("LING_HOME", &dirs.home)
        .env("OPENAI_BASE_URL", server.base_url())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LING_MODEL")
        .args(["-p", prompt, "--output-format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "ling failed");
}

/// A child that makes `calls` tool calls (globs and reads of `file`), then answers.
fn child_script(name: &str, calls: usize, file: &str) -> Vec<Reply> {
    let mut replies = Vec::new();
    for i in 0..calls {
        let call = if i % 2 == 0 {
            ("g", "glob", json!({"pattern": "*.txt"}))
        } else {
            ("r", "read_file", json!({"path": file}))
        };
        replies.push(Reply::tool_calls(vec![call]).delay(DELAY));
    }
    replies.push(
        Reply::text(&format!("{name}: found 3 files; the answer is 42."))
            .usage(500, 20)
            .delay(DELAY),
    );
    replies
}

fn task(id: &str, prompt: &str) -> (String, Value) {
    (
        id.to_string(),
        json!({"description": "look around", "prompt": prompt}),
    )
}

/// One run: the parent calls `task` for each (name, calls); returns the seconds from the
/// parent's task calls to its next request, and the server (for its requests).
fn run_tasks(bin: &Path, children: &[(&str, usize)], file: &str) -> (f64, MockServer) {
    let d = dirs();
    std::fs::write(d.root.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(d.root.join("big.txt"), "x".repeat(20_000)).unwrap();
    let tasks: Vec<(String, Value)> = children
        .iter()
        .enumerate()
        .map(|(i, (name, _))| task(&format!("t{i}"), &format!("{name}: count the files")))
        .collect();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(
            tasks
                .iter()
                .map(|(id, input)| (id.as_str(), "task", input.clone()))
                .collect(),
        ),
        Reply::text("done"),
    ]);
    for (name, calls) in children {
        server.script_for(name, child_script(name, *calls, file));
    }
    ling(bin, &d, &server, "PARENT: delegate");
    let parent = server.requests_for("PARENT");
    assert_eq!(parent.len(), 2, "the parent made {} requests", parent.len());
    let phase = parent[1].at.duration_since(parent[0].at).as_secs_f64();
    (phase, server)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn body_len(server: &MockServer, needle: &str, index: usize) -> usize {
    let requests = server.requests_for(needle);
    serde_json::to_vec(&requests[index].body).unwrap().len()
}

fn parallel(bin: &Path) {
    let children = [
        ("CHILD-A", 2),
        ("CHILD-B", 3),
        ("CHILD-C", 3),
        ("CHILD-D", 4),
    ];
    println!("## Four sub-agents at once against the slowest alone\n");
    println!(
        "Each child makes 2 to 4 tool calls (glob, read_file) and answers; every model reply \
         is {} ms late. Median of {RUNS} runs, seconds from the parent's `task` calls to its \
         next request.\n",
        DELAY.as_millis()
    );
    println!("| run | seconds |\n|---|---|");
    let mut slowest_alone: f64 = 0.0;
    for child in children {
        let alone = median(
            (0..RUNS)
                .map(|_| run_tasks(bin, &[child], "a.txt").0)
                .collect(),
        );
        println!(
            "| {} alone ({} tool calls) | {alone:.3} |",
            child.0, child.1
        );
        slowest_alone = slowest_alone.max(alone);
    }
    let together = median(
        (0..RUNS)
            .map(|_| run_tasks(bin, &children, "a.txt").0)
            .collect(),
    );
    println!("| all four at once | {together:.3} |");
    println!(
        "\n**Four at once / slowest alone: {:.2}x** (bound: 1.3x)\n",
        together / slowest_alone
    );
}

fn growth(bin: &Path) {
    println!("## The parent's next request grows by the answers plus a fixed overhead\n");
    println!(
        "| children's work | growth of the parent's request (bytes) | the answers (bytes) | \
         overhead (bytes) | per child |\n|---|---|---|---|---|"
    );
    for (what, calls, file) in [
        ("1 tool call each, small output", 1, "a.txt"),
        ("4 tool calls each, 20 KB reads", 4, "big.txt"),
    ] {
        let children = [
            ("CHILD-A", calls),
            ("CHILD-B", calls),
            ("CHILD-C", calls),
            ("CHILD-D", calls),
        ];
        let (_, server) = run_tasks(bin, &children, file);
        let growth = body_len(&server, "PARENT", 1) - body_len(&server, "PARENT", 0);
        let answers: usize = children
            .iter()
            .map(|(name, _)| {
                let text = format!("{name}: found 3 files; the answer is 42.");
                serde_json::to_string(&text).unwrap().len() - 2
            })
            .sum();
        let overhead = growth - answers;
        println!(
            "| {what} | {growth} | {answers} | {overhead} | {} |",
            overhead / children.len()
        );
    }
    println!(
        "\nThe overhead is the parent's own assistant message with the four `task` calls (their \
         arguments), each tool message's JSON, and each result's usage note \
         (`[general-purpose agent ID: N requests, N in / N out tokens; task resume=\"ID\" \
         continues it]`); none of it depends on what the child did.\n"
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn first_request_size(bin: &Path, with: bool) -> usize {
    let d = dirs();
    if with {
        for i in 0..100 {
            write(
                &d.home.join(format!("skills/skill-{i:03}/SKILL.md")),
                &format!(
                    "---\nname: skill-{i:03}\ndescription: Handles documents of kind {i}: \
                     extracts their tables, fills their forms and checks their layout\n---\n\
                     {}\n",
                    "The steps of this skill.\n".repeat(40)
                ),
            );
        }
        for i in 0..20 {
            write(
                &d.home.join(format!("agents/agent-{i:02}.md")),
                &format!(
                    "---\nname: agent-{i:02}\ndescription: Reviews changes of area {i} for \
                     bugs, style and missing tests, and reports what to fix\ntools: Read, Grep\n\
                     ---\n{}\n",
                    "You are a careful reviewer.\n".repeat(20)
                ),
            );
        }
    }
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    ling(bin, &d, &server, "hello");
    serde_json::to_vec(&server.requests()[0].body)
        .unwrap()
        .len()
}

fn first_request(bin: &Path) {
    let without = first_request_size(bin, false);
    let with = first_request_size(bin, true);
    println!("## The first request with 100 skills and 20 agent definitions\n");
    println!(
        "| first request | bytes |\n|---|---|\n| no skills, no agent definitions | {without} |\n\
         | 100 skills, 20 agent definitions (~100-character descriptions, bodies of 1 KB) | \
         {with} |\n\n**Difference: {} bytes** (bound: 2048)\n",
        with - without
    );
}

fn main() {
    let bin = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/release/ling"));
    assert!(
        bin.exists(),
        "{} does not exist: build it first",
        bin.display()
    );
    // The runs start in temp dirs.
    let bin = std::fs::canonicalize(&bin).unwrap();
    parallel(&bin);
    growth(&bin);
    first_request(&bin);
}
