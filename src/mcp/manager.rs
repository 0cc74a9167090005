//! The MCP manager: starts every configured server concurrently (each within its own startup
//! timeout), keeps one failure from touching the others, reports each server's status (with a
//! subscription so the REPL can show servers joining), offers the tools of the connected ones
//! under their model-facing names, routes calls back to the right server, and re-lists tools
//! after `notifications/tools/list_changed`. Servers change while it runs: one is disabled or
//! enabled ([`McpManager::set_enabled`]), or a new set of configs replaces the old
//! ([`McpManager::apply`]: only the servers whose config changed restart).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::auth::{Login, OAuth};
use super::client::{ClientOptions, McpClient, Shutdown};
use super::error::McpError;
use super::handler::ClientHandler;
use super::log::ServerLog;
use super::modern::Era;
use super::naming::{assign_names, normalize_schema, server_prefixes};
use super::redact::Redactor;
use super::render::{DEFAULT_OUTPUT_CAP, RenderedResult, render};
use super::transport;
use super::types::{ProgressCallback, ServerInfo, ToolDef};
use crate::config::Paths;
use crate::config::mcp::ServerConfig;
use crate::process::ChildEnv;

#[path = "manager_auth.rs"]
mod auth;
use auth::needs_login;

/// How long [`McpManager::shutdown`] waits for all servers together.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(8);

/// What the manager needs besides the server configs.
#[derive(Clone)]
pub struct ManagerOptions {
    /// Logs go to `paths.logs_dir()`, oversized results to `paths.home/tool-output`.
    pub paths: Paths,
    /// What `roots/list` answers; the project root by default.
    pub roots: Vec<PathBuf>,
    pub handler: Option<Arc<dyn ClientHandler>>,
    /// The cap on one rendered result, in characters.
    pub output_cap: usize,
    /// The timeout of requests other than `tools/call`.
    pub request_timeout: Duration,
    /// What stdio servers start with (no API key variable unless their `env` passes it; tied
    /// to Ling's life).
    pub child_env: ChildEnv,
}

