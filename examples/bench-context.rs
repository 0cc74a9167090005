//! Figures for long sessions (`scripts/bench-context.sh`):
//!
//! 1. The token estimate (`ling::agent::context::estimate`) against a real tokenizer's counts
//!    (tiktoken's o200k and cl100k) on a corpus of this repository: Rust code (`src/`), prose
//!    (`docs/`, `README.md`), JSON (`docs/schemas/`, and tool-call results as Ling sends them).
//! 2. Ling's own time per compaction, apart from the model's: choosing the cut, rendering the
//!    conversation for the summary request, rebuilding the history, estimating it again and
//!    appending the compaction line to a transcript, for a long conversation.
//! 3. How the request grows with turns, with and without elision of old tool outputs (40 turns,
//!    each reading a 20 000-character file), in a 32k window at 85%.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ling::agent::Session;
use ling::agent::context::{estimate, rebuild};
use ling::llm::{Message, ToolCall};

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// (category, texts) of the corpus.
fn corpus(root: &Path) -> Vec<(&'static str, Vec<String>)> {
    let read = |paths: Vec<PathBuf>| -> Vec<String> {
        paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter(|t| t.len() > 200)
            .collect()
    };
    let mut code = Vec::new();
    files(&root.join("src"), "rs", &mut code);
    let mut prose = vec![root.join("README.md")];
    files(&root.join("docs"), "md", &mut prose);
    let mut json = Vec::new();
    files(&root.join("docs/schemas"), "json", &mut json);
    let code_texts = read(code);
    // Tool results as the model gets them: a grep's matches and an MCP server's JSON answer.
    let tool_outputs: Vec<String> = code_texts
        .iter()
        .take(40)
        .map(|text| {
            let lines: Vec<serde_json::Value> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.contains("fn ") || l.contains("use "))
                .map(|(n, l)| serde_json::json!({"line": n + 1, "text": l.trim()}))
                .collect();
            serde_json::to_string_pretty(&serde_json::json!({"matches": lines})).unwrap_or_default()
        })
        .collect();
    vec![
        ("Rust code", code_texts),
        ("prose (Markdown)", read(prose)),
        ("JSON schemas", read(json)),
        ("JSON tool results", tool_outputs),
    ]
}

fn estimate_error(root: &Path) -> Result<(), String> {
    let o200k = tiktoken_rs::o200k_base().map_err(|e| format!("o200k: {e}"))?;
    let cl100k = tiktoken_rs::cl100k_base().map_err(|e| format!("cl100k: {e}"))?;
    println!("## Token estimate against tiktoken\n");
    println!(
        "| corpus | files | characters | o200k tokens | cl100k tokens | estimate | total error vs o200k | vs cl100k | mean abs error per file (o200k) | worst file |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, texts) in corpus(root) {
        let (mut chars, mut real_o, mut real_c, mut est) = (0usize, 0usize, 0usize, 0u64);
        let mut errors = Vec::new();
        for text in &texts {
            let o = o200k.encode_ordinary(text).len();
            let c = cl100k.encode_ordinary(text).len();
            let e = estimate::text(text);
            chars += text.chars().count();
            real_o += o;
            real_c += c;
            est += e;
            errors.push((e as f64 - o as f64) / o.max(1) as f64);
        }
        let total = |real: usize| (est as f64 - real as f64) / real.max(1) as f64 * 100.0;
        let mean = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len().max(1) as f64 * 100.0;
        let worst = errors.iter().map(|e| e.abs()).fold(0.0, f64::max) * 100.0;
        println!(
            "| {name} | {} | {chars} | {real_o} | {real_c} | {est} | {:+.1}% | {:+.1}% | {mean:.1}% | {worst:.1}% |",
            texts.len(),
            total(real_o),
            total(real_c)
        );
    }
    println!();
    Ok(())
}

