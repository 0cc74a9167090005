//! What rendering the REPL's markdown answers costs (`ling::ui::markdown`): a 100 KB answer of
//! headings, paragraphs, lists, tables and code blocks streamed in small deltas, as a model
//! sends it. Reports the whole render per 100 KB (median of N runs), the delay from a delta's
//! arrival to its paint (the time `push` takes, which is all that stands between them: the
//! maximum and the 99th percentile over the answer), and the one-off cost of the highlighting
//! warm-up the REPL runs in the background at start. Usage: bench-markdown [N] (default 20);
//! `scripts/bench-markdown.sh` builds it in release mode.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use ling::ui::markdown::MarkdownStream;
use ling::ui::style::Style;

const SIZE: usize = 100 * 1024;
/// A streamed model delta.
const DELTA: usize = 20;

fn main() -> anyhow::Result<()> {
    let runs: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 20,
    };
    anyhow::ensure!(runs > 0, "N must be at least 1");
    let style = Style { color: true };

    // The REPL loads syntect's syntaxes and theme and compiles the common languages' regexes
    // on a background thread at start (`warm_up`), before the first answer; measured here.
    let started = Instant::now();
    ling::ui::markdown::warm_up();
    let load = started.elapsed();

    let answer = answer(SIZE);
    let deltas: Vec<&str> = split(&answer, DELTA);
    let mut totals = Vec::new();
    let mut delays = Vec::new();
    for _ in 0..runs {
        let mut stream = MarkdownStream::new(style, 100);
        let started = Instant::now();
        for delta in &deltas {
            let at = Instant::now();
            black_box(stream.push(delta));
            delays.push(at.elapsed());
        }
        black_box(stream.finish());
        totals.push(started.elapsed());
    }
    totals.sort();
    delays.sort();
    let p99 = delays[delays.len() * 99 / 100];
    let p999 = delays[delays.len() * 999 / 1000];
    let max = delays[delays.len() - 1];
    let over = delays
        .iter()
        .filter(|d| **d > Duration::from_millis(5))
        .count();
    println!(
        "markdown answer: {} bytes in {} deltas of {DELTA} bytes",
        answer.len(),
        deltas.len()
    );
    println!(
        "warm-up at REPL start (background; loads the sets, compiles the common languages): {}",
        ms(load)
    );
    println!(
        "render per 100 KB, streamed (median of {runs}): {}",
        ms(totals[runs / 2])
    );
    println!(
        "delta to paint: p99 {}, p99.9 {}, max {} ({over} of {} deltas over 5 ms)",
        ms(p99),
        ms(p999),
        ms(max),
        delays.len()
    );
    for (what, text) in [
        ("a 10 MB code block", huge_code()),
        ("a 10 MB table", huge_table()),
    ] {
        let before = peak_rss_kb();
        let started = Instant::now();
        let mut stream = MarkdownStream::new(style, 100);
        let mut bytes = 0;
        for delta in split(&text, 64 * 1024) {
            bytes += stream.push(delta).as_str().len();
        }
        bytes += stream.finish().as_str().len();
        println!(
            "{what}, streamed in 64 KB deltas: {} to paint {} MB; peak memory +{} MB",
            ms(started.elapsed()),
            bytes / 1_000_000,
            peak_rss_kb().saturating_sub(before) / 1024
        );
    }
    Ok(())
}

fn huge_code() -> String {
    let mut text = String::from("```rust\n");
    while text.len() < 10_000_000 {
        text.push_str("    let value = compute(alpha, beta) + other(gamma); // comment\n");
    }
    text + "```\n"
}

fn huge_table() -> String {
    let mut text = String::from("| name | size | result |\n|---|--:|:-:|\n");
    while text.len() < 10_000_000 {
        text.push_str("| parser | 12 ms | ok |\n");
    }
    text
}

/// The process's peak resident memory (Linux `VmHWM`), in KiB.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// About `size` bytes of the markdown a coding model writes.
fn answer(size: usize) -> String {
    let block = "## Why the test fails\n\nThe **parser** reads the `header` before the body, so a \
                 *short* read ends the loop early; see [the docs](https://example.com/docs).\n\n\
                 - first, check the length\n- then the checksum\n  - nested detail\n\n\
                 | step | time | result |\n|------|-----:|:------:|\n| parse | 12 ms | ok |\n| \
                 verify | 3 ms | failed |\n\n```rust\nfn read(buf: &[u8]) -> Result<usize, Error> {\n    \
                 let n = buf.len();\n    Ok(n)\n}\n```\n\n> Note: this only happens on slow disks.\n\n";
    block.repeat(size / block.len() + 1)[..size].to_string()
}

fn split(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}
