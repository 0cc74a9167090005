//! Process checks shared by the tests that kill things: whether a pid is still alive, and
//! sending Ctrl-C's signal to a child.
//!
//! Include with `#[path = "support/process.rs"] mod process;`.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Whether `pid` is a live process. A zombie waiting for its reaper counts as gone: only its exit
/// status is left (PID 1 in some containers never reaps orphans).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

/// Waits up to `limit` for `pid` to be gone; true if it went.
pub fn gone_within(pid: i32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while alive(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

/// Sends SIGINT to `child`, as Ctrl-C in a terminal would.
pub fn interrupt(child: &std::process::Child) {
    let pid = i32::try_from(child.id()).unwrap_or_else(|e| panic!("pid: {e}"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap_or_else(|e| panic!("SIGINT: {e}"));
}
