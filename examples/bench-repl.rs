//! The REPL's paint against the stream, end to end: the real `ling` binary in a pseudo-terminal
//! (100 columns, colours on) against a mock model on 127.0.0.1 that streams a 100 KB markdown
//! answer (paragraphs, lists, tables, code fences) in 20-byte deltas.
//!
//! - Wall time: the answer streamed as fast as the mock can send it, from the chat request's
//!   arrival to the REPL's footer, against the same for `ling -p` (stdout a pipe) to its exit.
//!   The target: the REPL within 1.2x of `-p`.
//! - Delay: the answer paced (a delta every `PACE`), each source line ending in a marker
//!   (`m00042`); the delay of a line is from the mock's write of the delta that ends it to the
//!   marker's arrival on the terminal (escape sequences stripped). Reported for the lines of code
//!   fences (the target: every one within 50 ms) and for every line (p50, p99, max).
//!
//! Usage: bench-repl [LING] [N] (default `target/release/ling`, 3 runs of each; the median is
//! reported). `scripts/bench-repl.sh` builds ling in release mode and runs it.
#![allow(clippy::print_stdout)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

const SIZE: usize = 100 * 1024;
const DELTA: usize = 20;
/// The pace of the delay run: 20-byte deltas every 400 µs, 50 KB/s, a fast model.
const PACE: Duration = Duration::from_micros(400);
const COLUMNS: u16 = 100;
/// In the footer after each turn (`0.9s · context 3% of 32.8k`).
const FOOTER: &[u8] = " · context ".as_bytes();

