//! The agent loop: the user's prompt goes to the model with the tools; the tool calls it makes are
//! dispatched through one registry (hooks and permissions at the one dispatch point) and their
//! results sent back, until the model answers without tool calls or `--max-turns` is reached.
//! Everything the loop does is reported as [`AgentEvent`]s. This file holds the [`Agent`]: its
//! model client and options, and its two halves, the conversation (`conversation.rs`: what was
//! said, the system prompt, the context window) and the tool host (`tool_host.rs`: the tools and
//! the rules they run under). One run of the loop, phase by phase, is `turn.rs`; one tool call,
//! `dispatch.rs`.

mod approval;
mod ask_user;
mod asks;
mod authorize;
mod budget;
mod call_line;
mod call_result;
mod checkpoint_glue;
mod claude_rules;
mod commands;
mod compact;
pub mod context;
mod conversation;
mod direct;
mod dispatch;
mod events;
mod file_mentions;
mod filter;
mod goal;
mod hook_glue;
pub mod instructions;
mod lifecycle;
mod listing;
pub mod mcp;
mod mode;
mod options;
mod plan_tool;
mod prompt;
mod request_cap;
mod rewind;
mod sandbox_glue;
mod session;
mod skill_tool;
mod spend_cap;
pub mod subagent;
mod telemetry_glue;
mod todos;
mod tool_host;
mod truncate;
mod turn;
mod web_model;

use std::path::Path;
use std::sync::Arc;

use crate::config::PermissionMode;
use crate::config::extensions::Extensions;
use crate::config::tool_search::ToolSearchSettings;
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmError, Message, Usage};
use crate::mcp::McpManager;
use crate::media::{ImageRef, ImageStore, MediaError};
use crate::permissions::Permissions;
use crate::process::sandbox::Decision;
use crate::tools::{FileAccess, ShellHost, Shells, ToolRegistry};

pub use approval::{Approval, ApprovalRequest, Approver, NonInteractive};
pub use ask_user::{ASK_USER, Question, QuestionAnswer, QuestionOption, QuestionRequest};
pub use compact::{Compaction, Trigger};
pub use context::{ContextOptions, ContextUsage, WindowSource};
pub use direct::DirectResult;
pub use events::{AgentEvent, EventSink, HookNotice, NoticeDecision, SubagentEvent, SubagentKind};
pub use file_mentions::{ATTACH_LIMIT, Attached, attach_files};
pub use filter::ToolFilter;
pub use goal::CheckRun;
pub use hook_glue::{IdleNotice, Notifier, RuleConditions, check_hook_conditions};
pub use instructions::CLAUDE_MEMORY;
pub use lifecycle::{EndReason, StartSource};
pub use mcp::{
    HostPolicy, ListMcpResources, McpAsker, McpHost, McpTool, ReadMcpResource, SEARCH_TOOLS,
    ToolSearch,
};
pub use mode::ModeHandle;
pub use options::{AgentOptions, BudgetOptions};
pub use plan_tool::{EXIT_PLAN_MODE, PlanAnswer, PlanRequest};
pub use prompt::{PromptOptions, build_system_prompt};
pub use rewind::{
    RewindError, RewindPoint, RewindReport, RewindRequest, RewindScope, parse_rewind,
};
pub use session::list as session_list;
pub use session::list::SessionSummary;
pub use session::{
    Forked, INTERRUPTED_RESULT, PromptMark, Resumed, Rewound, Session, SessionError,
};
pub use skill_tool::SKILL;
pub use subagent::TASK;
pub use todos::{TODO_WRITE, Todo, TodoStatus, render_todos, todo_summary};
pub use truncate::cap_middle;

