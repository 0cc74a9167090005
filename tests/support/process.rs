//! Process checks shared by the tests that kill things: whether a pid is still alive, and
//! sending Ctrl-C's signal to a child.

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
    let pid = i32::try_from(child.id()).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
}

/// Spawns `cmd` with no stdin and both outputs captured, for tests that signal it mid-run.
pub fn spawn_captured(mut cmd: std::process::Command) -> std::process::Child {
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Polls `check` every 20 ms until it gives a value; panics with `what` after 20 s.
pub fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid a process wrote to `path`, once it is there.
pub fn read_pid(path: &std::path::Path, what: &str) -> i32 {
    wait_for(what, || {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    })
}

/// Waits until the file at `path` contains `needle`.
pub fn wait_for_text(path: &std::path::Path, needle: &str, what: &str) {
    wait_for(what, || {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .contains(needle)
            .then_some(())
    });
}