fn main() -> anyhow::Result<()> {
    let ling = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/release/ling".into());
    // The REPL starts in a temporary folder: a relative path would not lead to ling there.
    let ling = std::fs::canonicalize(&ling)
        .with_context(|| format!("no ling at {ling}"))?
        .to_string_lossy()
        .into_owned();
    let runs: usize = match std::env::args().nth(2) {
        Some(n) => n.parse()?,
        None => 3,
    };
    anyhow::ensure!(runs > 0, "N must be at least 1");
    let answer = answer(SIZE);
    let deltas = split(&answer, DELTA);
    let fence_markers = fence_markers(&answer);
    println!(
        "answer: {} bytes, {} deltas of {DELTA} bytes, {} marked lines ({} in code fences)",
        answer.len(),
        deltas.len(),
        answer.lines().filter(|l| marker_of(l).is_some()).count(),
        fence_markers.len()
    );

    let mut repl = Vec::new();
    let mut print = Vec::new();
    let mut repl_cpu = Vec::new();
    let mut print_cpu = Vec::new();
    for _ in 0..runs {
        let run = run_repl(&ling, &deltas, Duration::ZERO)?;
        repl.push(run.wall);
        repl_cpu.push(run.cpu);
        let (wall, cpu) = run_print(&ling, &deltas)?;
        print.push(wall);
        print_cpu.push(cpu);
    }
    for v in [&mut repl, &mut print, &mut repl_cpu, &mut print_cpu] {
        v.sort();
    }
    let (r, p) = (repl[runs / 2], print[runs / 2]);
    println!(
        "wall, unpaced (median of {runs}): REPL {}, -p {}: {:.2}x",
        ms(r),
        ms(p),
        r.as_secs_f64() / p.as_secs_f64()
    );
    println!(
        "CPU of the ling process, unpaced (median of {runs}; whole run, start-up included, \
         10 ms ticks): REPL {}, -p {}",
        ms(repl_cpu[runs / 2]),
        ms(print_cpu[runs / 2])
    );

    let mut fence = Vec::new();
    let mut all = Vec::new();
    let mut missing = 0;
    for _ in 0..runs {
        let run = run_repl(&ling, &deltas, PACE)?;
        for (marker, sent) in &run.sent {
            match run.seen.get(marker) {
                Some(seen) => {
                    let delay = seen.saturating_duration_since(*sent);
                    all.push(delay);
                    if fence_markers.contains(marker) {
                        fence.push(delay);
                    }
                }
                None => missing += 1,
            }
        }
    }
    fence.sort();
    all.sort();
    let pct = |v: &[Duration], p: usize| v[(v.len() * p / 100).min(v.len() - 1)];
    println!(
        "delay, paced at a delta every {} µs: code-fence lines p99 {}, max {} ({} of {} over \
         50 ms)",
        PACE.as_micros(),
        ms(pct(&fence, 99)),
        ms(fence[fence.len() - 1]),
        fence
            .iter()
            .filter(|d| **d > Duration::from_millis(50))
            .count(),
        fence.len()
    );
    println!(
        "delay, every marked line: p50 {}, p99 {}, max {}{}",
        ms(pct(&all, 50)),
        ms(pct(&all, 99)),
        ms(all[all.len() - 1]),
        if missing > 0 {
            format!(" ({missing} markers never seen)")
        } else {
            String::new()
        }
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// About `size` bytes of the markdown a coding model writes, each line ending in a unique
/// marker (`m00001`...) except fences and blank lines.
fn answer(size: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    while out.len() < size {
        out.push_str(&mark(&mut n, "## Why the test fails"));
        out.push('\n');
        out.push_str(&mark(
            &mut n,
            "The **parser** reads the `header` before the body, so a *short* read ends the loop",
        ));
        out.push_str(&mark(
            &mut n,
            "early; see [the docs](https://example.com/docs).",
        ));
        out.push('\n');
        out.push_str(&mark(&mut n, "- first, check the length"));
        out.push_str(&mark(&mut n, "- then the checksum"));
        out.push('\n');
        out.push_str("| step | time | result |\n|------|-----:|:------:|\n");
        n += 2;
        out.push_str(&format!("| parse | 12 ms | ok m{:05} |\n", n - 1));
        out.push_str(&format!("| verify | 3 ms | failed m{n:05} |\n"));
        out.push('\n');
        out.push_str("```rust\n");
        for line in [
            "fn read(buf: &[u8]) -> Result<usize, Error> { //",
            "    let n = buf.len(); //",
            "    if n == 0 { return Err(Error::Empty); } //",
            "    Ok(n) //",
            "} //",
        ] {
            out.push_str(&mark(&mut n, line));
        }
        out.push_str("```\n\n");
        out.push_str(&mark(&mut n, "> Note: this only happens on slow disks."));
        out.push('\n');
    }
    out
}

/// `line` with the next marker at its end, and its newline.
fn mark(n: &mut usize, line: &str) -> String {
    *n += 1;
    format!("{line} m{n:05}\n")
}

/// The marker in `line`, if it has one.
fn marker_of(line: &str) -> Option<String> {
    line.split(' ').find(|w| is_marker(w)).map(str::to_string)
}

fn is_marker(word: &str) -> bool {
    word.len() == 6 && word.starts_with('m') && word[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The markers of the lines inside code fences.
fn fence_markers(answer: &str) -> std::collections::HashSet<String> {
    let mut inside = false;
    let mut out = std::collections::HashSet::new();
    for line in answer.lines() {
        if line.starts_with("```") {
            inside = !inside;
        } else if inside && let Some(m) = marker_of(line) {
            out.insert(m);
        }
    }
    out
}

fn split(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_string());
        start = end;
    }
    out
}

/// When the mock got the chat request, and when it wrote the delta that ended each marked line.
#[derive(Default)]
struct Sent {
    request: Option<Instant>,
    lines: HashMap<String, Instant>,
}

/// A mock chat-completions server that streams `deltas`, `pace` apart; other requests (the
/// context-window probe) get a 404.
fn mock(deltas: Vec<String>, pace: Duration) -> anyhow::Result<(String, Arc<Mutex<Sent>>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let sent = Arc::new(Mutex::new(Sent::default()));
    let record = sent.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let deltas = deltas.clone();
            let record = record.clone();
            std::thread::spawn(move || {
                let _ = serve(stream, &deltas, pace, &record);
            });
        }
    });
    Ok((url, sent))
}

