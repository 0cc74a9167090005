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
//! what came before with it, and the full earlier conversation stays in the file above it. Lines
//! are only ever appended, so a resumed
//! session keeps its id and its file; the file's modification time says which session of a
//! project was used last. A line that cannot be read is skipped with a warning, and a tool call
//! left without its result (Ling stopped mid-tool) gets a result saying so, so that the loaded
//! history is always one the API accepts. A last line left without its line end (Ling killed in
//! the middle of appending it) is repaired when the session is loaded, before anything is
//! appended after it: ended if it is a whole record, cut off otherwise, so no later line is
//! glued to it and lost.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::llm::Message;

#[path = "session_rewind.rs"]
mod rewind;
pub use rewind::{Forked, Rewound};
use rewind::{Replayed, replay};

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
}

/// Where a user message's line starts in the transcript, and its text: what `/rewind N` goes
/// back to (N counts these from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMark {
    pub offset: u64,
    pub text: String,
}

/// The appending side of a transcript.
#[derive(Debug)]
struct Writer {
    /// The metadata line, until it is written with the first message of a new session.
    header: Option<Header>,
    /// False once writing failed, so a full disk is reported once, not on every message.
    writable: bool,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Header {
    pub id: String,
    pub cwd: PathBuf,
    pub created: String,
    pub model: String,
    /// The session this one was forked from (`--fork-session`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
}

/// One line of a transcript.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(super) enum Line {
    Session(Header),
    Message {
        message: Message,
    },
    /// The user message on the next line is one the user sent (not a hook's): a turn begins,
    /// a point `/rewind` can go back to. Written in one write with that message.
    Turn,
    Compaction {
        trigger: String,
        pre_tokens: u64,
        post_tokens: u64,
        messages: Vec<Message>,
    },
    /// `/rewind`: the conversation goes back to before user message `keep + 1`; `messages`
    /// is the whole history from there on (as a compaction's).
    Rewind {
        keep: usize,
        messages: Vec<Message>,
    },
    /// A line of a sub-agent's conversation: `line` is a `message` or `compaction` line.
    Subagent {
        #[serde(flatten)]
        link: Link,
        line: Box<Line>,
    },
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
        }
    }

    /// The sub-agent this session belongs to (`None` for the main conversation).
    pub fn link(&self) -> Option<&Link> {
        self.link.as_ref()
    }

    /// The most recently used session whose project root is `root` (`--continue`).
    pub fn open_latest(sessions_dir: &Path, root: &Path) -> Result<Resumed, SessionError> {
        let none = || SessionError::NoneForProject {
            root: root.to_path_buf(),
            dir: sessions_dir.to_path_buf(),
        };
        let mut latest: Option<(SystemTime, PathBuf)> = None;
        for path in transcripts(sessions_dir) {
            let Some(header) = read_header(&path) else {
                continue;
            };
            if header.cwd != root {
                continue;
            }
            let modified = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            if latest.as_ref().is_none_or(|(time, _)| modified > *time) {
                latest = Some((modified, path));
            }
        }
        let (_, path) = latest.ok_or_else(none)?;
        load(&path)
    }

    /// The session with this id, or the one whose id starts with it, in any project (`--resume`).
    pub fn open(sessions_dir: &Path, id: &str) -> Result<Resumed, SessionError> {
        let not_found = || SessionError::NotFound {
            id: id.to_string(),
            dir: sessions_dir.to_path_buf(),
        };
        // The id becomes a file name: nothing that could leave the sessions directory.
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(not_found());
        }
        let exact = transcript_path(sessions_dir, id);
        if exact.is_file() {
            return load(&exact);
        }
        let mut matches: Vec<PathBuf> = transcripts(sessions_dir)
            .filter(|path| stem(path).is_some_and(|s| s.starts_with(id)))
            .collect();
        matches.sort();
        match matches.len() {
            0 => Err(not_found()),
            1 => load(&matches[0]),
            _ => Err(SessionError::Ambiguous {
                prefix: id.to_string(),
                matches: matches
                    .iter()
                    .filter_map(|p| stem(p).map(str::to_string))
                    .collect(),
            }),
        }
    }

    /// Appends one message to the transcript. Best effort: the agent goes on if the disk fails.
    pub fn record(&mut self, message: &Message) {
        let line = self.linked(Line::Message {
            message: message.clone(),
        });
        self.append(&[line]);
    }

    /// Appends the user's message of a new turn; returns where its line starts, the point
    /// `/rewind` goes back to (`None` when it could not be written, or for a sub-agent).
    pub fn record_prompt(&mut self, message: &Message) -> Option<u64> {
        if self.link.is_some() {
            self.record(message);
            return None;
        }
        let offset = self.append(&[
            Line::Turn,
            Line::Message {
                message: message.clone(),
            },
        ])?;
        let text = match message {
            Message::User { content, .. } => content.clone(),
            _ => String::new(),
        };
        self.prompts.push(PromptMark { offset, text });
        Some(offset)
    }

    /// The user messages of the conversation as it stands, first first.
    pub fn prompts(&self) -> &[PromptMark] {
        &self.prompts
    }

    /// `line` as this session writes it: inside a `subagent` line for a sub-agent.
    fn linked(&self, line: Line) -> Line {
        match &self.link {
            Some(link) => Line::Subagent {
                link: link.clone(),
                line: Box::new(line),
            },
            None => line,
        }
    }

    /// Appends a compaction: the history that replaces everything before it.
    pub fn record_compaction(
        &mut self,
        trigger: &str,
        pre_tokens: u64,
        post_tokens: u64,
        messages: &[Message],
    ) {
        let line = self.linked(Line::Compaction {
            trigger: trigger.to_string(),
            pre_tokens,
            post_tokens,
            messages: messages.to_vec(),
        });
        self.append(&[line]);
    }

    /// Appends `lines` in one write; returns the offset where the first starts in the file.
    fn append(&mut self, lines: &[Line]) -> Option<u64> {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !writer.writable {
            return None;
        }
        let result = (|| -> std::io::Result<u64> {
            // Owner-only: a transcript holds everything the model saw.
            let mut file = crate::config::private_fs::open_append(&self.transcript_path)?;
            let mut text = String::new();
            if let Some(header) = &writer.header {
                text.push_str(&to_line(&Line::Session(header.clone()))?);
            }
            let offset = file.metadata()?.len() + text.len() as u64;
            for line in lines {
                text.push_str(&to_line(line)?);
            }
            // One write per record, so a crash leaves whole lines and the header comes first.
            file.write_all(text.as_bytes())?;
            Ok(offset)
        })();
        match result {
            Ok(offset) => {
                writer.header = None;
                Some(offset)
            }
            Err(_) => {
                writer.writable = false;
                None
            }
        }
    }
}

