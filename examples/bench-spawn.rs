//! Measures what starting a child through the trampoline adds, and what the shell sandbox
//! adds on top: `bash -c true` spawned directly against the same through `ling __ling-exec`,
//! through the small `ling-exec` helper (as the `bash` tool starts it: its own session, under
//! the supervising trampoline, until its report), and through the helper inside the
//! `workspace-write` sandbox (network off, the default hidden paths, a project with `.git` and
//! `.ling` to protect, joining the run's namespace holder as the `bash` tool does) and inside
//! `read-only`, with `sh -c true` for scale; spawn to exit, on a multi-thread runtime like
//! Ling's. The kinds take turns so drift hits them alike.
//! Usage: bench-spawn LING_BINARY [N] (default 300); the helper is looked for beside it.
//! `scripts/bench-spawn.sh` builds both in release mode.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use ling::config::SandboxSettings;
use ling::process::sandbox::{self, SandboxMode};
use ling::process::{ChildEnv, Session, Trampoline};
use tokio::io::AsyncReadExt;

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
    // Absolute: the children start in a temp project, where a relative path would not resolve.
    let ling = std::fs::canonicalize(&ling)?;
    runtime.block_on(bench(&ling, iterations))
}

const KINDS: [&str; 6] = [
    "sh -c true, direct",
    "bash -c true, direct",
    "bash via `ling __ling-exec`",
    "bash via ling-exec",
    "bash via ling-exec, workspace-write",
    "bash via ling-exec, read-only",
];

/// The user and system time of this process's reaped children so far (`/proc/self/stat`
/// fields 16 and 17), in clock ticks.
fn children_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // After `pid (comm)`, field 16 (cutime) is the 14th.
    [13, 14]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum()
}

async fn bench(ling: &Path, iterations: usize) -> anyhow::Result<()> {
    let helper = ling.with_file_name(ling::process::exec::HELPER);
    anyhow::ensure!(
        helper.is_file(),
        "no {} beside {}",
        helper.display(),
        ling.display()
    );
    let project = tempfile::tempdir()?;
    std::fs::create_dir(project.path().join(".git"))?;
    std::fs::create_dir(project.path().join(".ling"))?;
    // The run's sandbox as Ling decides it (default settings: network off, the default
    // denyRead list), so the policy and the holder are those of a real run.
    let decision = sandbox::decide(
        &SandboxSettings::default(),
        Ok(()),
        project.path(),
        sandbox::home_dir().as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    let direct = ChildEnv::default();
    let via_ling = ChildEnv::default().with_trampoline(Some(Trampoline::with_exe(ling)));
    let via_helper = ChildEnv::default().with_trampoline(Some(Trampoline::with_exe(&helper)));
    let sandboxed = via_helper
        .clone()
        .with_sandbox(decision, project.path().to_path_buf());
    let write = sandboxed
        .policy(SandboxMode::WorkspaceWrite)
        .ok_or_else(|| anyhow::anyhow!("no policy"))?;
    let read = sandboxed
        .policy(SandboxMode::ReadOnly)
        .ok_or_else(|| anyhow::anyhow!("no policy"))?;
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); KINDS.len()];
    // CPU time (user + system) of the reaped children, in clock ticks, per kind: what a spawn
    // costs the machine whatever else runs on it.
    let mut cpu = vec![0u64; KINDS.len()];
    // A few unmeasured rounds warm the page cache and the dynamic loader.
    for round in 0..iterations + 10 {
        for (slot, times) in times.iter_mut().enumerate() {
            let Session {
                command: mut cmd,
                report,
            } = match slot {
                0 => direct.session_command("sh", None),
                1 => direct.session_command("bash", None),
                2 => via_ling.session_command("bash", None),
                3 => via_helper.session_command("bash", None),
                4 => sandboxed.session_command("bash", Some(&write)),
                _ => sandboxed.session_command("bash", Some(&read)),
            }
            .map_err(anyhow::Error::msg)?;
            cmd.args(["-c", "true"])
                .current_dir(project.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            // As the `bash` tool: the call is over when the supervisor's report is (or, started
            // directly, when the shell is reaped).
            let ticks_before = children_cpu_ticks();
            let started = Instant::now();
            let env = match slot {
                0 | 1 => &direct,
                2 => &via_ling,
                3 => &via_helper,
                _ => &sandboxed,
            };
            let mut child = env.spawn(&mut cmd)?;
            drop(cmd);
            let ok = match report {
                Some(mut pipe) => {
                    let mut text = String::new();
                    pipe.read_to_string(&mut text).await?;
                    text.starts_with("exit 0")
                }
                None => child.wait().await?.success(),
            };
            let elapsed = started.elapsed();
            let _ = child.wait().await;
            anyhow::ensure!(ok, "{} failed", KINDS[slot]);
            if round >= 10 {
                times.push(elapsed);
                cpu[slot] += children_cpu_ticks().saturating_sub(ticks_before);
            }
        }
    }
    let medians: Vec<f64> = times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2].as_secs_f64() * 1e6
        })
        .collect();
    let tick_us = 1e6
        / nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .unwrap_or(100) as f64;
    println!("{iterations} runs each, median spawn-to-exit, and CPU time per spawn:");
    for ((kind, us), ticks) in KINDS.iter().zip(&medians).zip(&cpu) {
        let cpu_us = *ticks as f64 * tick_us / iterations as f64;
        println!("  {kind:<38} {us:>7.0} µs   cpu {cpu_us:>6.0} µs");
    }
    let (sh, bash) = (medians[0], medians[1]);
    for (slot, what) in [
        (2, "ling __ling-exec"),
        (3, "ling-exec"),
        (4, "workspace-write"),
        (5, "read-only"),
    ] {
        let added = medians[slot] - bash;
        println!(
            "  {what:<18} adds {added:>6.0} µs to bash direct: {:.2}x sh -c true",
            added / sh
        );
    }
    Ok(())
}
