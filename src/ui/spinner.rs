//! The spinner shown on stderr while the model has not sent its first token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::output::{stderr, stderr_is_terminal};
use super::style::Style;
use super::term::Term;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub struct Spinner {
    running: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts spinning on stderr; does nothing when stderr is not a terminal.
    pub fn start(label: &str, style: Style) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        if !stderr_is_terminal() {
            return Self {
                running,
                thread: None,
            };
        }
        let flag = running.clone();
        let label = label.to_string();
        let thread = std::thread::spawn(move || {
            let mut i = 0;
            while flag.load(Ordering::Relaxed) {
                let frame = style.dim(&format!("{} {label}", FRAMES[i % FRAMES.len()]));
                stderr(Term::clear_line() + frame);
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            stderr(Term::clear_line());
        });
        Self {
            running,
            thread: Some(thread),
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
