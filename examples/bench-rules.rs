//! Measures what bash rules cost per command: the permission check (a tree-sitter-bash parse,
//! the walk and the rule matching, with a few deny and allow rules) for a simple command, a
//! pipeline and a long chained one, and everything the dispatch step asks of the engine per
//! call (`evaluate`: the check, the deny rules, the "always" rule), against one spawn of `sh -c true`
//! measured in the same program. Usage: bench-rules [N] (default 200 spawns; the checks run
//! 20,000 times each). `scripts/bench-rules.sh` builds it in release mode.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ling::config::{Paths, PermissionMode};
use ling::permissions::{Check, Permissions};
use ling::tools::ToolRegistry;
use serde_json::json;

const COMMANDS: &[(&str, &str)] = &[
    ("simple", "git status -s"),
    (
        "pipeline",
        "cargo test --lib 2>&1 | grep -v '^ok' | tail -n 40",
    ),
    (
        "long chain",
        "cd sub && FOO=1 timeout 60 cargo build --release 2>&1 | tee /dev/null; \
         if [ -f out.txt ]; then echo \"$(wc -l < out.txt) lines\"; else git -C . log -n 5 \
         --oneline; fi && find . -name '*.o' -exec rm {} + || sudo -n true",
    ),
];

const CHECKS: u32 = 20_000;

fn main() -> anyhow::Result<()> {
    let spawns: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 200,
    };
    anyhow::ensure!(spawns > 0, "N must be at least 1");
    let project = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let paths = Paths::with_home(project.path().to_path_buf(), home.path().to_path_buf());
    let rules = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let permissions = Permissions::new(
        PermissionMode::Default,
        &rules(&[
            "bash(git status*)",
            "bash(cargo test*)",
            "bash(grep*)",
            "bash(tail*)",
        ]),
        &rules(&["bash(rm -rf*)", "bash(git push*)", "bash(curl*)"]),
        &paths,
    )?;
    // Rules that never match a bash command: what remains is the parse and the walk.
    let no_bash_rules =
        Permissions::new(PermissionMode::Bypass, &[], &rules(&["read_file"]), &paths)?;
    let registry = ToolRegistry::builtins();
    let bash = registry
        .get("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash tool"))?
        .clone();

    let spawn = spawn_median(spawns, project.path())?;
    println!("plain `sh -c true` spawn: {spawn:>10.2?} median of {spawns}");
    for (name, command) in COMMANDS {
        let input = json!({"command": command});
        let outcome = match permissions.check(bash.as_ref(), &input) {
            Check::Allow => "allow",
            Check::Ask { .. } => "ask",
            Check::Deny { .. } => "deny",
        };
        let check = per_call(|| {
            black_box(permissions.check(bash.as_ref(), black_box(&input)));
        });
        let dispatch = per_call(|| {
            black_box(permissions.evaluate(bash.as_ref(), black_box(&input)));
        });
        let parse = per_call(|| {
            black_box(no_bash_rules.check(bash.as_ref(), black_box(&input)));
        });
        let share = |d: Duration| 100.0 * d.as_secs_f64() / spawn.as_secs_f64();
        println!(
            "{name:<10} ({outcome:<5}, {:>3} bytes): check {:>8.2?} ({:.2}% of the spawn), \
             evaluate {:>8.2?} ({:.2}%), of which parse and walk {:>8.2?} ({:.2}%)",
            command.len(),
            check,
            share(check),
            dispatch,
            share(dispatch),
            parse,
            share(parse),
        );
    }
    Ok(())
}

fn per_call(mut f: impl FnMut()) -> Duration {
    for _ in 0..100 {
        f();
    }
    let started = Instant::now();
    for _ in 0..CHECKS {
        f();
    }
    started.elapsed() / CHECKS
}

fn spawn_median(runs: usize, dir: &std::path::Path) -> anyhow::Result<Duration> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("true")
            .current_dir(dir)
            .status()?;
        samples.push(started.elapsed());
        anyhow::ensure!(status.success(), "sh -c true failed");
    }
    samples.sort();
    Ok(samples[samples.len() / 2])
}
