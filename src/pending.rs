//! The requests sent over one connection that await their answer, by id: one table for every
//! protocol in which Ling asks the other side something (MCP's requests to a server in
//! `mcp::peer`, `rpc`'s JSON-RPC of `ling acp` and `ling mcp serve`, the control channel of
//! Claude's stream-json in `front::claude`). Each request is resolved once: by its answer, by the
//! connection closing (every wait ends, later requests are refused), or given up after a timeout
//! or a cancel, so that a late answer is dropped. The ids and the wire stay with the protocol.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The connection is closed, so no request can be answered any more.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Closed {
    /// Why it closed, as the protocol said when it closed it.
    pub reason: String,
}

/// How a wait for an answer ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited<T> {
    Answer(T),
    /// The connection closed first.
    Closed,
    /// No answer within the time given (that time).
    TimedOut(Duration),
    /// The caller's cancel fired first.
    Cancelled,
}

/// The requests in flight on one connection, by id `K`, each awaiting an answer `T`.
pub struct Pending<K, T> {
    table: Mutex<Table<K, T>>,
}

struct Table<K, T> {
    waiting: HashMap<K, oneshot::Sender<T>>,
    /// Set once the connection closed: why.
    closed: Option<String>,
}

impl<K, T> Default for Pending<K, T> {
    fn default() -> Self {
        Self {
            table: Mutex::new(Table {
                waiting: HashMap::new(),
                closed: None,
            }),
        }
    }
}

impl<K: Eq + Hash, T> Pending<K, T> {
    /// Waits for the answer to `id` from now on: where it will arrive. Refused once the
    /// connection is closed.
    pub fn register(&self, id: K) -> Result<oneshot::Receiver<T>, Closed> {
        let mut table = self.lock();
        if let Some(reason) = &table.closed {
            return Err(Closed {
                reason: reason.clone(),
            });
        }
        let (tx, rx) = oneshot::channel();
        table.waiting.insert(id, tx);
        Ok(rx)
    }

    /// Hands `answer` to whoever waits for `id`. False when nobody does (a late answer after a
    /// timeout or cancel, or an id never sent): the answer is then dropped.
    pub fn complete(&self, id: &K, answer: T) -> bool {
        let sender = self.lock().waiting.remove(id);
        sender.is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// Stops waiting for `id`, so that a late answer is dropped. True when it was still waited
    /// for.
    pub fn forget(&self, id: &K) -> bool {
        self.lock().waiting.remove(id).is_some()
    }

    /// Answers every request in flight with `answer()`, leaving the connection open. How many.
    pub fn fail_all(&self, answer: impl Fn() -> T) -> usize {
        let waiting = std::mem::take(&mut self.lock().waiting);
        let failed = waiting.len();
        for (_, tx) in waiting {
            let _ = tx.send(answer());
        }
        failed
    }

    /// The connection closed: every wait ends now ([`Waited::Closed`], or a receiver that sees
    /// its sender gone) and later requests are refused with `reason`. The first reason stays.
    pub fn close(&self, reason: &str) {
        let waiting = {
            let mut table = self.lock();
            table.closed.get_or_insert_with(|| reason.to_string());
            std::mem::take(&mut table.waiting)
        };
        drop(waiting);
    }

    /// Why the connection closed, once it has.
    pub fn closed_reason(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Waits for the answer to `id` (`answer` is what [`Pending::register`] gave for it), at
    /// most `timeout` (`None`: as long as it takes, for a question a person answers) or until
    /// `cancel` fires. A wait given up forgets `id`, so that a late answer is dropped.
    pub async fn wait(
        &self,
        id: &K,
        answer: oneshot::Receiver<T>,
        timeout: Option<Duration>,
        cancel: Option<&CancellationToken>,
    ) -> Waited<T> {
        let answered = async {
            match timeout {
                Some(after) => tokio::time::timeout(after, answer)
                    .await
                    .map_err(|_| Waited::TimedOut(after)),
                None => Ok(answer.await),
            }
        };
        let cancelled = async {
            match cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let waited = tokio::select! {
            answered = answered => match answered {
                Ok(Ok(answer)) => return Waited::Answer(answer),
                Ok(Err(_)) => return Waited::Closed,
                Err(timed_out) => timed_out,
            },
            () = cancelled => Waited::Cancelled,
        };
        self.forget(id);
        waited
    }

    fn lock(&self) -> MutexGuard<'_, Table<K, T>> {
        // Nothing panics while holding the lock; should something, the table is still whole.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
impl<K: Clone + Eq + Hash, T> Pending<K, T> {
    /// The ids waited for, for tests whose ids are made where they cannot see them.
    pub fn ids(&self) -> Vec<K> {
        self.lock().waiting.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn an_answer_reaches_its_request_once() {
        let pending = Pending::<i64, &str>::default();
        let first = pending.register(1).unwrap();
        let second = pending.register(2).unwrap();
        assert!(pending.complete(&2, "two"));
        assert!(!pending.complete(&2, "again"), "answered once");
        assert!(!pending.complete(&3, "never sent"));
        assert!(pending.complete(&1, "one"));
        assert_eq!(
            pending.wait(&1, first, None, None).await,
            Waited::Answer("one")
        );
        assert_eq!(second.await, Ok("two"));
    }

    #[tokio::test]
    async fn a_request_given_up_drops_its_late_answer() {
        let pending = Pending::<i64, &str>::default();
        let answer = pending.register(1).unwrap();
        assert_eq!(
            pending.wait(&1, answer, Some(Duration::ZERO), None).await,
            Waited::TimedOut(Duration::ZERO)
        );
        assert!(!pending.complete(&1, "late"));
        assert!(!pending.forget(&1));

        let cancel = CancellationToken::new();
        cancel.cancel();
        let answer = pending.register(2).unwrap();
        assert_eq!(
            pending.wait(&2, answer, None, Some(&cancel)).await,
            Waited::Cancelled
        );
        assert!(!pending.complete(&2, "late"));
        // Still open: a new request is taken.
        assert!(pending.register(3).is_ok());
        assert!(pending.forget(&3));
    }

    #[tokio::test]
    async fn closing_ends_every_wait_and_refuses_later_requests() {
        let pending = Pending::<i64, &str>::default();
        let answer = pending.register(1).unwrap();
        let other = pending.register(2).unwrap();
        pending.close("gone");
        pending.close("a second reason");
        assert_eq!(pending.wait(&1, answer, None, None).await, Waited::Closed);
        assert!(other.await.is_err());
        assert_eq!(pending.closed_reason().as_deref(), Some("gone"));
        assert_eq!(
            pending.register(3).err(),
            Some(Closed {
                reason: "gone".into()
            })
        );
    }

    #[tokio::test]
    async fn failing_all_answers_every_request_and_leaves_the_connection_open() {
        let pending = Pending::<i64, &str>::default();
        let first = pending.register(1).unwrap();
        let second = pending.register(2).unwrap();
        assert_eq!(pending.fail_all(|| "too large"), 2);
        assert_eq!(
            (first.await, second.await),
            (Ok("too large"), Ok("too large"))
        );
        assert!(pending.ids().is_empty());
        assert!(pending.register(3).is_ok());
        assert_eq!(pending.ids(), vec![3]);
    }
}
