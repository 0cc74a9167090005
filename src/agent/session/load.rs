//! The transcript's reading: a session found again (`--continue`: the project's latest;
//! `--resume ID`: by id or prefix), its lines replayed into a conversation and its sub-agents',
//! a torn last line repaired before anything is appended after it, and the history made one the
//! API accepts (a tool call without its result gets one saying it was interrupted).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::lines::{Header, Line, read_header, stem, transcript_path, transcripts};
use super::write::Writer;
use super::{
    ChildTranscript, INTERRUPTED_RESULT, Link, PromptMark, Resumed, Session, SessionError,
};
use crate::agent::asks::Todo;
use crate::llm::Message;

impl Session {
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
}

pub(super) fn load(path: &Path) -> Result<Resumed, SessionError> {
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
        Err(unrepaired) => (Some(unrepaired.to_string()), false),
    };
    let Replayed {
        header,
        mut messages,
        mut children,
        prompts,
        mut warnings,
        todos,
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
            todos: Mutex::new(todos),
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
        Line::Session(_)
        | Line::Subagent { .. }
        | Line::Rewind { .. }
        | Line::Turn
        | Line::Todos { .. } => {}
    }
}

/// What [`repair_torn_tail`] did to a transcript.
struct TornTail {
    /// How many bytes of what was read still hold records.
    keep: usize,
    warning: String,
}

/// A transcript's torn last line that could not be repaired: nothing may be appended to it.
#[derive(Debug, thiserror::Error)]
#[error(
    "the last line of {} was cut off (Ling was stopped while writing it) and cannot be \
     repaired ({source}); new messages of this session will not be recorded",
    path.display()
)]
struct Unrepaired {
    path: PathBuf,
    source: std::io::Error,
}

/// Ends a transcript whose last line has no line end: a whole record gets its `\n`, anything
/// else (a cut record) is cut off, so the next record appended starts on a line of its own.
/// `Ok(None)` when the file ends cleanly.
fn repair_torn_tail(path: &Path, bytes: &[u8]) -> Result<Option<TornTail>, Unrepaired> {
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
    if let Err(source) = fixed {
        return Err(Unrepaired {
            path: path.to_path_buf(),
            source,
        });
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

/// What the lines of a transcript add up to.
pub(super) struct Replayed {
    pub header: Option<Header>,
    pub messages: Vec<Message>,
    pub children: Vec<(String, ChildTranscript)>,
    pub prompts: Vec<PromptMark>,
    pub warnings: Vec<String>,
    /// The last to-do list written.
    pub todos: Vec<Todo>,
}

/// The conversation `bytes` (a transcript, or the part of one before an offset) holds.
pub(super) fn replay(bytes: &[u8], path: &Path) -> Replayed {
    let mut replayed = Replayed {
        header: None,
        messages: Vec::new(),
        children: Vec::new(),
        prompts: Vec::new(),
        warnings: Vec::new(),
        todos: Vec::new(),
    };
    let mut offset = 0u64;
    // Where the `turn` line before the next message starts.
    let mut turn = None;
    for (index, raw) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let start = offset;
        offset += raw.len() as u64;
        let line = String::from_utf8_lossy(raw);
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Message {
                message: Message::System { .. },
                ..
            }) => {}
            Ok(Line::Turn) => {
                turn = Some(start);
                continue;
            }
            Ok(Line::Message { message }) => {
                if let (Some(offset), Message::User { content, .. }) = (turn, &message) {
                    replayed.prompts.push(PromptMark {
                        offset,
                        text: content.clone(),
                    });
                }
                replayed.messages.push(message);
            }
            Ok(Line::Compaction {
                messages: compacted,
                ..
            }) => replayed.messages = compacted,
            Ok(Line::Rewind { keep, messages }) => {
                replayed.messages = messages;
                replayed.prompts.truncate(keep);
            }
            Ok(Line::Session(h)) => replayed.header = replayed.header.take().or(Some(h)),
            Ok(Line::Todos { todos }) => replayed.todos = todos,
            Ok(Line::Subagent { link, line }) => child_line(&mut replayed.children, link, *line),
            Err(e) => replayed.warnings.push(format!(
                "skipped line {} of {}: it is not a transcript record ({e})",
                index + 1,
                path.display()
            )),
        }
        turn = None;
    }
    replayed
}
