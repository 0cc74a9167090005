//! The MCP servers' questions to the user, queued: one asked at a time, in the order they came,
//! only while a turn runs; and which are declined without asking (`mcp_dialogs` asks them).

use std::collections::HashSet;
use std::sync::Mutex;

/// The servers' questions: one asked at a time, in the order they came (a fair lock), and which
/// are answered without asking.
#[derive(Default)]
pub(super) struct DialogQueue {
    asking: tokio::sync::Mutex<()>,
    state: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    /// A turn runs and the user has not dismissed its questions.
    open: bool,
    /// Servers whose questions the user declined all of, for the rest of the session.
    declined: HashSet<String>,
    /// Questions declined without asking since the turn began.
    skipped: usize,
}

impl DialogQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A turn begins: questions are asked again.
    pub(super) fn open(&self) {
        let mut state = self.lock();
        state.open = true;
        state.skipped = 0;
    }

    /// The turn ended: later questions are declined. How many were declined without asking.
    pub(super) fn close(&self) -> usize {
        let mut state = self.lock();
        state.open = false;
        std::mem::take(&mut state.skipped)
    }

    /// Ctrl-C or Ctrl-D at a question: nothing more is asked in this turn.
    pub(super) fn dismiss(&self) {
        self.lock().open = false;
    }

    pub(super) fn decline_server(&self, server: &str) {
        self.lock().declined.insert(server.to_string());
    }

    /// False (counted) when a question of `server` is to be declined without asking.
    fn admits(&self, server: &str) -> bool {
        let mut state = self.lock();
        let admitted = state.open && !state.declined.contains(server);
        if !admitted {
            state.skipped += 1;
        }
        admitted
    }

    /// Waits for this question's turn; `None` when it is to be declined without asking (the
    /// check is made again once its turn comes: the user may have declined meanwhile).
    pub(super) async fn enter(&self, server: &str) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        if !self.admits(server) {
            return None;
        }
        let guard = self.asking.lock().await;
        self.admits(server).then_some(guard)
    }
}