fn to_line(line: &Line) -> std::io::Result<String> {
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

pub(super) fn transcript_path(sessions_dir: &Path, id: &str) -> PathBuf {
    sessions_dir.join(format!("{id}.jsonl"))
}

pub(super) fn stem(path: &Path) -> Option<&str> {
    path.file_stem().and_then(|s| s.to_str())
}

/// The `*.jsonl` files of the sessions directory; none when it does not exist yet.
pub(super) fn transcripts(sessions_dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(sessions_dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl") && path.is_file())
}

/// The metadata line of a transcript, reading only its first line.
pub(super) fn read_header(path: &Path) -> Option<Header> {
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    BufReader::new(file).read_line(&mut first).ok()?;
    match serde_json::from_str(&first).ok()? {
        Line::Session(header) => Some(header),
        _ => None,
    }
}

fn load(path: &Path) -> Result<Resumed, SessionError> {
    let mut bytes = std::fs::read(path).map_err(|source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let (repair_warning, writable) = match repair_torn_tail(path, &bytes) {
        Ok(None) => (None, true),
        Ok(Some(repaired)) => {
            bytes.truncate(repaired.keep);
            (Some(repaired.warning), true)
        }
        Err(warning) => (Some(warning), false),
    };
    let Replayed {
        header,
        mut messages,
        mut children,
        prompts,
        mut warnings,
    } = replay(&bytes, path);
    let id = header
        .map(|h| h.id)
        .or_else(|| stem(path).map(str::to_string))
        .unwrap_or_default();
    warnings.extend(repair_warning);
    let repairs = repair(&mut messages);
    if repairs > 0 {
        warnings.push(format!(
            "{repairs} tool call(s) of session {id} had no result (Ling stopped mid-tool); the model is told they were interrupted"
        ));
    }
    for (_, child) in &mut children {
        repair(&mut child.messages);
    }
    Ok(Resumed {
        session: Session {
            id,
            transcript_path: path.to_path_buf(),
            writer: Arc::new(Mutex::new(Writer {
                header: None,
                writable,
            })),
            link: None,
            prompts,
        },
        messages,
        warnings,
        children,
    })
}

/// One `subagent` line applied to that sub-agent's conversation.
pub(super) fn child_line(children: &mut Vec<(String, ChildTranscript)>, link: Link, line: Line) {
    let at = match children.iter().position(|(id, _)| *id == link.agent_id) {
        Some(at) => at,
        None => {
            children.push((
                link.agent_id.clone(),
                ChildTranscript {
                    agent: link.agent.clone(),
                    calls: Vec::new(),
                    messages: Vec::new(),
                },
            ));
            children.len() - 1
        }
    };
    let child = &mut children[at].1;
    if !child.calls.contains(&link.parent_tool_use_id) {
        child.calls.push(link.parent_tool_use_id);
    }
    match line {
        Line::Message {
            message: Message::System { .. },
            ..
        } => {}
        Line::Message { message, .. } => child.messages.push(message),
        Line::Compaction { messages, .. } => child.messages = messages,
        Line::Session(_) | Line::Subagent { .. } | Line::Rewind { .. } | Line::Turn => {}
    }
}

/// What [`repair_torn_tail`] did to a transcript.
struct TornTail {
    /// How many bytes of what was read still hold records.
    keep: usize,
    warning: String,
}

/// Ends a transcript whose last line has no line end: a whole record gets its `\n`, anything
/// else (a cut record) is cut off, so the next record appended starts on a line of its own.
/// `Ok(None)` when the file ends cleanly; `Err` (the warning) when it cannot be repaired, and
/// then nothing may be appended to it.
fn repair_torn_tail(path: &Path, bytes: &[u8]) -> Result<Option<TornTail>, String> {
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(None);
    }
    let start = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |end| end + 1);
    let tail = &bytes[start..];
    let whole = tail.trim_ascii().is_empty() || serde_json::from_slice::<Line>(tail).is_ok();
    let fixed = if whole {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(b"\n"))
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|file| file.set_len(start as u64))
    };
    if let Err(e) = fixed {
        return Err(format!(
            "the last line of {} was cut off (Ling was stopped while writing it) and cannot be \
             repaired ({e}); new messages of this session will not be recorded",
            path.display()
        ));
    }
    Ok(Some(if whole {
        TornTail {
            keep: bytes.len(),
            warning: format!(
                "the last line of {} had no line end (Ling was stopped while writing it); added \
                 one, nothing was lost",
                path.display()
            ),
        }
    } else {
        TornTail {
            keep: start,
            warning: format!(
                "the last line of {} was cut off (Ling was stopped while writing it): dropped its \
                 {} bytes; the messages before it are kept",
                path.display(),
                tail.len()
            ),
        }
    }))
}

