//! The transcript in Claude Code's shape, for hooks from a Claude Code file: their
//! `transcript_path` names `<session>.claude.jsonl` beside Ling's own `<session>.jsonl`, so
//! scripts that read the transcript (the last assistant message, the todo list, the tool calls)
//! find Claude's lines: `{"type": "user" | "assistant", "message": {"role", "content": [blocks]},
//! "uuid", "parentUuid", "sessionId", "cwd", "timestamp", ...}`, with `text`, `tool_use` (Claude's
//! tool names and fields) and `tool_result` blocks. It is brought up to date from Ling's
//! transcript just before such a hook runs, converting only the lines added since.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::claude::{claude_tool_name, with_claude_fields};

/// Where the Claude-shaped transcript of Ling's transcript `ling` is: `<id>.claude.jsonl`.
pub fn claude_path(ling: &Path) -> PathBuf {
    let stem = ling
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    ling.with_file_name(format!("{stem}.claude.jsonl"))
}

/// How far the Claude transcript of one Ling transcript has been written.
#[derive(Debug, Default)]
pub struct ClaudeTranscript {
    source: PathBuf,
    /// Bytes of the source converted (whole lines only).
    read_to: u64,
    last_uuid: Option<String>,
    session_id: String,
    cwd: String,
    model: String,
}

impl ClaudeTranscript {
    /// Converts what was appended to `ling` since the last call into `claude_path(ling)`. A new
    /// source (another session), or one that shrank, is converted from its start again.
    pub fn sync(&mut self, ling: &Path) -> std::io::Result<()> {
        let target = claude_path(ling);
        let len = std::fs::metadata(ling)?.len();
        let fresh = self.source != ling || len < self.read_to || !target.exists();
        if fresh {
            *self = Self {
                source: ling.to_path_buf(),
                ..Self::default()
            };
        }
        let mut file = std::fs::File::open(ling)?;
        file.seek(SeekFrom::Start(self.read_to))?;
        let mut added = Vec::new();
        file.read_to_end(&mut added)?;
        let Some(end) = added.iter().rposition(|b| *b == b'\n') else {
            if fresh {
                create(&target)?;
            }
            return Ok(());
        };
        let mut out = String::new();
        for line in String::from_utf8_lossy(&added[..=end]).lines() {
            if let Ok(record) = serde_json::from_str::<Value>(line) {
                self.convert(&record, &mut out);
            }
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true);
        if fresh {
            options.write(true).truncate(true);
        } else {
            options.append(true);
        }
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&target)?.write_all(out.as_bytes())?;
        self.read_to += end as u64 + 1;
        Ok(())
    }

    fn convert(&mut self, record: &Value, out: &mut String) {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        match record.get("type").and_then(Value::as_str) {
            Some("session") => {
                self.session_id = text(record, "id").unwrap_or_default();
                self.cwd = text(record, "cwd").unwrap_or_default();
                self.model = text(record, "model").unwrap_or_default();
            }
            Some("message") => {
                if let Some(message) = record.get("message") {
                    self.message(message, out);
                }
            }
            Some(kind @ ("compaction" | "rewind")) => {
                let line = if kind == "rewind" {
                    // `/rewind`: what follows is the whole conversation from there on.
                    json!({"type": "system", "subtype": "rewind_boundary",
                           "content": "Conversation rewound"})
                } else {
                    json!({"type": "system", "subtype": "compact_boundary",
                           "content": "Conversation compacted"})
                };
                self.line(line, out);
                for message in record
                    .get("messages")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.message(message, out);
                }
            }
            _ => {}
        }
    }

    /// One chat-completions message as Claude's line.
    fn message(&mut self, message: &Value, out: &mut String) {
        let content = |m: &Value| {
            m.get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match message.get("role").and_then(Value::as_str) {
            Some("user") => self.line(
                json!({"type": "user", "message": {"role": "user", "content": content(message)}}),
                out,
            ),
            Some("assistant") => {
                let mut blocks = Vec::new();
                let text = content(message);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = &call["function"];
                    let name = function["name"].as_str().unwrap_or_default();
                    let input = function["arguments"]
                        .as_str()
                        .and_then(|a| serde_json::from_str::<Value>(a).ok())
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call["id"],
                        "name": claude_tool_name(name).unwrap_or(name),
                        "input": with_claude_fields(name, &input),
                    }));
                }
                let model = self.model.clone();
                self.line(
                    json!({"type": "assistant", "message": {
                        "type": "message", "role": "assistant", "model": model, "content": blocks,
                    }}),
                    out,
                );
            }
            Some("tool") => self.line(
                json!({"type": "user", "message": {"role": "user", "content": [{
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": content(message),
                }]}}),
                out,
            ),
            _ => {}
        }
    }

    /// Writes `line` with Claude's envelope fields.
    fn line(&mut self, mut line: Value, out: &mut String) {
        let uuid = uuid::Uuid::new_v4().to_string();
        if let Value::Object(fields) = &mut line {
            fields.insert("parentUuid".into(), json!(self.last_uuid));
            fields.insert("isSidechain".into(), json!(false));
            fields.insert("userType".into(), json!("external"));
            fields.insert("cwd".into(), json!(self.cwd));
            fields.insert("sessionId".into(), json!(self.session_id));
            fields.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
            fields.insert("uuid".into(), json!(uuid));
            fields.insert(
                "timestamp".into(),
                json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            );
        }
        self.last_uuid = Some(uuid);
        out.push_str(&line.to_string());
        out.push('\n');
    }
}

