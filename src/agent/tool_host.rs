//! An agent's tool host: what the model can call and under which rules. The builtin tools and
//! the MCP servers' of the moment (some only named, behind tool search); the permission mode
//! and rules; the hooks around each call; the narrowings (a sub-agent's tools, a command's or a
//! skill's `allowed-tools`); where the file tools read and write and `bash` runs (the disk and
//! Ling's children, or an editor's buffers and terminals); the run's commands, skills and agent
//! definitions; the sub-agents' delegation; and the checkpoints around writing calls.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::filter::{Refusal, ToolFilter};
use super::mcp::{ListMcpResources, McpTool, ReadMcpResource, ToolSearch};
use super::mode::ModeHandle;
use super::options::AgentOptions;
use super::subagent::Delegation;
use super::web_model::SideModel;
use crate::checkpoint::Checkpoints;
use crate::config::extensions::Extensions;
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, Message, ToolCall, ToolSpec, Usage};
use crate::mcp::McpManager;
use crate::media::ImageStore;
use crate::permissions::Permissions;
use crate::process::sandbox::Policy;
use crate::tools::{
    FileAccess, LocalFiles, ShellHost, Shells, Tool, ToolContext, ToolKind, ToolRegistry,
};

pub(super) struct ToolHost {
    /// The builtin tools; `tools` is these plus the MCP servers' tools of the moment.
    pub builtins: ToolRegistry,
    pub tools: ToolRegistry,
    /// The MCP tools whose definitions the next request leaves out (tool search).
    pub deferred: HashSet<String>,
    /// When MCP tools go by name only, and which the model has picked.
    pub tool_search: ToolSearch,
    pub mcp: Option<Arc<McpManager>>,
    /// The permission mode and rules (a sub-agent's mode follows its parent's).
    pub mode: ModeHandle,
    pub hooks: HookEngine,
    /// The run's custom commands, skills and agent definitions.
    pub extensions: Arc<Extensions>,
    /// Sub-agents: how many at once, model aliases, their conversations.
    pub delegation: Arc<Delegation>,
    /// Narrowings for the agent's life (a sub-agent's tools).
    pub tool_filters: Vec<ToolFilter>,
    /// Narrowings for the current run (a custom command's, a loaded skill's `allowed-tools`).
    pub narrowing: Mutex<Vec<ToolFilter>>,
    /// Files the session has read or written (`write_file` refuses blind overwrites).
    pub read_files: Arc<Mutex<HashSet<PathBuf>>>,
    /// Held while the user is asked, so two questions never share the terminal (shared with
    /// the sub-agents).
    pub approval_turn: Arc<tokio::sync::Mutex<()>>,
    /// Where the file tools read and write (the local disk, or an ACP editor's buffers).
    pub files: Arc<dyn FileAccess>,
    /// Where `bash` runs instead of a child of Ling (an ACP editor's terminals), if anywhere.
    pub shell_host: Option<Arc<dyn ShellHost>>,
    /// The writable folders' states before each turn and call (`None`: checkpoints off).
    pub checkpoints: Option<Checkpoints>,
    /// Where images are kept (`LING_HOME/images`); `None`: no images in this run.
    pub images: Option<ImageStore>,
    /// The session's background commands (shared with the sub-agents).
    pub shells: Shells,
    /// The git worktree this agent works in (a sub-agent with `isolation: worktree`).
    pub worktree: Option<crate::process::worktree::Worktree>,
    /// What the tools' own model requests used (`web_fetch`'s question, native web search),
    /// not yet counted in the conversation's usage and the spend cap.
    pub side_usage: Arc<Mutex<Usage>>,
}

impl ToolHost {
    pub fn new(tools: ToolRegistry, permissions: Permissions, shells: Shells) -> Self {
        Self {
            builtins: tools.clone(),
            tools,
            deferred: HashSet::new(),
            tool_search: ToolSearch::default(),
            mcp: None,
            mode: ModeHandle::new(permissions),
            hooks: HookEngine::empty(),
            extensions: Arc::default(),
            delegation: Arc::default(),
            tool_filters: Vec::new(),
            narrowing: Mutex::default(),
            read_files: Arc::default(),
            approval_turn: Arc::default(),
            files: Arc::new(LocalFiles),
            shell_host: None,
            checkpoints: None,
            images: None,
            shells,
            worktree: None,
            side_usage: Arc::default(),
        }
    }

