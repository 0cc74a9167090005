//! One ACP session: a Ling run set up for the session's project ([`Setup`], as the REPL's),
//! with the editor's files, terminals and questions plugged in; its prompts, each a run of the
//! agent loop that one `session/cancel` ends; its mode and model. An untrusted project starts
//! without its config, and its first prompt asks the trust question: trusted, the session is
//! set up again with the project's config (same id, same transcript) before the prompt runs.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, LoadSessionResponse, McpServer,
    NewSessionResponse, NoticeSeverity, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigOptionValue, SessionConfigSelectOption, SessionMode, SessionModeState,
    SessionUpdate, SetSessionConfigOptionResponse, StopReason,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client_fs::ClientFiles;
use super::permission::{ClientApprover, SessionAsker, ask_trust};
use super::terminal::ClientTerminals;
use super::updates::{UpdateSink, chunk};
use super::{Shared, check_recorded, encode, locate, mcp_servers, prompt};
use crate::agent::{ModeHandle, RunEnd, Session};
use crate::config::{Paths, PermissionMode};
use crate::llm::LlmConfig;
use crate::rpc::RpcError;
use crate::setup::{Resume, RunOptions, Setup};
use crate::trust::{ProjectConfig, TrustStatus};

/// How a session is opened.
pub(super) enum Open {
    /// `session/new`.
    New {
        cwd: PathBuf,
        servers: Vec<McpServer>,
    },
    /// `session/load` (`replay`: the history is sent to the editor first) or `session/resume`.
    Load {
        id: String,
        cwd: PathBuf,
        servers: Vec<McpServer>,
        replay: bool,
    },
}

impl Open {
    pub(super) fn load(id: &str, cwd: PathBuf, servers: Vec<McpServer>, replay: bool) -> Self {
        Self::Load {
            id: id.to_string(),
            cwd,
            servers,
            replay,
        }
    }
}

/// What changes over a session's life besides its run.
#[derive(Default)]
struct State {
    /// SessionStart hooks fired (at the first prompt).
    started: bool,
    /// The model the next request uses, and the choice the editor made that the run in
    /// progress has not taken yet.
    model: String,
    pending_model: Option<String>,
    /// The models the server lists, for the editor's model choice.
    models: Vec<String>,
    /// What the setup had to say, for the editor once it knows the session.
    notices: Vec<String>,
}

pub(crate) struct AcpSession {
    pub id: String,
    root: PathBuf,
    sink: Arc<UpdateSink>,
    setup: tokio::sync::Mutex<Setup>,
    /// The running prompt's cancel.
    running: Mutex<Option<CancellationToken>>,
    mode: Mutex<ModeHandle>,
    state: Mutex<State>,
    /// The project config the trust question is about, while it is still to be asked.
    untrusted: Mutex<Option<ProjectConfig>>,
    /// The run's options (with the editor's MCP servers), to set it up again after trust.
    options: RunOptions,
    mcp_file: Option<PathBuf>,
}

