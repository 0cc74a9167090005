//! Checkpoints: what the writable folders (the project root, `--add-dir` folders and
//! `sandbox.writableRoots`, not the temp dir) held before each user message and before and
//! after each tool call that can write, so that `/rewind` can put every byte back.
//!
//! The first look at a session's folders walks them and keeps each file's content once in a
//! content-addressed blob store (`blobs.rs`); the session's journal (`journal.rs`, by the
//! transcript's id) holds that base and, after it, only what changed. Between looks an inotify
//! watch on every folder (`watch.rs`) says which paths changed, so a look costs a read of the
//! event queue and a `lstat` and hash per changed path, however large the project; without
//! inotify, or when its queue overflowed, a look walks the folders and trusts the size and
//! times of a file to say it is unchanged (`store.rs`). A restore (`restore.rs`) puts the
//! folders back as a state had them, leaving alone what someone other than Ling changed since
//! unless forced; `prune.rs` keeps all sessions' checkpoints within their storage bound.
//!
//! Everything here is blocking file work; the `async` methods run it on tokio's blocking
//! threads. The first look runs on a thread of its own from [`Checkpoints::open`], while the
//! user types or the model thinks; whatever needs it next waits for it.

mod blobs;
mod journal;
mod prune;
mod restore;
mod store;
mod tree;
mod watch;

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use nix::fcntl::{Flock, FlockArg};
use serde::Serialize;

pub use journal::{By, fork as fork_journal};
pub use prune::{PruneReport, prune};
pub use restore::{Action, Kept, NotRestored, RestoreReport, Restored};
pub use store::human_bytes;

use crate::config::checkpoints::CheckpointSettings;
use journal::{Journal, Record};
use store::Store;
use tree::Bytes;
#[cfg(test)]
use tree::Entry;

/// Why a restore cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "checkpoints are off (settings `checkpoints: false`), so the files cannot be rewound; \
         rewind the conversation only"
    )]
    Off,
    #[error(
        "no checkpoint of the files before that message: it was sent while checkpoints were \
         off, or they were pruned (checkpoints.maxStorage); rewind the conversation only"
    )]
    NoCheckpoint,
    #[error("the checkpoints of this session could not be read: {0}")]
    Broken(String),
}

/// Why nothing is recorded in this run: the warning the user is given once, in place of the
/// checkpoints.
#[derive(Debug, thiserror::Error)]
enum Unrecorded {
    #[error("checkpoints: cannot start ({0}); nothing is recorded in this run")]
    CannotStart(std::io::Error),
    #[error("checkpoints: the first look at the folders failed; nothing is recorded in this run")]
    FirstLookFailed,
    #[error("checkpoints: cannot open {} ({source}); nothing is recorded in this run", path.display())]
    CannotOpen {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Another process holds the session's journal (a `--resume` of a running session).
    #[error(
        "checkpoints: another Ling is recording this session ({} is locked), so this one \
         records no checkpoints",
        path.display()
    )]
    Busy { path: PathBuf },
}

/// What a session's checkpoints cover and where they go.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// `LING_HOME/checkpoints`.
    pub dir: PathBuf,
    pub session_id: String,
    /// The writable folders, absolute and real (symlinks resolved).
    pub roots: Vec<PathBuf>,
    /// Paths inside them never recorded (`LING_HOME`, the temp dir).
    pub excluded: Vec<PathBuf>,
    pub settings: CheckpointSettings,
    /// Start the first look now, in the background (a session someone works in); else only
    /// when something needs it (a one-shot run pays nothing unless it writes).
    pub eager: bool,
}

/// What the calls of one turn changed, for a list of the session's user messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TurnChanges {
    pub created: usize,
    pub changed: usize,
    pub removed: usize,
    /// `bash` calls.
    pub commands: usize,
    /// Every call that could write.
    pub calls: usize,
}

/// A session's checkpoints; cheap to clone (the sub-agents share their parent's).
#[derive(Clone)]
pub struct Checkpoints {
    slot: Arc<Mutex<Slot>>,
}

enum Slot {
    /// No look yet: the first is taken when something needs the store.
    Idle(Box<OpenOptions>),
    /// The first look, on its own thread.
    Starting(std::thread::JoinHandle<Result<Store, Unrecorded>>),
    Ready(Box<Store>),
    /// Nothing is recorded in this run; the warning says why, once.
    Gone(Option<Unrecorded>),
}

impl Checkpoints {
    /// Starts the first look at the folders on a thread of its own and returns at once (with
    /// `eager`; else the first look waits until something needs it).
    pub fn open(options: OpenOptions) -> Self {
        if !options.eager {
            return Self {
                slot: Arc::new(Mutex::new(Slot::Idle(Box::new(options)))),
            };
        }
        let thread = std::thread::Builder::new()
            .name("ling-checkpoints".into())
            .spawn(move || first_look(options));
        let slot = match thread {
            Ok(handle) => Slot::Starting(handle),
            Err(e) => Slot::Gone(Some(Unrecorded::CannotStart(e))),
        };
        Self {
            slot: Arc::new(Mutex::new(slot)),
        }
    }

