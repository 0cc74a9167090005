//! Times the `grep` tool through the public API: `bench-grep DIR PATTERN [RUNS] [OUTPUT]` searches
//! DIR (as the project root) for PATTERN RUNS times (default 10) with `output` OUTPUT (default
//! `content`) and prints the median, min and max wall time, for comparison with `rg` on the same
//! tree (`scripts/bench-grep.sh`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ling::tools::{ToolContext, ToolRegistry};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: bench-grep DIR PATTERN [RUNS] [content|files|count]";
    let dir = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!(usage))?);
    let pattern = args.next().ok_or_else(|| anyhow::anyhow!(usage))?;
    let runs: usize = args
        .next()
        .map(|r| r.parse())
        .transpose()?
        .unwrap_or(10)
        .max(1);
    let output = args.next().unwrap_or_else(|| "content".to_string());

    let tools = ToolRegistry::builtins();
    let grep = tools
        .get("grep")
        .ok_or_else(|| anyhow::anyhow!("no grep tool"))?;
    let ctx = ToolContext::new(dir);
    let input = json!({"pattern": pattern, "output": output});
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let mut lines = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let result = grep.call(input.clone(), &ctx).await?;
        times.push(started.elapsed());
        lines = result.content.lines().count();
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "grep tool: median {:.1} ms (min {:.1}, max {:.1}) over {runs} runs; {lines} result lines",
        ms(times[runs / 2]),
        ms(times[0]),
        ms(times[runs - 1]),
    );
    Ok(())
}
