//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run by Node 22 from
//! `.cache/npm`, or `LING_TEST_NPM_DIR`) against Ling's client driver
//! `examples/conformance-client`: the four client scenarios Ling must pass. Without Node or the
//! suite (`scripts/install-peers.sh` installs them) the tests fail.

use std::process::Command;

use crate::support::peers::{self, CONFORMANCE};

fn run_scenario(scenario: &str) {
    let (node, suite) = peers::npm_script(CONFORMANCE);
    let client = peers::example("conformance-client");
    let results = tempfile::tempdir().unwrap();
    let output = Command::new(node)
        .arg(suite)
        .args(["client", "--command"])
        .arg(client)
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
