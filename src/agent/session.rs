//! A session: its id and its transcript, one JSON message per line in
//! `LING_HOME/sessions/<id>.jsonl`, which hooks receive as `transcript_path`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::llm::Message;

#[derive(Debug)]
pub struct Session {
    pub id: String,
    pub transcript_path: PathBuf,
    /// False once writing failed, so a full disk is reported once, not on every message.
    writable: bool,
}

impl Session {
    pub fn new(sessions_dir: &Path) -> Self {
        let id = uuid::Uuid::new_v4().to_string();
        Self {
            transcript_path: sessions_dir.join(format!("{id}.jsonl")),
            id,
            writable: true,
        }
    }

    /// Appends one message to the transcript. Best effort: the agent goes on if the disk fails.
    pub fn record(&mut self, message: &Message) {
        if !self.writable {
            return;
        }
        let result = (|| -> std::io::Result<()> {
            if let Some(dir) = self.transcript_path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.transcript_path)?;
            let line = serde_json::to_string(message).map_err(std::io::Error::other)?;
            writeln!(file, "{line}")
        })();
        if result.is_err() {
            self.writable = false;
        }
    }
}
