//! What the agent loop reports while it runs. The REPL, `-p` text, `json` and `stream-json`
//! output are four consumers of this one stream.

use serde::Serialize;
use serde_json::Value;

use crate::hooks::NoticeKind;
use crate::llm::Usage;
use crate::mcp::ServerState;

#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// A model request is about to be sent (the UI shows a spinner until the first token).
    RequestStarted {
        turn: u32,
    },
    TextDelta(String),
    ReasoningDelta(String),
    /// The model client retries after a failure that happened before anything was shown.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// One model response is complete; `text` is its whole visible text (may be empty), and
    /// `usage` its tokens when the server said.
    AssistantMessage {
        text: String,
        usage: Option<Usage>,
    },
    ToolCallBegin {
        id: String,
        name: String,
        input: Value,
    },
    ToolCallEnd {
        id: String,
        name: String,
        /// What the model reads.
        content: String,
        is_error: bool,
        /// What the user sees beside the one-line outcome (an edit's diff).
        display: Option<String>,
        /// How many lines the tool's output really had, when `content` holds part of them.
        total_lines: Option<usize>,
        /// The outcome in the user's words when it is not the tool's: a refusal the model
        /// reads at length (`denied by you`).
        told: Option<String>,
    },
    /// A tool call was refused by the permission rules or the mode; `message` tells the user
    /// which flag or rule would allow it.
    PermissionDenied {
        tool: String,
        message: String,
    },
    /// A hook blocked, rewrote, failed, timed out or said something to the user.
    Hook(HookNotice),
    /// An MCP server's state changed (a server that could not start is `Failed`, with why).
    McpStatus {
        server: String,
        state: ServerState,
    },
    /// Progress reported by a running tool (MCP progress notifications).
    ToolProgress {
        id: String,
        message: String,
    },
    /// The last line a running command printed (throttled); only the REPL shows it.
    ToolOutputLine {
        id: String,
        line: String,
    },
    Warning(String),
    /// MCP config files changed during the session were applied: the servers added, removed
    /// and restarted.
    McpReloaded {
        added: Vec<String>,
        removed: Vec<String>,
        restarted: Vec<String>,
    },
    /// The conversation is being summarised (`trigger`: `auto` or `manual`).
    CompactStarted {
        trigger: String,
    },
    /// The conversation was compacted: the estimated context before and after, in tokens.
    Compacted {
        trigger: String,
        pre_tokens: u64,
        post_tokens: u64,
    },
    /// The loop ended; usage is the run's total so far.
    TurnFinished {
        usage: Usage,
        num_turns: u32,
    },
    /// Something a sub-agent did, tagged with the parent's `task` call that runs it.
    Subagent(SubagentEvent),
    /// The session's to-do list is now this (`todo_write`); each replaces the last.
    Todos(Vec<super::Todo>),
    /// The permission mode changed during the run (a plan approved with `exit_plan_mode`).
    ModeChanged(crate::config::PermissionMode),
    /// The goal's check ran after an answer (`--until`, `/goal`): round `round`, passed or not,
    /// with its output (sent back to the model when it failed).
    GoalCheck {
        command: String,
        round: u32,
        passed: bool,
        output: String,
    },
}

/// One event of a sub-agent, and which one.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentEvent {
    /// The parent's `task` call.
    pub call_id: String,
    /// The agent's type: `general-purpose` or a definition's name.
    pub agent: String,
    /// The sub-agent's own id (hooks' `agent_id`; `task`'s `resume` takes it).
    pub agent_id: String,
    pub kind: SubagentKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SubagentKind {
    /// It starts on `description` with `model`.
    Started { description: String, model: String },
    /// One of its own events.
    Event(Box<AgentEvent>),
    /// It ended: its usage, model requests and tool calls; `ok` unless it failed.
    Finished {
        usage: Usage,
        num_turns: u32,
        tool_calls: u32,
        ok: bool,
    },
}

/// A hook outcome worth showing: `event` is the hook event name, `decision` what it decided.
#[derive(Debug, Clone, PartialEq)]
pub struct HookNotice {
    pub event: String,
    pub decision: NoticeDecision,
    pub message: String,
    pub tool: Option<String>,
}

/// What a hook did, as the user is told (and stream-json writes it, in snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeDecision {
    Block,
    Ask,
    Allow,
    /// It rewrote the tool input.
    Rewrite,
    /// The handler failed; the action went on.
    Error,
    Timeout,
    /// `continue: false`.
    Stop,
    /// Output the event cannot use.
    Ignored,
    /// A `systemMessage` for the user.
    Message,
}

impl NoticeDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Ask => "ask",
            Self::Allow => "allow",
            Self::Rewrite => "rewrite",
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::Stop => "stop",
            Self::Ignored => "ignored",
            Self::Message => "message",
        }
    }

    /// A refusal or a failure, shown in red; the rest is news, shown in yellow.
    pub fn is_alarm(self) -> bool {
        matches!(self, Self::Block | Self::Error | Self::Timeout)
    }
}

impl From<NoticeKind> for NoticeDecision {
    fn from(kind: NoticeKind) -> Self {
        match kind {
            NoticeKind::Error => Self::Error,
            NoticeKind::Timeout => Self::Timeout,
            NoticeKind::Block => Self::Block,
            NoticeKind::Ask => Self::Ask,
            NoticeKind::Allow => Self::Allow,
            NoticeKind::Rewrite => Self::Rewrite,
            NoticeKind::Stop => Self::Stop,
            NoticeKind::Ignored => Self::Ignored,
        }
    }
}

/// Receives agent events. Called on the agent's task, in order; keep it quick.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: AgentEvent);
}

impl<F: Fn(AgentEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_serialises_as_its_word() {
        for decision in [
            NoticeDecision::Block,
            NoticeDecision::Ask,
            NoticeDecision::Allow,
            NoticeDecision::Rewrite,
            NoticeDecision::Error,
            NoticeDecision::Timeout,
            NoticeDecision::Stop,
            NoticeDecision::Ignored,
            NoticeDecision::Message,
        ] {
            assert_eq!(
                serde_json::to_value(decision).ok(),
                Some(Value::String(decision.as_str().into()))
            );
        }
    }
}