fn failed(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal(e.to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ling's permission modes as ACP session modes.
fn modes(current: PermissionMode) -> SessionModeState {
    let mode = |mode: PermissionMode, name: &str, description: &str| {
        SessionMode::new(mode.as_str(), name).description(description.to_string())
    };
    SessionModeState::new(
        current.as_str(),
        vec![
            mode(
                PermissionMode::Default,
                "Default",
                "Reads run; edits and commands outside the sandbox ask first",
            ),
            mode(
                PermissionMode::AcceptEdits,
                "Accept edits",
                "Edits run without asking; commands outside the sandbox ask first",
            ),
            mode(
                PermissionMode::Plan,
                "Plan",
                "Read-only: look around and plan, change nothing",
            ),
            mode(
                PermissionMode::Bypass,
                "Bypass permissions",
                "Everything runs without asking (deny rules and the sandbox still apply)",
            ),
            mode(
                PermissionMode::DontAsk,
                "Don't ask",
                "As Default, but nothing is asked: what would ask is denied",
            ),
        ],
    )
}

impl AcpSession {
    /// Sets the session up; returns it and the answer to the request that opened it.
    pub(super) async fn open(
        shared: &Rc<Shared>,
        open: Open,
    ) -> Result<(Rc<Self>, Value), RpcError> {
        let (cwd, servers, load) = match open {
            Open::New { cwd, servers } => (cwd, servers, None),
            Open::Load {
                id,
                cwd,
                servers,
                replay,
            } => (cwd, servers, Some((id, replay))),
        };
        let paths = locate(&cwd)?;
        let root = paths.project_root.clone();
        if let Some((id, _)) = &load {
            check_recorded(&paths, id, &cwd)?;
        }
        let project = ProjectConfig::read(&paths).map_err(failed)?;
        // Named afresh each time: a session loaded twice gets two files, each ended with its run.
        let file_id = uuid::Uuid::new_v4().to_string();
        let (mcp_file, warnings) =
            mcp_servers::write(&paths.home, &file_id, &servers).map_err(|e| {
                failed(format!(
                    "cannot keep the editor's MCP servers in LING_HOME/acp: {e}"
                ))
            })?;
        for warning in &warnings {
            (shared.warn)(warning);
        }
        let mut options = shared.options.run.clone();
        options.mcp_config.extend(mcp_file.clone());
        options.resume = match &load {
            Some((id, _)) => Resume::Id(id.clone()),
            None => Resume::New,
        };
        let untrusted = (project.status() == TrustStatus::Untrusted).then(|| project.clone());
        let mut setup = match prepare(shared, &options, paths, project).await {
            Ok(setup) => setup,
            Err(e) => {
                if let Some(file) = &mcp_file {
                    let _ = std::fs::remove_file(file);
                }
                return Err(e);
            }
        };
        let id = setup.agent.session().id.clone();
        let notices_shown = shared
            .client()
            .session
            .as_ref()
            .is_some_and(|s| s.notices.is_some());
        let sink = Arc::new(UpdateSink::new(
            shared.peer.clone(),
            &id,
            root.clone(),
            notices_shown,
        ));
        let mut notices = warnings;
        notices.extend(setup.warnings.iter().cloned());
        notices.extend(setup.trust_notice.iter().cloned());
        install(shared, &id, &sink, &mut setup);
        let replay = load.as_ref().is_some_and(|(_, replay)| *replay);
        if replay {
            prompt::replay(setup.agent.history(), &sink, &root);
        }
        let mode = setup.agent.permission_mode();
        let session = Rc::new(Self {
            id: id.clone(),
            root,
            mode: Mutex::new(setup.agent.mode_handle()),
            state: Mutex::new(State {
                model: setup.agent.model().to_string(),
                notices,
                ..State::default()
            }),
            sink,
            running: Mutex::new(None),
            untrusted: Mutex::new(untrusted),
            options,
            mcp_file,
            setup: tokio::sync::Mutex::new(setup),
        });
        let config = session.config_options();
        let response = match load {
            None => encode(
                &NewSessionResponse::new(id)
                    .modes(modes(mode))
                    .config_options(config),
            )?,
            Some(_) => encode(
                &LoadSessionResponse::new()
                    .modes(modes(mode))
                    .config_options(config),
            )?,
        };
        Ok((session, response))
    }

    /// What follows the answer to `session/new` or `session/load`, once the editor knows the
    /// session: the setup's warnings, and the models the server offers (fetched in the
    /// background; the model choice grows when they arrive).
    pub(super) fn opened(self: &Rc<Self>) {
        for notice in std::mem::take(&mut lock(&self.state).notices) {
            self.sink.notice(NoticeSeverity::Warning, &notice, None);
        }
        let session = self.clone();
        tokio::task::spawn_local(async move {
            let config = {
                let setup = session.setup.lock().await;
                LlmConfig::from_settings(&setup.settings)
            };
            let models = crate::llm::list_models(&config).await;
            if models.is_empty() {
                return;
            }
            lock(&session.state).models = models;
            session.config_changed();
        });
    }

    /// The editor's mode and model choices.
    fn config_options(&self) -> Vec<SessionConfigOption> {
        let mode = lock(&self.mode).get();
        let (model, mut models) = {
            let state = lock(&self.state);
            (
                state.pending_model.clone().unwrap_or(state.model.clone()),
                state.models.clone(),
            )
        };
        if !models.contains(&model) {
            models.insert(0, model.clone());
        }
        let mode_options = [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::Bypass,
            PermissionMode::DontAsk,
        ]
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.as_str(), m.as_str()))
        .collect::<Vec<_>>();
        let model_options = models
            .iter()
            .map(|m| SessionConfigSelectOption::new(m.clone(), m.clone()))
            .collect::<Vec<_>>();
        vec![
            SessionConfigOption::select("mode", "Mode", mode.as_str(), mode_options)
                .description("Ling's permission mode".to_string())
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select("model", "Model", model, model_options)
                .category(SessionConfigOptionCategory::Model),
        ]
    }

    fn config_changed(&self) {
        self.sink
            .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                self.config_options(),
            )));
    }

    pub(super) fn set_mode(&self, id: &str) -> Result<(), RpcError> {
        let mode = PermissionMode::parse(id).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown mode {id:?}; the modes are default, accept-edits, plan and bypass"
            ))
        })?;
        lock(&self.mode).set(mode);
        self.sink
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                mode.as_str(),
            )));
        self.config_changed();
        Ok(())
    }

    pub(super) async fn set_config_option(
        &self,
        id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<Value, RpcError> {
        let Some(chosen) = value.as_value_id().map(|v| v.0.to_string()) else {
            return Err(RpcError::invalid_params(format!(
                "option {id} takes one of its values, not a boolean"
            )));
        };
        match id {
            "mode" => self.set_mode(&chosen)?,
            "model" => {
                if chosen.trim().is_empty() {
                    return Err(RpcError::invalid_params("the model name is empty"));
                }
                // A run in progress keeps its model; the next prompt takes the new one.
                match self.setup.try_lock() {
                    Ok(mut setup) => {
                        setup.agent.set_model(chosen.clone());
                        let mut state = lock(&self.state);
                        state.model = chosen;
                        state.pending_model = None;
                    }
                    Err(_) => lock(&self.state).pending_model = Some(chosen),
                }
                self.config_changed();
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "unknown config option {other:?}; Ling has mode and model"
                )));
            }
        }
        encode(&SetSessionConfigOptionResponse::new(self.config_options()))
    }

    /// Ends the prompt in progress, if any (`session/cancel`).
    pub(super) fn cancel(&self) {
        if let Some(token) = lock(&self.running).as_ref() {
            token.cancel();
        }
    }

    /// One `session/prompt`: runs the agent loop on the prompt; how it stopped.
    pub(super) async fn prompt(
        &self,
        shared: &Rc<Shared>,
        blocks: &[ContentBlock],
    ) -> Result<StopReason, RpcError> {
        let cancel = CancellationToken::new();
        {
            let mut running = lock(&self.running);
            if running.is_some() {
                return Err(RpcError::new(
                    crate::rpc::INVALID_REQUEST,
                    "a prompt is already running in this session; cancel it first",
                ));
            }
            *running = Some(cancel.clone());
        }
        let result = self.run_prompt(shared, blocks, &cancel).await;
        *lock(&self.running) = None;
        result
    }

    async fn run_prompt(
        &self,
        shared: &Rc<Shared>,
        blocks: &[ContentBlock],
        cancel: &CancellationToken,
    ) -> Result<StopReason, RpcError> {
        let mut setup = self.setup.lock().await;
        let untrusted = lock(&self.untrusted).take();
        if let Some(project) = untrusted {
            // What the REPL's question lists (every hook, server and widening setting, and
            // what changed since it was trusted), without colours.
            let listing = crate::ui::trust::describe(
                &project,
                &setup.paths,
                crate::ui::style::Style::plain(),
            );
            let description = format!(
                "{} has project config (.ling/) that Ling uses only in a folder you trust.\n\n{}\n\
                 Trust it only if you trust whoever wrote it: its hooks and MCP servers run as you.",
                self.root.display(),
                listing.as_str().trim_end()
            );
            let trusted = ask_trust(&shared.peer, &self.id, &self.sink, &description, cancel).await;
            if cancel.is_cancelled() {
                // No answer: the next prompt asks again.
                *lock(&self.untrusted) = Some(project);
                return Ok(StopReason::Cancelled);
            }
            if trusted {
                self.set_up_trusted(shared, &mut setup, project).await?;
            }
        }
        if cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        let first = !std::mem::replace(&mut lock(&self.state).started, true);
        if first {
            // Like `-p`, the first prompt waits for the MCP servers (each within its startup
            // timeout), so the model sees every tool it could have.
            tokio::select! {
                () = setup.mcp.wait_ready() => {}
                () = cancel.cancelled() => return Ok(StopReason::Cancelled),
            }
            let source = if setup.resumed { "resume" } else { "startup" };
            if let Some(reason) = setup.agent.fire_session_start(source, &*self.sink).await {
                self.say(&format!(
                    "A SessionStart hook stopped the session: {reason}"
                ));
                return Ok(StopReason::Refusal);
            }
        }
        let pending = lock(&self.state).pending_model.take();
        if let Some(model) = pending {
            setup.agent.set_model(model.clone());
            lock(&self.state).model = model;
        }
        let text = prompt::prompt_text(blocks, &self.root);
        let approver = ClientApprover {
            peer: &shared.peer,
            session_id: &self.id,
            sink: &self.sink,
            cancel,
        };
        let run = setup.agent.run(&text, &*self.sink, &approver, cancel).await;
        let usage = setup.agent.context_usage().await;
        self.sink.usage(usage.used, usage.window);
        let end = match run {
            Ok(run) => run.end,
            Err(_) if cancel.is_cancelled() => RunEnd::Interrupted,
            Err(e) => return Err(failed(crate::redact::scrub(&e.to_string()))),
        };
        Ok(match end {
            RunEnd::Completed | RunEnd::Declined => StopReason::EndTurn,
            RunEnd::MaxTurns => StopReason::MaxTurnRequests,
            RunEnd::Interrupted => StopReason::Cancelled,
            RunEnd::Stopped(reason) => {
                self.say(&format!("Stopped by a hook: {reason}"));
                StopReason::EndTurn
            }
            RunEnd::PromptBlocked(reason) => {
                self.say(&format!("A hook blocked the prompt: {reason}"));
                StopReason::Refusal
            }
        })
    }

    /// Ling's own words in the answer (why a turn stopped).
    fn say(&self, text: &str) {
        self.sink
            .send(SessionUpdate::AgentMessageChunk(chunk(&format!(
                "\n\n{text}"
            ))));
    }

    /// The user trusted the project: it is recorded, and the run is set up again with the
    /// project's config under the same session id (and transcript, when there is one).
    async fn set_up_trusted(
        &self,
        shared: &Rc<Shared>,
        setup: &mut Setup,
        mut project: ProjectConfig,
    ) -> Result<(), RpcError> {
        project.trust().map_err(failed)?;
        setup.shutdown().await;
        let recorded = setup.agent.session().transcript_path.is_file();
        let mut options = self.options.clone();
        options.resume = if recorded {
            Resume::Id(self.id.clone())
        } else {
            Resume::New
        };
        let mut fresh = prepare(shared, &options, Paths::new(self.root.clone()), project).await?;
        if !recorded {
            let model = fresh.agent.model().to_string();
            let session = Session::with_id(
                &fresh.paths.sessions_dir(),
                &self.root,
                &model,
                self.id.clone(),
            );
            fresh.agent.clear(session);
        }
        install(shared, &self.id, &self.sink, &mut fresh);
        *lock(&self.mode) = fresh.agent.mode_handle();
        lock(&self.state).model = fresh.agent.model().to_string();
        let mode = fresh.agent.permission_mode();
        for warning in &fresh.warnings {
            self.sink.notice(NoticeSeverity::Warning, warning, None);
        }
        *setup = fresh;
        self.sink
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                mode.as_str(),
            )));
        self.config_changed();
        Ok(())
    }

    /// Ends the session: SessionEnd hooks (when it started), its MCP servers, its files.
    pub(super) async fn close(&self) {
        let setup = self.setup.lock().await;
        if lock(&self.state).started {
            setup.agent.end_session("other", &*self.sink).await;
        }
        setup.shutdown().await;
        if let Some(file) = &self.mcp_file {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Plugs the editor into a freshly set-up run: its files, terminals and MCP questions.
fn install(shared: &Rc<Shared>, id: &str, sink: &Arc<UpdateSink>, setup: &mut Setup) {
    let client = shared.client();
    let timeout = shared.options.client_timeout;
    if client.fs.read_text_file || client.fs.write_text_file {
        setup.agent.set_file_access(
            ClientFiles {
                peer: shared.peer.clone(),
                session_id: id.to_string(),
                read: client.fs.read_text_file,
                write: client.fs.write_text_file,
                timeout,
            }
            .shared(),
        );
    }
    if client.terminal {
        setup.agent.set_shell_host(Some(Arc::new(ClientTerminals {
            peer: shared.peer.clone(),
            session_id: id.to_string(),
            sink: sink.clone(),
            home: setup.paths.home.clone(),
            timeout,
        })));
    }
    setup.mcp_host.set_asker(Arc::new(SessionAsker {
        peer: shared.peer.clone(),
        session_id: id.to_string(),
        sink: sink.clone(),
    }));
}

async fn prepare(
    shared: &Rc<Shared>,
    options: &RunOptions,
    paths: Paths,
    project: ProjectConfig,
) -> Result<Setup, RpcError> {
    let warn = shared.warn.clone();
    Setup::prepare(options, paths, project, true, &move |w: &str| warn(w))
        .await
        .map_err(failed)
}
