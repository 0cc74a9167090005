//! Keys typed while a turn runs. The terminal is put in non-echo, non-canonical mode, so typing
//! does not scribble into the answer: Esc interrupts the turn (as Ctrl-C does), anything else
//! is kept ([`Typed`]): each line ended with Enter is queued, to be sent in order once the turn
//! ends, and the line being typed pre-fills the next prompt. What is typed shows under the
//! spinner (the `on_change` callback). A question during the turn pauses the reader (the
//! question needs the terminal back); Ctrl-C still arrives as SIGINT (`ISIG` stays on).

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{
    LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcgetattr, tcsetattr,
};
use tokio_util::sync::CancellationToken;

/// How long the reader waits for a key before it looks at its flags again.
const TICK_MS: u16 = 40;

/// What was typed during a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Typed {
    /// Lines ended with Enter, in order.
    pub lines: Vec<String>,
    /// The line being typed.
    pub partial: String,
}

/// Called with what is typed, after each key.
pub type OnChange = Box<dyn Fn(&Typed) + Send + Sync>;

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    paused: AtomicBool,
    /// The reader saw `paused` and is not reading.
    idle: AtomicBool,
    typed: Mutex<Typed>,
}

/// The reader of one turn; [`TurnKeys::finish`] gives back what was typed.
pub struct TurnKeys {
    shared: Arc<Shared>,
    saved: Option<Termios>,
    thread: Option<JoinHandle<()>>,
}

impl TurnKeys {
    /// Starts reading keys (when stdin is a terminal); Esc cancels `cancel`.
    pub fn start(cancel: CancellationToken, on_change: OnChange) -> Self {
        let shared = Arc::new(Shared::default());
        let mut keys = Self {
            shared: shared.clone(),
            saved: None,
            thread: None,
        };
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return keys;
        }
        let Ok(saved) = tcgetattr(stdin.as_fd()) else {
            return keys;
        };
        keys.saved = Some(saved);
        keys.quiet();
        keys.thread = Some(std::thread::spawn(move || {
            read_keys(&shared, &cancel, &on_change)
        }));
        keys
    }

    /// No echo, no line buffering, signals still on.
    fn quiet(&self) {
        if let Some(saved) = &self.saved {
            let mut quiet = saved.clone();
            quiet
                .local_flags
                .remove(LocalFlags::ECHO | LocalFlags::ICANON);
            quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
            quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
            let _ = tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, &quiet);
        }
    }

    fn restore(&self) {
        if let Some(saved) = &self.saved {
            let _ = tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, saved);
        }
    }

    /// Hands the terminal back for a question (waits, bounded, until the reader stopped reading).
    pub fn pause(&self) {
        if self.thread.is_none() || self.shared.paused.swap(true, Ordering::SeqCst) {
            return;
        }
        for _ in 0..50 {
            if self.shared.idle.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.restore();
    }

    /// Takes the terminal again after a question.
    pub fn resume(&self) {
        if self.thread.is_some() && self.shared.paused.swap(false, Ordering::SeqCst) {
            self.quiet();
        }
    }

    /// Stops reading, restores the terminal, and returns what was typed (for the next prompt).
    pub fn finish(mut self) -> Typed {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.restore();
        std::mem::take(&mut *self.shared.typed.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for TurnKeys {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.restore();
    }
}

fn read_keys(shared: &Shared, cancel: &CancellationToken, on_change: &OnChange) {
    let stdin = std::io::stdin();
    let mut buf = [0u8; 256];
    while !shared.stop.load(Ordering::SeqCst) {
        if shared.paused.load(Ordering::SeqCst) {
            shared.idle.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(u64::from(TICK_MS)));
            continue;
        }
        shared.idle.store(false, Ordering::SeqCst);
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        if !matches!(poll(&mut fds, PollTimeout::from(TICK_MS)), Ok(n) if n > 0) {
            continue;
        }
        if shared.paused.load(Ordering::SeqCst) {
            continue;
        }
        let Ok(n) = nix::unistd::read(stdin.as_fd(), &mut buf) else {
            return;
        };
        if n == 0 {
            return;
        }
        let mut typed = shared.typed.lock().unwrap_or_else(|e| e.into_inner());
        if apply_keys(&buf[..n], &mut typed) {
            cancel.cancel();
        }
        on_change(&typed);
    }
}

/// Applies the bytes of one read to the typed text; true when they were a lone Esc. Escape
/// sequences (arrows, function keys) are dropped, Backspace deletes, Enter queues the line (an
/// empty one is nothing).
fn apply_keys(bytes: &[u8], typed: &mut Typed) -> bool {
    if bytes == [0x1b] {
        return true;
    }
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                // ESC [ ... final byte: skip the whole sequence (ESC O x loses its x too).
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\x7f' | '\x08' => {
                typed.partial.pop();
            }
            '\r' | '\n' => {
                let line = std::mem::take(&mut typed.partial);
                if !line.trim().is_empty() {
                    typed.lines.push(line);
                }
            }
            c if c.is_control() => {}
            c => typed.partial.push(c),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_text_and_a_lone_esc_interrupts() {
        let mut typed = Typed::default();
        assert!(!apply_keys(b"fix th", &mut typed));
        assert!(!apply_keys(b"x\x7fe \x1b[Dtest\x1b[1;5C", &mut typed));
        assert_eq!(typed.partial, "fix the test");
        assert!(apply_keys(b"\x1b", &mut typed));
        assert!(!apply_keys(b"\x07\r", &mut typed));
        assert_eq!(typed.lines, vec!["fix the test"]);
        assert_eq!(typed.partial, "");
    }

    #[test]
    fn every_line_typed_ahead_is_kept_in_order() {
        let mut typed = Typed::default();
        assert!(!apply_keys(b"a\rb\r\rc", &mut typed));
        assert_eq!(
            typed,
            Typed {
                lines: vec!["a".into(), "b".into()],
                partial: "c".into()
            }
        );
    }
}