    /// Whether the folders were looked at (or are being): a turn needs no look of its own
    /// before the first call that writes when they were not.
    pub fn looked(&self) -> bool {
        !matches!(
            *self
                .slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            Slot::Idle(_)
        )
    }

    /// Runs `f` on the store, waiting for the first look if it is still going (taking it now
    /// if it was not started).
    fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> T) -> Option<T> {
        let mut slot = self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if matches!(*slot, Slot::Idle(_))
            && let Slot::Idle(options) = std::mem::replace(&mut *slot, Slot::Gone(None))
        {
            *slot = match first_look(*options) {
                Ok(store) => Slot::Ready(Box::new(store)),
                Err(warning) => Slot::Gone(Some(warning)),
            };
        }
        if matches!(*slot, Slot::Starting(_))
            && let Slot::Starting(handle) = std::mem::replace(&mut *slot, Slot::Gone(None))
        {
            *slot = match handle.join() {
                Ok(Ok(store)) => Slot::Ready(Box::new(store)),
                Ok(Err(warning)) => Slot::Gone(Some(warning)),
                Err(_) => Slot::Gone(Some(Unrecorded::FirstLookFailed)),
            };
        }
        match &mut *slot {
            Slot::Ready(store) => Some(f(store)),
            _ => None,
        }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> T + Send + 'static,
    ) -> Option<T> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.with_store(f))
            .await
            .ok()
            .flatten()
    }

    /// A look before a turn or a call: what changed since the last one was someone else's.
    /// Returns the state the folders are in.
    pub async fn look(&self) -> Option<u32> {
        self.blocking(|store| store.look(By::Outside))
            .await
            .flatten()
    }

    /// The user message whose transcript line starts at `prompt` was sent with the folders
    /// in `state`.
    pub async fn turn(&self, prompt: u64, state: u32) {
        self.blocking(move |store| store.write(Record::Turn { prompt, state }))
            .await;
    }

    /// The call `id` of `tool`, begun in state `before`, is over: what changed since is its.
    pub async fn call_done(&self, tool: &str, id: &str, before: Option<u32>) {
        let (tool, id) = (tool.to_string(), id.to_string());
        self.blocking(move |store| {
            let after = store.look(By::Call);
            if let (Some(before), Some(after)) = (before, after) {
                store.write(Record::Call {
                    tool,
                    id,
                    before,
                    after,
                });
            }
        })
        .await;
    }

    /// Sentences for the user (files over the size bound, a folder over `maxFiles`, a journal
    /// that cannot be written); each is given once. Never waits: while a look is going on (the
    /// first one, or a sub-agent's) they come at the next call.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut slot = match self.slot.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Vec::new(),
        };
        match &mut *slot {
            Slot::Ready(store) => std::mem::take(&mut store.warnings),
            Slot::Gone(warning) => warning.take().map(|w| w.to_string()).into_iter().collect(),
            Slot::Starting(_) | Slot::Idle(_) => Vec::new(),
        }
    }

    /// What each recorded turn's calls changed, by the transcript offset of its user message.
    /// Blocking: it waits for the first look.
    pub fn turn_changes(&self) -> HashMap<u64, TurnChanges> {
        self.with_store(|store| changes_by_turn(&store.journal))
            .unwrap_or_default()
    }

    /// Puts the folders back as they were before the user message whose transcript line
    /// starts at `prompt`. `force`: also what someone else changed since; `dry_run`: only
    /// says what it would do.
    pub async fn restore(
        &self,
        prompt: u64,
        force: bool,
        dry_run: bool,
    ) -> Result<RestoreReport, CheckpointError> {
        self.blocking(move |store| restore_in(store, prompt, force, dry_run))
            .await
            .unwrap_or_else(|| Err(CheckpointError::Broken("the first look failed".into())))
    }
}

fn restore_in(
    store: &mut Store,
    prompt: u64,
    force: bool,
    dry_run: bool,
) -> Result<RestoreReport, CheckpointError> {
    let target = store
        .journal
        .state_before(prompt)
        .ok_or(CheckpointError::NoCheckpoint)?;
    store.look(By::Outside);
    let then = store.journal.tree_at(target);
    let mut outside = BTreeSet::new();
    for state in store.journal.states.iter().skip(target as usize + 1) {
        if state.by == By::Outside {
            outside.extend(state.changes.iter().map(|c| c.path.0.clone()));
        }
    }
    let report = restore::restore(
        &store.blobs,
        &store.roots,
        &store.tree,
        &then,
        &outside,
        force,
        dry_run,
    );
    if !dry_run {
        store.look(By::Rewind);
    }
    Ok(report)
}

