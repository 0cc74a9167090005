//! Reading the session, for what the front ends show: its paths and settings, the
//! conversation, the tools, the rules, the hooks, the extensions, the usage.

use std::sync::Arc;

use super::{ContextUsage, DirectResult, Host, IdleNotice, Io};
use crate::config::{Paths, Settings};
use crate::llm::{LlmConfig, Message, Usage};
use crate::mcp::McpManager;
use crate::process::sandbox::Decision;
use crate::tools::ToolRegistry;

impl Host {
    pub fn paths(&self) -> &Paths {
        &self.setup.paths
    }

    pub fn settings(&self) -> &Settings {
        &self.setup.settings
    }

    /// Problems that did not stop the run, one sentence each.
    pub fn warnings(&self) -> &[String] {
        &self.setup.warnings
    }

    /// For an untrusted project: what was skipped and how to trust it.
    pub fn trust_notice(&self) -> Option<&str> {
        self.setup.trust_notice.as_deref()
    }

    /// The line a run starts with when `--add-dir` gave directories.
    pub fn add_dirs_line(&self) -> Option<String> {
        self.setup.add_dirs_line()
    }

    /// What the session spent (US dollars, its sub-agents included) and its cap, if any.
    pub fn spending(&self) -> (f64, Option<f64>) {
        (self.setup.agent.spent_usd(), self.setup.agent.budget_usd())
    }

    /// Whether the session continues a recorded one.
    pub fn resumed(&self) -> bool {
        self.setup.resumed
    }

    pub fn session_id(&self) -> &str {
        &self.setup.agent.session().id
    }

    pub fn model(&self) -> &str {
        self.setup.agent.model()
    }

    pub fn history(&self) -> &[Message] {
        self.setup.agent.history()
    }

    pub fn tools(&self) -> &ToolRegistry {
        self.setup.agent.tools()
    }

    /// The background commands of the session, oldest first (`/tasks`).
    pub fn background_tasks(&self) -> Vec<crate::tools::TaskInfo> {
        self.setup.agent.shells().list()
    }

    /// The check each answer is followed by (`/goal`), if any.
    pub fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    pub fn usage(&self) -> Usage {
        self.setup.agent.usage()
    }

    /// Model requests of the session so far.
    pub fn total_turns(&self) -> u32 {
        self.setup.agent.total_turns()
    }

    pub async fn context_usage(&mut self) -> ContextUsage {
        self.setup.agent.context_usage().await
    }

    /// The rules in force (`true` for allow) with where each came from.
    pub fn permission_rules(&self) -> Vec<(bool, String, &'static str)> {
        let origins = &self.setup.settings.rule_origins;
        self.setup
            .agent
            .permission_rules()
            .into_iter()
            .map(|(allow, rule)| {
                let origin = origins
                    .iter()
                    .find(|(text, _)| *text == rule)
                    .map_or("session", |(_, origin)| *origin);
                (allow, rule, origin)
            })
            .collect()
    }

    pub fn hooks_listing(&self) -> Vec<crate::hooks::HookListing> {
        self.setup.agent.hooks().list()
    }

    pub fn extensions(&self) -> &crate::config::extensions::Extensions {
        self.setup.agent.extensions()
    }

    /// The sub-agents the session started, by id (`/agents`).
    pub fn children(
        &self,
    ) -> std::collections::BTreeMap<String, crate::agent::subagent::ChildTranscript> {
        self.setup.agent.children()
    }

    /// Whether `line` runs a custom command (`/name args`).
    pub fn is_custom_command(&self, line: &str) -> bool {
        self.setup.agent.custom_command(line).is_some()
    }

    /// While the user is at the prompt: Notification hooks hear of it after a while.
    pub fn idle_notice(&self) -> IdleNotice {
        self.setup.agent.idle_notice()
    }

    /// What the programs this run starts for the user get (no API key, tied to Ling's life).
    pub fn child_env(&self) -> crate::process::ChildEnv {
        crate::setup::children(&self.setup.settings)
    }

    pub fn mcp(&self) -> &Arc<McpManager> {
        &self.setup.mcp
    }

    pub fn sandbox(&self) -> &Decision {
        self.setup.agent.sandbox()
    }

    /// The model server's settings, with the session's model.
    pub fn llm_config(&self) -> LlmConfig {
        let mut config = LlmConfig::from_settings(&self.setup.settings);
        config.model = self.setup.agent.model().to_string();
        config
    }

    /// Runs one tool through the agent's dispatch point, outside any turn (`ling mcp serve`).
    pub async fn call_tool(
        &self,
        id: &str,
        name: &str,
        input: &serde_json::Value,
        io: &Io<'_>,
    ) -> DirectResult {
        self.setup
            .agent
            .call_tool_directly(id, name, input, io.sink, io.approver, io.cancel)
            .await
    }

    /// The session's user messages, each with what its turn changed (a rewind's picker).
    /// Blocking while the first look at the folders is still going.
    pub fn rewind_points(&self) -> Vec<super::RewindPoint> {
        self.setup.agent.rewind_points()
    }

    /// How many user messages the session holds (a rewind's numbers count them).
    pub fn prompt_count(&self) -> usize {
        self.setup.agent.session().prompts().len()
    }

    /// An image for the next prompt (`-i FILE`, an image the user pasted or an editor sent):
    /// kept in `LING_HOME/images` and sent in each API's shape and size.
    pub fn attach_image(
        &mut self,
        path: &std::path::Path,
    ) -> Result<crate::media::ImageRef, crate::media::MediaError> {
        self.setup.agent.attach_image(path)
    }

    /// An image given as bytes (a stream-json or ACP `image` block); `name` for messages.
    pub fn attach_image_bytes(
        &mut self,
        bytes: &[u8],
        name: &str,
    ) -> Result<crate::media::ImageRef, crate::media::MediaError> {
        self.setup.agent.attach_image_bytes(bytes, name)
    }

    /// Forgets the images attached so far for the next prompt: a prompt refused for one of its
    /// images sends none of them.
    pub fn drop_attached_images(&mut self) {
        self.setup.agent.drop_attached_images();
    }
}
