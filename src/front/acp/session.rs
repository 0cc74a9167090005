//! One ACP session: a Ling session for the session's project (a [`Host`], as the REPL's),
//! with the editor's files, terminals and questions plugged in; its prompts, each a run of the
//! agent loop that one `session/cancel` ends; its mode and model. An untrusted project starts
//! without its config, and its first prompt asks the trust question: trusted, the session is
//! set up again with the project's config (same id, same transcript) before the prompt runs.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ConfigOptionUpdate,
    ContentBlock, CurrentModeUpdate, LoadSessionResponse, McpServer, NewSessionResponse,
    NoticeSeverity, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SessionMode, SessionModeState, SessionUpdate,
    SetSessionConfigOptionResponse, StopReason, UnstructuredCommandInput,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asking::ClientApprover;
use super::client_fs::ClientFiles;
use super::permission::{SessionAsker, ask_trust};
use super::terminal::ClientTerminals;
use super::updates::{UpdateSink, chunk};
use super::{Shared, check_recorded, encode, locate, mcp_servers, prompt};
use crate::config::{MODES, PermissionMode};
use crate::rpc::RpcError;
use crate::session::{Command, EndReason, Host, Io, Live, Plugs, Reply, Resume, RunEnd, Start};
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

/// What changes over an ACP session's life besides the session itself.
#[derive(Default)]
struct State {
    /// The first prompt waited for the MCP servers.
    waited: bool,
    /// The models the server lists, for the editor's model choice.
    models: Vec<String>,
    /// What the setup had to say, for the editor once it knows the session.
    notices: Vec<String>,
}

pub(crate) struct AcpSession {
    pub id: String,
    root: PathBuf,
    sink: Arc<UpdateSink>,
    host: tokio::sync::Mutex<Host>,
    /// The session's mode, model and status, also while a prompt runs.
    live: Live,
    /// The running prompt's cancel (the trust question's too).
    running: Mutex<Option<CancellationToken>>,
    state: Mutex<State>,
    /// The project config the trust question is about, while it is still to be asked.
    untrusted: Mutex<Option<ProjectConfig>>,
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
    let modes = MODES
        .iter()
        .map(|m| SessionMode::new(m.mode.as_str(), m.title).description(m.description.to_string()))
        .collect();
    SessionModeState::new(current.as_str(), modes)
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
        let start = Start {
            options,
            paths,
            project,
            interactive: true,
        };
        let warn = shared.warn.clone();
        let mut host = match Host::start(start, &move |w: &str| warn(w)).await {
            Ok(host) => host,
            Err(e) => {
                if let Some(file) = &mcp_file {
                    let _ = std::fs::remove_file(file);
                }
                return Err(failed(e));
            }
        };
        let id = host.session_id().to_string();
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
        notices.extend(host.warnings().iter().cloned());
        notices.extend(host.trust_notice().map(str::to_string));
        host.plug(plugs(shared, &id, &sink, &host));
        let replay = load.as_ref().is_some_and(|(_, replay)| *replay);
        if replay {
            prompt::replay(host.history(), &sink, &root);
        }
        // A resumed session's to-do list is the editor's plan again.
        let todos = host.todos();
        if load.is_some() && !todos.is_empty() {
            sink.send(SessionUpdate::Plan(super::updates::plan(&todos)));
        }
        let mode = host.status().mode;
        let session = Rc::new(Self {
            id: id.clone(),
            root,
            live: host.live(),
            state: Mutex::new(State {
                notices,
                ..State::default()
            }),
            sink,
            running: Mutex::new(None),
            untrusted: Mutex::new(untrusted),
            mcp_file,
            host: tokio::sync::Mutex::new(host),
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
        if let Ok(host) = self.host.try_lock() {
            self.sink.send(SessionUpdate::AvailableCommandsUpdate(
                AvailableCommandsUpdate::new(commands(&host)),
            ));
        }
        let session = self.clone();
        tokio::task::spawn_local(async move {
            let config = session.host.lock().await.llm_config();
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
        let status = self.live.status();
        let mode = status.mode;
        let model = status.next_model().to_string();
        let mut models = lock(&self.state).models.clone();
        if !models.contains(&model) {
            models.insert(0, model.clone());
        }
        let mode_options = PermissionMode::ALL
            .iter()
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
        self.live.set_mode(mode);
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
                // A run in progress keeps its model; the next prompt takes the new one.
                self.live
                    .set_model(&chosen)
                    .await
                    .map_err(|e| RpcError::invalid_params(e.to_string()))?;
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
        let images = prompt::prompt_images(blocks).map_err(RpcError::invalid_params)?;
        let mut host = self.host.lock().await;
        let untrusted = lock(&self.untrusted).take();
        if let Some(project) = untrusted {
            // What the REPL's question lists (every hook, server and widening setting, and
            // what changed since it was trusted), without colours.
            let listing = crate::ui::trust::describe(
                &project,
                host.paths(),
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
                self.restart_trusted(shared, &mut host, project).await?;
            }
        }
        if cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        // Like `-p`, the first prompt waits for the MCP servers (each within its startup
        // timeout), so the model sees every tool it could have.
        if !std::mem::replace(&mut lock(&self.state).waited, true)
            && !host.wait_for_servers(cancel).await
        {
            return Ok(StopReason::Cancelled);
        }
        for (bytes, name) in &images {
            if let Err(e) = host.attach_image_bytes(bytes, name) {
                // The prompt goes with all its pictures or not at all.
                host.drop_attached_images();
                return Err(RpcError::invalid_params(e.to_string()));
            }
        }
        let text = prompt::prompt_text(blocks, &self.root);
        let approver = ClientApprover {
            peer: &shared.peer,
            session_id: &self.id,
            sink: &self.sink,
            cancel,
        };
        let io = Io {
            sink: &*self.sink,
            approver: &approver,
            cancel,
            trust: None,
        };
        let reply = host.submit(Command::Prompt(text), &io).await;
        let usage = host.context_usage().await;
        self.sink.usage(usage.used, usage.window);
        self.config_changed();
        let end = match reply {
            Ok(Reply::Turn {
                result: Ok(run), ..
            }) => run.end,
            Ok(Reply::Turn { result: Err(_), .. }) if cancel.is_cancelled() => RunEnd::Interrupted,
            Ok(Reply::Turn { result: Err(e), .. }) => {
                return Err(failed(crate::redact::scrub(&e.to_string())));
            }
            Ok(Reply::Stopped(reason)) => {
                self.say(&format!(
                    "A SessionStart hook stopped the session: {reason}"
                ));
                return Ok(StopReason::Refusal);
            }
            Ok(_) => RunEnd::Completed,
            Err(e) => return Err(failed(crate::redact::scrub(&e.to_string()))),
        };
        Ok(self.stop_reason(end))
    }

    /// The ACP stop reason of how a turn ended; what ACP has no reason for is said in the
    /// answer.
    fn stop_reason(&self, end: RunEnd) -> StopReason {
        match end {
            RunEnd::Completed | RunEnd::Declined => StopReason::EndTurn,
            RunEnd::MaxTurns => StopReason::MaxTurnRequests,
            // ACP has no reason for a spent budget; the client is told why in the message.
            RunEnd::MaxBudget(reason) => {
                self.say(&reason);
                StopReason::MaxTurnRequests
            }
            RunEnd::Interrupted => StopReason::Cancelled,
            RunEnd::Stopped(reason) => {
                self.say(&format!("Stopped by a hook: {reason}"));
                StopReason::EndTurn
            }
            RunEnd::PromptBlocked(reason) => {
                self.say(&format!("A hook blocked the prompt: {reason}"));
                StopReason::Refusal
            }
        }
    }

    /// Ling's own words in the answer (why a turn stopped).
    fn say(&self, text: &str) {
        self.sink
            .send(SessionUpdate::AgentMessageChunk(chunk(&format!(
                "\n\n{text}"
            ))));
    }

    /// The user trusted the project: the host records it and sets the session up again with
    /// the project's config (same id, same transcript), the editor's plugs with it.
    async fn restart_trusted(
        &self,
        shared: &Rc<Shared>,
        host: &mut Host,
        project: ProjectConfig,
    ) -> Result<(), RpcError> {
        let warn = shared.warn.clone();
        host.restart_trusted(project, &move |w: &str| warn(w))
            .await
            .map_err(failed)?;
        for warning in host.warnings() {
            self.sink.notice(NoticeSeverity::Warning, warning, None);
        }
        self.sink
            .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                host.status().mode.as_str(),
            )));
        self.config_changed();
        Ok(())
    }

