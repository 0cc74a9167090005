//! The session host: one running session, owned here, that every front end drives (the REPL,
//! `ling -p`, Claude's stream-json session, `ling acp`, `ling mcp serve`). A front end only
//! translates its wire: it starts a [`Host`] (the one place a run is prepared), sends it typed
//! [`Command`]s and reads one [`Status`]; what may happen while a prompt runs goes through the
//! [`Live`] handle. What runs before each prompt (MCP config reloaded under its trust guard, a
//! model chosen meanwhile, the tools brought up to date, SessionStart) runs here, once, for all
//! of them. Codex's `Op` and `submission_loop` are the model; an in-process `&mut Host` is
//! enough for Ling.
//!
//! Front ends import this module, never `agent` or `setup` (scripts/module-graph.sh checks): the
//! vocabulary they need (events, approvals, how a run ended) is re-exported here.

mod command;
mod goal;
mod live;
mod model;
mod reload;
mod rules;
mod status;
mod view;

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use self::command::{Command, EndReason, HostError, Keep, McpCommand, Reply};
pub use self::goal::{GoalOutcome, check_line};
pub use self::live::Live;
pub use self::status::Status;
pub use crate::agent::PromptOptions;
pub use crate::agent::context::percent_of;
pub use crate::agent::subagent::AgentRow;
pub use crate::agent::{
    ASK_USER, AgentError, AgentEvent, Approval, ApprovalRequest, Approver, Attached, CheckRun,
    Compaction, ContextUsage, DirectResult, EXIT_PLAN_MODE, EventSink, HookNotice, IdleNotice,
    McpAsker, NonInteractive, NoticeDecision, PlanAnswer, PlanRequest, Question, QuestionAnswer,
    QuestionOption, QuestionRequest, RewindError, RewindPoint, RewindReport, RewindRequest,
    RewindScope, RunEnd, RunResult, SKILL, SessionSummary, SubagentEvent, SubagentKind, TASK,
    TODO_WRITE, Todo, TodoStatus, attach_files, cap_middle, parse_rewind, render_todos,
    session_list, todo_summary,
};
pub use crate::setup::{
    DEFAULT_PRINT_MAX_TURNS, Resume, RunOptions, SetupError, locate, project_root,
};

use crate::agent::{Session, StartSource};
use crate::config::Paths;
use crate::llm::LlmConfig;
use crate::setup::Setup;
use crate::tools::{FileAccess, ShellHost};
use crate::trust::ProjectConfig;

/// What a command may use of its front end while it runs.
pub struct Io<'a> {
    /// Where the session's events go.
    pub sink: &'a dyn EventSink,
    /// Who answers permission questions.
    pub approver: &'a dyn Approver,
    /// Ends the command (a prompt, a compaction) when cancelled.
    pub cancel: &'a CancellationToken,
    /// Who is asked whether project config that changed during the session may apply (the
    /// MCP config reloaded before a prompt); `None`: nobody can be, and it stays out.
    pub trust: Option<&'a dyn TrustAsker>,
}

impl<'a> Io<'a> {
    /// Nobody to ask: questions are denied, changed project config stays out.
    pub fn unattended(sink: &'a dyn EventSink, cancel: &'a CancellationToken) -> Self {
        Self {
            sink,
            approver: &NonInteractive,
            cancel,
            trust: None,
        }
    }
}

/// Asks the user whether to trust the project's config (the REPL's question, an editor's
/// permission request).
#[async_trait(?Send)]
pub trait TrustAsker {
    /// True: trust it (the host records it).
    async fn trust(&self, project: &ProjectConfig, paths: &Paths) -> bool;
}

/// What a front end plugs into the run: the editor's files and terminals, who answers MCP
/// servers' questions. Kept, so a run set up again gets them again.
#[derive(Clone, Default)]
pub struct Plugs {
    pub files: Option<Arc<dyn FileAccess>>,
    pub shell: Option<Arc<dyn ShellHost>>,
    pub asker: Option<Arc<dyn McpAsker>>,
}

/// How a session is started.
pub struct Start {
    pub options: RunOptions,
    pub paths: Paths,
    pub project: ProjectConfig,
    /// Somebody can be asked (the REPL, an editor): MCP sampling is declared to servers.
    pub interactive: bool,
}

