//! Servers that misbehave at the process level: one that stops reading its stdin must not hang a
//! call (its timeout and Ctrl-C still apply, and the server is killed), and shutdown ends what a
//! server left running in its process group.

use crate::support::{mcp, process};

use std::path::Path;
use std::time::{Duration, Instant};

use ling::config::mcp::{ServerConfig, TransportConfig};
use ling::mcp::{McpError, McpManager, ServerState};
use mcp::{TestEnv, test_server};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The test server run through `sh -c`, with `before` (shell) run first, writing pids to files.
fn via_shell(env: &TestEnv, name: &str, before: &str, args: &str) -> ServerConfig {
    let script = format!("{before}; exec {} {args}", test_server().display());
    let mut config = env.server(name, &[]);
    if let TransportConfig::Stdio { command, args, .. } = &mut config.transport {
        *command = "sh".into();
        *args = vec!["-c".into(), script];
    }
    config
}

fn read_pid(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("pid {text:?}: {e}"))
}

fn state(manager: &McpManager, name: &str) -> ServerState {
    manager
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.state)
        .unwrap_or_else(|| panic!("no server {name}"))
}

/// Starts a server that answers the probe, `initialize` and `tools/list`, then never reads again.
async fn deaf_server(env: &TestEnv) -> (std::sync::Arc<McpManager>, i32) {
    let pid_file = env.dir.path().join("deaf.pid");
    let before = format!("echo $$ > {}", pid_file.display());
    // server/discover, initialize, notifications/initialized, tools/list.
    let mut config = via_shell(env, "deaf", &before, "--stop-reading-after 4");
    config.tool_timeout = Duration::from_secs(2);
    let manager = env.start(vec![config]).await;
    assert_eq!(state(&manager, "deaf"), ServerState::Connected);
    (manager, read_pid(&pid_file))
}

/// More than a pipe buffer holds, so the write blocks once the server stops reading.
fn big_arguments() -> serde_json::Value {
    json!({ "text": "x".repeat(300 * 1024) })
}

#[tokio::test]
async fn a_server_that_stops_reading_times_out_and_is_killed() {
    let env = TestEnv::new();
    let (manager, pid) = deaf_server(&env).await;
    let started = Instant::now();
    let cancel = CancellationToken::new();
    let call = manager.call_tool("mcp__deaf__echo", big_arguments(), &cancel, None);
    let result = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call hung past its 2s tool timeout");
    assert!(
        matches!(result, Err(McpError::Timeout { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        process::gone_within(pid, Duration::from_secs(3)),
        "the stuck server {pid} was left running"
    );
    for _ in 0..100 {
        if matches!(state(&manager, "deaf"), ServerState::Failed(_)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(state(&manager, "deaf"), ServerState::Failed(_)));
    let shutdown = tokio::time::timeout(Duration::from_secs(5), manager.shutdown()).await;
    assert!(shutdown.is_ok(), "shutdown hung");
}

#[tokio::test]
async fn ctrl_c_interrupts_a_stuck_write_and_shutdown_does_not_wait_for_it() {
    let env = TestEnv::new();
    let (manager, pid) = deaf_server(&env).await;
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        interrupt.cancel();
    });
    let call = manager.call_server_tool("deaf", "echo", big_arguments(), &cancel, None);
    let result = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("Ctrl-C did not interrupt the stuck call");
    assert!(matches!(result, Err(McpError::Cancelled)), "{result:?}");
    let shutdown = tokio::time::timeout(Duration::from_secs(5), manager.shutdown()).await;
    assert!(shutdown.is_ok(), "shutdown hung");
    assert!(process::gone_within(pid, Duration::from_secs(3)));
}

#[tokio::test]
async fn shutdown_ends_what_the_server_left_in_its_process_group() {
    let env = TestEnv::new();
    let pid_file = env.dir.path().join("helper.pid");
    let before = format!("sleep 1001 & echo $! > {}", pid_file.display());
    let manager = env
        .start(vec![via_shell(&env, "parent", &before, "")])
        .await;
    assert_eq!(state(&manager, "parent"), ServerState::Connected);
    let helper = read_pid(&pid_file);
    assert!(process::alive(helper));
    manager.shutdown().await;
    assert!(
        process::gone_within(helper, Duration::from_secs(3)),
        "the server's child {helper} outlived shutdown"
    );
}