fn changes_by_turn(journal: &Journal) -> HashMap<u64, TurnChanges> {
    let mut out = HashMap::new();
    for turn in &journal.turns {
        let mut summary = TurnChanges {
            calls: turn.calls.len(),
            commands: turn.calls.iter().filter(|c| c.tool == "bash").count(),
            ..TurnChanges::default()
        };
        let mut touched = BTreeSet::new();
        for call in &turn.calls {
            for state in journal
                .states
                .iter()
                .take(call.after as usize + 1)
                .skip(call.before as usize + 1)
            {
                touched.extend(state.changes.iter().map(|c| c.path.0.clone()));
            }
        }
        if let Some(last) = turn.calls.last() {
            let before = journal.tree_at(turn.state);
            let after = journal.tree_at(last.after);
            for path in &touched {
                match (before.get(path), after.get(path)) {
                    (None, Some(e)) if !e.is_dir() => summary.created += 1,
                    (Some(e), None) if !e.is_dir() => summary.removed += 1,
                    (Some(a), Some(b)) if !a.same(b) && !b.is_dir() => summary.changed += 1,
                    _ => {}
                }
            }
        }
        out.insert(turn.prompt, summary);
    }
    out
}

/// How long a session's first look waits for another process (or an earlier set-up of the
/// same session) to let go of its journal.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The journal's lock, held while a process records into it; waits up to [`LOCK_WAIT`].
fn lock_journal(path: &Path) -> Result<Flock<std::fs::File>, Unrecorded> {
    let started = std::time::Instant::now();
    let mut file =
        crate::config::private_fs::open_append(path).map_err(|source| Unrecorded::CannotOpen {
            path: path.to_path_buf(),
            source,
        })?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((again, _)) if started.elapsed() < LOCK_WAIT => {
                file = again;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(_) => {
                return Err(Unrecorded::Busy {
                    path: path.to_path_buf(),
                });
            }
        }
    }
}

/// The first look of a session: its journal found again or begun, the folders walked, and
/// the storage bound checked now and then.
fn first_look(options: OpenOptions) -> Result<Store, Unrecorded> {
    let journal_path = Journal::path_of(&options.dir, &options.session_id);
    let lock = lock_journal(&journal_path)?;
    let known = if Journal::load(&journal_path).latest().is_some() {
        None
    } else {
        last_tree_of(&options.dir, &options.roots)
    };
    let blobs = prune::blobs_of(&options.dir);
    let mut store = Store::open(
        journal_path,
        blobs,
        options.roots.clone(),
        options.excluded.clone(),
        options.settings,
        known,
    );
    prune::prune_now_and_then(
        &options.dir,
        options.settings.max_storage,
        std::slice::from_ref(&options.session_id),
    );
    store.lock = Some(lock);
    Ok(store)
}

/// The folders as the latest session over the same roots last saw them, and when (ms): the
/// hashes a new session can reuse without reading the files again.
fn last_tree_of(dir: &Path, roots: &[PathBuf]) -> Option<(tree::Tree, i64)> {
    let mut latest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "journal") {
            continue;
        }
        let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        if latest.as_ref().is_some_and(|(t, _)| *t >= modified) {
            continue;
        }
        if first_roots(&path).as_deref() == Some(roots) {
            latest = Some((modified, path));
        }
    }
    let journal = Journal::load(&latest?.1);
    let id = journal.latest()?;
    Some((journal.tree_at(id), journal.latest_time()?))
}

/// The roots a journal's first line names.
fn first_roots(path: &Path) -> Option<Vec<PathBuf>> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file).read_line(&mut line).ok()?;
    match serde_json::from_str::<Record>(&line).ok()? {
        Record::Roots { roots, .. } => Some(roots.into_iter().map(|b: Bytes| b.0).collect()),
        _ => None,
    }
}

/// The folders a run's checkpoints cover: `root` and the writable folders, real paths, none
/// inside another, `/` never (a run started there cannot be recorded whole).
pub fn roots_of(root: &Path, writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for dir in std::iter::once(root).chain(writable.iter().map(PathBuf::as_path)) {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        if real.parent().is_none() || !real.is_dir() {
            continue;
        }
        if roots.iter().any(|r| real.starts_with(r)) {
            continue;
        }
        roots.retain(|r| !r.starts_with(&real));
        roots.push(real);
    }
    roots
}

/// Whether an entry is a file the journal names by content (for tests of the store).
#[cfg(test)]
fn hash_of(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::File { hash, .. } => hash.as_deref(),
        _ => None,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
