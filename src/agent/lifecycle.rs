//! A session's start and end as hooks hear them: SessionStart with its [`StartSource`] (its
//! context becomes part of the system prompt) and SessionEnd with its [`EndReason`], after which
//! the `async` handlers still running get a short bounded wait.

use super::{Agent, EventSink};
use crate::hooks::HookInput;

/// Why a session starts: what SessionStart hooks are told as `source` (and match on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// A new session (the run started without `--continue` or `--resume`).
    Startup,
    /// A recorded session continued (`--continue`, `--resume`, `/resume`).
    Resume,
    /// `/clear` started a new conversation.
    Clear,
    /// The conversation was compacted: the summary begins it anew.
    Compact,
}

impl StartSource {
    /// The `source` of Claude Code's SessionStart input.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
            Self::Clear => "clear",
            Self::Compact => "compact",
        }
    }
}

/// Why a session ends: what SessionEnd hooks are told as `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The user left the REPL (Ctrl-D, `/exit`).
    PromptInputExit,
    /// `/clear` ended the conversation.
    Clear,
    /// `/resume` switched to another session.
    Resume,
    /// The run ended otherwise: `-p` answered, the driver closed its input, the editor closed
    /// the session.
    Other,
}

impl EndReason {
    /// The `reason` of Claude Code's SessionEnd input.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptInputExit => "prompt_input_exit",
            Self::Clear => "clear",
            Self::Resume => "resume",
            Self::Other => "other",
        }
    }
}

/// How long the program waits at exit for `async: true` handlers before killing them.
const ASYNC_GRACE: std::time::Duration = std::time::Duration::from_millis(1500);

impl Agent {
    /// SessionStart: its context becomes part of the system prompt. Returns the reason when a
    /// hook said `continue: false`.
    pub async fn fire_session_start(
        &mut self,
        source: StartSource,
        sink: &dyn EventSink,
    ) -> Option<String> {
        let outcome = self
            .fire(
                HookInput::SessionStart {
                    source: source.as_str().to_string(),
                },
                sink,
            )
            .await;
        self.conversation.session_context = outcome.additional_context.clone();
        self.rebuild_system_prompt();
        outcome.stop
    }

    /// SessionEnd, then a short bounded wait for async handlers still running.
    pub async fn end_session(&self, reason: EndReason, sink: &dyn EventSink) {
        self.fire(
            HookInput::SessionEnd {
                reason: reason.as_str().to_string(),
            },
            sink,
        )
        .await;
        self.host.hooks.wait_async(ASYNC_GRACE).await;
        self.report_async_notices(sink);
    }
}
