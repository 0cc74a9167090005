//! `/rewind`: back to just before one of the session's user messages, in the files (the
//! checkpoints, `crate::checkpoint`), in the conversation (the transcript, `session.rs`), or
//! both. Every front end gets it from here: [`Agent::rewind_points`] lists what can be gone
//! back to with what each turn changed, [`Agent::rewind`] does it and says what it put back
//! and what it could not, and [`parse_rewind`] reads the command as typed (`ling -p` runs it
//! through [`Agent::run_input`]).

use std::path::Path;

use serde::Serialize;

use super::{Agent, AgentEvent, EventSink, RunEnd, RunResult, SessionError};
use crate::checkpoint::{Action, CheckpointError, Kept, RestoreReport, TurnChanges};

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RewindScope {
    /// The files and the conversation (`/rewind N`).
    Both,
    /// The files only (`/rewind N code`).
    Code,
    /// The conversation only (`/rewind N conversation`).
    Conversation,
}

/// A rewind asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RewindRequest {
    /// The user message to go back to just before, 1 the first.
    pub to: usize,
    pub scope: RewindScope,
    /// Also overwrite what someone other than Ling changed since.
    pub force: bool,
    /// Only say what would be done (the Agent SDK's `rewindFiles(id, {dryRun: true})`).
    pub dry_run: bool,
}

/// One user message a rewind can go back to, as a picker lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewindPoint {
    /// 1 the first.
    pub number: usize,
    pub prompt: String,
    /// What the calls of its turn changed; `None` without a checkpoint of its files.
    pub changes: Option<TurnChanges>,
}

/// What a rewind did.
#[derive(Debug, Clone, Serialize)]
pub struct RewindReport {
    pub to: usize,
    /// The message gone back before (the REPL puts it back in the input line).
    pub prompt: String,
    pub scope: RewindScope,
    /// What was done to the files, when they were rewound.
    pub files: Option<RestoreReport>,
    /// Why the files could not be rewound at all.
    pub files_error: Option<String>,
    /// The messages the conversation holds now, when it was rewound.
    pub conversation_messages: Option<usize>,
}

#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    #[error(
        "{0}; write /rewind N, /rewind N code or /rewind N conversation (N: the user message, 1 \
         the first), optionally followed by --force"
    )]
    Usage(String),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// `/rewind N [code|conversation] [--force] [--dry-run]`; `None` when `input` is another
/// command or a prompt.
pub fn parse_rewind(input: &str) -> Option<Result<RewindRequest, RewindError>> {
    let mut words = input.split_whitespace();
    if words.next() != Some("/rewind") {
        return None;
    }
    let mut request = RewindRequest {
        to: 0,
        scope: RewindScope::Both,
        force: false,
        dry_run: false,
    };
    let mut number = None;
    for word in words {
        match word {
            "code" | "files" => request.scope = RewindScope::Code,
            "conversation" | "chat" => request.scope = RewindScope::Conversation,
            "both" => request.scope = RewindScope::Both,
            "--force" | "force" => request.force = true,
            "--dry-run" => request.dry_run = true,
            n if number.is_none() && n.parse::<usize>().is_ok_and(|n| n > 0) => {
                number = n.parse().ok();
            }
            other => {
                return Some(Err(RewindError::Usage(format!(
                    "/rewind does not take `{other}`"
                ))));
            }
        }
    }
    match number {
        Some(n) => {
            request.to = n;
            Some(Ok(request))
        }
        None => Some(Err(RewindError::Usage(
            "/rewind needs the number of the user message to go back to".into(),
        ))),
    }
}

impl Agent {
    /// The session's user messages, each with what its turn changed.
    pub fn rewind_points(&self) -> Vec<RewindPoint> {
        let changes = self
            .host
            .checkpoints
            .as_ref()
            .map(|c| c.turn_changes())
            .unwrap_or_default();
        self.conversation
            .session
            .prompts()
            .iter()
            .enumerate()
            .map(|(i, mark)| RewindPoint {
                number: i + 1,
                prompt: mark.text.clone(),
                changes: changes.get(&mark.offset).copied(),
            })
            .collect()
    }

    /// Goes back to just before user message `request.to`: the files first (what someone
    /// else changed since is left as it is unless forced), then the conversation, whose
    /// transcript then no longer holds that message.
    pub async fn rewind(&mut self, request: RewindRequest) -> Result<RewindReport, RewindError> {
        let count = self.conversation.session.prompts().len();
        let mark = request
            .to
            .checked_sub(1)
            .and_then(|i| self.conversation.session.prompts().get(i))
            .cloned()
            .ok_or(SessionError::NoSuchMessage {
                n: request.to,
                count,
            })?;
        let mut report = RewindReport {
            to: request.to,
            prompt: mark.text.clone(),
            scope: request.scope,
            files: None,
            files_error: None,
            conversation_messages: None,
        };
        if request.scope != RewindScope::Conversation {
            let restored = match &self.host.checkpoints {
                Some(checkpoints) => {
                    checkpoints
                        .restore(mark.offset, request.force, request.dry_run)
                        .await
                }
                None => Err(CheckpointError::Off),
            };
            match restored {
                Ok(files) => report.files = Some(files),
                Err(e) => report.files_error = Some(e.to_string()),
            }
        }
        if request.scope != RewindScope::Code && !request.dry_run {
            let rewound = self.conversation.session.rewind(request.to)?;
            report.conversation_messages = Some(rewound.messages.len());
            self.resume(rewound.messages);
            self.restore_children(rewound.children);
        }
        if !request.dry_run {
            // What the model read may no longer be what the files hold.
            if let Ok(mut files) = self.host.read_files.lock() {
                files.clear();
            }
        }
        Ok(report)
    }

