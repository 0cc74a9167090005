//! The agent loop: the user's prompt goes to the model with the tools; the tool calls it makes are
//! dispatched through one registry (hooks and permissions at the one dispatch point) and their
//! results sent back, until the model answers without tool calls or `--max-turns` is reached.
//! Everything the loop does is reported as [`AgentEvent`]s. This file holds the [`Agent`] and
//! its state; one run of the loop, phase by phase, is `turn.rs`, one tool call `dispatch.rs`.

mod approval;
mod authorize;
mod checkpoint_glue;
mod commands;
mod compact;
pub mod context;
mod direct;
mod dispatch;
mod events;
mod file_mentions;
mod filter;
mod hook_glue;
pub mod instructions;
mod listing;
pub mod mcp;
mod mode;
mod prompt;
mod request_cap;
mod rewind;
mod sandbox_glue;
mod session;
pub mod session_list;
mod skill_tool;
pub mod subagent;
mod truncate;
mod turn;
mod web_model;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::checkpoint::Checkpoints;
use crate::config::PermissionMode;
use crate::config::extensions::Extensions;
use crate::config::tool_search::ToolSearchSettings;
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmError, Message, ToolSpec, Usage};
use crate::mcp::McpManager;
use crate::media::{ImageRef, ImageStore, MediaError};
use crate::permissions::Permissions;
use crate::process::ChildEnv;
use crate::process::sandbox::Decision;
use crate::tools::{FileAccess, LocalFiles, ShellHost, ToolRegistry};

pub use approval::{Approval, ApprovalRequest, Approver, NonInteractive};
pub use compact::{Compaction, Trigger};
pub use context::{ContextOptions, ContextUsage, WindowSource};
pub use direct::DirectResult;
pub use events::{AgentEvent, EventSink, HookNotice, NoticeDecision, SubagentEvent, SubagentKind};
pub use file_mentions::{ATTACH_LIMIT, Attached, attach_files};
pub use hook_glue::{IdleNotice, Notifier, RuleConditions, check_hook_conditions};
pub use instructions::CLAUDE_MEMORY;
pub use mcp::{
    HostPolicy, ListMcpResources, McpAsker, McpHost, McpTool, ReadMcpResource, SEARCH_TOOLS,
    ToolSearch,
};
pub use mode::ModeHandle;
pub use prompt::{PromptOptions, build_system_prompt};
pub use rewind::{
    RewindError, RewindPoint, RewindReport, RewindRequest, RewindScope, parse_rewind,
};
pub use session::{
    Forked, INTERRUPTED_RESULT, PromptMark, Resumed, Rewound, Session, SessionError,
};
pub use session_list::SessionSummary;
pub use skill_tool::SKILL;
pub use subagent::TASK;
pub use truncate::cap_middle;

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
    /// What the `bash` tool's children start with.
    pub child_env: ChildEnv,
    /// The context window and when to compact.
    pub context: ContextOptions,
    /// The shell sandbox of the `bash` tool.
    pub sandbox: Decision,
    /// `--add-dir` directories: the file tools may work there as inside the root.
    pub add_dirs: Vec<PathBuf>,
    /// Nothing is asked, whatever the mode: a call that needs approval is denied (Codex's
    /// `--ask-for-approval never`).
    pub never_ask: bool,
    /// How many times in a row Stop hooks may send the model back to work before the run ends
    /// (settings `maxStopHookBlocks`).
    pub stop_hook_limit: u32,
    /// This agent is a subagent (a `task` of another): its hooks are told so, and its end of
    /// turn fires SubagentStop instead of Stop.
    pub subagent: Option<crate::hooks::SubagentInfo>,
    /// How long the REPL waits at its prompt before Notification hooks hear `idle_prompt`
    /// (settings `idleNotifyMs`).
    pub idle_notify_after: std::time::Duration,
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

