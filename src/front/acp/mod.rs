//! `ling acp`: Ling as an agent of the Agent Client Protocol (<https://agentclientprotocol.com>,
//! protocol version 1) on stdin and stdout, for editors (Zed, JetBrains, Neovim, Emacs) and other
//! clients that drive coding agents. One more consumer of the agent's event stream beside the REPL
//! and `-p`: each ACP session is one Ling session (`session::Host`), its events become
//! `session/update`s (`updates.rs`), its approvals `session/request_permission` questions
//! (`permission.rs`), its file tools read and write through the editor's `fs/*` and its `bash`
//! runs in the editor's terminals when the client offers them (`client_fs.rs`, `terminal.rs`).
//! Trust, the sandbox, hooks and compaction are the REPL's; the trust question of an untrusted
//! project is asked as a permission request before its first prompt runs. This file owns the
//! connection: `initialize`, the method table, and shutting every session down at the end.

mod asking;
mod client_fs;
mod mcp_servers;
mod permission;
mod prompt;
mod questions;
mod session;
mod terminal;
mod tool_view;
mod updates;

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, ClientCapabilities, ClientNotification, ClientRequest, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    McpCapabilities, PromptCapabilities, PromptResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionInfo, SessionListCapabilities, SessionResumeCapabilities,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::Paths;
use crate::rpc::{Incoming, Peer, RpcError};
use crate::session::RunOptions;
use session::{AcpSession, Open};

/// What `ling acp` was started with.
#[derive(Debug, Clone)]
pub struct AcpOptions {
    /// What every session's run gets from the command line (model, mode, sandbox, rules,
    /// `--mcp-config` files...), as `ling -p` would.
    pub run: RunOptions,
    /// How long the editor may take to answer one `fs/*` or `terminal/*` request.
    pub client_timeout: Duration,
}

/// Warnings of the sessions' setup (their config files), for the front end to show.
pub type Warn = Rc<dyn Fn(&str)>;

/// What every request handler shares: the connection, the options, what the client can do,
/// and the open sessions.
pub(crate) struct Shared {
    pub peer: Peer,
    pub options: AcpOptions,
    pub client: OnceLock<ClientCapabilities>,
    pub sessions: Mutex<HashMap<String, Rc<AcpSession>>>,
    pub warn: Warn,
}

impl Shared {
    fn client(&self) -> ClientCapabilities {
        self.client.get().cloned().unwrap_or_default()
    }

