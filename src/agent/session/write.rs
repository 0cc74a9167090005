//! The transcript's writing: each message, the user's turns (where `/rewind` can go back to),
//! compactions, the to-do list and a sub-agent's lines (inside `subagent` lines linked to its call), appended in
//! one write per record so that a crash leaves whole lines. The header goes with the first
//! record of a new session; a write that fails stops the recording, reported once.

use std::io::Write;

use super::lines::{Header, Line, to_line};
use super::{PromptMark, Session};
use crate::agent::asks::Todo;
use crate::llm::Message;

/// The appending side of a transcript.
#[derive(Debug)]
pub(super) struct Writer {
    /// The metadata line, until it is written with the first message of a new session.
    pub header: Option<Header>,
    /// False once writing failed, so a full disk is reported once, not on every message.
    pub writable: bool,
}

impl Session {
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

    /// The to-do list as the model last wrote it.
    pub fn todos(&self) -> Vec<Todo> {
        self.lock_todos().clone()
    }

    /// The list is now `todos`: kept, and recorded for `--resume` (a sub-agent's list is its
    /// own and only kept while it lives).
    pub fn set_todos(&self, todos: &[Todo]) {
        *self.lock_todos() = todos.to_vec();
        if self.link.is_none() {
            self.append(&[Line::Todos {
                todos: todos.to_vec(),
            }]);
        }
    }

    fn lock_todos(&self) -> std::sync::MutexGuard<'_, Vec<Todo>> {
        self.todos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends `lines` in one write; returns the offset where the first starts in the file.
    pub(super) fn append(&self, lines: &[Line]) -> Option<u64> {
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