/// A conversation of `turns` turns, each a tool call reading a file of `output` characters.
fn conversation(turns: usize, output: usize, code: &str) -> Vec<Message> {
    let mut history = vec![Message::user(
        "read the parser files one by one and summarise them",
    )];
    let body: String = code.chars().cycle().take(output).collect();
    for n in 0..turns {
        let id = format!("call_{n}");
        history.push(Message::assistant(
            Some(format!("Reading file {n}.")),
            vec![ToolCall::new(
                &id,
                "read_file",
                format!(r#"{{"path":"src/file_{n}.rs"}}"#),
            )],
        ));
        history.push(Message::tool(id, body.clone()));
    }
    history
}

fn compaction_time(code: &str) {
    println!("## Ling's own time per compaction (the model's answer excluded)\n");
    println!(
        "| conversation | messages | estimate the context | cut + render + rebuild | transcript line | total |"
    );
    println!("|---|---|---|---|---|---|");
    let dir = tempfile_dir();
    for (turns, output) in [(40, 20_000), (200, 5_000), (400, 20_000)] {
        let history = conversation(turns, output, code);
        let runs = 20;
        let (mut t_est, mut t_rebuild, mut t_write) = (0.0, 0.0, 0.0);
        for run in 0..runs {
            let start = Instant::now();
            let used = estimate::messages(&history);
            t_est += start.elapsed().as_secs_f64();
            let start = Instant::now();
            let cut = rebuild::cut_point(&history, 27_852 / 3).unwrap_or(1);
            let parts = rebuild::render_parts(&history[..cut], 20_000);
            let rebuilt = rebuild::rebuild(&history, cut, "a summary of the conversation");
            let after = estimate::messages(&rebuilt);
            t_rebuild += start.elapsed().as_secs_f64();
            let mut session = Session::new(&dir, Path::new("/bench"), "m");
            let start = Instant::now();
            session.record_compaction("auto", used, after, &rebuilt);
            t_write += start.elapsed().as_secs_f64();
            std::hint::black_box((parts, run));
        }
        let ms = |t: f64| t / f64::from(runs) * 1000.0;
        println!(
            "| {turns} tool calls of {output} chars | {} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |",
            history.len(),
            ms(t_est),
            ms(t_rebuild),
            ms(t_write),
            ms(t_est + t_rebuild + t_write)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!();
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ling-bench-context-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn growth(code: &str) {
    const WINDOW: u64 = 32_768;
    let threshold = WINDOW * 85 / 100;
    let keep = threshold / 3;
    println!("## Request size by turn, 20 000-character tool outputs, 32k window\n");
    println!(
        "| turn | without elision: tokens (est.) | bytes | with elision: tokens (est.) | bytes | outputs elided |"
    );
    println!("|---|---|---|---|---|---|");
    let fixed = 2_400; // the system prompt and the six builtin tools, about
    let mut elided = HashSet::new();
    for turn in 1..=40 {
        let history = conversation(turn, 20_000, code);
        let plain = fixed + estimate::messages(&history);
        // The agent's policy: elide the oldest outputs outside the recent budget until under.
        let protect = rebuild::cut_point(&history, keep).unwrap_or(history.len());
        for id in rebuild::elidable(&history, protect, &elided) {
            let sent = rebuild::with_elisions(&history, &elided);
            if fixed + estimate::messages(&sent) < threshold {
                break;
            }
            elided.insert(id);
        }
        let sent = rebuild::with_elisions(&history, &elided);
        let with = fixed + estimate::messages(&sent);
        let bytes = |m: &[Message]| serde_json::to_string(m).map(|s| s.len()).unwrap_or(0);
        if [1, 2, 3, 5, 10, 20, 30, 40].contains(&turn) {
            println!(
                "| {turn} | {plain} | {} | {with} | {} | {} |",
                bytes(&history),
                bytes(&sent),
                elided.len()
            );
        }
    }
    println!();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let code = std::fs::read_to_string(root.join("src/agent/turn.rs")).unwrap_or_default();
    if let Err(e) = estimate_error(root) {
        eprintln!("no tokenizer: {e}");
        std::process::exit(1);
    }
    compaction_time(&code);
    growth(&code);
}