fn create(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    #[test]
    fn lings_messages_become_claudes_lines_appended_as_they_come() {
        let dir = tempfile::tempdir().unwrap();
        let ling = dir.path().join("s1.jsonl");
        let mut text = [
            json!({"type": "session", "id": "s1", "cwd": "/p", "model": "m"}),
            json!({"type": "message", "message": {"role": "user", "content": "hi"}}),
            json!({"type": "message", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "write_file", "arguments": "{\"path\":\"a\",\"content\":\"x\"}"}}]}}),
        ]
        .iter()
        .map(|v| format!("{v}\n"))
        .collect::<String>();
        std::fs::write(&ling, &text).unwrap();
        let mut transcript = ClaudeTranscript::default();
        transcript.sync(&ling).unwrap();
        let claude = claude_path(&ling);
        assert_eq!(claude, dir.path().join("s1.claude.jsonl"));
        let got = lines(&claude);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["type"], json!("user"));
        assert_eq!(got[0]["message"]["content"], json!("hi"));
        assert_eq!(got[0]["sessionId"], json!("s1"));
        assert_eq!(got[0]["parentUuid"], Value::Null);
        assert_eq!(got[1]["parentUuid"], got[0]["uuid"]);
        let block = &got[1]["message"]["content"][0];
        assert_eq!(block["name"], json!("Write"));
        assert_eq!(block["input"]["file_path"], json!("a"));

        // Only what was added since is converted; a line still being written waits.
        text.push_str(
            &json!({"type": "message", "message": {"role": "tool", "tool_call_id": "c1", "content": "ok"}})
                .to_string(),
        );
        text.push('\n');
        text.push_str(r#"{"type":"message","message":{"role":"assistant","content":"don"#);
        std::fs::write(&ling, &text).unwrap();
        transcript.sync(&ling).unwrap();
        let got = lines(&claude);
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[2]["message"]["content"][0]["type"],
            json!("tool_result")
        );
        text.push_str("e\"}}\n");
        std::fs::write(&ling, &text).unwrap();
        transcript.sync(&ling).unwrap();
        let got = lines(&claude);
        assert_eq!(got.len(), 4);
        assert_eq!(got[3]["message"]["content"][0]["text"], json!("done"));
    }
}