/// Makes a loaded history valid for the API: every tool call of an assistant message is answered
/// by a tool message right after it (an [`INTERRUPTED_RESULT`] when the transcript has none), and
/// tool messages answering no call are dropped. Returns the number of results added.
pub fn repair(messages: &mut Vec<Message>) -> usize {
    let mut repaired = Vec::with_capacity(messages.len());
    let mut added = 0;
    let mut iter = std::mem::take(messages).into_iter().peekable();
    while let Some(message) = iter.next() {
        let Message::Assistant { tool_calls, .. } = &message else {
            // A tool message here answers no call of the message before it.
            if !matches!(message, Message::Tool { .. }) {
                repaired.push(message);
            }
            continue;
        };
        let calls: Vec<String> = tool_calls.iter().map(|c| c.id.clone()).collect();
        repaired.push(message);
        let mut answered = HashSet::new();
        while let Some(Message::Tool { tool_call_id, .. }) = iter.peek() {
            let keep = calls.contains(tool_call_id) && answered.insert(tool_call_id.clone());
            let Some(tool) = iter.next() else { break };
            if keep {
                repaired.push(tool);
            }
        }
        for id in calls.iter().filter(|id| !answered.contains(*id)) {
            repaired.push(Message::tool(id.clone(), INTERRUPTED_RESULT));
            added += 1;
        }
    }
    *messages = repaired;
    added
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
