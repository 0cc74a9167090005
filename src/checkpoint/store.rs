//! One session's checkpoints at work: the folders as last seen ([`Tree`]), the watcher that
//! says what changed since, and the journal the states go to. A look ([`Store::look`]) takes
//! in what changed since the last one, keeps new contents in the blob store and appends one
//! `state` line when anything did.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::blobs::Blobs;
use super::journal::{By, Change, Journal, Record, now_ms};
use super::tree::{Bytes, Entry, Scanner, Tree, WalkError, subtree};
use super::watch::{Dirty, Watcher};
use crate::config::checkpoints::CheckpointSettings;

/// How far before the last look a file's change time must be for its recorded hash to be
/// trusted without reading it (timestamps are coarser than the changes they stamp).
const RACY_NS: i64 = 2_000_000_000;

pub struct Store {
    pub roots: Vec<PathBuf>,
    pub excluded: Vec<PathBuf>,
    pub tree: Tree,
    pub blobs: Blobs,
    pub journal: Journal,
    pub settings: CheckpointSettings,
    watcher: Watcher,
    /// When the folders were last looked at, in ns since the epoch.
    last_look: i64,
    /// Files over the size bound already reported.
    pub reported_big: BTreeSet<PathBuf>,
    /// Sentences for the user, taken by the agent.
    pub warnings: Vec<String>,
    /// The journal's lock, held while this process records into it.
    pub lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

impl Store {
    /// Opens the journal at `journal_path` and looks at the folders: the first look of a new
    /// journal is its base; a journal found again (a resumed session) gets what changed while
    /// Ling was away as an `outside` state.
    pub fn open(
        journal_path: PathBuf,
        blobs: Blobs,
        roots: Vec<PathBuf>,
        excluded: Vec<PathBuf>,
        settings: CheckpointSettings,
        known: Option<(Tree, i64)>,
    ) -> Self {
        let journal = Journal::load(&journal_path);
        let resumed = journal.latest().is_some();
        let (tree, last_look) = match journal.latest() {
            Some(id) => (
                journal.tree_at(id),
                journal.latest_time().unwrap_or(0) * 1_000_000,
            ),
            // A new session may reuse the hashes of the project's last session: a file whose
            // size and times are unchanged since that session looked is not read again.
            None => known.map_or((Tree::new(), 0), |(tree, ms)| (tree, ms * 1_000_000)),
        };
        let mut store = Self {
            roots,
            excluded,
            tree,
            blobs,
            journal,
            settings,
            watcher: Watcher::new(),
            last_look,
            reported_big: BTreeSet::new(),
            warnings: Vec::new(),
            lock: None,
        };
        if !resumed {
            let roots = store.roots.iter().map(|r| Bytes(r.clone())).collect();
            store.write(Record::Roots {
                roots,
                left_out: Vec::new(),
            });
        }
        let mut known = std::mem::take(&mut store.tree);
        // Folders recorded before but not in this run (another --add-dir) are not gone.
        let roots = store.roots.clone();
        known.retain(|path, _| roots.iter().any(|r| path.starts_with(r)));
        let walked = store.walk_all(&known);
        let changes = diff(&known, &walked);
        store.tree = walked;
        store.last_look = now_ms() * 1_000_000;
        if !resumed {
            // The base is the whole tree, whatever the reused hashes said.
            let base: Vec<Change> = store
                .tree
                .iter()
                .map(|(p, e)| Change {
                    path: Bytes(p.clone()),
                    entry: Some(e.clone()),
                })
                .collect();
            store.commit(By::Base, base);
        } else if !changes.is_empty() {
            store.commit(By::Outside, changes);
        }
        store
    }

    /// Takes in what changed since the last look; `by` says who made it. Returns the state the
    /// folders are in now.
    pub fn look(&mut self, by: By) -> Option<u32> {
        let changes = match self.watcher.drain() {
            Dirty::Paths(paths) if self.watcher.works() => self.look_at(paths),
            _ => {
                let known = std::mem::take(&mut self.tree);
                let walked = self.walk_all(&known);
                let changes = diff(&known, &walked);
                self.tree = walked;
                changes
            }
        };
        self.last_look = now_ms() * 1_000_000;
        if !changes.is_empty() {
            self.commit(by, changes);
        }
        self.journal.latest()
    }

    /// Appends a state of `changes` (already in the tree).
    fn commit(&mut self, by: By, changes: Vec<Change>) {
        self.report_big(&changes);
        let record = Record::State {
            id: self.journal.next_state(),
            by,
            time: now_ms(),
            changes,
        };
        self.write(record);
    }

    pub fn write(&mut self, record: Record) {
        let was = self.journal.writable;
        if let Err(e) = self.journal.append(record)
            && was
        {
            self.warnings.push(format!(
                "checkpoints: cannot write {} ({e}); no more checkpoints are recorded in this \
                 session",
                self.journal.path.display()
            ));
        }
    }

