//! The model requests of one run, counted over the whole tree of agents: the agent the user
//! talks to and every sub-agent it starts draw on one counter, which `--max-turns` (settings
//! `maxTurns`) bounds. A model that starts many `task`s cannot multiply the limit, and once it
//! is reached every agent of the run stops at its next request.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// One agent's share of its run's counter.
#[derive(Clone)]
pub(super) struct RequestCap {
    shared: Arc<Counter>,
    /// The agent at the top of the tree: its runs restart the count.
    root: bool,
}

#[derive(Default)]
struct Counter {
    used: AtomicU32,
    /// 0: no limit (a limit of 0 is refused by the settings).
    limit: AtomicU32,
    /// The next run goes on counting instead of restarting (an `--until` round).
    carry: std::sync::atomic::AtomicBool,
}

impl RequestCap {
    /// The counter of a new tree, whose top is the agent that holds it.
    pub(super) fn new() -> Self {
        Self {
            shared: Arc::default(),
            root: true,
        }
    }

    /// The same counter, for a sub-agent (whose runs count on, never restart it).
    pub(super) fn for_child(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            root: false,
        }
    }

    /// A run begins: at the top of the tree nothing is counted yet, and `limit` bounds it.
    pub(super) fn begin(&self, limit: Option<u32>) {
        if self.root && !self.shared.carry.swap(false, Ordering::SeqCst) {
            self.shared.used.store(0, Ordering::SeqCst);
            self.shared
                .limit
                .store(limit.unwrap_or(0), Ordering::SeqCst);
        }
    }

    /// The next run counts on from here: it is one more round of the same run (`--until`).
    pub(super) fn carry_once(&self) {
        self.shared.carry.store(true, Ordering::SeqCst);
    }

    /// Counts one request; `false`, counting nothing, when the run has made all it may.
    pub(super) fn take(&self) -> bool {
        let limit = self.shared.limit.load(Ordering::SeqCst);
        self.shared
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (limit == 0 || used < limit).then_some(used + 1)
            })
            .is_ok()
    }

    /// Requests of the run so far, by every agent of it.
    pub(super) fn used(&self) -> u32 {
        self.shared.used.load(Ordering::SeqCst)
    }

    /// Whether the run has made all the requests it may.
    pub(super) fn exhausted(&self) -> bool {
        let limit = self.shared.limit.load(Ordering::SeqCst);
        limit != 0 && self.used() >= limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_shares_one_count_and_only_its_top_restarts_it() {
        let top = RequestCap::new();
        let child = top.for_child();
        top.begin(Some(3));
        child.begin(Some(100));
        assert!(top.take() && child.take() && child.take());
        assert!(!top.take() && !child.take());
        assert!(top.exhausted() && child.exhausted());
        assert_eq!(top.used(), 3);
        top.begin(None);
        assert!((0..10).all(|_| child.take()));
        assert!(!child.exhausted());
    }
}
