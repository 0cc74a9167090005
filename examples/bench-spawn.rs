//! Measures what the `ling __ling-exec` trampoline adds to starting a child: `bash -c true`
//! spawned directly against the same through the trampoline (as the `bash` tool and stdio MCP
//! servers are started), with `sh -c true` for scale; spawn to exit, in its own process group,
//! on a multi-thread runtime like Ling's. The three kinds take turns so drift hits them alike.
//! Usage: bench-spawn LING_BINARY [N] (default 300). `scripts/bench-spawn.sh` builds both in
//! release mode.

use std::process::Stdio;
use std::time::{Duration, Instant};

use ling::process::{ChildEnv, Trampoline};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let ling = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: bench-spawn LING_BINARY [N]"))?;
    let iterations: usize = match args.next() {
        Some(n) => n.parse()?,
        None => 300,
    };
    anyhow::ensure!(iterations > 0, "N must be at least 1");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(bench(&ling, iterations))
}

#[derive(Clone, Copy)]
enum Kind {
    Sh,
    Bash,
    Tied,
}

async fn bench(ling: &str, iterations: usize) -> anyhow::Result<()> {
    let direct = ChildEnv::default();
    let tied = ChildEnv::default().with_trampoline(Some(Trampoline::with_exe(ling)));
    let kinds = [Kind::Sh, Kind::Bash, Kind::Tied];
    let mut times: [Vec<Duration>; 3] = Default::default();
    // A few unmeasured rounds warm the page cache and the dynamic loader.
    for round in 0..iterations + 10 {
        for (slot, kind) in kinds.iter().enumerate() {
            let mut cmd = match kind {
                Kind::Sh => direct.command("sh"),
                Kind::Bash => direct.command("bash"),
                Kind::Tied => tied.tied_command("bash"),
            };
            cmd.args(["-c", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0);
            let started = Instant::now();
            let status = cmd.status().await?;
            let elapsed = started.elapsed();
            anyhow::ensure!(status.success(), "the child failed: {status}");
            if round >= 10 {
                times[slot].push(elapsed);
            }
        }
    }
    let [sh, bash, through] = times.map(|mut t| {
        t.sort();
        (t[t.len() / 2], t.iter().sum::<Duration>() / t.len() as u32)
    });
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("{iterations} runs each, median (mean) per spawn-to-exit:");
    println!(
        "  sh -c true, direct:            {:>7.0} µs ({:.0})",
        us(sh.0),
        us(sh.1)
    );
    println!(
        "  bash -c true, direct:          {:>7.0} µs ({:.0})",
        us(bash.0),
        us(bash.1)
    );
    println!(
        "  bash -c true, via trampoline:  {:>7.0} µs ({:.0})",
        us(through.0),
        us(through.1)
    );
    println!(
        "  trampoline adds:               {:>7.0} µs ({:.0}); {:.2}x bash direct, {:.2}x sh -c true",
        us(through.0) - us(bash.0),
        us(through.1) - us(bash.1),
        us(through.0) / us(bash.0),
        us(through.0) / us(sh.0),
    );
    Ok(())
}