    /// Brings the registry up to date with the MCP servers of `manager`: the builtins, the
    /// resource tools, each server's tools, and `search_tools` for those tool search defers
    /// (given the `history` so far and the model's `window`).
    pub fn offer_mcp(&mut self, manager: &Arc<McpManager>, history: &[Message], window: u64) {
        let mut tools = self.builtins.clone();
        if !manager.configs().is_empty() {
            tools.register(Arc::new(ListMcpResources::new(manager.clone())));
            tools.register(Arc::new(ReadMcpResource::new(manager.clone())));
        }
        let infos = manager.tools();
        self.deferred = self.tool_search.deferred(&infos, history, window);
        if !self.deferred.is_empty() {
            let search = self.tool_search.tool(manager.clone(), &self.deferred);
            tools.register(Arc::new(search));
        }
        for info in infos {
            tools.register(Arc::new(McpTool::new(info, manager.clone())));
        }
        self.tools = tools;
    }

    /// What the host keeps of a conversation that is over (`/clear`, a switch of session):
    /// its sub-agents and the files it read, forgotten.
    pub fn forget_conversation(&self) {
        self.delegation.lock_children().clear();
        if let Ok(mut files) = self.read_files.lock() {
            files.clear();
        }
    }

    pub fn lock_permissions(&self) -> MutexGuard<'_, Permissions> {
        self.mode.lock()
    }

    pub fn lock_narrowing(&self) -> MutexGuard<'_, Vec<ToolFilter>> {
        self.narrowing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The definitions the next request carries: every tool but the MCP tools deferred by tool
    /// search (still callable; their names are in `search_tools`), none a narrowing leaves
    /// out or a deny rule names whole (`--disallowed-tools Bash` removes the tool, as in
    /// Claude Code), and `exit_plan_mode` only in plan mode.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        let narrowing = self.lock_narrowing().clone();
        let permissions = self.lock_permissions().clone();
        let planning = super::plan_tool::offered(permissions.mode());
        self.tools
            .iter()
            .filter(|tool| planning || tool.name() != super::plan_tool::EXIT_PLAN_MODE)
            .filter(|tool| !self.deferred.contains(tool.name()))
            .filter(|tool| !permissions.removes(tool.name()))
            .filter(|tool| self.tool_filters.iter().all(|f| f.admits(tool.name())))
            .filter(|tool| narrowing.iter().all(|f| f.admits(tool.name())))
            .map(|tool| ToolSpec {
                name: tool.name().to_string(),
                description: tool.description().to_string(),
                parameters: tool.input_schema(),
            })
            .collect()
    }

    /// Whether the narrowings in force admit the call (`names_only`: its tool, before the
    /// PreToolUse hooks may rewrite its input).
    pub fn admitted(
        &self,
        tool: &dyn Tool,
        input: &Value,
        names_only: bool,
        options: &AgentOptions,
    ) -> Result<(), Refusal> {
        let narrowing = self.lock_narrowing().clone();
        for filter in self.tool_filters.iter().chain(&narrowing) {
            if !names_only || !filter.admits(tool.name()) {
                filter.check(tool, input, &options.root)?;
            }
        }
        Ok(())
    }

    /// Whether the call only reads, or fetches from the web (which changes nothing here
    /// either): it may run beside the other such calls of its response.
    pub fn is_read_call(&self, call: &ToolCall) -> bool {
        self.tools
            .get(call.name())
            .is_some_and(|tool| matches!(tool.kind(), ToolKind::Read | ToolKind::Web))
    }

    /// The sandbox of a `bash` command now: what [`Decision::effective`] says for the current
    /// permission mode (the same answer `/status` and the `init` line show).
    ///
    /// [`Decision::effective`]: crate::process::sandbox::Decision::effective
    pub fn sandbox_policy(&self, options: &AgentOptions) -> Option<Policy> {
        let mode = self.lock_permissions().mode();
        let effective = options.child_env.decision().effective(mode);
        options.child_env.policy(effective.mode)
    }

    /// What a tool gets to run with, `cancel` ending it; `llm` answers a tool's own small
    /// request (`web_fetch`'s `prompt`, a native search).
    pub fn tool_context(
        &self,
        options: &AgentOptions,
        llm: &LlmClient,
        cancel: &CancellationToken,
    ) -> ToolContext {
        // Before the literal: the permissions' lock below lives to its end.
        let sandbox = self.sandbox_policy(options);
        let web_rules = self.lock_permissions().web_rules();
        ToolContext {
            root: options.root.clone(),
            confine_to_root: self.lock_permissions().confine_to_root(),
            cancel: cancel.clone(),
            read_files: self.read_files.clone(),
            progress: None,
            output_line: None,
            child_env: options.child_env.clone(),
            sandbox,
            extra_roots: options.add_dirs.clone(),
            hidden: options.child_env.decision().hidden.as_slice().into(),
            files: self.files.clone(),
            shell_host: self.shell_host.clone(),
            shells: Some(self.shells.clone()),
            on_timeout: None,
            call_id: None,
            images: self.images.clone(),
            web_rules,
            model: Some(Arc::new(SideModel::new(
                llm.clone(),
                self.side_usage.clone(),
            ))),
            caller: None,
            session_id: String::new(),
        }
    }
}
