//! The debug log `LING_HOME/logs/ling.log`, for finding out afterwards what Ling did. Code logs
//! with `tracing`'s macros (`tracing::debug!`, `info!`, `warn!`, `error!`); `LING_LOG` picks what
//! is written: one level (`error`, `warn`, `info` or `debug`) for Ling's own events, or
//! `tracing_subscriber::EnvFilter` directives (`ling::mcp=debug,info`) that may name Ling's
//! modules and the libraries under it. It never prints: the terminal belongs to the UI.
//!
//! With `LING_LOG` unset nothing is set up: every event is one relaxed atomic load (tracing's
//! global level, off) and its message is never built. Otherwise a subscriber formats each event
//! as one line (time, pid, level, message), scrubbed of secrets (`crate::redact`), and appends it
//! in one write to today's file (`daily`), so several Ling processes can share it. The file is
//! owner-only (0600 in a 0700 folder); `ling.log` links to it, and a week of files is kept.

mod daily;
pub mod rotating;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

pub use daily::{KEPT_FILES, LOG_FILE};
pub use rotating::RotatingFile;

/// The variable that picks what is logged.
pub const LOG_ENV: &str = "LING_LOG";

/// The target of Ling's own events (its module paths start with it).
const OWN_TARGET: &str = "ling";

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error(
        "{LOG_ENV}={0:?} is not a log level; use error, warn, info or debug, or a filter such as \
         ling::mcp=debug,info (or unset it)"
    )]
    UnknownLevel(String),
    #[error(
        "{LOG_ENV}={value:?} is not a log filter ({reason}); write directives such as \
         ling::mcp=debug,info (target=level, separated by commas), or one level"
    )]
    BadFilter { value: String, reason: String },
    #[error(
        "cannot write the log in {}: {reason}; logging is off for this run (make the folder \
         writable, or unset {LOG_ENV})",
        .dir.display()
    )]
    Open { dir: PathBuf, reason: String },
}

/// What `LING_LOG=value` asks for, or `None` for no log (unset, empty, `off`). A bare level is
/// Ling's own events at that level and above (`trace` is `debug` and finer); anything with `=`,
/// `,`, `:` or `[` is a list of `EnvFilter` directives.
pub fn filter(value: &str) -> Result<Option<EnvFilter>, LogError> {
    let value = value.trim();
    let level = match value.to_ascii_lowercase().as_str() {
        "" | "off" | "none" => return Ok(None),
        "error" => "error",
        "warn" | "warning" => "warn",
        "info" => "info",
        "debug" => "debug",
        "trace" => "trace",
        _ if value.contains(['=', ',', ':', '[']) => {
            return EnvFilter::builder()
                .parse(value)
                .map(Some)
                .map_err(|e| LogError::BadFilter {
                    value: value.to_string(),
                    reason: e.to_string(),
                });
        }
        _ => return Err(LogError::UnknownLevel(value.to_string())),
    };
    Ok(Some(EnvFilter::new(format!("{OWN_TARGET}={level}"))))
}

/// Reads `LING_LOG` and, when it asks for a log, writes one to `logs_dir/ling.log` from now on.
/// Only the first call that sets logging up chooses the file and the filter.
pub fn init(logs_dir: &Path) -> Result<(), LogError> {
    let Some(filter) = filter(&std::env::var(LOG_ENV).unwrap_or_default())? else {
        return Ok(());
    };
    if tracing::dispatcher::has_been_set() {
        return Ok(());
    }
    let _ = tracing::subscriber::set_global_default(subscriber(filter, logs_dir)?);
    Ok(())
}

/// The subscriber that writes events `filter` lets through to `logs_dir`'s daily file.
pub fn subscriber(
    filter: EnvFilter,
    logs_dir: &Path,
) -> Result<impl Subscriber + Send + Sync + 'static, LogError> {
    let file = daily::DailyFile::open(logs_dir).map_err(|e| LogError::Open {
        dir: logs_dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(tracing_subscriber::fmt()
        // A line that cannot be written is dropped, never reported on the terminal.
        .log_internal_errors(false)
        .event_format(LineFormat)
        .with_env_filter(filter)
        .with_writer(file)
        .finish())
}

/// `2024-05-01T12:00:00.123Z 4242 DEBUG message`: one line per event, scrubbed of secrets.
struct LineFormat;

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let mut message = String::new();
        // Ling's messages name their part ("llm: ..."); a library's get its target in front.
        if !is_own(meta.target()) {
            let _ = write!(message, "{}: ", meta.target());
        }
        ctx.format_fields(Writer::new(&mut message), event)?;
        writer.write_str(&format_line(
            &chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            std::process::id(),
            *meta.level(),
            &crate::redact::scrub(&message),
        ))
    }
}

fn is_own(target: &str) -> bool {
    target == OWN_TARGET
        || target
            .strip_prefix(OWN_TARGET)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// `2024-05-01T12:00:00.123Z 4242 DEBUG message`, with the message kept on one line.
fn format_line(timestamp: &str, pid: u32, level: Level, message: &str) -> String {
    let message = message.replace('\n', "\\n");
    format!("{timestamp} {pid} {:<5} {message}\n", level.as_str())
}

#[cfg(test)]
mod tests;