/// One running session.
pub struct Host {
    setup: Setup,
    live: Live,
    /// SessionStart hooks fired.
    started: bool,
    /// [`Host::before_prompt`] ran for the next prompt.
    prepared: bool,
    plugs: Plugs,
    /// How it was started, to set it up again once the project is trusted.
    options: RunOptions,
    interactive: bool,
    /// The check run after each answer until it passes (`--until`, `/goal`).
    goal: Option<String>,
}

impl Host {
    /// Prepares the run (the only caller of `Setup::prepare`); `warn` gets each problem of the
    /// configuration as it is found.
    pub async fn start(start: Start, warn: &dyn Fn(&str)) -> Result<Self, SetupError> {
        let Start {
            options,
            paths,
            project,
            interactive,
        } = start;
        let setup = Setup::prepare(&options, paths, project, interactive, warn).await?;
        let live = live_of(&setup);
        Ok(Self {
            setup,
            live,
            started: false,
            prepared: false,
            plugs: Plugs::default(),
            options,
            interactive,
            goal: None,
        })
    }

    /// Plugs the front end in (files, terminals, MCP questions).
    pub fn plug(&mut self, plugs: Plugs) {
        apply_plugs(&mut self.setup, &plugs);
        self.plugs = plugs;
    }

    /// The handle to the session for other tasks of the front end.
    pub fn live(&self) -> Live {
        self.live.clone()
    }

    pub fn status(&self) -> Status {
        self.live.status()
    }

    /// The session's to-do list as the model last wrote it (`todo_write`).
    pub fn todos(&self) -> Vec<Todo> {
        self.setup.agent.session().todos()
    }

    /// Carries out one command.
    pub async fn submit(&mut self, command: Command, io: &Io<'_>) -> Result<Reply, HostError> {
        match command {
            Command::Start => Ok(self
                .start_session(io.sink)
                .await
                .map_or(Reply::Done, Reply::Stopped)),
            Command::Prompt(text) => self.prompt(&text, io).await,
            Command::SetGoal(goal) => {
                self.goal = goal.filter(|g| !g.trim().is_empty());
                Ok(Reply::Done)
            }
            Command::SetMode(mode) => {
                self.live.set_mode(mode);
                Ok(Reply::Done)
            }
            Command::SetModel(model) => {
                let model = model::validate(&self.llm_config(), &model).await?;
                self.apply_model(model);
                Ok(Reply::Done)
            }
            Command::Compact(instructions) => {
                let instructions = instructions.unwrap_or_default();
                let done = self
                    .setup
                    .agent
                    .compact(&instructions, io.sink, io.cancel)
                    .await;
                Ok(Reply::Compacted(done))
            }
            Command::Clear => self.clear(io.sink).await,
            Command::Resume(id) => self.resume(&id, io.sink).await,
            Command::Mcp(command) => {
                self.live.mcp(&command).await?;
                self.sync_tools().await;
                Ok(Reply::Done)
            }
            Command::AddRule { allow, rule } => {
                self.setup.agent.add_permission_rule(allow, &rule)?;
                Ok(Reply::Done)
            }
            Command::RemoveRule(rule) => Ok(if self.setup.agent.remove_permission_rule(&rule) {
                Reply::Done
            } else {
                Reply::NoSuchRule
            }),
            Command::KeepRule { rule, keep } => self.keep_rule(&rule, keep),
            Command::Rewind(request) => {
                let report = self.setup.agent.rewind(request).await?;
                Ok(Reply::Rewound(report))
            }
            Command::SetBudget(cap) => {
                self.setup.agent.set_budget_usd(cap);
                Ok(Reply::Done)
            }
            Command::Fork => {
                let id = self.setup.fork()?;
                self.live.session_is(&id);
                Ok(Reply::Forked(id))
            }
            Command::End(reason) => {
                self.end(reason, io.sink).await;
                Ok(Reply::Done)
            }
            Command::Background => self.background(io).await,
            Command::Agents => Ok(Reply::Agents(self.live.agents())),
            Command::StopAgent(id) => {
                self.live.stop_agent(&id)?;
                Ok(Reply::Done)
            }
        }
    }

    /// Whether background sub-agents run or ended unheard ([`Command::Background`] would
    /// wait for them).
    pub fn has_background(&self) -> bool {
        self.setup.agent.has_background()
    }

    /// Whether a background sub-agent ended and its answer waits for a turn.
    pub fn background_ready(&self) -> bool {
        self.setup.agent.background_ready()
    }

