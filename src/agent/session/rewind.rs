//! A transcript taken back or copied: `/rewind` appends a `rewind` line holding the history as
//! it was before a user message (loading then starts over from it, as from a compaction, and
//! the lines above it stay), and `--fork-session` copies a transcript under a new id, the
//! original left as it was. The to-do list goes back with the conversation.

use std::path::Path;

use super::lines::{Header, Line, to_line, transcript_path};
use super::load::{load, repair, replay};
use super::{ChildTranscript, PromptMark, Resumed, Session, SessionError};
use crate::llm::Message;

/// The conversation as it was before the user message a rewind went back to.
#[derive(Debug)]
pub struct Rewound {
    pub messages: Vec<Message>,
    pub children: Vec<(String, ChildTranscript)>,
    /// The user message gone back before: its text comes back to the user's input.
    pub prompt: PromptMark,
}

/// A new session holding another's conversation.
#[derive(Debug)]
pub struct Forked {
    pub resumed: Resumed,
    /// The session it was forked from.
    pub from: String,
    /// How far every line moved in the new transcript (its header is not the same length).
    pub shift: i64,
}

impl Session {
    /// Takes the conversation back to before user message `n` (1 the first): the transcript
    /// gets a `rewind` line, so a resumed session no longer holds that message or what came
    /// after it.
    pub fn rewind(&mut self, n: usize) -> Result<Rewound, SessionError> {
        let count = self.prompts.len();
        let prompt = n
            .checked_sub(1)
            .and_then(|i| self.prompts.get(i))
            .cloned()
            .ok_or(SessionError::NoSuchMessage { n, count })?;
        let bytes = std::fs::read(&self.transcript_path).map_err(|source| SessionError::Read {
            path: self.transcript_path.clone(),
            source,
        })?;
        let end = usize::try_from(prompt.offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let mut before = replay(&bytes[..end], &self.transcript_path);
        repair(&mut before.messages);
        for (_, child) in &mut before.children {
            repair(&mut child.messages);
        }
        let line = Line::Rewind {
            keep: n - 1,
            messages: before.messages.clone(),
        };
        if self.append(&[line]).is_none() {
            return Err(SessionError::Write {
                path: self.transcript_path.clone(),
                source: std::io::Error::other("the transcript could not be appended to"),
            });
        }
        self.prompts.truncate(n - 1);
        // The to-do list goes back with the conversation: the one written last before it.
        self.set_todos(&before.todos);
        Ok(Rewound {
            messages: before.messages,
            children: before.children,
            prompt,
        })
    }

    /// A new session in `sessions_dir` with the conversation of the transcript at `source`,
    /// which is left untouched.
    pub fn fork(sessions_dir: &Path, source: &Path) -> Result<Forked, SessionError> {
        let read_error = |source_error| SessionError::Read {
            path: source.to_path_buf(),
            source: source_error,
        };
        let bytes = std::fs::read(source).map_err(read_error)?;
        let first_end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        let Ok(Line::Session(header)) = serde_json::from_slice::<Line>(&bytes[..first_end]) else {
            return Err(read_error(std::io::Error::other(
                "its first line is not the session's header",
            )));
        };
        let id = uuid::Uuid::new_v4().to_string();
        let new_header = to_line(&Line::Session(Header {
            id: id.clone(),
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            forked_from: Some(header.id.clone()),
            ..header.clone()
        }))
        .map_err(read_error)?;
        let mut copy = new_header.clone().into_bytes();
        copy.extend_from_slice(&bytes[first_end..]);
        let path = transcript_path(sessions_dir, &id);
        crate::config::private_fs::write_atomic(&path, &copy).map_err(|source| {
            SessionError::Write {
                path: path.clone(),
                source,
            }
        })?;
        Ok(Forked {
            resumed: load(&path)?,
            from: header.id,
            shift: new_header.len() as i64 - first_end as i64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewind_leaves_out_the_message_and_what_followed_even_after_a_resume() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new(dir.path(), Path::new("/p"), "m");
        session.record_prompt(&Message::user("first"));
        session.record(&Message::assistant(Some("one".into()), Vec::new()));
        session.record_prompt(&Message::user("second"));
        session.record(&Message::assistant(Some("two".into()), Vec::new()));
        assert_eq!(session.prompts().len(), 2);

        let rewound = session.rewind(2).unwrap();
        assert_eq!(rewound.prompt.text, "second");
        let kept = vec![
            Message::user("first"),
            Message::assistant(Some("one".into()), Vec::new()),
        ];
        assert_eq!(rewound.messages, kept);
        session.record_prompt(&Message::user("other"));

        let resumed = Session::open(dir.path(), &session.id).unwrap();
        assert_eq!(
            resumed.messages,
            [kept.clone(), vec![Message::user("other")]].concat()
        );
        let texts: Vec<&str> = resumed
            .session
            .prompts()
            .iter()
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(texts, ["first", "other"]);
        assert!(matches!(
            session.rewind(3),
            Err(SessionError::NoSuchMessage { n: 3, count: 2 })
        ));
    }

    #[test]
    fn a_fork_has_the_conversation_under_a_new_id_and_the_original_stays() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new(dir.path(), Path::new("/p"), "m");
        session.record_prompt(&Message::user("first"));
        let original = std::fs::read(&session.transcript_path).unwrap();
        let forked = Session::fork(dir.path(), &session.transcript_path).unwrap();
        assert_ne!(forked.resumed.session.id, session.id);
        assert_eq!(forked.from, session.id);
        assert_eq!(forked.resumed.messages, vec![Message::user("first")]);
        let mark = &forked.resumed.session.prompts()[0];
        assert_eq!(
            mark.offset as i64,
            session.prompts()[0].offset as i64 + forked.shift
        );
        assert_eq!(std::fs::read(&session.transcript_path).unwrap(), original);
    }
}