    /// `/rewind` as a run: the report is the answer; a rewind that left something behind
    /// ends as stopped, with what to do.
    pub(super) async fn run_rewind(
        &mut self,
        request: RewindRequest,
        sink: &dyn EventSink,
    ) -> Result<RunResult, super::AgentError> {
        let report = self.rewind(request).await?;
        let text = report.describe(&self.options.root);
        sink.emit(AgentEvent::TextDelta(text.clone()));
        sink.emit(AgentEvent::AssistantMessage {
            text: text.clone(),
            usage: None,
        });
        let end = match report.left_behind() {
            None => RunEnd::Completed,
            Some(why) => RunEnd::Stopped(why),
        };
        Ok(RunResult {
            end,
            text,
            num_turns: 0,
            requests: 0,
        })
    }
}

impl RewindReport {
    /// Why the rewind is not complete, with what to do; `None` when everything was put back.
    pub fn left_behind(&self) -> Option<String> {
        if let Some(error) = &self.files_error {
            return Some(format!("the files were not rewound: {error}"));
        }
        let files = self.files.as_ref()?;
        if files.complete() {
            return None;
        }
        let outside = files
            .not_restored
            .iter()
            .any(|n| n.why == Kept::ChangedOutside);
        Some(format!(
            "{} path(s) were not put back{}",
            files.not_restored.len(),
            if outside {
                format!(
                    "; `/rewind {} code --force` overwrites what was changed outside Ling",
                    self.to
                )
            } else {
                String::new()
            }
        ))
    }

    /// The report in words, paths relative to `root` where they lie in it.
    pub fn describe(&self, root: &Path) -> String {
        let shown = |path: &Path| {
            path.strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string()
        };
        let first = self.prompt.lines().next().unwrap_or("").trim();
        let mut out = format!(
            "{} to just before message {} ({first:?}):\n",
            if self.files.as_ref().is_some_and(|f| f.dry_run) {
                "Would rewind"
            } else {
                "Rewound"
            },
            self.to
        );
        if let Some(files) = &self.files {
            if files.restored.is_empty() && files.not_restored.is_empty() {
                out.push_str("files: nothing to put back\n");
            } else if !files.restored.is_empty() {
                out.push_str(&format!("files: {} put back\n", files.restored.len()));
            }
            for restored in &files.restored {
                let what = match restored.action {
                    Action::Created => "created ",
                    Action::Restored => "restored",
                    Action::Removed => "removed ",
                };
                out.push_str(&format!("  {what} {}\n", shown(&restored.path)));
            }
            if !files.not_restored.is_empty() {
                out.push_str("not put back:\n");
            }
            for kept in &files.not_restored {
                let why = match &kept.why {
                    Kept::ChangedOutside => "changed outside Ling since".to_string(),
                    Kept::TooLarge => {
                        "over checkpoints.maxFileSize, its content was not kept".to_string()
                    }
                    Kept::Special => "a socket, fifo or device, which Ling does not make".into(),
                    Kept::Failed { message } => message.clone(),
                };
                out.push_str(&format!("  {}: {why}\n", shown(&kept.path)));
            }
        }
        if let Some(error) = &self.files_error {
            out.push_str(&format!("files: not rewound: {error}\n"));
        }
        if let Some(messages) = self.conversation_messages {
            out.push_str(&format!(
                "conversation: {messages} message(s) kept; message {} and what followed are \
                 gone\n",
                self.to
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_reads_its_number_scope_and_force() {
        let parsed = |text: &str| parse_rewind(text).map(|r| r.map_err(|e| e.to_string()));
        assert_eq!(parsed("hello"), None);
        assert_eq!(parsed("/rewinds 2"), None);
        assert_eq!(
            parsed("/rewind 2 code --force"),
            Some(Ok(RewindRequest {
                to: 2,
                scope: RewindScope::Code,
                force: true,
                dry_run: false,
            }))
        );
        assert_eq!(
            parsed(" /rewind 3 conversation")
                .and_then(Result::ok)
                .map(|r| r.scope),
            Some(RewindScope::Conversation)
        );
        assert!(
            parsed("/rewind")
                .unwrap()
                .unwrap_err()
                .contains("needs the number")
        );
        assert!(parsed("/rewind 0").unwrap().unwrap_err().contains("`0`"));
        assert!(
            parsed("/rewind 2 sideways")
                .unwrap()
                .unwrap_err()
                .contains("`sideways`")
        );
    }
}
