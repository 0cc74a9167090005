//! The log files under `LING_HOME/logs`: `LING_LOG` filter directives pick what `ling.log` gets,
//! a bad one is a warning that says what to write, the files are owner-only, and a server's log
//! rolls over by size keeping a bounded number of older files.

use crate::support::{mcp, mock_openai, project};

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use ling::mcp::log::{LOG_KEPT_FILES, LOG_MAX_BYTES};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_filter_directive_logs_only_the_modules_it_names() {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_LOG", "ling::llm=debug,error")
        .args(["-p", "hello", "--model", "filter-model"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stderr, "", "the log must not reach stderr");
    let logs = project.home.path().join("logs");
    let log = std::fs::read_to_string(logs.join("ling.log")).expect("no log file");
    assert!(log.contains("DEBUG llm: POST"), "{log}");
    assert!(log.contains("DEBUG llm: HTTP 200"), "{log}");
    // `agent` and the session line (info) are not named by the filter.
    assert!(!log.contains("agent:"), "{log}");
    assert!(!log.contains("session "), "{log}");

    // ling.log links to today's file, which is the owner's alone, as is the folder.
    let target = std::fs::read_link(logs.join("ling.log")).expect("ling.log is not a link");
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let today = chrono::Utc::now().format("ling.%Y-%m-%d.log").to_string();
    assert_eq!(name, today);
    assert_eq!(mode(&logs.join(name)), 0o600);
    assert_eq!(mode(&logs), 0o700);
}

#[test]
fn a_bad_filter_is_a_warning_that_says_what_to_write() {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_LOG", "ling=loud").args(["-p", "hello"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "hi\n");
    assert!(
        out.stderr
            .contains("warning: LING_LOG=\"ling=loud\" is not a log filter ("),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("write directives such as ling::mcp=debug,info"),
        "{}",
        out.stderr
    );
    assert!(!project.home.path().join("logs").exists());
}

/// Waits (up to 10 s) until `path` contains `needle`.
async fn wait_for(path: &Path, needle: &str) -> String {
    for _ in 0..200 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never contained {needle:?}", path.display());
}

#[tokio::test]
async fn a_full_server_log_rolls_over_and_the_oldest_is_dropped() {
    let env = mcp::TestEnv::new();
    let logs = env.paths.logs_dir();
    std::fs::create_dir_all(&logs).unwrap();
    let log = logs.join("mcp-chatty.log");
    let numbered = |n: usize| logs.join(format!("mcp-chatty.log.{n}"));
    // A log already at its limit, and as many older files as are kept.
    let full = "x".repeat(99) + "\n";
    let full = full.repeat(usize::try_from(LOG_MAX_BYTES).unwrap_or(0) / full.len());
    std::fs::write(&log, &full).unwrap();
    for n in 1..=LOG_KEPT_FILES {
        std::fs::write(numbered(n), format!("older {n}\n")).unwrap();
    }

    let manager = env
        .start(vec![env.server("chatty", &["--stderr-lines", "3"])])
        .await;
    let text = wait_for(&log, "chatter line 2").await;
    manager.shutdown().await;

    assert!(!text.contains("xxxx"), "the full file was not rolled over");
    assert!(text.contains(" ling: started "), "{text}");
    assert_eq!(
        std::fs::read_to_string(numbered(1)).ok().as_deref(),
        Some(full.as_str())
    );
    for n in 2..=LOG_KEPT_FILES {
        let older = std::fs::read_to_string(numbered(n)).unwrap_or_default();
        assert_eq!(older, format!("older {}\n", n - 1));
    }
    // The oldest went: no more than the kept number of older files.
    assert!(!numbered(LOG_KEPT_FILES + 1).exists());
    for path in [log.clone(), numbered(1)] {
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
}
