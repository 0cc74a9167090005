//! The MCP manager: starts every configured server concurrently (each within its own startup
//! timeout), keeps one failure from touching the others, reports each server's status (with a
//! subscription so the REPL can show servers joining), offers the tools of the connected ones
//! under their model-facing names, routes calls back to the right server, and re-lists tools
//! after `notifications/tools/list_changed`. Servers change while it runs: one is disabled or
//! enabled ([`McpManager::set_enabled`]), or a new set of configs replaces the old
//! ([`McpManager::apply`]: only the servers whose config changed restart). One server's
//! connection and the tool catalog are `connect.rs`, its OAuth login and logout `login.rs`,
//! what the manager reports `status.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::auth::{Login, OAuth};
use super::client::{McpClient, Shutdown};
use super::error::McpError;
use super::handler::ClientHandler;
use super::log::ServerLog;
use super::modern::Era;
use super::redact::Redactor;
use super::render::{DEFAULT_OUTPUT_CAP, RenderedResult, render};
use super::types::{ProgressCallback, ServerInfo, ToolDef};
use crate::config::Paths;
use crate::config::mcp::ServerConfig;
use crate::process::ChildEnv;

mod connect;
mod login;
mod status;

use login::needs_login;
pub use status::{McpToolInfo, ServerState, ServerStatus};

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
    /// The program driving Ling, which in-process (`sdk`) servers are reached through.
    pub program: Option<Arc<dyn crate::program::ProgramChannel>>,
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
            program: None,
        }
    }
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