fn serve(
    stream: TcpStream,
    deltas: &[String],
    pace: Duration,
    sent: &Mutex<Sent>,
) -> anyhow::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = String::new();
    reader.read_line(&mut head)?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    if !head.contains("/chat/completions") {
        out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
        return Ok(());
    }
    let started = Instant::now();
    if let Ok(mut s) = sent.lock() {
        s.request = Some(started);
    }
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
    )?;
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let value = serde_json::json!({
            "id": "bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {value}\n\n")
    };
    out.write_all(
        chunk(
            serde_json::json!({"role": "assistant", "content": ""}),
            None,
        )
        .as_bytes(),
    )?;
    // The text of the line being sent, to find its marker when its newline goes out.
    let mut line = String::new();
    for (i, delta) in deltas.iter().enumerate() {
        if !pace.is_zero() {
            let due = started + pace * u32::try_from(i)?;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        out.write_all(chunk(serde_json::json!({"content": delta}), None).as_bytes())?;
        out.flush()?;
        let at = Instant::now();
        for c in delta.chars() {
            if c == '\n' {
                if let Some(m) = marker_of(&line)
                    && let Ok(mut s) = sent.lock()
                {
                    s.lines.insert(m, at);
                }
                line.clear();
            } else {
                line.push(c);
            }
        }
    }
    out.write_all(chunk(serde_json::json!({}), Some("stop")).as_bytes())?;
    out.write_all(b"data: [DONE]\n\n")?;
    out.flush()?;
    Ok(())
}

/// A project and a home for one run.
fn command(ling: &str, url: &str, dirs: &(tempfile::TempDir, tempfile::TempDir)) -> Command {
    let mut cmd = Command::new(ling);
    cmd.current_dir(dirs.0.path())
        .env("LING_HOME", dirs.1.path())
        .env("OPENAI_API_KEY", "bench")
        .env("TERM", "xterm-256color")
        .env("COLORTERM", "truecolor")
        .env_remove("NO_COLOR")
        .args(["--base-url", url, "--model", "bench"]);
    cmd
}

fn dirs() -> anyhow::Result<(tempfile::TempDir, tempfile::TempDir)> {
    Ok((tempfile::tempdir()?, tempfile::tempdir()?))
}

struct ReplRun {
    wall: Duration,
    /// CPU time (user and system) of the REPL's process.
    cpu: Duration,
    sent: HashMap<String, Instant>,
    seen: HashMap<String, Instant>,
}

/// One answer in the REPL: from the request's arrival to the footer on the terminal.
fn run_repl(ling: &str, deltas: &[String], pace: Duration) -> anyhow::Result<ReplRun> {
    let (url, sent) = mock(deltas.to_vec(), pace)?;
    let dirs = dirs()?;
    let mut cmd = command(ling, &url, &dirs);
    cmd.arg("explain the failure");
    let mut process = rexpect::process::PtyProcess::new(cmd)?;
    let master = process.get_file_handle()?;
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: 40,
            ws_col: COLUMNS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    let mut writer = master.try_clone()?;
    let mut reader = master;
    // What arrived, when: read raw and fast (the terminal's pace is the REPL's, not this
    // program's), taken apart once the answer is done.
    let mut chunks: Vec<(Instant, Vec<u8>)> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut tail: Vec<u8> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let done = loop {
        if Instant::now() > deadline {
            bail!("the REPL did not finish the answer in 120 s");
        }
        let n = match reader.read(&mut buf) {
            // EIO: the REPL closed the terminal.
            Ok(0) | Err(_) => bail!(
                "the REPL exited before its footer; its last output: {}",
                String::from_utf8_lossy(&tail)
            ),
            Ok(n) => n,
        };
        let at = Instant::now();
        chunks.push((at, buf[..n].to_vec()));
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 512 {
            tail.drain(..tail.len() - 512);
        }
        if tail.windows(FOOTER.len()).any(|w| w == FOOTER) {
            break at;
        }
    };
    let mut screen = Stripped::default();
    let mut seen = HashMap::new();
    for (at, bytes) in &chunks {
        let mut from = screen.text.len().saturating_sub(8);
        while !screen.text.is_char_boundary(from) {
            from += 1;
        }
        screen.push(bytes);
        for (i, _) in screen.text[from..].match_indices('m') {
            let start = from + i;
            let before = screen.text[..start].chars().next_back();
            if let Some(word) = screen.text.get(start..start + 6)
                && is_marker(word)
                && !before.is_some_and(char::is_alphanumeric)
            {
                seen.entry(word.to_string()).or_insert(*at);
            }
        }
    }
    let cpu = child_cpu();
    // Ctrl-D at the prompt.
    writer.write_all(b"\x04")?;
    let _ = process.exit();
    let sent = match sent.lock() {
        Ok(s) => s,
        Err(_) => bail!("the mock failed"),
    };
    let request = sent.request.context("the mock got no chat request")?;
    Ok(ReplRun {
        cpu,
        wall: done.saturating_duration_since(request),
        sent: sent.lines.clone(),
        seen,
    })
}

