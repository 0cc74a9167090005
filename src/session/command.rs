//! What a front end may ask of a running session ([`Command`]), what it gets back ([`Reply`])
//! and why a command failed ([`HostError`]). A request added for one front end is a new variant
//! here, and every other front end gets it for free.

pub use crate::agent::EndReason;
use crate::agent::{
    AgentError, Compaction, RewindError, RewindReport, RewindRequest, RunResult, SessionError,
};
use crate::config::PermissionMode;
use crate::llm::Usage;
use crate::mcp::McpError;

/// One request of a front end to the session ([`super::Host::submit`]).
#[derive(Debug, Clone)]
pub enum Command {
    /// SessionStart hooks (`startup`, or `resume` for a resumed session), once. A prompt starts
    /// the session itself when no front end did.
    Start,
    /// One user message: a turn of the agent loop (a custom command's `/name args` expanded).
    Prompt(String),
    /// The check each prompt's answer is followed by until it passes (`--until`, `/goal`);
    /// `None` (or empty): none.
    SetGoal(Option<String>),
    /// The permission mode from the next tool call on, in this agent and its sub-agents.
    SetMode(PermissionMode),
    /// The model of the next request: the agent's, MCP sampling's and the context window's.
    SetModel(String),
    /// Summarise the conversation now; the text says what to keep.
    Compact(Option<String>),
    /// Forget the conversation: SessionEnd (`clear`), a new session, SessionStart (`clear`).
    Clear,
    /// Continue another recorded session of this project.
    Resume(String),
    Mcp(McpCommand),
    /// An allow or deny rule for the rest of the session (`/permissions allow|deny`).
    AddRule {
        allow: bool,
        rule: String,
    },
    /// `/permissions remove RULE`.
    RemoveRule(String),
    /// The REPL's "always": the rule kept for the session, or in a settings file, the
    /// project's trust kept with it when the user's own edit is the only change.
    KeepRule {
        rule: String,
        keep: Keep,
    },
    /// Back to just before a user message: files, conversation or both.
    Rewind(RewindRequest),
    /// The conversation goes on in a new session with this one's history (and a copy of its
    /// checkpoints); the session it was is left as it is.
    Fork,
    /// SessionEnd hooks, then the MCP servers stop.
    End(EndReason),
    /// After a turn: waits for the next background sub-agent to end and runs a turn on what it
    /// said ([`Reply::Turn`]); [`Reply::Done`] at once when none runs or waits to be heard.
    Background,
    /// The sub-agents running now ([`Reply::Agents`]).
    Agents,
    /// Stops the running sub-agent of this id (`/agents stop ID`).
    StopAgent(String),
    /// What the session may spend from now on, in US dollars (`None`: no cap); what it spent
    /// stays counted. The REPL's answer when `maxBudgetUsd` was reached.
    SetBudget(Option<f64>),
}

/// What a front end may do to one MCP server.
#[derive(Debug, Clone)]
pub enum McpCommand {
    Reconnect(String),
    /// OAuth login to an HTTP server, the user taken through `login` (the browser).
    Login {
        server: String,
        login: crate::mcp::auth::Login,
    },
    /// On or off for this project, kept in the user's settings.
    Enable(String),
    Disable(String),
}

/// Where "always" keeps a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Session,
    /// The project's `.ling/settings.json`.
    Project,
    /// The user's `settings.json`.
    User,
}

/// What a command gave back.
#[derive(Debug)]
pub enum Reply {
    Done,
    /// A hook stopped the session (SessionStart with `continue: false`): the reason.
    Stopped(String),
    /// How a prompt's turn went (its last round's, with a goal), the tokens it used, and how
    /// the goal went when one was set.
    Turn {
        result: Result<RunResult, AgentError>,
        usage: Usage,
        goal: Option<super::GoalOutcome>,
    },
    Compacted(Compaction),
    /// The session switched to a recorded one: its warnings (skipped transcript lines).
    Resumed {
        warnings: Vec<String>,
    },
    /// The rule was kept: where (the file as shown, or `None` for the session).
    Kept(Option<String>),
    /// `/permissions remove` found no rule written so.
    NoSuchRule,
    /// What a rewind put back and what it could not.
    Rewound(RewindReport),
    /// The new session's id.
    Forked(String),
    /// The sub-agents running now, oldest first.
    Agents(Vec<crate::agent::subagent::AgentRow>),
}

/// A command that could not be carried out; each says what to change.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("the model name is empty; give one, e.g. /model gpt-4o")]
    EmptyModel,
    #[error("the server has no model {model:?}; {hint}")]
    UnknownModel { model: String, hint: String },
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error(transparent)]
    Switch(#[from] crate::agent::mcp::reload::SwitchError),
    #[error(transparent)]
    Rule(#[from] crate::permissions::PermissionError),
    #[error("the rule was not kept: {0}")]
    KeepRule(#[from] crate::config::ConfigError),
    #[error("the folder's trust could not be kept with the rule (run `ling trust`): {0}")]
    KeepTrust(#[from] crate::trust::TrustError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Setup(#[from] crate::setup::SetupError),
    #[error(transparent)]
    Rewind(#[from] RewindError),
    #[error("no sub-agent {0:?} is running; /agents lists those that are")]
    NoSuchAgent(String),
}