    /// The next background sub-agent's end, as a turn; `Done` when none is to come.
    async fn background(&mut self, io: &Io<'_>) -> Result<Reply, HostError> {
        if !self.setup.agent.wait_background(io.cancel).await {
            return Ok(Reply::Done);
        }
        let before = self.setup.agent.usage();
        self.live.begin_turn(io.cancel.clone());
        let result = self
            .setup
            .agent
            .run_background(io.sink, io.approver, io.cancel)
            .await;
        self.live.end_turn();
        let usage = self.setup.agent.usage().since(before);
        // A background answer is not a prompt of the user's: the goal's check waits for one.
        Ok(Reply::Turn {
            result,
            usage,
            goal: None,
        })
    }

    /// SessionStart, once: `Some(reason)` when a hook stopped the session.
    async fn start_session(&mut self, sink: &dyn EventSink) -> Option<String> {
        if std::mem::replace(&mut self.started, true) {
            return None;
        }
        let source = if self.setup.resumed {
            StartSource::Resume
        } else {
            StartSource::Startup
        };
        self.setup.agent.fire_session_start(source, sink).await
    }

    /// Waits until every MCP server is connected or failed (each within its startup timeout),
    /// or `cancel`, then brings the tools the model sees up to date. False when cancelled.
    pub async fn wait_for_servers(&mut self, cancel: &CancellationToken) -> bool {
        let mcp = self.setup.mcp.clone();
        tokio::select! {
            () = mcp.wait_ready() => {}
            () = cancel.cancelled() => return false,
        }
        self.sync_tools().await;
        true
    }

    /// Brings the tools the model sees up to date with the MCP servers.
    pub async fn sync_tools(&mut self) {
        self.setup.agent.sync_tools().await;
    }

    /// What runs before each prompt, once: MCP config edited since the last prompt (under its
    /// trust guard), a model chosen meanwhile, the tools brought up to date, SessionStart.
    /// [`Command::Prompt`] runs it itself; a front end that must do it before its turn takes
    /// the terminal (the REPL: the trust question) calls it first. `Some(reason)` when a hook
    /// stopped the session.
    pub async fn before_prompt(&mut self, io: &Io<'_>) -> Option<String> {
        self.prepared = true;
        self.reload_mcp(io).await;
        if let Some(model) = self.live.take_pending_model() {
            self.apply_model(model);
        }
        if self.live.take_tools_stale() {
            self.sync_tools().await;
        }
        self.start_session(io.sink).await
    }

    /// One prompt: what runs before it (unless the front end ran it), then the turn.
    async fn prompt(&mut self, text: &str, io: &Io<'_>) -> Result<Reply, HostError> {
        if !std::mem::take(&mut self.prepared)
            && let Some(reason) = self.before_prompt(io).await
        {
            self.prepared = false;
            return Ok(Reply::Stopped(reason));
        }
        self.prepared = false;
        let before = self.setup.agent.usage();
        self.live.begin_turn(io.cancel.clone());
        let mut result = self
            .setup
            .agent
            .run_input(text, io.sink, io.approver, io.cancel)
            .await;
        let goal = match self.goal.clone() {
            Some(command) => Some(self.pursue(&command, &mut result, io).await),
            None => None,
        };
        self.live.end_turn();
        let usage = self.setup.agent.usage().since(before);
        // `/clear` or a resume inside a command's run would have moved it.
        self.live.session_is(&self.setup.agent.session().id);
        Ok(Reply::Turn {
            result,
            usage,
            goal,
        })
    }

    /// The model of the agent (its window with it), of MCP sampling, and of the status.
    fn apply_model(&mut self, model: String) {
        self.setup.mcp_host.set_model(model.clone());
        self.setup.agent.set_model(model.clone());
        self.live.model_is(&model);
    }

    async fn clear(&mut self, sink: &dyn EventSink) -> Result<Reply, HostError> {
        self.setup.agent.end_session(EndReason::Clear, sink).await;
        let session = Session::new(
            &self.setup.paths.sessions_dir(),
            &self.setup.paths.project_root,
            self.setup.agent.model(),
        );
        self.setup.agent.clear(session);
        self.live.session_is(&self.setup.agent.session().id);
        let stopped = self
            .setup
            .agent
            .fire_session_start(StartSource::Clear, sink)
            .await;
        Ok(stopped.map_or(Reply::Done, Reply::Stopped))
    }

