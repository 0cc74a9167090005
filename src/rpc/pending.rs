//! The requests Ling sent that await their answer, by id: numbers counting up from 1, in the
//! table every protocol shares ([`crate::pending`]), which resolves each once. An answer to an id
//! Ling never sent, or to a request already given up, is logged and dropped.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{RequestId, RpcError};
use crate::pending::Waited;

type Reply = Result<Value, RpcError>;

#[derive(Default)]
pub(super) struct Pending {
    next_id: AtomicI64,
    table: crate::pending::Pending<i64, Reply>,
}

impl Pending {
    /// A fresh id and where its answer will arrive; `None` once the connection is closed.
    pub(super) fn register(&self) -> Option<(i64, oneshot::Receiver<Reply>)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let reply = self.table.register(id).ok()?;
        Some((id, reply))
    }

    /// Delivers an answer; one nobody waits for (late, or to an id Ling never used) is dropped.
    pub(super) fn complete(&self, id: &RequestId, reply: Reply) {
        let RequestId::Number(id) = id else {
            tracing::debug!("rpc: an answer to id {id}, which Ling never sent; ignored");
            return;
        };
        if !self.table.complete(id, reply) {
            tracing::debug!("rpc: a late answer to request {id}; ignored");
        }
    }

    /// Fails the request `id` (its answer was unreadable).
    pub(super) fn fail(&self, id: &RequestId, error: RpcError) {
        self.complete(id, Err(error));
    }

    /// Waits for the answer to `id`; see [`crate::pending::Pending::wait`].
    pub(super) async fn wait(
        &self,
        id: i64,
        reply: oneshot::Receiver<Reply>,
        timeout: Option<Duration>,
        cancel: Option<&CancellationToken>,
    ) -> Waited<Reply> {
        self.table.wait(&id, reply, timeout, cancel).await
    }

    /// The connection is gone: every request in flight ends now, and later ones at once.
    pub(super) fn close_all(&self) {
        self.table.close("the connection closed");
    }
}