    /// The changed paths the watcher named, each looked at again.
    fn look_at(&mut self, paths: BTreeSet<PathBuf>) -> Vec<Change> {
        let mut changes = Vec::new();
        // Removals first: a folder renamed over another must not lose its new watch.
        let mut present = Vec::new();
        for path in paths {
            if !self.covers(&path) {
                continue;
            }
            match std::fs::symlink_metadata(&path) {
                Ok(meta) => present.push((path, meta)),
                Err(_) => self.remove_below(&path, &mut changes),
            }
        }
        for (path, meta) in present {
            if meta.is_dir() {
                let same_dir = matches!(
                    self.tree.get(&path),
                    Some(Entry::Dir { ino, .. }) if *ino == std::os::unix::fs::MetadataExt::ino(&meta)
                );
                if !same_dir {
                    // New here (made, or renamed in): everything in it is new too.
                    self.remove_below(&path, &mut changes);
                    self.take_in_dir(&path, &mut changes);
                    continue;
                }
            } else if self.tree.get(&path).is_some_and(Entry::is_dir) {
                self.remove_below(&path, &mut changes);
            }
            self.take_in(&path, &meta, &mut changes);
        }
        changes
    }

    /// Whether `path` is recorded: inside a root, not left out.
    fn covers(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(r) && path != r)
            && !self.scanner().leaves_out(path)
            && !path
                .ancestors()
                .any(|a| a.file_name().is_some_and(|n| n == ".git"))
    }

    fn scanner(&self) -> Scanner<'_> {
        Scanner {
            blobs: &self.blobs,
            max_file_size: self.settings.max_file_size,
            excluded: &self.excluded,
        }
    }

    /// `path` and everything below it are gone.
    fn remove_below(&mut self, path: &Path, changes: &mut Vec<Change>) {
        let gone: Vec<PathBuf> = subtree(&self.tree, path).cloned().collect();
        for p in gone {
            if let Some(Entry::Dir { .. }) = self.tree.remove(&p) {
                self.watcher.forget(&p);
            }
            changes.push(Change {
                path: Bytes(p),
                entry: None,
            });
        }
    }

    /// One path (not a new folder) looked at again.
    fn take_in(&mut self, path: &Path, meta: &std::fs::Metadata, changes: &mut Vec<Change>) {
        let Ok(entry) = self.scanner().entry(path, meta, None, 0) else {
            return;
        };
        if self.tree.get(path) != Some(&entry) {
            self.tree.insert(path.to_path_buf(), entry.clone());
            changes.push(Change {
                path: Bytes(path.to_path_buf()),
                entry: Some(entry),
            });
        }
    }

    /// A folder new to the tree, with everything in it.
    fn take_in_dir(&mut self, dir: &Path, changes: &mut Vec<Change>) {
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        self.take_in(dir, &meta, changes);
        let scanner = Scanner {
            blobs: &self.blobs,
            max_file_size: self.settings.max_file_size,
            excluded: &self.excluded,
        };
        let watcher = &mut self.watcher;
        let walked = scanner.walk(dir, usize::MAX, &mut |d| watcher.watch(d));
        for (path, meta) in walked.unwrap_or_default() {
            self.take_in(&path, &meta, changes);
        }
    }

    /// Every root walked, each path's entry (a file's hash reused from `known` when its size
    /// and times say it is unchanged); a root over `maxFiles` is left out, said once.
    fn walk_all(&mut self, known: &Tree) -> Tree {
        let mut tree = Tree::new();
        let racy_before = self.last_look - RACY_NS;
        let scanner = Scanner {
            blobs: &self.blobs,
            max_file_size: self.settings.max_file_size,
            excluded: &self.excluded,
        };
        let watcher = &mut self.watcher;
        let mut kept_roots = Vec::new();
        for root in self.roots.clone() {
            let walked = scanner.walk(&root, self.settings.max_files, &mut |d| watcher.watch(d));
            match walked {
                Ok(found) => {
                    for (path, meta) in found {
                        if let Ok(entry) =
                            scanner.entry(&path, &meta, known.get(&path), racy_before)
                        {
                            tree.insert(path, entry);
                        }
                    }
                    kept_roots.push(root);
                }
                Err(WalkError::TooMany) => self.warnings.push(format!(
                    "checkpoints: {} holds more than {} files and folders \
                     (checkpoints.maxFiles), so it is not recorded: a rewind does not cover it",
                    root.display(),
                    self.settings.max_files
                )),
            }
        }
        self.roots = kept_roots;
        tree
    }

    /// Files over the size bound, said once each.
    fn report_big(&mut self, changes: &[Change]) {
        let mut big = Vec::new();
        for change in changes {
            if let Some(Entry::File {
                hash: None, size, ..
            }) = &change.entry
                && self.reported_big.insert(change.path.0.clone())
            {
                big.push((change.path.0.clone(), *size));
            }
        }
        if big.is_empty() {
            return;
        }
        big.sort_by_key(|b| std::cmp::Reverse(b.1));
        let named: Vec<String> = big
            .iter()
            .take(3)
            .map(|(p, s)| format!("{} ({})", p.display(), human_bytes(*s)))
            .collect();
        let more = big.len().saturating_sub(3);
        self.warnings.push(format!(
            "checkpoints: {}{} over checkpoints.maxFileSize ({}) {} recorded by size only: a \
             rewind cannot put {} back",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            human_bytes(self.settings.max_file_size),
            if big.len() == 1 { "is" } else { "are" },
            if big.len() == 1 { "it" } else { "them" },
        ));
    }
}

/// The changes that turn `old` into `new`.
pub fn diff(old: &Tree, new: &Tree) -> Vec<Change> {
    let mut changes = Vec::new();
    for (path, entry) in new {
        if old.get(path) != Some(entry) {
            changes.push(Change {
                path: Bytes(path.clone()),
                entry: Some(entry.clone()),
            });
        }
    }
    for path in old.keys() {
        if !new.contains_key(path) {
            changes.push(Change {
                path: Bytes(path.clone()),
                entry: None,
            });
        }
    }
    changes
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
