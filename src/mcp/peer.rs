//! The bookkeeping of one connection: requests Ling sent that await a reply (numbered from 0 in
//! the table every protocol shares, [`crate::pending`], which resolves each once), the progress
//! callbacks of calls in flight, and the server's requests Ling is answering (so a
//! `notifications/cancelled` can stop one).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::{ErrorObject, RequestId};
use super::types::{Progress, ProgressCallback};
use crate::pending::Closed;

/// How a request Ling sent ended, when it was answered (a closed connection ends the wait
/// without one: [`Pending::closed_reason`] says why).
#[derive(Debug)]
pub(crate) enum Outcome {
    Result(Value),
    Error(ErrorObject),
    /// The reply was over the transport's size limit and dropped; the message names the limit.
    TooLarge(String),
}

/// Requests in flight, by id (numbers counting up from 0), in the table every protocol shares
/// ([`crate::pending`]).
#[derive(Default)]
pub(crate) struct Pending {
    next_id: AtomicI64,
    table: crate::pending::Pending<i64, Outcome>,
}

impl Pending {
    /// A fresh id and the receiver of its outcome; refused once the connection is closed.
    pub(crate) fn register(&self) -> Result<(i64, oneshot::Receiver<Outcome>), Closed> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        Ok((id, self.table.register(id)?))
    }

    /// Delivers a reply. False when nobody waits for it (a late reply after a timeout or cancel,
    /// or an id Ling never sent): it is then ignored.
    pub(crate) fn complete(&self, id: &RequestId, outcome: Outcome) -> bool {
        let RequestId::Number(id) = id else {
            return false;
        };
        self.table.complete(id, outcome)
    }

    /// Stops waiting for `id`. True when it was still in flight.
    pub(crate) fn forget(&self, id: i64) -> bool {
        self.table.forget(&id)
    }

    /// Fails every request in flight with `outcome()`, leaving the connection open. How many.
    pub(crate) fn fail_all(&self, outcome: impl Fn() -> Outcome) -> usize {
        self.table.fail_all(outcome)
    }

    /// Ends every request in flight, and refuses every later one, with `reason`.
    pub(crate) fn close_all(&self, reason: &str) {
        self.table.close(reason);
    }

    /// Why the connection closed, once it has.
    pub(crate) fn closed_reason(&self) -> Option<String> {
        self.table.closed_reason()
    }
}

/// Progress callbacks by token (the token's JSON text, since tokens may be numbers or strings).
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    routes: Mutex<HashMap<String, ProgressCallback>>,
}

impl ProgressRoutes {
    pub(crate) fn insert(&self, token: &Value, callback: ProgressCallback) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(token.to_string(), callback);
        }
    }

    pub(crate) fn remove(&self, token: &Value) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.remove(&token.to_string());
        }
    }

    /// Calls the callback of `params.progressToken`; unknown or finished tokens are ignored
    /// (servers keep sending progress after a cancel).
    pub(crate) fn route(&self, params: &Value) {
        let Some(token) = params.get("progressToken") else {
            return;
        };
        let callback = match self.routes.lock() {
            Ok(routes) => routes.get(&token.to_string()).cloned(),
            Err(_) => None,
        };
        let Some(callback) = callback else {
            return;
        };
        let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
            return;
        };
        callback(Progress {
            progress,
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
    }
}

/// The server's requests being answered, so `notifications/cancelled` can stop one.
#[derive(Default)]
pub(crate) struct Incoming {
    running: Mutex<HashMap<RequestId, CancellationToken>>,
}

impl Incoming {
    pub(crate) fn start(&self, id: &RequestId) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut running) = self.running.lock() {
            running.insert(id.clone(), token.clone());
        }
        token
    }

    pub(crate) fn finish(&self, id: &RequestId) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(id);
        }
    }

    /// Handles `notifications/cancelled{requestId}`: that request gets no reply.
    pub(crate) fn cancel(&self, params: &Value) {
        let Some(id) = params
            .get("requestId")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        else {
            return;
        };
        let token = self.running.lock().ok().and_then(|mut r| r.remove(&id));
        if let Some(token) = token {
            token.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn late_replies_are_ignored_and_close_fails_everything() {
        let pending = Pending::default();
        let (first, _rx1) = pending.register().unwrap();
        let (second, rx2) = pending.register().unwrap();
        assert_eq!((first, second), (0, 1));
        assert!(pending.forget(first));
        assert!(!pending.complete(&RequestId::Number(first), Outcome::Result(Value::Null)));
        pending.close_all("gone");
        assert!(rx2.await.is_err());
        assert_eq!(pending.closed_reason().as_deref(), Some("gone"));
        assert_eq!(
            pending.register().err().map(|closed| closed.reason),
            Some("gone".to_string())
        );
    }
}