/// The tools that work on the session itself rather than the project: `todo_write`,
/// `exit_plan_mode` (offered in plan mode only) and `ask_user`. Builtins like the six of
/// `docs/tools.md`, so `--tools` may leave them out.
pub fn session_tools() -> [Arc<dyn crate::tools::Tool>; 3] {
    [
        Arc::new(todos::TodoWrite),
        Arc::new(plan_tool::ExitPlanMode),
        Arc::new(ask_user::AskUser),
    ]
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// The model answered without asking for more tools.
    Completed,
    /// `--max-turns` model requests were made and the model still wanted tools.
    MaxTurns,
    /// The user pressed Ctrl-C.
    Interrupted,
    /// A hook said `continue: false`; the reason is shown to the user.
    Stopped(String),
    /// A hook blocked the prompt itself (UserPromptSubmit); the reason is shown to the user.
    PromptBlocked(String),
    /// The user said no to a call: the model was told, and waits for the user's next prompt.
    Declined,
    /// The next request would have passed `--max-budget-usd` (settings `maxBudgetUsd`): why,
    /// and how to raise it.
    MaxBudget(String),
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub end: RunEnd,
    /// The last visible text of the model.
    pub text: String,
    /// Model requests made in this run.
    pub num_turns: u32,
    /// Model requests of the run counting its sub-agents' (what `--max-turns` bounds).
    pub requests: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// Compacting and eliding were not enough for the server.
    #[error(
        "the conversation does not fit the model's context window ({window} tokens) even after \
         compacting it and leaving out old tool outputs (the server said: {message}). Use \
         `/compact` with instructions to keep less, or `/clear` to start over (with -p: run \
         without --continue/--resume); or set `contextWindow` in settings if the server's \
         window is other than that"
    )]
    ContextFull { window: u64, message: String },
    #[error(
        "the model answered the summary request with nothing; the conversation was not compacted"
    )]
    EmptySummary,
    /// `/rewind` could not be done.
    #[error(transparent)]
    Rewind(#[from] RewindError),
}

/// One agent: its model, its conversation and its tool host. A sub-agent is another `Agent`,
/// made by the parent's `task` tool.
pub struct Agent {
    llm: LlmClient,
    options: AgentOptions,
    /// Model requests of the run, counted with the sub-agents' (`--max-turns`).
    requests: request_cap::RequestCap,
    /// What the session spent, with the sub-agents' (`--max-budget-usd`).
    spend: spend_cap::SpendCap,
    /// What was said, the system prompt, the context window, the usage.
    conversation: conversation::Conversation,
    /// What the model can call, and under which rules.
    host: tool_host::ToolHost,
}

impl Agent {
    pub fn new(
        llm: LlmClient,
        tools: ToolRegistry,
        permissions: Permissions,
        options: AgentOptions,
        session: Session,
    ) -> Self {
        let conversation = conversation::Conversation::new(session, &options, &llm.config().model);
        // Named after the session it starts in, so a spill file's path can be told in advance.
        let shells = Shells::new(options.background_buffer, &conversation.session.id);
        let spend = spend_cap::SpendCap::default();
        spend.set_cap(options.budget.cap);
        Self {
            llm,
            options,
            requests: request_cap::RequestCap::new(),
            spend,
            conversation,
            host: tool_host::ToolHost::new(tools, permissions, shells),
        }
    }

    /// Keeps images in `store`: `read_file` of a picture and [`Agent::attach_image`] then give
    /// the model the image itself.
    pub fn with_images(mut self, store: ImageStore) -> Self {
        self.host.images = Some(store);
        self
    }

    /// Attaches the image file at `path` to the next prompt (`-i FILE`, a pasted path, an
    /// editor's image): it is kept in `LING_HOME/images` and goes with the prompt [`Agent::run`]
    /// submits next, as image content on every wire API.
    pub fn attach_image(&mut self, path: &Path) -> Result<ImageRef, MediaError> {
        let image = self.image_store().add_file(path)?;
        self.conversation.pending_images.push(image.clone());
        Ok(image)
    }

    /// [`Agent::attach_image`] for image bytes a front end received (ACP's and stream-json's
    /// base64 `image` blocks); `name` is what the image is called (a file name, or `image`).
    pub fn attach_image_bytes(&mut self, bytes: &[u8], name: &str) -> Result<ImageRef, MediaError> {
        let image = self.image_store().add(bytes, name)?;
        self.conversation.pending_images.push(image.clone());
        Ok(image)
    }

