//! A session: its id and its transcript `LING_HOME/sessions/<id>.jsonl`, which hooks receive as
//! `transcript_path`, and finding a transcript again for `--continue` and `--resume ID`.
//!
//! The transcript is JSON Lines. The first line describes the session,
//! `{"type":"session","id":"<uuid>","cwd":"/abs/project/root","created":"<RFC 3339>","model":"m"}`,
//! and every other line is one history message as the chat-completions API takes it,
//! `{"type":"message","message":{"role":"user","content":"..."}}`. The system prompt is not
//! recorded: a resumed session gets a fresh one. A compaction is a line of its own,
//! `{"type":"compaction","trigger":"auto","pre_tokens":N,"post_tokens":N,"messages":[...]}`,
//! holding the whole history after it (the summary and the recent messages): loading replaces
//! what came before with it, and the full earlier conversation stays in the file above it. The
//! to-do list is a line of its own each time the model writes it,
//! `{"type":"todos","todos":[{"content":..,"status":..,"activeForm":..}]}`: the last one is
//! the session's list (a compaction keeps it). Lines
//! are only ever appended, so a resumed
//! session keeps its id and its file; the file's modification time says which session of a
//! project was used last. A line that cannot be read is skipped with a warning, and a tool call
//! left without its result (Ling stopped mid-tool) gets a result saying so, so that the loaded
//! history is always one the API accepts. A last line left without its line end (Ling killed in
//! the middle of appending it) is repaired when the session is loaded, before anything is
//! appended after it: ended if it is a whole record, cut off otherwise, so no later line is
//! glued to it and lost.
//!
//! This file holds the [`Session`] and what it is made of; the lines are `lines.rs`, their
//! writing `write.rs`, finding and reading a transcript back `load.rs`, a rewind and a fork
//! `rewind.rs`, the listing of a project's sessions `list.rs`.

mod lines;
pub mod list;
mod load;
mod rewind;
mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::agent::asks::Todo;
use crate::llm::Message;

use self::lines::{Header, transcript_path};
use self::write::Writer;
pub use rewind::{Forked, Rewound};

/// The result given to a tool call whose result is missing from a transcript.
pub const INTERRUPTED_RESULT: &str = "error: this tool call was interrupted (Ling stopped before it finished); its result is unknown";

#[derive(Debug)]
pub struct Session {
    pub id: String,
    pub transcript_path: PathBuf,
    /// Shared with the sub-agents' sessions, which write to the same file.
    writer: Arc<Mutex<Writer>>,
    /// Set for a sub-agent's session: its lines are linked to the parent's call.
    link: Option<Link>,
    /// The user messages of the conversation as it stands (after rewinds), in order.
    prompts: Vec<PromptMark>,
    /// The to-do list as the model last wrote it (`todo_write`).
    todos: Mutex<Vec<Todo>>,
}

/// Where a user message's line starts in the transcript, and its text: what `/rewind N` goes
/// back to (N counts these from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMark {
    pub offset: u64,
    pub text: String,
}

/// Which sub-agent a session's lines belong to, and the parent's call that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub agent_id: String,
    /// The agent's type: `general-purpose`, or a definition's name.
    pub agent: String,
    /// The parent's `task` call.
    pub parent_tool_use_id: String,
}

/// A sub-agent's conversation as the transcript keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildTranscript {
    pub agent: String,
    /// The parent's calls that ran it (the first, then each resume).
    pub calls: Vec<String>,
    pub messages: Vec<Message>,
}

/// A session found again, with the history to give the agent.
#[derive(Debug)]
pub struct Resumed {
    pub session: Session,
    /// The recorded messages, repaired so the API accepts them.
    pub messages: Vec<Message>,
    /// Lines skipped and repairs made, one sentence each, for the user.
    pub warnings: Vec<String>,
    /// The sub-agents' conversations, by agent id (each repaired like the main one).
    pub children: Vec<(String, ChildTranscript)>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(
        "no session {id} in {}; the id is the `session_id` of `ling -p --output-format json`, or a file name (without .jsonl) there; `ling --continue` resumes this project's latest session",
        dir.display()
    )]
    NotFound { id: String, dir: PathBuf },
    #[error("session id prefix {prefix} matches {}; give more of the id", matches.join(", "))]
    Ambiguous {
        prefix: String,
        matches: Vec<String>,
    },
    #[error(
        "no session to continue for {}: none was recorded in {} for this project; run `ling` without --continue to start one",
        root.display(),
        dir.display()
    )]
    NoneForProject { root: PathBuf, dir: PathBuf },
    #[error("cannot read the session transcript {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the session transcript {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "there is no user message {n} in this session: it has {count}; /rewind N counts them \
         from 1, the first (with -p, name the session with --resume ID)"
    )]
    NoSuchMessage { n: usize, count: usize },
}

impl Session {
    /// A new session of the project `root`; its transcript is created with its first message.
    pub fn new(sessions_dir: &Path, root: &Path, model: &str) -> Self {
        Self::with_id(sessions_dir, root, model, uuid::Uuid::new_v4().to_string())
    }

    /// A new session with an id chosen before it (ACP: the session the editor already knows,
    /// set up again once the project is trusted). Nothing is recorded under it yet. An id that
    /// could not be a file name of the sessions directory gets a fresh one instead.
    pub fn with_id(sessions_dir: &Path, root: &Path, model: &str, id: String) -> Self {
        let id = if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            id
        } else {
            uuid::Uuid::new_v4().to_string()
        };
        Self {
            transcript_path: transcript_path(sessions_dir, &id),
            writer: Arc::new(Mutex::new(Writer {
                header: Some(Header {
                    id: id.clone(),
                    cwd: root.to_path_buf(),
                    created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    model: model.to_string(),
                    forked_from: None,
                }),
                writable: true,
            })),
            link: None,
            prompts: Vec::new(),
            todos: Mutex::default(),
            id,
        }
    }

    /// The session of a sub-agent: the same id and transcript, its lines linked to `link`.
    pub fn child(&self, link: Link) -> Self {
        Self {
            id: self.id.clone(),
            transcript_path: self.transcript_path.clone(),
            writer: self.writer.clone(),
            link: Some(link),
            prompts: Vec::new(),
            todos: Mutex::default(),
        }
    }

    /// The sub-agent this session belongs to (`None` for the main conversation).
    pub fn link(&self) -> Option<&Link> {
        self.link.as_ref()
    }

    /// The user messages of the conversation as it stands, first first.
    pub fn prompts(&self) -> &[PromptMark] {
        &self.prompts
    }
}

#[cfg(test)]
mod tests;
