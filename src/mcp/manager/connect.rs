//! One server's connection, as the manager keeps it: started (spawn or connect, `initialize`,
//! `tools/list`, all within the startup timeout; an HTTP server with its OAuth state), its
//! state and tools recorded, every connected server's tools named together for the model, and a
//! close noticed.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::login::needs_login;
use super::{Catalog, McpManager, McpToolInfo, ServerState, Slot};
use crate::mcp::auth::Login;
use crate::mcp::client::{ClientOptions, McpClient};
use crate::mcp::error::McpError;
use crate::mcp::naming::{assign_names, normalize_schema, server_prefixes};
use crate::mcp::transport;
use crate::mcp::types::ToolDef;

impl McpManager {
    pub(super) async fn run_start(self: Arc<Self>, slot: Arc<Slot>, generation: u64) {
        let outcome = self
            .connect(&slot)
            .await
            .map_err(|reason| (slot.log.scrub(&reason), reason));
        let mut stale = None;
        // Held until this server's tools are in the catalog: whoever sees it connected and
        // then asks for the tools (`/mcp`, then `/tools`; a turn's start) waits for them.
        let mut catalog = self.catalog.write().ok();
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
            drop(catalog);
            client.close().await;
            return;
        }
        match catalog.as_deref_mut() {
            Some(catalog) => *catalog = self.current_catalog(),
            None => self.rebuild_catalog(),
        }
        drop(catalog);
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
        let auth = self.oauth_for(slot).map_err(|e| e.to_string())?;
        if let Ok(mut current) = slot.auth.lock() {
            current.clone_from(&auth);
        }
        let connect = transport::connect(
            config,
            slot.log.clone(),
            &self.options.child_env,
            auth,
            self.options.program.as_ref(),
        );
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
    pub(super) fn rebuild_catalog(&self) {
        let catalog = self.current_catalog();
        if let Ok(mut current) = self.catalog.write() {
            *current = catalog;
        }
    }

    /// The catalog of the servers connected now (each slot's lock taken in turn, none held at
    /// the end).
    fn current_catalog(&self) -> Catalog {
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
        Catalog { tools, by_name }
    }

    pub(super) fn publish(&self) {
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