    /// Forgets the images attached for the next prompt (a front end refusing the prompt after
    /// attaching some of its images).
    pub fn drop_attached_images(&mut self) {
        self.conversation.pending_images.clear();
    }

    /// The store images are kept in: the configured one, else `LING_HOME/images`.
    fn image_store(&mut self) -> ImageStore {
        self.host
            .images
            .get_or_insert_with(|| ImageStore::in_home(&crate::config::ling_home()))
            .clone()
    }

    /// Reads and writes the file tools' files through `files` (an ACP editor's `fs/*`).
    pub fn set_file_access(&mut self, files: Arc<dyn FileAccess>) {
        self.host.files = files;
    }

    /// Runs `bash` commands through `host` (an ACP editor's terminals); `None`: as children.
    pub fn set_shell_host(&mut self, host: Option<Arc<dyn ShellHost>>) {
        self.host.shell_host = host;
    }

    /// Asks the model's server for its context window in the background (unless the settings
    /// say it); needs a tokio runtime.
    pub fn probe_context_window(&mut self) {
        self.conversation.context.start_probe(&self.llm);
    }

    /// Offers MCP tools by name behind `search_tools` as these settings say.
    pub fn with_tool_search(mut self, settings: ToolSearchSettings) -> Self {
        self.host.tool_search = ToolSearch::new(settings);
        self
    }