pub struct Agent {
    llm: LlmClient,
    /// The builtin tools; `tools` is these plus the MCP servers' tools of the moment.
    builtins: ToolRegistry,
    tools: ToolRegistry,
    mcp: Option<Arc<McpManager>>,
    /// The permission mode and rules (a sub-agent's mode follows its parent's).
    mode: ModeHandle,
    /// Model requests of the run, counted with the sub-agents' (`--max-turns`).
    requests: request_cap::RequestCap,
    options: AgentOptions,
    system_prompt: String,
    history: Vec<Message>,
    session: Session,
    read_files: Arc<Mutex<HashSet<PathBuf>>>,
    usage: Usage,
    /// Tokens of the conversation as of the last response (its prompt and its answer).
    context_tokens: u64,
    total_turns: u32,
    hooks: HookEngine,
    /// Context SessionStart hooks gave for the model; part of the system prompt.
    session_context: Vec<String>,
    /// Held while the user is asked, so two questions never share the terminal (shared with
    /// the sub-agents).
    approval_turn: Arc<tokio::sync::Mutex<()>>,
    /// The run's custom commands, skills and agent definitions.
    extensions: Arc<Extensions>,
    /// Sub-agents: how many at once, model aliases, their conversations.
    delegation: subagent::Delegation,
    /// Narrowings for the agent's life (a sub-agent's tools).
    tool_filters: Vec<filter::ToolFilter>,
    /// Narrowings for the current run (a custom command's, a loaded skill's `allowed-tools`).
    narrowing: Mutex<Vec<filter::ToolFilter>>,
    /// Setup warnings not yet shown (see [`Agent::take_warnings`]).
    warnings: Vec<String>,
    /// How full the context is, and the window.
    context: context::ContextState,
    /// When MCP tools go by name only, and which the model has picked.
    tool_search: ToolSearch,
    /// The MCP tools whose definitions the next request leaves out (tool search).
    deferred: HashSet<String>,
    /// Where the file tools read and write (the local disk, or an ACP editor's buffers).
    files: Arc<dyn FileAccess>,
    /// Where `bash` runs instead of a child of Ling (an ACP editor's terminals), if anywhere.
    shell_host: Option<Arc<dyn ShellHost>>,
    /// The writable folders' states before each turn and call (`None`: checkpoints off).
    checkpoints: Option<Checkpoints>,
    /// The state a custom command's turn began in, looked at before its shell lines ran.
    turn_checkpoint: Option<u32>,
    /// The transcript offset of this turn's user message while its checkpoint waits for its
    /// first call that writes.
    unrecorded_turn: std::sync::Mutex<Option<u64>>,
    /// Where images are kept (`LING_HOME/images`); `None`: no images in this run.
    images: Option<ImageStore>,
    /// Images attached for the next prompt ([`Agent::attach_image`]).
    pending_images: Vec<ImageRef>,
}

impl Agent {
    pub fn new(
        llm: LlmClient,
        tools: ToolRegistry,
        permissions: Permissions,
        options: AgentOptions,
        session: Session,
    ) -> Self {
        let (system_prompt, warnings) =
            build_system_prompt(&options.root, &llm.config().model, &options.prompt);
        let context = context::ContextState::new(options.context);
        Self {
            llm,
            builtins: tools.clone(),
            tools,
            mcp: None,
            mode: ModeHandle::new(permissions),
            requests: request_cap::RequestCap::new(),
            options,
            system_prompt,
            history: Vec::new(),
            session,
            read_files: Arc::default(),
            usage: Usage::default(),
            context_tokens: 0,
            total_turns: 0,
            hooks: HookEngine::empty(),
            session_context: Vec::new(),
            approval_turn: Arc::default(),
            extensions: Arc::default(),
            delegation: subagent::Delegation::default(),
            tool_filters: Vec::new(),
            narrowing: Mutex::default(),
            warnings,
            context,
            tool_search: ToolSearch::default(),
            deferred: HashSet::new(),
            files: Arc::new(LocalFiles),
            shell_host: None,
            checkpoints: None,
            turn_checkpoint: None,
            unrecorded_turn: std::sync::Mutex::default(),
            images: None,
            pending_images: Vec::new(),
        }
    }

    /// Keeps images in `store`: `read_file` of a picture and [`Agent::attach_image`] then give
    /// the model the image itself.
    pub fn with_images(mut self, store: ImageStore) -> Self {
        self.images = Some(store);
        self
    }

    /// Attaches the image file at `path` to the next prompt (`-i FILE`, a pasted path, an
    /// editor's image): it is kept in `LING_HOME/images` and goes with the prompt [`Agent::run`]
    /// submits next, as image content on every wire API.
    pub fn attach_image(&mut self, path: &Path) -> Result<ImageRef, MediaError> {
        let image = self.image_store().add_file(path)?;
        self.pending_images.push(image.clone());
        Ok(image)
    }

