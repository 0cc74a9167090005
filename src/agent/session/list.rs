//! The sessions of a project, for `ling sessions list` and the REPL's `/resume`: each
//! transcript whose header names the project root, with its start, its last activity (the
//! file's modification time), its first prompt and how many messages it holds, newest first.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use super::lines::{Line, read_header, transcripts};
use crate::llm::Message;

/// One recorded session, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    /// RFC 3339, from the transcript's header.
    pub started: String,
    /// RFC 3339, the transcript's last change.
    pub last_activity: String,
    /// The first line of the first prompt (at most 200 characters).
    pub first_prompt: String,
    /// Every message recorded, before and after compactions.
    pub messages: usize,
    pub compactions: usize,
    #[serde(skip)]
    pub transcript_path: PathBuf,
    #[serde(skip)]
    pub modified: SystemTime,
}

/// The sessions recorded for the project `root`, most recently used first.
pub fn list(sessions_dir: &Path, root: &Path) -> Vec<SessionSummary> {
    let mut sessions: Vec<SessionSummary> = transcripts(sessions_dir)
        .filter_map(|path| {
            let header = read_header(&path)?;
            (header.cwd == root).then(|| summarise(&path, header.id, header.created))
        })
        .collect();
    sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.id.cmp(&b.id)));
    sessions
}

/// The project root the transcript `path` was recorded for (`None` when it has no header).
pub fn recorded_root(path: &Path) -> Option<PathBuf> {
    read_header(path).map(|header| header.cwd)
}

fn summarise(path: &Path, id: String, started: String) -> SessionSummary {
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let mut first_prompt = None;
    let mut messages = 0;
    let mut compactions = 0;
    for line in text.lines() {
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Message { message, .. }) => {
                messages += 1;
                if first_prompt.is_none()
                    && let Message::User { content, .. } = message
                {
                    first_prompt = Some(first_line(&content));
                }
            }
            Ok(Line::Compaction { .. }) => compactions += 1,
            _ => {}
        }
    }
    SessionSummary {
        id,
        started,
        last_activity: chrono::DateTime::<chrono::Utc>::from(modified)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        first_prompt: first_prompt.unwrap_or_default(),
        messages,
        compactions,
        transcript_path: path.to_path_buf(),
        modified,
    }
}

/// The first non-empty line of a prompt, at most 200 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.trim();
    match line.char_indices().nth(200) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Session;

    #[test]
    fn a_project_s_sessions_are_listed_newest_first_with_their_first_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new("/p");
        let mut old = Session::new(dir.path(), root, "m");
        old.record(&Message::user("first task\nwith details"));
        old.record(&Message::assistant(Some("ok".into()), Vec::new()));
        let mut other = Session::new(dir.path(), Path::new("/elsewhere"), "m");
        other.record(&Message::user("not this project"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut new = Session::new(dir.path(), root, "m");
        new.record(&Message::user("second task"));
        new.record_compaction("manual", 10, 5, &[Message::user("summary")]);

        let listed = list(dir.path(), root);
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert_eq!(listed[0].id, new.id);
        assert_eq!(listed[0].first_prompt, "second task");
        assert_eq!((listed[0].messages, listed[0].compactions), (1, 1));
        assert_eq!(listed[1].id, old.id);
        assert_eq!(listed[1].first_prompt, "first task");
        assert_eq!(listed[1].messages, 2);
        assert!(list(&dir.path().join("none"), root).is_empty());
    }
}