    fn session(&self, id: &str) -> Result<Rc<AcpSession>, RpcError> {
        self.lock_sessions().get(id).cloned().ok_or_else(|| {
            RpcError::invalid_params(format!(
                "no session {id} is open; open it with session/new or session/load first"
            ))
        })
    }

    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Rc<AcpSession>>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Serves ACP on this process's stdin and stdout until the client closes stdin or `shutdown`
/// fires; then every session ends (prompts cancelled, SessionEnd hooks, MCP servers stopped).
pub async fn run(options: AcpOptions, shutdown: CancellationToken, warn: Warn) {
    let (stdin, stdout) = crate::rpc::stdio();
    serve(options, stdin, stdout, shutdown, warn).await;
}

/// [`run`] over any pair of streams (tests drive it in memory).
pub async fn serve(
    options: AcpOptions,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    shutdown: CancellationToken,
    warn: Warn,
) {
    // The runs' setup is not `Send` (its warning callback is a plain `&dyn Fn`), so the
    // sessions live on this task's thread, each request a task of its own there.
    tokio::task::LocalSet::new()
        .run_until(serve_local(options, input, output, shutdown, warn))
        .await;
}

async fn serve_local(
    options: AcpOptions,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    shutdown: CancellationToken,
    warn: Warn,
) {
    let mut connection = crate::rpc::connect(input, output);
    let shared = Rc::new(Shared {
        peer: connection.peer.clone(),
        options,
        client: OnceLock::new(),
        sessions: Mutex::new(HashMap::new()),
        warn,
    });
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(incoming) = connection.next(&shutdown).await {
        match incoming {
            Incoming::Request { id, method, params } => {
                let shared = shared.clone();
                tasks.spawn_local(async move {
                    let (result, opened) = match handle(&shared, &method, params).await {
                        Ok(Handled::Answer(value)) => (Ok(value), None),
                        Ok(Handled::Opened(session, value)) => (Ok(value), Some(session)),
                        Err(e) => {
                            tracing::info!("acp: {method} failed: {}", e.message);
                            (Err(e), None)
                        }
                    };
                    shared.peer.respond(id, result);
                    if let Some(session) = opened {
                        session.opened();
                    }
                });
            }
            Incoming::Notification { method, params } => notification(&shared, &method, &params),
        }
        // Finished handlers are reaped as we go.
        while tasks.try_join_next().is_some() {}
    }
    tracing::info!("acp: the client is gone; ending the sessions");
    let sessions: Vec<Rc<AcpSession>> = shared.lock_sessions().drain().map(|(_, s)| s).collect();
    for session in &sessions {
        session.cancel();
    }
    // Prompts that were cancelled answer their requests before the sessions end.
    crate::rpc::finish_tasks(&mut tasks, Duration::from_secs(5)).await;
    for session in sessions {
        session.close().await;
    }
    drop(shared);
    connection.close().await;
}

/// What a request handler did.
enum Handled {
    Answer(Value),
    /// It opened this session; more follows once the editor has the answer.
    Opened(Rc<AcpSession>, Value),
}

impl From<Value> for Handled {
    fn from(value: Value) -> Self {
        Self::Answer(value)
    }
}

/// Opens a session and keeps it among the open ones.
async fn open(shared: &Rc<Shared>, open: Open) -> Result<Handled, RpcError> {
    let (session, response) = AcpSession::open(shared, open).await?;
    let replaced = shared
        .lock_sessions()
        .insert(session.id.clone(), session.clone());
    // Loading a session that is open already: the old one ends.
    if let Some(old) = replaced {
        old.cancel();
        old.close().await;
    }
    Ok(Handled::Opened(session, response))
}

/// The answer to one request.
async fn handle(shared: &Rc<Shared>, method: &str, params: Value) -> Result<Handled, RpcError> {
    let request = ClientRequest::from_method_and_params(method, &params).map_err(|e| match e {
        agent_client_protocol_schema::MethodDispatchError::UnknownMethod { .. } => {
            RpcError::method_not_found(method)
        }
        other => RpcError::invalid_params(other.to_string()),
    })?;
    let answer = match request {
        ClientRequest::InitializeRequest(request) => initialize(shared, request)?,
        ClientRequest::AuthenticateRequest(_) => Value::Object(Default::default()),
        ClientRequest::NewSessionRequest(request) => {
            let how = Open::New {
                cwd: request.cwd,
                servers: request.mcp_servers,
            };
            return open(shared, how).await;
        }
        ClientRequest::LoadSessionRequest(r) => {
            let how = Open::load(&r.session_id.0, r.cwd, r.mcp_servers, true);
            return open(shared, how).await;
        }
        ClientRequest::ResumeSessionRequest(r) => {
            let how = Open::load(&r.session_id.0, r.cwd, r.mcp_servers, false);
            return open(shared, how).await;
        }
        ClientRequest::ListSessionsRequest(request) => list(&request)?,
        ClientRequest::CloseSessionRequest(request) => {
            let session = shared.lock_sessions().remove(&*request.session_id.0);
            if let Some(session) = session {
                session.cancel();
                session.close().await;
            }
            Value::Object(Default::default())
        }
        ClientRequest::PromptRequest(request) => {
            let session = shared.session(&request.session_id.0)?;
            let stop = session.prompt(shared, &request.prompt).await?;
            encode(&PromptResponse::new(stop))?
        }
        ClientRequest::SetSessionModeRequest(request) => {
            let session = shared.session(&request.session_id.0)?;
            session.set_mode(&request.mode_id.0)?;
            Value::Object(Default::default())
        }
        ClientRequest::SetSessionConfigOptionRequest(request) => {
            let session = shared.session(&request.session_id.0)?;
            session
                .set_config_option(&request.config_id.0, &request.value)
                .await?
        }
        _ => return Err(RpcError::method_not_found(method)),
    };
    Ok(answer.into())
}

fn notification(shared: &Rc<Shared>, method: &str, params: &Value) {
    match ClientNotification::from_method_and_params(method, params) {
        Ok(ClientNotification::CancelNotification(cancel)) => {
            if let Ok(session) = shared.session(&cancel.session_id.0) {
                session.cancel();
            }
        }
        Ok(_) => {}
        // `$/cancel_request` and extensions: nothing of Ling's waits on them.
        Err(_) => tracing::debug!("acp: notification {method} ignored"),
    }
}

pub(super) fn encode(value: &impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(format!("cannot encode: {e}")))
}

