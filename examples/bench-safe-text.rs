//! What neutralising outside text for the terminal costs (`ling::ui::safe_text`): per MB of
//! typical text (code and tool output: mostly ASCII, some UTF-8, a tab or a colour code now and
//! then), of plain ASCII, of hostile text (escapes everywhere), and of typical text arriving in
//! small deltas as a model streams it; against one spawn of `sh -c true`, measured here too.
//! Medians of N runs. Usage: bench-safe-text [N] (default 50). `scripts/bench-safe-text.sh`
//! builds it in release mode.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use ling::ui::safe_text::neutralise;

const MB: usize = 1 << 20;
/// A typical tool output the agent shows (a test run, a file read).
const TYPICAL_OUTPUT: usize = 30 * 1024;
/// A streamed model delta.
const DELTA: usize = 16;

fn main() -> anyhow::Result<()> {
    let runs: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 50,
    };
    anyhow::ensure!(runs > 0, "N must be at least 1");

    let typical = typical_text(MB);
    let ascii = "fn main() { println!(\"hello, world\"); } // plain ASCII line\n".repeat(MB / 60);
    let hostile = "\x1b]52;c;cm0gLXJm\x07\x1b[2J\r\u{9b}2J\u{202e}ab\x7f".repeat(MB / 32);
    let output = typical_text(TYPICAL_OUTPUT);
    let spawn = median(runs, spawn_sh);

    println!("neutralising, median of {runs} runs (per MB of input):");
    let per_mb = |text: &str| median(runs, || time(|| drop(black_box(neutralise(text)))));
    for (name, text) in [
        ("typical text", typical.as_str()),
        ("plain ASCII", ascii.as_str()),
        ("hostile text", hostile.as_str()),
    ] {
        let took = per_mb(text);
        println!(
            "  {name:<28} {:>8.3} ms/MB  ({:>7.1} MB/s)",
            ms(took) * MB as f64 / text.len() as f64,
            text.len() as f64 / MB as f64 / took.as_secs_f64()
        );
    }
    let deltas: Vec<&str> = chunks(&typical, DELTA);
    let streamed = median(runs, || {
        time(|| {
            for delta in &deltas {
                drop(black_box(neutralise(delta)));
            }
        })
    });
    println!(
        "  {:<28} {:>8.3} ms/MB",
        format!("typical, in {DELTA}-byte deltas"),
        ms(streamed) * MB as f64 / typical.len() as f64
    );

    let one = median(runs * 20, || time(|| drop(black_box(neutralise(&output)))));
    println!("\none spawn of `sh -c true`:       {:>8.3} ms", ms(spawn));
    println!(
        "a typical {} KB tool output:      {:>8.3} ms = {:.2}% of a spawn (target: at most 5%)",
        TYPICAL_OUTPUT / 1024,
        ms(one),
        100.0 * one.as_secs_f64() / spawn.as_secs_f64()
    );
    Ok(())
}

/// Lines like a build log or source file: ASCII, a tab, some accented and CJK characters and
/// check marks, and a colour code every 50 lines.
fn typical_text(size: usize) -> String {
    let lines = [
        "    Compiling ling v0.1.0 (/work/ling)\n",
        "\tlet café = résumé.iter().map(|x| x * 2).collect::<Vec<_>>();\n",
        "test ui::safe_text::tests::tabs_newlines_and_valid_utf8 ... ok ✓\n",
        "// 日本語のコメント: naïve façade — «quoted» text\n",
        "error[E0308]: mismatched types --> src/main.rs:4:18\n",
    ];
    let mut out = String::with_capacity(size + 128);
    let mut i = 0;
    while out.len() < size {
        if i % 50 == 49 {
            out.push_str("\x1b[32mok\x1b[0m\n");
        }
        out.push_str(lines[i % lines.len()]);
        i += 1;
    }
    out
}

/// `text` in pieces of about `size` bytes, cut on character boundaries.
fn chunks(text: &str, size: usize) -> Vec<&str> {
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

fn spawn_sh() -> Duration {
    time(|| {
        let status = std::process::Command::new("sh")
            .args(["-c", "true"])
            .status();
        assert!(status.is_ok_and(|s| s.success()), "sh -c true failed");
    })
}

fn time(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
