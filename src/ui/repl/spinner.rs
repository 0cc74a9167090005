//! The REPL's spinner on stderr: what Ling is waiting for (the model, a tool call), the seconds
//! it has waited, and a detail that can change while it spins (a command's last output line).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::ui::output::{stderr, stderr_is_terminal, terminal_width};
use crate::ui::style::Style;
use crate::ui::term::Term;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub struct Spinner {
    running: Arc<AtomicBool>,
    detail: Arc<Mutex<String>>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts spinning on stderr; does nothing when stderr is not a terminal.
    pub fn start(label: &str, style: Style) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let detail = Arc::new(Mutex::new(String::new()));
        if !stderr_is_terminal() {
            return Self {
                running,
                detail,
                thread: None,
            };
        }
        let flag = running.clone();
        let shown = detail.clone();
        let label = label.to_string();
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut i = 0;
            while flag.load(Ordering::Relaxed) {
                let detail = shown.lock().map(|d| d.clone()).unwrap_or_default();
                let text = frame_text(
                    FRAMES[i % FRAMES.len()],
                    &label,
                    started.elapsed(),
                    &detail,
                    terminal_width().unwrap_or(80),
                );
                stderr(Term::clear_line() + style.dim(&text));
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            stderr(Term::clear_line());
        });
        Self {
            running,
            detail,
            thread: Some(thread),
        }
    }

    /// Shows `detail` after the seconds from the next frame on.
    pub fn set_detail(&self, detail: &str) {
        if let Ok(mut shown) = self.detail.lock() {
            *shown = detail.to_string();
        }
    }

    pub fn stop(&mut self) {
        self.running.store(false, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `⠋ bash(cargo test) 3s · Compiling ling`, cut to one line of `width` columns (a wrapped
/// line could not be redrawn in place).
fn frame_text(frame: &str, label: &str, elapsed: Duration, detail: &str, width: usize) -> String {
    let mut text = format!("{frame} {label} {}s", elapsed.as_secs());
    if !detail.is_empty() {
        text.push_str(" · ");
        text.push_str(detail);
    }
    let max = width.saturating_sub(1).max(10);
    if text.chars().count() > max {
        text = text.chars().take(max - 1).collect();
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_shows_the_seconds_and_the_detail_on_one_line() {
        assert_eq!(
            frame_text("⠋", "thinking", Duration::from_millis(3400), "", 80),
            "⠋ thinking 3s"
        );
        assert_eq!(
            frame_text("⠋", "bash(make)", Duration::ZERO, "cc -o x", 80),
            "⠋ bash(make) 0s · cc -o x"
        );
        let long = frame_text("⠋", "bash(make)", Duration::ZERO, &"x".repeat(200), 40);
        assert_eq!(long.chars().count(), 39);
        assert!(long.ends_with('…'));
    }
}