    /// Ends the session: SessionEnd hooks (when it started), its MCP servers, its files.
    pub(super) async fn close(&self) {
        let mut host = self.host.lock().await;
        let cancel = CancellationToken::new();
        let io = Io::unattended(&*self.sink, &cancel);
        let _ = host.submit(Command::End(EndReason::Other), &io).await;
        if let Some(file) = &self.mcp_file {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// The slash commands a prompt may start with: `/rewind`, and the project's and the user's
/// custom commands (both run by the session as a prompt).
fn commands(host: &Host) -> Vec<AvailableCommand> {
    let mut commands = vec![
        AvailableCommand::new(
            "rewind",
            "Go back to just before a user message: files and conversation, or one of them",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("N [code|conversation] (N: the message, 1 the first)"),
        )),
    ];
    for command in &host.extensions().commands {
        let mut available = AvailableCommand::new(
            command.name.clone(),
            command.description.lines().next().unwrap_or("").to_string(),
        );
        if let Some(hint) = &command.argument_hint {
            available = available.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint.clone()),
            ));
        }
        commands.push(available);
    }
    commands
}

/// The editor's files, terminals and MCP questions, for the session to use.
fn plugs(shared: &Rc<Shared>, id: &str, sink: &Arc<UpdateSink>, host: &Host) -> Plugs {
    let client = shared.client();
    let timeout = shared.options.client_timeout;
    let files = (client.fs.read_text_file || client.fs.write_text_file).then(|| {
        ClientFiles {
            peer: shared.peer.clone(),
            session_id: id.to_string(),
            read: client.fs.read_text_file,
            write: client.fs.write_text_file,
            timeout,
        }
        .shared()
    });
    let shell = client.terminal.then(|| {
        Arc::new(ClientTerminals {
            peer: shared.peer.clone(),
            session_id: id.to_string(),
            sink: sink.clone(),
            home: host.paths().home.clone(),
            timeout,
        }) as Arc<dyn crate::tools::ShellHost>
    });
    Plugs {
        files,
        shell,
        asker: Some(Arc::new(SessionAsker {
            peer: shared.peer.clone(),
            session_id: id.to_string(),
            sink: sink.clone(),
        })),
    }
}
