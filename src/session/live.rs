//! [`Live`]: the part of a session a front end may reach while a prompt runs, from the task
//! that reads its wire (the Agent SDK's `interrupt` and `set_model`, ACP's `session/cancel`, the
//! REPL's Ctrl-C): the running prompt's cancel, the permission mode, the model the next request
//! takes, the MCP servers, and the one [`Status`] value every front end reads.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use super::command::{HostError, McpCommand};
use super::status::Status;
use crate::agent::ModeHandle;
use crate::agent::subagent::{AgentRow, Registry};
use crate::config::{Paths, PermissionMode};
use crate::llm::LlmConfig;
use crate::mcp::McpManager;
use crate::process::sandbox::Decision;
use crate::trust::TrustStatus;

/// Cheap to clone; every clone reaches the same session.
#[derive(Clone)]
pub struct Live {
    inner: Arc<Inner>,
}

struct Inner {
    paths: Paths,
    mode: Mutex<ModeHandle>,
    state: Mutex<State>,
}

/// What changes over the session's life (the servers and sandbox too: a project trusted
/// during the session is set up again).
struct State {
    /// The endpoint, with the model of the current requests.
    llm: LlmConfig,
    mcp: Arc<McpManager>,
    sandbox: Decision,
    /// The running prompt's cancel.
    turn: Option<CancellationToken>,
    /// The model of the current requests, and the one the next prompt switches to.
    model: String,
    pending_model: Option<String>,
    session_id: String,
    trust: TrustStatus,
    /// An MCP server was reconnected or switched while a prompt ran: the tools the model sees
    /// are brought up to date before the next prompt.
    tools_stale: bool,
    /// The sub-agents running in the session's tree.
    agents: Arc<Registry>,
}

impl Live {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        llm: LlmConfig,
        paths: Paths,
        mcp: Arc<McpManager>,
        sandbox: Decision,
        mode: ModeHandle,
        model: String,
        session_id: String,
        trust: TrustStatus,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                paths,
                mode: Mutex::new(mode),
                state: Mutex::new(State {
                    llm,
                    mcp,
                    sandbox,
                    turn: None,
                    model,
                    pending_model: None,
                    session_id,
                    trust,
                    tools_stale: false,
                    agents: Arc::default(),
                }),
            }),
        }
    }

    pub(super) fn with_agents(self, agents: Arc<Registry>) -> Self {
        self.agents_are(agents);
        self
    }

    pub(super) fn agents_are(&self, agents: Arc<Registry>) {
        self.state().agents = agents;
    }

    /// The sub-agents running now (foreground and background, every depth), oldest first.
    pub fn agents(&self) -> Vec<AgentRow> {
        self.state().agents.list()
    }

    /// Stops the running sub-agent `id`; also while a prompt runs.
    pub fn stop_agent(&self, id: &str) -> Result<(), HostError> {
        let agents = self.state().agents.clone();
        if agents.stop(id) {
            Ok(())
        } else {
            Err(HostError::NoSuchAgent(id.trim().to_string()))
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn mode_handle(&self) -> ModeHandle {
        self.inner
            .mode
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Ends the running prompt (its answer so far is kept); nothing when none runs.
    pub fn interrupt(&self) {
        if let Some(turn) = &self.state().turn {
            turn.cancel();
        }
    }

    /// Whether a prompt is running.
    pub fn is_running(&self) -> bool {
        self.state().turn.is_some()
    }

    /// The permission mode from the next tool call on (sub-agents included).
    pub fn set_mode(&self, mode: PermissionMode) {
        self.mode_handle().set(mode);
    }

    /// The model the next prompt switches to, validated as the host's `SetModel` is (not
    /// empty; one the server lists, when it lists them).
    pub async fn set_model(&self, model: &str) -> Result<(), HostError> {
        let config = self.state().llm.clone();
        let model = super::model::validate(&config, model).await?;
        self.state().pending_model = Some(model);
        Ok(())
    }

    /// Reconnects a server or switches it, now; the model sees the tools from the next prompt.
    pub async fn mcp(&self, command: &McpCommand) -> Result<(), HostError> {
        let manager = self.mcp_manager();
        match command {
            McpCommand::Reconnect(name) => manager.reconnect(name).await?,
            McpCommand::Login { server, login } => manager.login(server, login.clone()).await?,
            McpCommand::Enable(name) | McpCommand::Disable(name) => {
                let on = matches!(command, McpCommand::Enable(_));
                crate::agent::mcp::reload::switch_server(&manager, &self.inner.paths, name, on)
                    .await?;
            }
        }
        self.state().tools_stale = true;
        Ok(())
    }

    /// The REPL's "always" kept in a settings file too (the session's rule is the agent's):
    /// the file as shown. Also while a prompt runs, from the question's answer.
    pub fn keep_rule(&self, rule: &str, user: bool) -> Result<String, HostError> {
        super::rules::keep(&self.inner.paths, rule, user)
    }

    /// Where the session stands now.
    pub fn status(&self) -> Status {
        let mode = self.mode_handle().get();
        let state = self.state();
        Status {
            mode,
            model: state.model.clone(),
            pending_model: state.pending_model.clone(),
            sandbox: state.sandbox.effective(mode),
            servers: state.mcp.statuses(),
            session_id: state.session_id.clone(),
            trust: state.trust,
            project_root: self.inner.paths.project_root.clone(),
        }
    }

    pub fn mcp_manager(&self) -> Arc<McpManager> {
        self.state().mcp.clone()
    }

    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    pub fn project_root(&self) -> &PathBuf {
        &self.inner.paths.project_root
    }

    // The host's side.

    pub(super) fn begin_turn(&self, cancel: CancellationToken) {
        self.state().turn = Some(cancel);
    }

    pub(super) fn end_turn(&self) {
        self.state().turn = None;
    }

    pub(super) fn take_pending_model(&self) -> Option<String> {
        self.state().pending_model.take()
    }

    pub(super) fn take_tools_stale(&self) -> bool {
        std::mem::take(&mut self.state().tools_stale)
    }

    pub(super) fn model_is(&self, model: &str) {
        let mut state = self.state();
        state.model = model.to_string();
        state.llm.model = model.to_string();
        state.pending_model = None;
    }

    pub(super) fn session_is(&self, id: &str) {
        self.state().session_id = id.to_string();
    }

    pub(super) fn trust_is(&self, trust: TrustStatus) {
        self.state().trust = trust;
    }

    /// The run was set up again (a project trusted during the session).
    pub(super) fn run_is(&self, mcp: Arc<McpManager>, sandbox: Decision, mode: ModeHandle) {
        {
            let mut state = self.state();
            state.mcp = mcp;
            state.sandbox = sandbox;
        }
        self.mode_is(mode);
    }

    fn mode_is(&self, mode: ModeHandle) {
        *self
            .inner
            .mode
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = mode;
    }
}
