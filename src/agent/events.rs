//! What the agent loop reports while it runs. The REPL, `-p` text, `json` and `stream-json`
//! output are four consumers of this one stream.

use serde_json::Value;

use crate::llm::Usage;

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
    /// One model response is complete; `text` is its whole visible text (may be empty).
    AssistantMessage {
        text: String,
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
    },
    /// A tool call was refused by the permission rules or the mode; `message` tells the user
    /// which flag or rule would allow it.
    PermissionDenied {
        tool: String,
        message: String,
    },
    /// A hook blocked, rewrote, failed, timed out or said something to the user.
    Hook(HookNotice),
    /// An MCP server's state changed (connected, failed, tools changed).
    McpStatus {
        server: String,
        status: String,
        detail: Option<String>,
    },
    /// Progress reported by a running tool (MCP progress notifications).
    ToolProgress {
        id: String,
        message: String,
    },
    Warning(String),
    /// The loop ended; usage is the run's total so far.
    TurnFinished {
        usage: Usage,
        num_turns: u32,
    },
}

/// A hook outcome worth showing: `event` is the hook event name, `decision` what it decided
/// (`block`, `deny`, `ask`, `allow`, `rewrite`, `error`, `timeout`, `message`, `context`).
#[derive(Debug, Clone, PartialEq)]
pub struct HookNotice {
    pub event: String,
    pub decision: String,
    pub message: String,
    pub tool: Option<String>,
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
