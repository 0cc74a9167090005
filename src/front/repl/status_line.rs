//! Settings `statusLine` (Claude Code's): the user's command gets the session as Claude Code's
//! JSON on stdin (`session_id`, `transcript_path`, `cwd`, `model {id, display_name}`,
//! `workspace {current_dir, project_dir}`, `version`, `output_style`, `cost`), and the first line
//! it prints shows dimmed above the prompt: after each turn, and after the mode or the model
//! changed (`/mode`, `/model`). It runs outside the sandbox as a hook's command does, at most
//! once per [`THROTTLE`], and one that takes longer than [`TIMEOUT`] is killed and shows nothing.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::config::PermissionMode;
use crate::session::Host;
use crate::ui::output::stdout_line;
use crate::ui::style::Style;

/// The least time between two runs of the command.
pub const THROTTLE: Duration = Duration::from_millis(300);
/// How long the command may take.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// The most of its output read.
const OUTPUT_LIMIT: usize = 4096;

/// What the status line was last drawn for.
#[derive(Debug, Default)]
pub struct StatusLine {
    shown_for: Option<(PermissionMode, String, usize)>,
    ran_at: Option<Instant>,
}

impl StatusLine {
    /// Shows the line when the session moved on since it was last shown (a turn, the mode, the
    /// model) and the command may run again.
    pub async fn show(&mut self, host: &Host, style: Style) {
        let Some(command) = host.settings().status_line.clone() else {
            return;
        };
        let status = host.status();
        let key = (status.mode, status.model.clone(), host.prompt_count());
        if self.shown_for.as_ref() == Some(&key) {
            return;
        }
        // Debounced as Claude Code's: a change right after a run waits out the rest.
        if let Some(left) = self.ran_at.map(|at| THROTTLE.saturating_sub(at.elapsed())) {
            tokio::time::sleep(left).await;
        }
        self.ran_at = Some(Instant::now());
        self.shown_for = Some(key);
        if let Some(line) = run(host, &command).await {
            stdout_line(style.dim(&line));
        }
    }
}

/// Claude Code's status line input for `host`.
fn input(host: &Host) -> serde_json::Value {
    let status = host.status();
    let paths = host.paths();
    let cost = host
        .settings()
        .prices
        .get(&status.model)
        .map_or(0.0, |price| crate::ui::render::cost(host.usage(), *price));
    json!({
        "hook_event_name": "Status",
        "session_id": status.session_id,
        // Where the session's transcript is (`agent::session`'s naming).
        "transcript_path": paths.sessions_dir().join(format!("{}.jsonl", status.session_id)),
        "cwd": paths.working_dir,
        "model": {"id": status.model, "display_name": status.model},
        "workspace": {
            "current_dir": paths.working_dir,
            "project_dir": paths.project_root,
        },
        "version": env!("CARGO_PKG_VERSION"),
        "output_style": {"name": "default"},
        "permission_mode": status.mode.as_str(),
        "cost": {
            "total_cost_usd": cost,
            "total_lines_added": 0,
            "total_lines_removed": 0,
        },
    })
}

/// The first line `command` prints, when it prints one in time.
async fn run(host: &Host, command: &str) -> Option<String> {
    let mut cmd = host.child_env().command("sh").ok()?;
    cmd.arg("-c")
        .arg(command)
        .current_dir(&host.paths().working_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().ok()?;
    let text = input(host).to_string();
    let work = async move {
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its input is fine.
            let _ = stdin.write_all(text.as_bytes()).await;
        }
        child.wait_with_output().await.ok()
    };
    let output = tokio::time::timeout(TIMEOUT, work).await.ok()??;
    let out = &output.stdout[..output.stdout.len().min(OUTPUT_LIMIT)];
    let line = String::from_utf8_lossy(out)
        .lines()
        .next()?
        .trim_end()
        .to_string();
    let line = colours_only(&line);
    (!line.trim().is_empty()).then_some(line)
}

/// `line` with its colour codes (`ESC [ ... m`, as status line scripts print) kept and every
/// other control character made visible.
fn colours_only(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&crate::ui::safe_text::neutralise(&rest[..at]));
        let tail = &rest[at + 1..];
        let sgr = tail.strip_prefix('[').and_then(|t| {
            let end = t.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
            (t[end..].starts_with('m')).then_some(end + 2)
        });
        match sgr {
            Some(len) => {
                out.push('\x1b');
                out.push_str(&tail[..len]);
                rest = &tail[len..];
            }
            None => {
                out.push_str(&crate::ui::safe_text::neutralise("\x1b"));
                rest = tail;
            }
        }
    }
    out.push_str(&crate::ui::safe_text::neutralise(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_stay_and_other_controls_show() {
        assert_eq!(colours_only("\x1b[32mok\x1b[0m"), "\x1b[32mok\x1b[0m");
        let moved = colours_only("a\x1b[2Jb");
        assert!(!moved.contains('\x1b'), "{moved:?}");
        assert!(
            moved.starts_with('a') && moved.ends_with("[2Jb"),
            "{moved:?}"
        );
    }
}