impl ManagerOptions {
    pub fn new(paths: Paths) -> Self {
        Self {
            roots: vec![paths.project_root.clone()],
            paths,
            handler: None,
            output_cap: DEFAULT_OUTPUT_CAP,
            request_timeout: Duration::from_secs(60),
            child_env: ChildEnv::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Connected,
    /// Why, with the last lines of its stderr when it had any.
    Failed(String),
    /// An HTTP server that wants an OAuth login first; says the command to run.
    NeedsAuth(String),
    Disabled,
}

impl ServerState {
    /// The `status` of the json outputs and its `error`: a server still starting when the run
    /// needed it counts as failed.
    pub fn report(&self) -> (&'static str, Option<&str>) {
        match self {
            Self::Connected => ("connected", None),
            Self::Disabled => ("disabled", None),
            Self::Failed(why) => ("failed", Some(why)),
            Self::NeedsAuth(how) => ("needs-auth", Some(how)),
            Self::Starting => ("failed", Some("still starting")),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: &'static str,
    pub state: ServerState,
    /// Tools offered to the model (after filters).
    pub tools: usize,
    pub server_info: Option<ServerInfo>,
}

/// One tool as the model sees it, and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// `mcp__<server>__<tool>`, sanitised and unique.
    pub exposed_name: String,
    pub server: String,
    pub original_name: String,
    /// Prefixed `[MCP:<server>] `.
    pub description: String,
    /// Normalised for OpenAI-compatible APIs.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
    pub annotations: Option<Value>,
}

pub struct McpManager {
    options: ManagerOptions,
    /// One per configured server, in config order.
    slots: RwLock<Vec<Arc<Slot>>>,
    catalog: RwLock<Catalog>,
    status: watch::Sender<Vec<ServerStatus>>,
}

/// What [`McpManager::apply`] changed, by server name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Servers whose config changed: restarted with the new one.
    pub changed: Vec<String>,
}

impl Applied {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

struct Slot {
    config: ServerConfig,
    log: Arc<ServerLog>,
    state: Mutex<SlotState>,
    /// How a 401 of this server may be answered; `Never` but during `login`.
    login: Mutex<Login>,
    /// The OAuth state of the current connection (HTTP servers).
    auth: Mutex<Option<Arc<OAuth>>>,
}

struct SlotState {
    state: ServerState,
    client: Option<McpClient>,
    tools: Vec<ToolDef>,
    info: Option<ServerInfo>,
    /// Bumped by every (re)start and shutdown, so a stale start or close report is ignored.
    generation: u64,
    /// The server's era once a connection found it: a reconnect skips the probe.
    era: Option<Era>,
}

#[derive(Default)]
struct Catalog {
    tools: Vec<McpToolInfo>,
    by_name: HashMap<String, usize>,
}

impl McpManager {
    /// Starts every enabled server in the background and returns at once.
    pub fn start(configs: Vec<ServerConfig>, options: ManagerOptions) -> Arc<Self> {
        let logs = options.paths.logs_dir();
        let slots: Vec<Arc<Slot>> = configs
            .into_iter()
            .map(|config| Arc::new(Slot::new(config, &logs)))
            .collect();
        let (status, _) = watch::channel(Vec::new());
        let manager = Arc::new(Self {
            options,
            slots: RwLock::new(slots),
            catalog: RwLock::default(),
            status,
        });
        manager.publish();
        for slot in manager.slots() {
            if !slot.config.disabled {
                tokio::spawn(manager.clone().run_start(slot, 0));
            }
        }
        manager
    }

    /// The slots as they are now.
    fn slots(&self) -> Vec<Arc<Slot>> {
        self.slots.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// Stops a server (its tools leave the catalog) or starts it again (`/mcp disable`,
    /// `/mcp enable`); an enable waits until it is connected or failed.
    pub async fn set_enabled(
        self: &Arc<Self>,
        server: &str,
        enabled: bool,
    ) -> Result<(), McpError> {
        let slot = self.slot(server)?;
        if !enabled {
            let old = {
                let mut state = lock_state(&slot);
                state.generation += 1;
                state.state = ServerState::Disabled;
                state.tools.clear();
                state.client.take()
            };
            self.rebuild_catalog();
            self.publish();
            if let Some(old) = old {
                old.close().await;
            }
            return Ok(());
        }
        let generation = {
            let mut state = lock_state(&slot);
            if matches!(state.state, ServerState::Connected | ServerState::Starting) {
                return Ok(());
            }
            state.generation += 1;
            state.state = ServerState::Starting;
            state.generation
        };
        self.publish();
        self.clone().run_start(slot.clone(), generation).await;
        match status_of(&slot).state {
            ServerState::Failed(reason) | ServerState::NeedsAuth(reason) => {
                Err(McpError::NotConnected {
                    server: server.into(),
                    reason,
                })
            }
            _ => Ok(()),
        }
    }

    /// Replaces the servers with `configs` (the MCP config files changed): a server no longer
    /// configured is shut down, a new one started, one whose config changed restarted with
    /// it; the others go on untouched. Returns at once; new servers start in the background.
    pub async fn apply(self: &Arc<Self>, configs: Vec<ServerConfig>) -> Applied {
        let logs = self.options.paths.logs_dir();
        let old = self.slots();
        let mut applied = Applied::default();
        let mut closing = Vec::new();
        let mut starting = Vec::new();
        let mut slots = Vec::with_capacity(configs.len());
        for config in configs {
            match old.iter().find(|s| s.config.name == config.name) {
                Some(slot) if slot.config == config => slots.push(slot.clone()),
                found => {
                    if let Some(slot) = found {
                        applied.changed.push(config.name.clone());
                        closing.push(slot.clone());
                    } else {
                        applied.added.push(config.name.clone());
                    }
                    let slot = Arc::new(Slot::new(config, &logs));
                    if !slot.config.disabled {
                        starting.push(slot.clone());
                    }
                    slots.push(slot);
                }
            }
        }
        for slot in &old {
            if !slots.iter().any(|s| s.config.name == slot.config.name) {
                applied.removed.push(slot.config.name.clone());
                closing.push(slot.clone());
            }
        }
        if let Ok(mut current) = self.slots.write() {
            *current = slots;
        }
        self.rebuild_catalog();
        self.publish();
        let clients: Vec<McpClient> = closing
            .iter()
            .filter_map(|slot| {
                let mut state = lock_state(slot);
                state.generation += 1;
                state.client.take()
            })
            .collect();
        let closed = futures::future::join_all(clients.iter().map(McpClient::close));
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, closed).await;
        for slot in starting {
            tokio::spawn(self.clone().run_start(slot, 0));
        }
        applied
    }

    /// Waits until no server is starting any more.
    pub async fn wait_ready(&self) {
        let mut rx = self.status.subscribe();
        let _ = rx
            .wait_for(|all| all.iter().all(|s| s.state != ServerState::Starting))
            .await;
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.slots().iter().map(|s| status_of(s)).collect()
    }

    /// Every status change (a server connecting, failing, its tools changing).
    pub fn subscribe(&self) -> watch::Receiver<Vec<ServerStatus>> {
        self.status.subscribe()
    }

    /// The tools of every connected server, as offered to the model.
    pub fn tools(&self) -> Vec<McpToolInfo> {
        self.catalog
            .read()
            .map(|c| c.tools.clone())
            .unwrap_or_default()
    }

    pub fn configs(&self) -> Vec<ServerConfig> {
        self.slots().iter().map(|s| s.config.clone()).collect()
    }

    /// The connected client of one server (for resources and prompts).
    pub fn client(&self, server: &str) -> Option<McpClient> {
        let slot = self.slot(server).ok()?;
        slot.state.lock().ok()?.client.clone()
    }

    /// The path of a server's log file.
    pub fn log_path(&self, server: &str) -> Option<PathBuf> {
        let slot = self.slot(server).ok()?;
        Some(slot.log.path().to_path_buf())
    }

    /// Re-lists the tools of servers that sent `notifications/tools/list_changed`. Cheap when
    /// none did. Returns whether the offered tools changed.
    pub async fn refresh_if_changed(&self) -> bool {
        let changed: Vec<(Arc<Slot>, McpClient)> = self
            .slots()
            .into_iter()
            .filter_map(|slot| {
                let client = slot.state.lock().ok()?.client.clone()?;
                client.take_tools_changed().then_some((slot, client))
            })
            .collect();
        if changed.is_empty() {
            return false;
        }
        let lists = futures::future::join_all(changed.iter().map(|(_, c)| c.list_tools())).await;
        for ((slot, _), list) in changed.iter().zip(lists) {
            match list {
                Ok(tools) => {
                    if let Ok(mut state) = slot.state.lock() {
                        state.tools = tools;
                    }
                }
                Err(e) => slot
                    .log
                    .line("ling", &format!("re-listing tools failed: {e}")),
            }
        }
        self.rebuild_catalog();
        self.publish();
        true
    }

    /// Calls a tool by its exposed name, within its server's tool timeout, and renders the
    /// result for the model.
    pub async fn call_tool(
        &self,
        exposed_name: &str,
        arguments: Value,
        cancel: &CancellationToken,
        progress: Option<ProgressCallback>,
    ) -> Result<RenderedResult, McpError> {
        let (server, original) = {
            let catalog = self
                .catalog
                .read()
                .map_err(|_| McpError::UnknownTool(exposed_name.into()))?;
            let tool = catalog
                .by_name
                .get(exposed_name)
                .map(|&i| &catalog.tools[i])
                .ok_or_else(|| McpError::UnknownTool(exposed_name.into()))?;
            (tool.server.clone(), tool.original_name.clone())
        };
        self.call_server_tool(&server, &original, arguments, cancel, progress)
            .await
    }

    /// Calls a tool by its server and original name (`ling mcp call`).
    pub async fn call_server_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        cancel: &CancellationToken,
        progress: Option<ProgressCallback>,
    ) -> Result<RenderedResult, McpError> {
        let slot = self.slot(server)?;
        let client = {
            let state = slot
                .state
                .lock()
                .map_err(|_| McpError::UnknownServer(server.into()))?;
            match (&state.client, &state.state) {
                (Some(client), _) => client.clone(),
                (None, state) => {
                    return Err(McpError::NotConnected {
                        server: server.into(),
                        reason: match state {
                            ServerState::Failed(why) | ServerState::NeedsAuth(why) => why.clone(),
                            ServerState::Disabled => "it is disabled in its config".into(),
                            _ => "it is still starting".into(),
                        },
                    });
                }
            }
        };
        let result = client
            .call_tool(tool, arguments, cancel, progress, slot.config.tool_timeout)
            .await;
        if result.is_err()
            && let Some(how) = needs_login(&slot)
        {
            // The token was refused mid-session and cannot be renewed without the user.
            if let Ok(mut state) = slot.state.lock() {
                state.state = ServerState::NeedsAuth(how.clone());
            }
            self.publish();
            return Err(McpError::NotConnected {
                server: server.into(),
                reason: how,
            });
        }
        let result = result?;
        let spill = self.options.paths.home.join("tool-output");
        Ok(render(&result, self.options.output_cap, &spill))
    }

    /// Restarts one server and waits until it is connected or failed.
    pub async fn reconnect(self: &Arc<Self>, server: &str) -> Result<(), McpError> {
        let slot = self.slot(server)?;
        let (old, generation) = {
            let mut state = slot
                .state
                .lock()
                .map_err(|_| McpError::UnknownServer(server.into()))?;
            state.generation += 1;
            state.state = ServerState::Starting;
            state.tools.clear();
            (state.client.take(), state.generation)
        };
        self.rebuild_catalog();
        self.publish();
        if let Some(old) = old {
            old.close().await;
        }
        self.clone().run_start(slot.clone(), generation).await;
        match status_of(&slot).state {
            ServerState::Connected => Ok(()),
            ServerState::Failed(reason) | ServerState::NeedsAuth(reason) => {
                Err(McpError::NotConnected {
                    server: server.into(),
                    reason,
                })
            }
            _ => Ok(()),
        }
    }

    /// Closes every server (stdio: stdin, SIGTERM, SIGKILL), all at once, bounded in time.
    pub async fn shutdown(&self) {
        self.shutdown_as(Shutdown::Graceful).await;
    }

    /// Closes every server as `how` says: [`Shutdown::Prompt`] once a run is over and its
    /// answer written, where nobody should wait for a server's polite exit.
    pub async fn shutdown_as(&self, how: Shutdown) {
        let clients: Vec<McpClient> = self
            .slots()
            .iter()
            .filter_map(|slot| {
                let mut state = slot.state.lock().ok()?;
                state.generation += 1;
                state.client.take()
            })
            .collect();
        let closing = futures::future::join_all(clients.iter().map(|c| c.close_as(how)));
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, closing).await;
    }

    fn slot(&self, server: &str) -> Result<Arc<Slot>, McpError> {
        self.slots()
            .into_iter()
            .find(|s| s.config.name == server)
            .ok_or_else(|| McpError::UnknownServer(server.into()))
    }

    async fn run_start(self: Arc<Self>, slot: Arc<Slot>, generation: u64) {
        let outcome = self
            .connect(&slot)
            .await
            .map_err(|reason| (slot.log.scrub(&reason), reason));
        let mut stale = None;
        if let Ok(mut state) = slot.state.lock() {
            if state.generation != generation {
                stale = outcome.ok().map(|(client, _)| client);
            } else {
                match outcome {
                    Ok((client, tools)) => {
                        state.state = ServerState::Connected;
                        state.era = Some(client.era());
                        state.info = client.server_info().cloned();
                        state.tools = tools;
                        state.client = Some(client.clone());
                        tokio::spawn(watch_close(
                            Arc::downgrade(&self),
                            slot.clone(),
                            generation,
                            client,
                        ));
                    }
                    Err((shown, reason)) => {
                        slot.log.line("ling", &format!("failed: {reason}"));
                        // Shown on stderr, in `json` and by `/mcp`: never with the secrets of
                        // the config (`${VAR}` values, URL userinfo and query values).
                        state.state = match needs_login(&slot) {
                            Some(how) => ServerState::NeedsAuth(how),
                            None => ServerState::Failed(shown),
                        };
                    }
                }
            }
        }
        if let Some(client) = stale {
            client.close().await;
            return;
        }
        self.rebuild_catalog();
        self.publish();
    }

    /// Spawn, `initialize` and `tools/list`, all within the server's startup timeout.
    async fn connect(&self, slot: &Slot) -> Result<(McpClient, Vec<ToolDef>), String> {
        let config = &slot.config;
        if let Some(error) = &config.expand_error {
            return Err(error.clone());
        }
        // A login waits for the user in the browser, on top of the server's own start.
        let login_wait = match slot.login.lock().map(|l| l.clone()) {
            Ok(Login::Browser { timeout, .. }) => timeout,
            _ => Duration::ZERO,
        };
        let limit = config.startup_timeout + login_wait;
        let deadline = Instant::now() + limit;
        let too_slow = || {
            slot.log.with_tail(&format!(
                "did not start within {}s (startupTimeoutMs)",
                limit.as_secs_f64()
            ))
        };
        let auth = self.oauth_for(slot)?;
        if let Ok(mut current) = slot.auth.lock() {
            current.clone_from(&auth);
        }
        let connect = transport::connect(config, slot.log.clone(), &self.options.child_env, auth);
        let connection = match tokio::time::timeout_at(deadline, connect).await {
            Err(_) => return Err(too_slow()),
            Ok(Err(e)) => return Err(slot.log.with_tail(&e.to_string())),
            Ok(Ok(connection)) => connection,
        };
        let mut options = ClientOptions::new(config.name.clone(), slot.log.clone());
        options.roots = self.options.roots.clone();
        options.handler = self.options.handler.clone();
        options.request_timeout = self.options.request_timeout + login_wait;
        options.era = slot.state.lock().ok().and_then(|s| s.era.clone());
        let client = McpClient::new(connection, options);
        let handshake = async {
            client.initialize().await?;
            client.list_tools().await
        };
        let failure = match tokio::time::timeout_at(deadline, handshake).await {
            Ok(Ok(tools)) => return Ok((client, tools)),
            Err(_) => too_slow(),
            // A closed connection's reason already carries the stderr tail.
            Ok(Err(e @ McpError::Closed { .. })) => e.to_string(),
            Ok(Err(e)) => slot.log.with_tail(&e.to_string()),
        };
        tokio::spawn(async move { client.close().await });
        Err(failure)
    }

    /// Names are computed over the connected servers in config order, each server under its
    /// config-derived prefix, so a server's tool names stay put as others connect or drop out.
    fn rebuild_catalog(&self) {
        let slots = self.slots();
        let prefixes = server_prefixes(slots.iter().map(|s| s.config.name.as_str()));
        let mut offered: Vec<(usize, ToolDef)> = Vec::new();
        for (index, slot) in slots.iter().enumerate() {
            let Ok(state) = slot.state.lock() else {
                continue;
            };
            if state.state != ServerState::Connected {
                continue;
            }
            offered.extend(
                state
                    .tools
                    .iter()
                    .filter(|t| !t.requires_task() && slot.config.allows_tool(&t.name))
                    .map(|t| (index, t.clone())),
            );
        }
        let names = assign_names(
            offered
                .iter()
                .map(|(i, t)| (prefixes[*i].as_str(), t.name.as_str())),
        );
        let tools: Vec<McpToolInfo> = offered
            .into_iter()
            .zip(names)
            .map(|((index, tool), exposed_name)| {
                let server = &slots[index].config.name;
                let description = tool
                    .description
                    .as_deref()
                    .or(tool.title.as_deref())
                    .unwrap_or_default();
                McpToolInfo {
                    exposed_name,
                    server: server.clone(),
                    original_name: tool.name.clone(),
                    description: format!("[MCP:{server}] {description}"),
                    input_schema: normalize_schema(&tool.input_schema),
                    read_only: tool.read_only(),
                    annotations: tool.annotations.clone(),
                }
            })
            .collect();
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.exposed_name.clone(), i))
            .collect();
        if let Ok(mut catalog) = self.catalog.write() {
            *catalog = Catalog { tools, by_name };
        }
    }

    fn publish(&self) {
        self.status.send_replace(self.statuses());
    }

    fn on_closed(&self, slot: &Slot, generation: u64, reason: String) {
        let shown = slot.log.scrub(&reason);
        if let Ok(mut state) = slot.state.lock() {
            if state.generation != generation {
                return;
            }
            slot.log.line("ling", &format!("disconnected: {reason}"));
            state.state = ServerState::Failed(shown);
            state.client = None;
            state.tools.clear();
        }
        self.rebuild_catalog();
        self.publish();
    }
}

