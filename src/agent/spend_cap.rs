//! What a run has spent, counted over the whole tree of agents like [`super::request_cap`]: the
//! agent the user talks to and every sub-agent it starts add their requests' costs to one
//! counter, which `--max-budget-usd` (settings `maxBudgetUsd`) caps. Unlike the request count it
//! is never restarted: a REPL or ACP session's budget is the session's, and raising it (the
//! REPL asks) is the only way on once it is reached.

use std::sync::{Arc, Mutex, PoisonError};

/// One agent's share of its session's spending.
#[derive(Clone, Default)]
pub(super) struct SpendCap {
    shared: Arc<Mutex<Spent>>,
}

#[derive(Default, Clone, Copy)]
struct Spent {
    usd: f64,
    cap: Option<f64>,
}

impl SpendCap {
    /// The same counter, for a sub-agent.
    pub(super) fn for_child(&self) -> Self {
        self.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the cap (`None`: none); what was spent stays.
    pub(super) fn set_cap(&self, cap: Option<f64>) {
        self.lock().cap = cap;
    }

    pub(super) fn cap(&self) -> Option<f64> {
        self.lock().cap
    }

    /// Adds one request's cost.
    pub(super) fn add(&self, usd: f64) {
        self.lock().usd += usd;
    }

    /// US dollars spent so far by every agent of the session.
    pub(super) fn spent(&self) -> f64 {
        self.lock().usd
    }

    /// Whether a request that costs at least `least` would take the spending past the cap.
    pub(super) fn would_pass(&self, least: f64) -> bool {
        let spent = *self.lock();
        spent.cap.is_some_and(|cap| spent.usd + least > cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_shares_one_purse_and_the_cap_can_be_raised() {
        let top = SpendCap::default();
        let child = top.for_child();
        assert!(!top.would_pass(1e9), "no cap");
        top.set_cap(Some(1.0));
        child.add(0.6);
        assert!(!top.would_pass(0.4));
        assert!(top.would_pass(0.41) && child.would_pass(0.41));
        top.set_cap(Some(2.0));
        assert!(!child.would_pass(0.41));
        assert!((top.spent() - 0.6).abs() < 1e-12);
    }
}