    /// Problems found while setting up (an `AGENTS.md` skipped or cut), for the UI to show once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.conversation.warnings)
    }

    /// Offers these skills (the `skill` tool) and agent definitions (the `task` tool, with the
    /// builtin general-purpose agent), and knows these custom commands.
    pub fn with_extensions(mut self, extensions: Arc<Extensions>) -> Self {
        self.host.extensions = extensions;
        if !self.host.extensions.skills.is_empty() {
            let skills = Arc::new(self.host.extensions.skills.clone());
            self.host
                .builtins
                .register(Arc::new(skill_tool::SkillTool::new(skills)));
        }
        self.offer_task();
        self
    }

    /// The `task` tool, for the agent definitions and the delegation of the moment.
    fn offer_task(&mut self) {
        let task =
            subagent::TaskTool::new(self.host.extensions.clone(), self.host.delegation.clone());
        self.host.builtins.register(Arc::new(task));
        self.host.tools = self.host.builtins.clone();
    }

    /// Runs at most `max_parallel` sub-agents at once in the whole tree, nested at most
    /// `max_depth` deep, their models named through `aliases`, those with `isolation:
    /// worktree` in worktrees under `worktree_dir` (settings `worktreeDir`).
    pub fn with_delegation(
        mut self,
        max_parallel: usize,
        max_depth: usize,
        aliases: std::collections::BTreeMap<String, String>,
        worktree_dir: Option<std::path::PathBuf>,
    ) -> Self {
        let mut delegation = subagent::Delegation::new(max_parallel, max_depth, aliases);
        delegation.worktree_dir = worktree_dir;
        self.host.delegation = Arc::new(delegation);
        // `task` is offered with the extensions; it runs with this delegation from now on.
        if self.host.builtins.get(TASK).is_some() {
            self.offer_task();
        }
        self
    }

    pub fn extensions(&self) -> &Extensions {
        &self.host.extensions
    }

    /// Offers only the tools `filter` admits, for the whole session (`--agent NAME`: the
    /// agent's `tools`).
    pub fn with_tool_filter(mut self, filter: filter::ToolFilter) -> Self {
        self.host.tool_filters.push(filter);
        self
    }

    /// Runs these hooks around everything the agent does.
    pub fn with_hooks(mut self, hooks: HookEngine) -> Self {
        self.host.hooks = hooks;
        self
    }

    /// Offers the tools of these MCP servers beside the builtins, as they connect.
    pub fn with_mcp(mut self, manager: Arc<McpManager>) -> Self {
        self.host.mcp = Some(manager);
        self
    }

    pub fn mcp(&self) -> Option<&Arc<McpManager>> {
        self.host.mcp.as_ref()
    }

    /// Brings the registry up to date with the MCP servers: re-lists the tools of servers that
    /// sent `tools/list_changed`, adds the tools of servers that have connected since.
    pub async fn sync_tools(&mut self) {
        let Some(manager) = self.host.mcp.clone() else {
            return;
        };
        manager.refresh_if_changed().await;
        let model = self.llm.config().model.clone();
        let (window, _) = self.conversation.context.window(&model).await;
        self.host
            .offer_mcp(&manager, &self.conversation.history, window);
    }

    pub fn hooks(&self) -> &HookEngine {
        &self.host.hooks
    }

    fn rebuild_system_prompt(&mut self) {
        let model = &self.llm.config().model;
        self.conversation
            .rebuild_system_prompt(&self.options, model);
    }

    /// The shell sandbox of the run (what `/status` shows; `bash` follows it).
    pub fn sandbox(&self) -> &Decision {
        self.options.child_env.decision()
    }

    pub fn root(&self) -> &Path {
        &self.options.root
    }

    pub fn session(&self) -> &Session {
        &self.conversation.session
    }

    pub fn model(&self) -> &str {
        &self.llm.config().model
    }

    pub fn set_model(&mut self, model: String) {
        self.llm.set_model(model);
        self.conversation.context.model_changed();
        // The new model's window, from the cache or its server (in the background).
        self.conversation.context.start_probe(&self.llm);
        // Rebuilt with the SessionStart hooks' context, which a model switch keeps.
        self.rebuild_system_prompt();
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.host.tools
    }

    pub fn usage(&self) -> Usage {
        self.conversation.usage
    }

    /// How many tokens the conversation filled at the last response, as the server counted
    /// (0 before the first, or when the server reports no usage).
    pub fn context_tokens(&self) -> u64 {
        self.conversation.context_tokens
    }

    pub fn total_turns(&self) -> u32 {
        self.conversation.total_turns
    }

    pub fn history(&self) -> &[Message] {
        &self.conversation.history
    }

    pub fn permission_mode(&self) -> PermissionMode {
        self.host.lock_permissions().mode()
    }

    /// Changes the mode for the rest of the session (REPL `/mode`, Shift-Tab).
    pub fn set_permission_mode(&self, mode: PermissionMode) {
        self.host.lock_permissions().set_mode(mode);
    }

    /// The mode, for another task to change while a run goes on (the SDK's
    /// `set_permission_mode`).
    pub fn mode_handle(&self) -> ModeHandle {
        self.host.mode.clone()
    }

    /// The permission rules in force: (`true` for allow, the rule).
    pub fn permission_rules(&self) -> Vec<(bool, String)> {
        self.host.lock_permissions().rules()
    }

    /// Adds an allow or deny rule for the rest of the session.
    pub fn add_permission_rule(
        &self,
        allow: bool,
        rule: &str,
    ) -> Result<(), crate::permissions::PermissionError> {
        self.host.lock_permissions().add_rule(allow, rule)
    }

    /// Removes a rule for the rest of the session; false when no rule is written so.
    pub fn remove_permission_rule(&self, rule: &str) -> bool {
        self.host.lock_permissions().remove_rule(rule)
    }

    /// Continues a recorded conversation (`--continue`, `--resume`): `history` is the messages of
    /// [`Resumed`], without a system prompt; the agent's own is used. The session given to
    /// [`Agent::new`] must be the resumed one, so new messages go to the same transcript.
    pub fn resume(&mut self, history: Vec<Message>) {
        self.conversation.resume(history);
    }

    /// Switches to another recorded session (REPL `/resume`): its transcript and history.
    pub fn switch_session(&mut self, session: Session, history: Vec<Message>) {
        self.clear(session);
        self.resume(history);
    }

    /// Forgets the conversation (REPL `/clear`) and starts a new session.
    pub fn clear(&mut self, session: Session) {
        self.host.forget_conversation();
        let model = &self.llm.config().model;
        self.conversation.clear(session, &self.options, model);
    }
}