/// One answer with `-p`, stdout a pipe: from the request's arrival to the process's exit, and
/// its CPU time.
fn run_print(ling: &str, deltas: &[String]) -> anyhow::Result<(Duration, Duration)> {
    let (url, sent) = mock(deltas.to_vec(), Duration::ZERO)?;
    let dirs = dirs()?;
    let mut cmd = command(ling, &url, &dirs);
    cmd.args(["-p", "explain the failure"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn()?;
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .context("no stdout")?
        .read_to_end(&mut out)?;
    // The answer is all out when stdout closes, as the REPL's is at its footer: timed here, not
    // after the pause below (which once added 50 ms to every -p time and hid most of the gap).
    let done = Instant::now();
    // Read before `wait`, once the child has exited: its times are still there.
    while !exited(&child) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let cpu = child_cpu();
    child.wait()?;
    let request = match sent.lock() {
        Ok(s) => s.request.context("the mock got no chat request")?,
        Err(_) => bail!("the mock failed"),
    };
    anyhow::ensure!(out.len() >= SIZE, "-p printed {} bytes", out.len());
    Ok((done.saturating_duration_since(request), cpu))
}

/// Whether `child` has exited (a zombie, not yet waited for: its times still readable).
fn exited(child: &std::process::Child) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
    stat.rsplit_once(") ")
        .is_none_or(|(_, rest)| rest.starts_with('Z'))
}

/// The CPU time (user and system) of this process's children named `ling` (`/proc`, Linux).
fn child_cpu() -> Duration {
    let me = std::process::id().to_string();
    let mut ticks = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ... utime stime: fields after the comm's closing parenthesis.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if !head.contains("(ling") || fields.get(1) != Some(&me.as_str()) {
            continue;
        }
        let field = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        ticks += field(11) + field(12);
    }
    Duration::from_millis(ticks * 10)
}

/// What reached the terminal, escape sequences and carriage returns left out, decoded as it
/// arrives (a sequence split over two reads is still left out).
#[derive(Default)]
struct Stripped {
    text: String,
    escape: bool,
    csi: bool,
    pending: Vec<u8>,
}

impl Stripped {
    fn push(&mut self, bytes: &[u8]) {
        let mut plain = std::mem::take(&mut self.pending);
        for &b in bytes {
            if self.escape {
                self.escape = false;
                self.csi = b == b'[';
                continue;
            }
            if self.csi {
                if (0x40..=0x7e).contains(&b) {
                    self.csi = false;
                }
                continue;
            }
            match b {
                0x1b => self.escape = true,
                b'\r' => {}
                _ => plain.push(b),
            }
        }
        // Keep an incomplete UTF-8 character for the next read.
        let valid = match std::str::from_utf8(&plain) {
            Ok(_) => plain.len(),
            Err(e) => e.valid_up_to(),
        };
        self.pending = plain.split_off(valid);
        self.text.push_str(&String::from_utf8_lossy(&plain));
    }
}
