//! A session's checkpoints on disk: `LING_HOME/checkpoints/<id>.journal` (the session's id, as
//! its transcript's), JSON Lines, owner-only, only ever appended. The first `state` line holds every recorded
//! path (the base); each later one only what changed since the one before, so a turn that
//! edits one file adds one short line (and one blob). `turn` and `call` lines name the state
//! the folders were in before a user message or a tool call. A fork gets a copy of the
//! journal (its turns shifted to the fork's transcript); the blobs are shared.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::tree::{Bytes, Entry, Tree};
use crate::config::private_fs;

/// Who made the changes of a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The first look at the folders.
    Base,
    /// A tool call of Ling's (between its before and after look).
    Call,
    /// A rewind of Ling's.
    Rewind,
    /// Someone else: seen at a look that followed no call of Ling's (you, your editor, a
    /// process left running, or a change made while Ling was not running).
    Outside,
}

/// One changed path of a state: what it is now, `None` when it is gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    #[serde(rename = "p")]
    pub path: Bytes,
    #[serde(rename = "e")]
    pub entry: Option<Entry>,
}

/// One line of the journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    /// The folders recorded, and those left out with why.
    Roots {
        roots: Vec<Bytes>,
        #[serde(default)]
        left_out: Vec<String>,
    },
    State {
        id: u32,
        by: By,
        /// Milliseconds since the epoch.
        time: i64,
        changes: Vec<Change>,
    },
    /// A user message: `prompt` is where its line starts in the transcript, `state` what the
    /// folders were before it.
    Turn { prompt: u64, state: u32 },
    /// A tool call that could write, and the states before and after it.
    Call {
        tool: String,
        id: String,
        before: u32,
        after: u32,
    },
}

/// A state as kept in memory.
#[derive(Debug, Clone)]
pub struct State {
    pub by: By,
    pub time: i64,
    pub changes: Vec<Change>,
}

/// A turn and the calls made in it.
#[derive(Debug, Clone)]
pub struct TurnRecord {
    pub prompt: u64,
    pub state: u32,
    pub calls: Vec<CallRecord>,
}

#[derive(Debug, Clone)]
pub struct CallRecord {
    pub tool: String,
    pub before: u32,
    pub after: u32,
}

/// The journal of one session: its file and everything in it.
#[derive(Debug)]
pub struct Journal {
    pub path: PathBuf,
    pub roots: Vec<PathBuf>,
    pub states: Vec<State>,
    pub turns: Vec<TurnRecord>,
    /// False once a write failed: checkpoints stop, said once.
    pub writable: bool,
}

impl Journal {
    pub fn path_of(dir: &Path, session_id: &str) -> PathBuf {
        dir.join(format!("{session_id}.journal"))
    }

    /// The journal at `path`; an empty one when there is none. Lines that cannot be read end
    /// the reading there (what follows could name states that are not known).
    pub fn load(path: &Path) -> Self {
        let mut journal = Self {
            path: path.to_path_buf(),
            roots: Vec::new(),
            states: Vec::new(),
            turns: Vec::new(),
            writable: true,
        };
        let Ok(text) = std::fs::read(path) else {
            return journal;
        };
        for line in text.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let Ok(record) = serde_json::from_slice::<Record>(line) else {
                break;
            };
            if !journal.apply(record) {
                break;
            }
        }
        journal
    }

    /// Takes one record in; false when it does not fit (a state out of order).
    fn apply(&mut self, record: Record) -> bool {
        match record {
            Record::Roots { roots, .. } => {
                self.roots = roots.into_iter().map(|b| b.0).collect();
            }
            Record::State {
                id,
                by,
                time,
                changes,
            } => {
                if id as usize != self.states.len() {
                    return false;
                }
                self.states.push(State { by, time, changes });
            }
            Record::Turn { prompt, state } => {
                if state as usize >= self.states.len() {
                    return false;
                }
                self.turns.push(TurnRecord {
                    prompt,
                    state,
                    calls: Vec::new(),
                });
            }
            Record::Call {
                tool,
                before,
                after,
                ..
            } => {
                if let Some(turn) = self.turns.last_mut() {
                    turn.calls.push(CallRecord {
                        tool,
                        before,
                        after,
                    });
                }
            }
        }
        true
    }

    /// Appends `record` to the file and takes it in.
    pub fn append(&mut self, record: Record) -> std::io::Result<()> {
        if !self.writable {
            return Err(std::io::Error::other(
                "the journal could not be written before",
            ));
        }
        let written = (|| {
            let mut line = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
            line.push(b'\n');
            private_fs::open_append(&self.path)?.write_all(&line)
        })();
        if written.is_err() {
            self.writable = false;
        }
        written?;
        self.apply(record);
        Ok(())
    }

    /// The id the next state gets.
    pub fn next_state(&self) -> u32 {
        self.states.len() as u32
    }

    /// The latest state's id (`None` before the base).
    pub fn latest(&self) -> Option<u32> {
        self.states.len().checked_sub(1).map(|n| n as u32)
    }

    /// The folders as they were in state `id`.
    pub fn tree_at(&self, id: u32) -> Tree {
        let mut tree = Tree::new();
        for state in self.states.iter().take(id as usize + 1) {
            apply_changes(&mut tree, &state.changes);
        }
        tree
    }

    pub fn turn(&self, prompt: u64) -> Option<&TurnRecord> {
        self.turns.iter().rev().find(|t| t.prompt == prompt)
    }

    /// The state the folders were in before the user message at `prompt`. A turn without a
    /// record of its own wrote nothing before the next recorded one (a turn is recorded at
    /// its first call that writes), so that one's state is its state too; with none after it,
    /// the latest.
    pub fn state_before(&self, prompt: u64) -> Option<u32> {
        if let Some(turn) = self.turn(prompt) {
            return Some(turn.state);
        }
        self.turns
            .iter()
            .filter(|t| t.prompt > prompt)
            .min_by_key(|t| t.prompt)
            .map(|t| t.state)
            .or_else(|| self.latest())
    }

    /// Milliseconds since the epoch of the latest state.
    pub fn latest_time(&self) -> Option<i64> {
        self.states.last().map(|s| s.time)
    }
}

pub fn apply_changes(tree: &mut Tree, changes: &[Change]) {
    for change in changes {
        match &change.entry {
            Some(entry) => {
                tree.insert(change.path.0.clone(), entry.clone());
            }
            None => {
                tree.remove(&change.path.0);
            }
        }
    }
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Copies the journal of `from` to the fork `to`, its turns moved by `shift` bytes (the
/// fork's transcript starts with a header of another length). Nothing to copy is fine.
pub fn fork(dir: &Path, from: &str, to: &str, shift: i64) -> std::io::Result<()> {
    let source = Journal::path_of(dir, from);
    let text = match std::fs::read(&source) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(mut record) = serde_json::from_slice::<Record>(line) else {
            break;
        };
        if let Record::Turn { prompt, .. } = &mut record {
            *prompt = prompt.saturating_add_signed(shift);
        }
        out.extend(serde_json::to_vec(&record).map_err(std::io::Error::other)?);
        out.push(b'\n');
    }
    private_fs::write_atomic(&Journal::path_of(dir, to), &out)
}