    /// Continues a recorded session. Before the session started (the REPL's picker at start)
    /// it simply becomes the session; after, the current one ends and SessionStart (`resume`)
    /// fires for the new one.
    async fn resume(&mut self, id: &str, sink: &dyn EventSink) -> Result<Reply, HostError> {
        let resumed = Session::open(&self.setup.paths.sessions_dir(), id.trim())?;
        if self.started {
            self.setup.agent.end_session(EndReason::Resume, sink).await;
        }
        self.setup
            .agent
            .switch_session(resumed.session, resumed.messages);
        self.setup.agent.restore_children(resumed.children);
        self.live.session_is(&self.setup.agent.session().id);
        if !self.started {
            self.setup.resumed = true;
        } else if let Some(reason) = self
            .setup
            .agent
            .fire_session_start(StartSource::Resume, sink)
            .await
        {
            return Ok(Reply::Stopped(reason));
        }
        Ok(Reply::Resumed {
            warnings: resumed.warnings,
        })
    }

    fn keep_rule(&mut self, rule: &str, keep: Keep) -> Result<Reply, HostError> {
        self.setup.agent.add_permission_rule(true, rule)?;
        let shown = match keep {
            Keep::Session => None,
            Keep::Project | Keep::User => {
                Some(rules::keep(&self.setup.paths, rule, keep == Keep::User)?)
            }
        };
        Ok(Reply::Kept(shown))
    }

    /// SessionEnd (when the session started) and the background commands ended, then the MCP
    /// servers stop.
    async fn end(&mut self, reason: EndReason, sink: &dyn EventSink) {
        self.setup.agent.agents().stop_all();
        self.end_session(reason, sink).await;
        self.setup.shutdown().await;
    }

    /// The MCP servers stop, without SessionEnd (a session that never started: `mcp serve`'s
    /// tools).
    pub async fn shutdown(&self) {
        self.setup.shutdown().await;
    }

    /// SessionEnd (when the session started) and the background commands ended, the servers
    /// left running: `-p` writes its result line first and then stops them without waiting.
    pub async fn end_session(&mut self, reason: EndReason, sink: &dyn EventSink) {
        if std::mem::replace(&mut self.started, false) {
            self.setup.agent.end_session(reason, sink).await;
        }
        self.setup.agent.shells().end_all().await;
    }

    /// The user trusted the project during the session (an editor's first prompt): recorded,
    /// and the run set up again with the project's config under the same session id (and
    /// transcript, when there is one), the front end's plugs installed again.
    pub async fn restart_trusted(
        &mut self,
        mut project: ProjectConfig,
        warn: &dyn Fn(&str),
    ) -> Result<(), HostError> {
        project.trust()?;
        self.setup.shutdown().await;
        let id = self.setup.agent.session().id.clone();
        let recorded = self.setup.agent.session().transcript_path.is_file();
        let mut options = self.options.clone();
        options.resume = if recorded {
            Resume::Id(id.clone())
        } else {
            Resume::New
        };
        let paths = Paths::new(self.setup.paths.project_root.clone());
        let mut fresh = Setup::prepare(&options, paths, project, self.interactive, warn).await?;
        if !recorded {
            let model = fresh.agent.model().to_string();
            let session = Session::with_id(
                &fresh.paths.sessions_dir(),
                &fresh.paths.project_root,
                &model,
                id,
            );
            fresh.agent.clear(session);
        }
        apply_plugs(&mut fresh, &self.plugs);
        self.live.run_is(
            fresh.mcp.clone(),
            fresh.agent.sandbox().clone(),
            fresh.agent.mode_handle(),
        );
        self.live.agents_are(fresh.agent.agents());
        self.live.model_is(fresh.agent.model());
        self.live.trust_is(fresh.project_trust);
        self.setup = fresh;
        Ok(())
    }
}

fn apply_plugs(setup: &mut Setup, plugs: &Plugs) {
    if let Some(files) = &plugs.files {
        setup.agent.set_file_access(files.clone());
    }
    if plugs.shell.is_some() {
        setup.agent.set_shell_host(plugs.shell.clone());
    }
    if let Some(asker) = &plugs.asker {
        setup.mcp_host.set_asker(asker.clone());
    }
}

fn live_of(setup: &Setup) -> Live {
    let mut llm = LlmConfig::from_settings(&setup.settings);
    llm.model = setup.agent.model().to_string();
    Live::new(
        llm,
        setup.paths.clone(),
        setup.mcp.clone(),
        setup.agent.sandbox().clone(),
        setup.agent.mode_handle(),
        setup.agent.model().to_string(),
        setup.agent.session().id.clone(),
        setup.project_trust,
    )
    .with_agents(setup.agent.agents())
}
