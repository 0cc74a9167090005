//! The lines of a transcript, as written and read: the session's header, a message, the
//! mark of a turn, a compaction, a rewind, a sub-agent's line; and where transcripts are
//! (`LING_HOME/sessions/<id>.jsonl`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Link;
use crate::agent::asks::Todo;
use crate::llm::Message;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::agent) struct Header {
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
pub(in crate::agent) enum Line {
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
    /// The main conversation's to-do list is now this (`todo_write`).
    Todos {
        todos: Vec<Todo>,
    },
    /// A line of a sub-agent's conversation: `line` is a `message` or `compaction` line.
    Subagent {
        #[serde(flatten)]
        link: Link,
        line: Box<Line>,
    },
}

pub(super) fn to_line(line: &Line) -> std::io::Result<String> {
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
