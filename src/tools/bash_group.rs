//! The process group of one `bash` call, which ends with the call: on a timeout or an
//! interrupt it gets SIGTERM, a short grace, then SIGKILL; dropped unreleased (an abandoned
//! call) it is signalled at once. Released when the command ended on its own, so what it
//! started with its output redirected elsewhere keeps running under its supervisor.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Child;
use tokio::time::Instant;

/// How long the group gets to exit after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// The command's process group (its id is the trampoline's pid). Until released, dropping it
/// ends the group, so even an abandoned call leaves no processes behind: a supervising
/// trampoline gets SIGTERM and ends everything below it (SIGKILL would end only the group and
/// leave what left it), anything else SIGKILL.
pub(crate) struct Group {
    pgid: Pid,
    armed: bool,
    supervised: bool,
}

impl Group {
    pub(super) fn new(pid: u32, supervised: bool) -> Self {
        Self {
            pgid: Pid::from_raw(pid as i32),
            armed: true,
            supervised,
        }
    }

    fn alive(&self) -> bool {
        // Signal 0 only probes; EPERM still means the group exists.
        !matches!(killpg(self.pgid, None), Err(Errno::ESRCH))
    }

    /// SIGTERM to the whole group, a short grace, then SIGKILL to whatever is left. `child` is
    /// the trampoline when it has not been reaped yet; reaping it here lets the group disappear.
    /// A supervisor ends everything below it within its own grace, shorter than this one.
    pub(crate) async fn terminate(&mut self, mut child: Option<&mut Child>) {
        // ESRCH (already gone) is the outcome we want anyway.
        let _ = killpg(self.pgid, Signal::SIGTERM);
        let grace = if self.supervised {
            KILL_GRACE * 2
        } else {
            KILL_GRACE
        };
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Some(c) = child.as_mut()
                && matches!(c.try_wait(), Ok(Some(_)))
            {
                child = None;
            }
            if child.is_none() && !self.alive() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if self.alive() {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
        if let Some(c) = child {
            // Killed before the trampoline's setsid made the group: the child alone.
            let _ = c.start_kill();
            let _ = tokio::time::timeout(KILL_GRACE, c.wait()).await;
        }
        self.armed = false;
    }

    pub(super) fn release(&mut self) {
        self.armed = false;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            let signal = if self.supervised {
                Signal::SIGTERM
            } else {
                Signal::SIGKILL
            };
            let _ = killpg(self.pgid, signal);
        }
    }
}
