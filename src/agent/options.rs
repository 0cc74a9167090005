//! [`AgentOptions`]: the limits and choices an agent keeps for its life, given by the run's
//! setup (a sub-agent's: its parent's, with its definition's own turn limit and prompt).

use std::path::PathBuf;

use super::context::ContextOptions;
use super::prompt::PromptOptions;
use crate::process::ChildEnv;

/// Limits and choices fixed for the life of an agent.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub root: PathBuf,
    /// Model requests allowed in one run, its sub-agents' included; `None` is unlimited. A
    /// sub-agent's: its definition's own `maxTurns`.
    pub max_turns: Option<u32>,
    /// Characters of one tool result the model gets; the middle of longer output is cut.
    pub tool_output_limit: usize,
    pub prompt: PromptOptions,
    /// What the `bash` tool's children start with, the run's sandbox decision inside.
    pub child_env: ChildEnv,
    /// The context window and when to compact.
    pub context: ContextOptions,
    /// `--add-dir` directories: the file tools may work there as inside the root.
    pub add_dirs: Vec<PathBuf>,
    /// Nothing is asked, whatever the mode: a call that needs approval is denied (Codex's
    /// `--ask-for-approval never`).
    pub never_ask: bool,
    /// How many times in a row Stop hooks may send the model back to work before the run ends
    /// (settings `maxStopHookBlocks`).
    pub stop_hook_limit: u32,
    /// Bytes of each background command's output kept in memory (`backgroundOutputBytes`).
    pub background_buffer: usize,
    /// This agent is a subagent (a `task` of another): its hooks are told so, and its end of
    /// turn fires SubagentStop instead of Stop.
    pub subagent: Option<crate::hooks::SubagentInfo>,
    /// How long the REPL waits at its prompt before Notification hooks hear `idle_prompt`
    /// (settings `idleNotifyMs`).
    pub idle_notify_after: std::time::Duration,
    /// What the session may spend and what models cost.
    pub budget: BudgetOptions,
}

/// `--max-budget-usd` (settings `maxBudgetUsd`) and the prices it is counted in.
#[derive(Debug, Clone, Default)]
pub struct BudgetOptions {
    /// US dollars the session may spend, its sub-agents' requests included; `None`: no cap.
    pub cap: Option<f64>,
    /// Settings `prices`; models missing there are looked up in Ling's table.
    pub prices: std::collections::BTreeMap<String, crate::config::Price>,
}