async fn watch_close(
    manager: Weak<McpManager>,
    slot: Arc<Slot>,
    generation: u64,
    client: McpClient,
) {
    let reason = client.closed().await;
    drop(client);
    if let Some(manager) = manager.upgrade() {
        manager.on_closed(&slot, generation, reason);
    }
}

fn lock_state(slot: &Slot) -> std::sync::MutexGuard<'_, SlotState> {
    slot.state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Slot {
    fn new(config: ServerConfig, logs: &std::path::Path) -> Self {
        let state = if config.disabled {
            ServerState::Disabled
        } else {
            ServerState::Starting
        };
        Self {
            log: Arc::new(ServerLog::open(
                logs,
                &config.name,
                Redactor::for_config(&config),
            )),
            config,
            login: Mutex::new(Login::Never),
            auth: Mutex::new(None),
            state: Mutex::new(SlotState {
                state,
                client: None,
                tools: Vec::new(),
                info: None,
                generation: 0,
                era: None,
            }),
        }
    }
}

fn status_of(slot: &Slot) -> ServerStatus {
    let (state, tools, info) = match slot.state.lock() {
        Ok(s) => (
            s.state.clone(),
            s.tools
                .iter()
                .filter(|t| !t.requires_task() && slot.config.allows_tool(&t.name))
                .count(),
            s.info.clone(),
        ),
        Err(_) => (ServerState::Failed("internal error".into()), 0, None),
    };
    ServerStatus {
        name: slot.config.name.clone(),
        transport: slot.config.transport.kind(),
        state,
        tools,
        server_info: info,
    }
}
