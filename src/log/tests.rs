//! Unit tests of the log: `LING_LOG` values, the line format, laziness, scrubbing, filters, and
//! the daily files (owner-only, behind `ling.log`, the oldest removed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Runs `emit` with a subscriber for `LING_LOG=value` writing to a temp dir; returns the log.
fn logged(value: &str, emit: impl FnOnce()) -> String {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let filter = filter(value).unwrap().unwrap();
    tracing::subscriber::with_default(subscriber(filter, &logs).unwrap(), emit);
    std::fs::read_to_string(logs.join(LOG_FILE)).unwrap()
}

/// The messages of a log, without time, pid and level (padded to 5).
fn messages(log: &str) -> Vec<String> {
    log.lines()
        .map(|line| {
            let level_on = line.splitn(3, ' ').nth(2).unwrap_or_default();
            level_on.get(6..).unwrap_or_default().to_string()
        })
        .collect()
}

#[test]
fn levels_and_filters_parse_and_bad_ones_say_what_to_write() {
    for value in [
        "DEBUG",
        " warn ",
        "warning",
        "error",
        "info",
        "trace",
        "ling::mcp=debug,info",
    ] {
        assert!(matches!(filter(value), Ok(Some(_))), "{value}");
    }
    for value in ["", "off", "none"] {
        assert!(matches!(filter(value), Ok(None)), "{value}");
    }
    let message = filter("loud").err().map(|e| e.to_string());
    assert_eq!(
        message.as_deref(),
        Some(
            "LING_LOG=\"loud\" is not a log level; use error, warn, info or debug, or a filter \
             such as ling::mcp=debug,info (or unset it)"
        )
    );
    let message = filter("ling=loud").err().map(|e| e.to_string()).unwrap();
    assert!(
        message.starts_with("LING_LOG=\"ling=loud\" is not a log filter ("),
        "{message}"
    );
    assert!(message.ends_with("write directives such as ling::mcp=debug,info (target=level, separated by commas), or one level"), "{message}");
}

#[test]
fn a_line_has_time_pid_level_and_one_line_of_message() {
    assert_eq!(
        format_line("2024-05-01T12:00:00.123Z", 7, Level::INFO, "a\nb"),
        "2024-05-01T12:00:00.123Z 7 INFO  a\\nb\n"
    );
}

#[test]
fn nothing_is_built_while_logging_is_off() {
    let built = AtomicUsize::new(0);
    let build = || {
        built.fetch_add(1, Ordering::Relaxed);
        "message"
    };
    // No subscriber on this thread: nothing is evaluated.
    tracing::debug!("{}", build());
    tracing::error!("{}", build());
    assert_eq!(built.load(Ordering::Relaxed), 0);
    // A level below the one asked for is not built either.
    let log = logged("info", || {
        tracing::debug!("{}", build());
        tracing::info!("{}", build());
    });
    assert_eq!(built.load(Ordering::Relaxed), 1);
    assert_eq!(messages(&log), ["message"]);
}

#[test]
fn lines_are_scrubbed_and_kept_on_one_line() {
    crate::redact::register("sk-log-unit-secret-4242");
    let log = logged("debug", || {
        tracing::debug!("llm: key {} sent", "sk-log-unit-secret-4242");
        tracing::warn!("mcp: two\nlines from http://user:pw@host.test/x?token=abc");
    });
    assert_eq!(
        messages(&log),
        [
            "llm: key *** sent",
            "mcp: two\\nlines from http://***@host.test/x?token=***"
        ]
    );
    let first = log.lines().next().unwrap();
    let fields: Vec<&str> = first.split(' ').collect();
    assert!(
        chrono::DateTime::parse_from_rfc3339(fields[0]).is_ok(),
        "{first}"
    );
    assert_eq!(fields[1], std::process::id().to_string());
    assert_eq!(fields[2], "DEBUG");
}

#[test]
fn directives_pick_targets_and_levels_and_a_level_is_ling_only() {
    let emit = || {
        tracing::debug!(target: "ling::mcp::client", "mcp: debug");
        tracing::debug!(target: "ling::llm::client", "llm: debug");
        tracing::info!(target: "ling::llm::client", "llm: info");
        tracing::info!(target: "h2::codec", "frame");
        tracing::debug!(target: "h2::codec", "frame detail");
    };
    assert_eq!(
        messages(&logged("ling::mcp=debug,info", emit)),
        ["mcp: debug", "llm: info", "h2::codec: frame"]
    );
    assert_eq!(
        messages(&logged("debug", emit)),
        ["mcp: debug", "llm: debug", "llm: info"]
    );
    assert_eq!(messages(&logged("h2=info", emit)), ["h2::codec: frame"]);
}

#[test]
fn the_log_is_todays_private_file_behind_ling_log() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sub = subscriber(filter("info").unwrap().unwrap(), &logs).unwrap();
    tracing::subscriber::with_default(sub, || tracing::info!("hello"));
    let today = daily::file_name(&daily::day(chrono::Utc::now()));
    let link = std::fs::read_link(logs.join(LOG_FILE)).unwrap();
    assert_eq!(
        link.file_name().and_then(|n| n.to_str()),
        Some(today.as_str())
    );
    assert_eq!(mode(&logs.join(&today)), 0o600);
    assert_eq!(mode(&logs), 0o700);
    assert!(
        std::fs::read_to_string(logs.join(&today))
            .unwrap()
            .ends_with(" hello\n")
    );
}

#[test]
fn only_the_newest_daily_files_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let old: Vec<String> = (1..=9)
        .map(|d| daily::file_name(&format!("2020-01-0{d}")))
        .collect();
    for name in &old {
        std::fs::write(logs.join(name), "old\n").unwrap();
        // The appender removes the oldest by creation time, which the kernel keeps coarsely.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::write(logs.join("mcp-db.log"), "not ours\n").unwrap();
    drop(subscriber(filter("info").unwrap().unwrap(), &logs).unwrap());
    let mut kept: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    let today = daily::file_name(&daily::day(chrono::Utc::now()));
    let mut expected: Vec<String> = old[9 - (KEPT_FILES - 1)..].to_vec();
    expected.extend([LOG_FILE.to_string(), today, "mcp-db.log".to_string()]);
    expected.sort();
    assert_eq!(kept, expected);
}
