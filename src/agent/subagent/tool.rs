//! The `task` tool's definition: what the model reads about it (the agent types with their
//! descriptions, held to [`LISTING_BUDGET`]) and its arguments. The agent runs it
//! ([`super::Agent::run_task`]); the tool itself only describes it.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::agent::listing::within_budget;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema};

pub const TASK: &str = "task";
pub const GENERAL_PURPOSE: &str = "general-purpose";
pub const GENERAL_DESCRIPTION: &str =
    "researches a question or does a multi-step task with every tool you have";
/// The bytes the agent types may take in the tool's description.
pub const LISTING_BUDGET: usize = 500;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskArgs {
    /// The task in 3 to 5 words, for the user.
    #[serde(default)]
    pub description: String,
    /// What the sub-agent is to do, with everything it needs: it does not see this
    /// conversation. Its final answer is all you get back.
    pub prompt: String,
    /// The agent type (default "general-purpose").
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// The agent id of an earlier sub-agent of this session, to continue its conversation.
    #[serde(default)]
    pub resume: Option<String>,
}

pub struct TaskTool {
    description: String,
}

impl TaskTool {
    /// `types`: (name, description) of every agent type, the general-purpose one first.
    pub fn new(types: &[(String, String)]) -> Self {
        let entries: Vec<(&str, &str)> = types
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_str()))
            .collect();
        let listed = within_budget(&entries, LISTING_BUDGET, "the names are the types");
        Self {
            description: format!(
                "Run a sub-agent on a task, with a fresh context of its own; only its final \
                 answer comes back. Use it for searches and self-contained work that would \
                 fill your context. Several calls in one response run at once. Agent types:\n\
                 {listed}"
            ),
        }
    }
}

#[async_trait]
impl Tool for TaskTool {
    fn name(&self) -> &str {
        TASK
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        args_schema::<TaskArgs>()
    }

    /// Allowed in every mode, run at once with the other reads of a response: what the
    /// sub-agent does is checked call by call, under the parent's mode or a stricter one.
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::failed(
            "task runs only inside an agent, which dispatches it itself",
        ))
    }
}