fn initialize(shared: &Shared, request: InitializeRequest) -> Result<Value, RpcError> {
    tracing::info!(
        "acp: initialize from {} (protocol {})",
        request
            .client_info
            .as_ref()
            .map(|i| format!("{} {}", i.name, i.version))
            .unwrap_or_else(|| "an unnamed client".into()),
        serde_json::to_string(&request.protocol_version).unwrap_or_default()
    );
    let _ = shared.client.set(request.client_capabilities);
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().embedded_context(true).image(true))
        .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new()),
        );
    encode(
        &InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(Implementation::new("ling", env!("CARGO_PKG_VERSION")).title("Ling")),
    )
}

/// `session/list`: the sessions recorded for `cwd` (or the current directory), newest first.
fn list(request: &ListSessionsRequest) -> Result<Value, RpcError> {
    let root = match &request.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(|e| RpcError::internal(e.to_string()))?,
    };
    let paths = locate(&root)?;
    let root = paths.project_root.clone();
    let sessions = crate::session::session_list::list(&paths.sessions_dir(), &root)
        .into_iter()
        .map(|s| {
            SessionInfo::new(s.id, root.clone())
                .title(Some(s.first_prompt).filter(|t| !t.is_empty()))
                .updated_at(s.last_activity)
        })
        .collect();
    encode(&ListSessionsResponse::new(sessions))
}

/// Where a session in `cwd` is, as a run started there finds it: the project root is the
/// nearest ancestor holding `.git` (else `.ling` or `.claude`, else `cwd`), the instructions are
/// read from it down to `cwd` ([`crate::session::locate`]).
pub(crate) fn locate(cwd: &std::path::Path) -> Result<Paths, RpcError> {
    if !cwd.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "cwd {} is not absolute; ACP paths are absolute",
            cwd.display()
        )));
    }
    crate::session::locate(Some(&cwd.to_path_buf()), &[])
        .map_err(|e| RpcError::invalid_params(format!("cwd {} is not usable: {e}", cwd.display())))
}

/// Refuses to load or resume session `id` unless it is recorded for the project `cwd` is in:
/// a session of another project would run there with this project's config and trust.
pub(crate) fn check_recorded(
    paths: &Paths,
    id: &str,
    cwd: &std::path::Path,
) -> Result<(), RpcError> {
    let transcript = paths.sessions_dir().join(format!("{id}.jsonl"));
    let known = !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && transcript.is_file();
    if !known {
        return Err(RpcError::invalid_params(format!(
            "no session {id} is recorded in {}",
            paths.sessions_dir().display()
        )));
    }
    match crate::session::session_list::recorded_root(&transcript) {
        Some(recorded) if recorded == paths.project_root => Ok(()),
        Some(recorded) => Err(RpcError::invalid_params(format!(
            "session {id} was recorded for the project {}, not for {} (the project of cwd {}); \
             open it with a cwd inside {}, or start a new session here",
            recorded.display(),
            paths.project_root.display(),
            cwd.display(),
            recorded.display()
        ))),
        None => Err(RpcError::invalid_params(format!(
            "session {id}'s transcript {} has no header naming its project, so it cannot be \
             loaded; start a new session",
            transcript.display()
        ))),
    }
}