    /// [`Agent::attach_image`] for image bytes a front end received (ACP's and stream-json's
    /// base64 `image` blocks); `name` is what the image is called (a file name, or `image`).
    pub fn attach_image_bytes(&mut self, bytes: &[u8], name: &str) -> Result<ImageRef, MediaError> {
        let image = self.image_store().add(bytes, name)?;
        self.pending_images.push(image.clone());
        Ok(image)
    }

    /// The store images are kept in: the configured one, else `LING_HOME/images`.
    fn image_store(&mut self) -> ImageStore {
        self.images
            .get_or_insert_with(|| ImageStore::in_home(&crate::config::ling_home()))
            .clone()
    }

    /// Reads and writes the file tools' files through `files` (an ACP editor's `fs/*`).
    pub fn set_file_access(&mut self, files: Arc<dyn FileAccess>) {
        self.files = files;
    }

    /// Runs `bash` commands through `host` (an ACP editor's terminals); `None`: as children.
    pub fn set_shell_host(&mut self, host: Option<Arc<dyn ShellHost>>) {
        self.shell_host = host;
    }

    /// Asks the model's server for its context window in the background (unless the settings
    /// say it); needs a tokio runtime.
    pub fn probe_context_window(&mut self) {
        self.context.start_probe(&self.llm);
    }

    /// Offers MCP tools by name behind `search_tools` as these settings say.
    pub fn with_tool_search(mut self, settings: ToolSearchSettings) -> Self {
        self.tool_search = ToolSearch::new(settings);
        self
    }

    /// Problems found while setting up (an `AGENTS.md` skipped or cut), for the UI to show once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Offers these skills (the `skill` tool) and agent definitions (the `task` tool, with the
    /// builtin general-purpose agent), and knows these custom commands.
    pub fn with_extensions(mut self, extensions: Arc<Extensions>) -> Self {
        self.extensions = extensions;
        if !self.extensions.skills.is_empty() {
            let skills = Arc::new(self.extensions.skills.clone());
            self.builtins
                .register(Arc::new(skill_tool::SkillTool::new(skills)));
        }
        let task = subagent::TaskTool::new(&self.agent_types());
        self.builtins.register(Arc::new(task));
        self.tools = self.builtins.clone();
        self
    }

    /// Runs at most `max_parallel` sub-agents at once, their models named through `aliases`.
    pub fn with_delegation(
        mut self,
        max_parallel: usize,
        aliases: std::collections::BTreeMap<String, String>,
    ) -> Self {
        self.delegation = subagent::Delegation::new(max_parallel, aliases);
        self
    }

    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// Runs these hooks around everything the agent does.
    pub fn with_hooks(mut self, hooks: HookEngine) -> Self {
        self.hooks = hooks;
        self
    }

    /// Offers the tools of these MCP servers beside the builtins, as they connect.
    pub fn with_mcp(mut self, manager: Arc<McpManager>) -> Self {
        self.mcp = Some(manager);
        self
    }

    pub fn mcp(&self) -> Option<&Arc<McpManager>> {
        self.mcp.as_ref()
    }

    /// Brings the registry up to date with the MCP servers: re-lists the tools of servers that
    /// sent `tools/list_changed`, adds the tools of servers that have connected since.
    pub async fn sync_tools(&mut self) {
        let Some(manager) = self.mcp.clone() else {
            return;
        };
        manager.refresh_if_changed().await;
        let mut tools = self.builtins.clone();
        if !manager.configs().is_empty() {
            tools.register(Arc::new(ListMcpResources::new(manager.clone())));
            tools.register(Arc::new(ReadMcpResource::new(manager.clone())));
        }
        let infos = manager.tools();
        let model = self.llm.config().model.clone();
        let (window, _) = self.context.window(&model).await;
        self.deferred = self.tool_search.deferred(&infos, &self.history, window);
        if !self.deferred.is_empty() {
            let search = self.tool_search.tool(manager.clone(), &self.deferred);
            tools.register(Arc::new(search));
        }
        for info in infos {
            tools.register(Arc::new(McpTool::new(info, manager.clone())));
        }
        self.tools = tools;
    }

    pub fn hooks(&self) -> &HookEngine {
        &self.hooks
    }

