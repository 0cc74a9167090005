//! Measures what hooks cost the agent: (a) the `has_handlers` check the agent makes before every
//! tool call, with no hooks and with hooks for other tools only; (b) a PreToolUse `run` with one
//! trivial command hook (`true`) against spawning `sh -c true` directly, median of N runs.
//! Usage: bench-hooks [N] (default 200). `scripts/bench-hooks.sh` builds it in release mode.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ling::config::hooks::HookLayers;
use ling::config::{Paths, ProjectConfig};
use ling::hooks::{HookContext, HookEngine, HookEventName, HookInput};
use serde_json::json;

fn main() -> anyhow::Result<()> {
    let iterations: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 200,
    };
    anyhow::ensure!(iterations > 0, "N must be at least 1");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(bench(iterations))
}

async fn bench(iterations: usize) -> anyhow::Result<()> {
    let project = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let paths = Paths::with_home(project.path().to_path_buf(), home.path().to_path_buf());

    let empty = HookEngine::empty();
    println!(
        "has_handlers, no hooks:                {:>8.1} ns/call",
        check_cost(&empty)
    );

    // The user's hooks file: no project trust involved.
    let hooks_json = paths.user_file("hooks.json");
    let other_tools = json!({"hooks": {"PreToolUse": [
        {"matcher": "write_file|edit_file", "hooks": [{"type": "command", "command": "true"}]},
        {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "true"}]},
    ]}});
    std::fs::write(&hooks_json, other_tools.to_string())?;
    let (others, _) = HookEngine::load(&paths, &ProjectConfig::read(&paths)?, HookLayers::ALL)?;
    println!(
        "has_handlers, hooks for other tools:   {:>8.1} ns/call",
        check_cost(&others)
    );

    let one = json!({"hooks": {"PreToolUse": [
        {"matcher": "bash", "hooks": [{"type": "command", "command": "true"}]},
    ]}});
    std::fs::write(&hooks_json, one.to_string())?;
    let (engine, _) = HookEngine::load(&paths, &ProjectConfig::read(&paths)?, HookLayers::ALL)?;
    let ctx = HookContext {
        session_id: "bench".into(),
        transcript_path: home.path().join("t.jsonl"),
        cwd: project.path().to_path_buf(),
        permission_mode: "default".into(),
        agent: None,
    };
    let input = HookInput::PreToolUse {
        tool_name: "bash".into(),
        tool_input: json!({"command": "cargo test", "timeout_ms": 120000}),
        tool_use_id: "call_bench".into(),
    };

    let mut hook_runs = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let outcome = engine.run(&input, &ctx).await;
        hook_runs.push(started.elapsed());
        anyhow::ensure!(outcome.notices.is_empty(), "the hook failed: {outcome:?}");
    }
    let mut spawns = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let status = tokio::process::Command::new("sh")
            .arg("-c")
            .arg("true")
            .current_dir(project.path())
            .status()
            .await?;
        spawns.push(started.elapsed());
        anyhow::ensure!(status.success(), "sh -c true failed");
    }
    let (hook, spawn) = (median(&mut hook_runs), median(&mut spawns));
    println!("run, PreToolUse with one `true` hook:  {hook:>8.2?} median of {iterations}");
    println!("plain `sh -c true` spawn:              {spawn:>8.2?} median of {iterations}");
    println!(
        "engine overhead over the spawn:        {:>8.2?}",
        hook.saturating_sub(spawn)
    );
    Ok(())
}

/// Nanoseconds per `has_handlers` call for a tool no hook matches.
fn check_cost(engine: &HookEngine) -> f64 {
    const CALLS: u32 = 5_000_000;
    let started = Instant::now();
    let mut hits = 0u32;
    for _ in 0..CALLS {
        if engine.has_handlers(
            black_box(HookEventName::PreToolUse),
            black_box(Some("bash")),
        ) {
            hits += 1;
        }
    }
    black_box(hits);
    started.elapsed().as_nanos() as f64 / f64::from(CALLS)
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
