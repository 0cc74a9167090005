//! The requests Ling sent that await their answer, by id (numbers counting up from 1). Each is
//! resolved once: by its answer, by the connection closing, or forgotten after a timeout or a
//! cancel, so that a late answer is ignored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;

use super::{RequestId, RpcError};

type Reply = Result<Value, RpcError>;

#[derive(Default)]
struct Table {
    waiting: HashMap<i64, oneshot::Sender<Reply>>,
    closed: bool,
}

#[derive(Default)]
pub(super) struct Pending {
    next_id: AtomicI64,
    table: Mutex<Table>,
}

impl Pending {
    /// A fresh id and where its answer will arrive; `None` once the connection is closed.
    pub(super) fn register(&self) -> Option<(i64, oneshot::Receiver<Reply>)> {
        let mut table = self.lock();
        if table.closed {
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        table.waiting.insert(id, tx);
        Some((id, rx))
    }

    /// Delivers an answer; one nobody waits for (late, or to an id Ling never used) is dropped.
    pub(super) fn complete(&self, id: &RequestId, reply: Reply) {
        let RequestId::Number(id) = id else {
            tracing::debug!("rpc: an answer to id {id}, which Ling never sent; ignored");
            return;
        };
        let sender = self.lock().waiting.remove(id);
        match sender {
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => tracing::debug!("rpc: a late answer to request {id}; ignored"),
        }
    }

    /// Fails the request `id` (its answer was unreadable).
    pub(super) fn fail(&self, id: &RequestId, error: RpcError) {
        self.complete(id, Err(error));
    }

    pub(super) fn forget(&self, id: i64) {
        self.lock().waiting.remove(&id);
    }

    /// The connection is gone: every request in flight ends now, and later ones at once.
    pub(super) fn close_all(&self) {
        let mut table = self.lock();
        table.closed = true;
        // Dropping the senders ends each wait with "closed".
        table.waiting.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