    fn rebuild_system_prompt(&mut self) {
        // Warnings were given when the agent was made; a rebuild reads the same files.
        let (mut prompt, _) = build_system_prompt(
            &self.options.root,
            &self.llm.config().model,
            &self.options.prompt,
        );
        if !self.session_context.is_empty() {
            prompt.push_str("\n# Session context (from SessionStart hooks)\n\n");
            prompt.push_str(&self.session_context.join("\n\n"));
            prompt.push('\n');
        }
        self.system_prompt = prompt;
        self.context.forget_count();
    }

    pub fn root(&self) -> &Path {
        &self.options.root
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn model(&self) -> &str {
        &self.llm.config().model
    }

    pub fn set_model(&mut self, model: String) {
        self.llm.set_model(model);
        self.context.model_changed();
        // The new model's window, from the cache or its server (in the background).
        self.context.start_probe(&self.llm);
        // Rebuilt with the SessionStart hooks' context, which a model switch keeps.
        self.rebuild_system_prompt();
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// How many tokens the conversation filled at the last response, as the server counted
    /// (0 before the first, or when the server reports no usage).
    pub fn context_tokens(&self) -> u64 {
        self.context_tokens
    }

    pub fn total_turns(&self) -> u32 {
        self.total_turns
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn permission_mode(&self) -> PermissionMode {
        self.lock_permissions().mode()
    }

    /// Changes the mode for the rest of the session (REPL `/mode`, Shift-Tab).
    pub fn set_permission_mode(&self, mode: PermissionMode) {
        self.lock_permissions().set_mode(mode);
    }

    /// The mode, for another task to change while a run goes on (the SDK's
    /// `set_permission_mode`).
    pub fn mode_handle(&self) -> ModeHandle {
        self.mode.clone()
    }

    /// The permission rules in force: (`true` for allow, the rule).
    pub fn permission_rules(&self) -> Vec<(bool, String)> {
        self.lock_permissions().rules()
    }

    /// Adds an allow or deny rule for the rest of the session.
    pub fn add_permission_rule(
        &self,
        allow: bool,
        rule: &str,
    ) -> Result<(), crate::permissions::PermissionError> {
        self.lock_permissions().add_rule(allow, rule)
    }

    /// Removes a rule for the rest of the session; false when no rule is written so.
    pub fn remove_permission_rule(&self, rule: &str) -> bool {
        self.lock_permissions().remove_rule(rule)
    }

    /// Continues a recorded conversation (`--continue`, `--resume`): `history` is the messages of
    /// [`Resumed`], without a system prompt; the agent's own is used. The session given to
    /// [`Agent::new`] must be the resumed one, so new messages go to the same transcript.
    pub fn resume(&mut self, history: Vec<Message>) {
        self.history = history;
        self.context.elided.clear();
        self.context.forget_count();
    }

    /// Switches to another recorded session (REPL `/resume`): its transcript and history.
    pub fn switch_session(&mut self, session: Session, history: Vec<Message>) {
        self.clear(session);
        self.resume(history);
    }

    /// Forgets the conversation (REPL `/clear`) and starts a new session.
    pub fn clear(&mut self, session: Session) {
        self.history.clear();
        self.delegation.lock_children().clear();
        self.session = session;
        self.session_context.clear();
        self.context.elided.clear();
        self.context.forget_count();
        self.rebuild_system_prompt();
        if let Ok(mut files) = self.read_files.lock() {
            files.clear();
        }
    }

    fn lock_permissions(&self) -> std::sync::MutexGuard<'_, Permissions> {
        self.mode.lock()
    }

    /// The definitions the next request carries: every tool but the MCP tools deferred by tool
    /// search (still callable; their names are in `search_tools`).
    fn tool_specs(&self) -> Vec<ToolSpec> {
        let narrowing = self
            .narrowing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        self.tools
            .iter()
            .filter(|tool| !self.deferred.contains(tool.name()))
            .filter(|tool| self.tool_filters.iter().all(|f| f.admits(tool.name())))
            .filter(|tool| narrowing.iter().all(|f| f.admits(tool.name())))
            .map(|tool| ToolSpec {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                parameters: tool.input_schema(),
            })
            .collect()
    }

    fn push(&mut self, message: Message) {
        self.session.record(&message);
        self.history.push(message);
    }
}
