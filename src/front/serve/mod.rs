//! `ling mcp serve`: Ling as an MCP server on stdin and stdout, for other agents (Claude Code,
//! Codex, any MCP host). It offers Ling's builtin tools, each call going through the agent's one
//! dispatch point with the same permission mode, rules, hooks, sandbox and trust as a `-p` run of
//! the project; with `--agent`, the whole agent as one `ling` tool instead (`call.rs`). Both
//! revisions are spoken: 2025-11-25 (and older) after an `initialize` handshake, and the
//! stateless 2026-07-28 one, where `server/discover` replaces the handshake and every request
//! names its version and the client's capabilities in `_meta`. Long calls report progress
//! (`notifications/progress`, when the request has a `progressToken`) and stop on
//! `notifications/cancelled`. A question the permission mode asks goes to the user through the
//! client's form elicitation when it offers one; otherwise it is a denial that names the flag
//! that would allow the call, as in `-p`.

mod call;
mod tools;
mod wire;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::Paths;
use crate::mcp::modern::{
    LEGACY_RESOURCE_NOT_FOUND, MODERN_PROTOCOL_VERSION, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::rpc::{Incoming, Peer, RequestId, RpcError};
use crate::session::{Host, RunOptions, SetupError, Start};
use crate::trust::ProjectConfig;

pub use tools::AGENT_TOOL;

/// The versions the `initialize` handshake accepts (the first is offered when the client's
/// is none of them).
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// How long a modern client may cache `tools/list`: the tools never change while Ling runs.
const TOOLS_TTL_MS: u64 = 3_600_000;

/// What `ling mcp serve` was started with.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The project root (`-C`, else the current directory).
    pub root: std::path::PathBuf,
    /// The run's flags (mode, sandbox, rules, model...), as `ling -p` takes them.
    pub run: RunOptions,
    /// `--agent`: offer the whole agent as the `ling` tool instead of the builtin tools.
    pub agent: bool,
}

/// How the client speaks, as far as this connection knows.
#[derive(Debug, Clone, Default)]
struct Client {
    /// The version `initialize` agreed on (legacy).
    legacy: Option<String>,
    /// The client offers form elicitation, so questions can be asked (legacy only: the
    /// 2026-07-28 revision has no server-to-client requests).
    elicitation: bool,
}

/// What every request handler shares.
pub(crate) struct Server {
    pub peer: Peer,
    pub options: ServeOptions,
    /// The session of the builtin tools (unused with `--agent`, whose sessions are per call).
    pub host: Host,
    client: RefCell<Client>,
    /// The cancel of each call in flight, by request id.
    calls: RefCell<HashMap<String, CancellationToken>>,
    pub sessions: call::AgentSessions,
    pub instructions: String,
}

/// Why `ling mcp serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Trust(#[from] crate::trust::TrustError),
}

/// Serves MCP on stdin and stdout until the client closes stdin or `shutdown` fires.
pub async fn run(
    options: ServeOptions,
    shutdown: CancellationToken,
    warn: &dyn Fn(&str),
) -> Result<(), ServeError> {
    let (stdin, stdout) = crate::rpc::stdio();
    tokio::task::LocalSet::new()
        .run_until(serve(options, stdin, stdout, shutdown, warn))
        .await
}

/// Sets up the run of the builtin tools, as `ling -p` would set it up in the project.
pub async fn prepare(
    options: &ServeOptions,
    warn: &dyn Fn(&str),
) -> Result<(Host, String), ServeError> {
    let paths = Paths::new(options.root.clone());
    let project = ProjectConfig::read(&paths)?;
    let mut run = options.run.clone();
    if !options.agent {
        // The tools call no model and need no MCP servers of the project: an endpoint nothing
        // listens on, so a missing API key never stops the server and nothing is sent anywhere.
        run.overrides.base_url = Some("http://127.0.0.1:9/v1".into());
        run.mcp_config.clear();
        run.strict_mcp_config = true;
    }
    let start = Start {
        options: run,
        paths,
        project,
        interactive: false,
    };
    let host = Host::start(start, warn).await?;
    let status = host.status();
    let mut instructions = if options.agent {
        format!(
            "Ling, a coding agent, for the project {}: call `ling` with a task.",
            host.paths().project_root.display()
        )
    } else {
        format!(
            "Ling's file and shell tools for the project {}. Paths are relative to it. Permission \
             mode: {}; bash runs in the {} sandbox.",
            status.project_root.display(),
            status.mode.as_str(),
            host.sandbox().mode.as_str()
        )
    };
    if let Some(notice) = host.trust_notice() {
        instructions.push_str(&format!(" Note: {notice}."));
    }
    Ok((host, instructions))
}

/// [`run`] over any streams (tests drive it in memory).
pub async fn serve(
    options: ServeOptions,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    shutdown: CancellationToken,
    warn: &dyn Fn(&str),
) -> Result<(), ServeError> {
    let (host, instructions) = prepare(&options, warn).await?;
    let mut connection = crate::rpc::connect(input, output);
    let server = Rc::new(Server {
        peer: connection.peer.clone(),
        options,
        host,
        client: RefCell::new(Client::default()),
        calls: RefCell::new(HashMap::new()),
        sessions: call::AgentSessions::default(),
        instructions,
    });
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(incoming) = connection.next(&shutdown).await {
        match incoming {
            Incoming::Request { id, method, params } => {
                let server = server.clone();
                tasks.spawn_local(async move { server.request(id, &method, params).await });
            }
            Incoming::Notification { method, params } => server.notification(&method, &params),
        }
        while tasks.try_join_next().is_some() {}
    }
    for token in server.calls.borrow().values() {
        token.cancel();
    }
    crate::rpc::finish_tasks(&mut tasks, Duration::from_secs(5)).await;
    server.sessions.close_all().await;
    server.host.shutdown().await;
    drop(server);
    connection.close().await;
    Ok(())
}

/// The era of one request: `Some(version)` for a 2026-07-28 request (its `_meta` names it).
fn modern_version(params: &Value) -> Option<&str> {
    params.get("_meta")?.get(META_VERSION)?.as_str()
}

impl Server {
    async fn request(self: Rc<Self>, id: RequestId, method: &str, params: Value) {
        let key = id.to_string();
        let cancel = CancellationToken::new();
        self.calls.borrow_mut().insert(key.clone(), cancel.clone());
        let result = self.answer(method, &params, &id, &cancel).await;
        self.calls.borrow_mut().remove(&key);
        // A cancelled request gets no answer (the client has forgotten it).
        if !cancel.is_cancelled() {
            self.peer.respond(id, result);
        }
    }

    async fn answer(
        &self,
        method: &str,
        params: &Value,
        id: &RequestId,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        if self.era(method, params)?.is_none() {
            return self.legacy(method, params, id, cancel).await;
        }
        match method {
            "server/discover" => {
                let mut meta = serde_json::Map::new();
                meta.insert(
                    META_SERVER_INFO.into(),
                    wire::value(&wire::ServerInfo::ling()),
                );
                Ok(wire::value(&wire::DiscoverResult {
                    supported_versions: [MODERN_PROTOCOL_VERSION],
                    capabilities: wire::Capabilities::tools(),
                    instructions: &self.instructions,
                    meta,
                    result_type: "complete",
                }))
            }
            "tools/list" => Ok(wire::value(&wire::ToolsList {
                tools: self.tool_list(),
                ttl_ms: Some(TOOLS_TTL_MS),
                cache_scope: Some("public"),
                result_type: Some("complete"),
            })),
            "tools/call" => {
                // No server-to-client requests in this revision: nobody can be asked.
                let mut result = call::tools_call(self, params, id, false, cancel).await?;
                result.result_type = Some("complete");
                Ok(wire::value(&result))
            }
            "resources/read" => Err(RpcError::new(
                crate::rpc::INVALID_PARAMS,
                "Ling's server has no resources",
            )),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    /// Which revision a request is in: `Some(version)` for a valid 2026-07-28 request, `None`
    /// for a legacy one (the connection's `initialize`, or after it). A request that claims
    /// the modern revision but lacks what it must carry is refused as that revision says.
    fn era<'a>(&self, method: &str, params: &'a Value) -> Result<Option<&'a str>, RpcError> {
        let meta = params.get("_meta");
        let initialized = self.client.borrow().legacy.is_some();
        let claims_modern = meta
            .is_some_and(|m| m.get(META_VERSION).is_some() || m.get(META_CAPABILITIES).is_some());
        // `server/discover` exists only in the 2026-07-28 revision.
        let legacy_method = method != "server/discover";
        if !claims_modern
            && legacy_method
            && (initialized || method == "initialize" || method == "ping")
        {
            return Ok(None);
        }
        let Some(version) = modern_version(params) else {
            return Err(RpcError::invalid_params(if meta.is_none() {
                "the request has no _meta: send `initialize` first (2025-11-25), or name the \
                 version and the client's capabilities in _meta (2026-07-28)"
            } else {
                "_meta lacks io.modelcontextprotocol/protocolVersion"
            }));
        };
        if version != MODERN_PROTOCOL_VERSION {
            return Err(RpcError::new(
                UNSUPPORTED_PROTOCOL_VERSION,
                format!("protocol version {version} is not supported"),
            )
            .with_data(json!({
                "supported": [MODERN_PROTOCOL_VERSION],
                "requested": version,
            })));
        }
        if meta.and_then(|m| m.get(META_CAPABILITIES)).is_none() {
            return Err(RpcError::invalid_params(
                "_meta lacks io.modelcontextprotocol/clientCapabilities",
            ));
        }
        Ok(Some(version))
    }

    async fn legacy(
        &self,
        method: &str,
        params: &Value,
        id: &RequestId,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let init: wire::InitializeParams =
                    serde_json::from_value(params.clone()).unwrap_or_default();
                let version = LEGACY_VERSIONS
                    .iter()
                    .find(|v| **v == init.protocol_version)
                    .unwrap_or(&LEGACY_VERSIONS[0]);
                *self.client.borrow_mut() = Client {
                    legacy: Some(version.to_string()),
                    elicitation: init.forms(),
                };
                Ok(wire::value(&wire::InitializeResult {
                    protocol_version: version,
                    capabilities: wire::Capabilities::tools(),
                    server_info: wire::ServerInfo::ling(),
                    instructions: &self.instructions,
                }))
            }
            "ping" => Ok(Value::Object(serde_json::Map::new())),
            "tools/list" => Ok(wire::value(&wire::ToolsList {
                tools: self.tool_list(),
                ttl_ms: None,
                cache_scope: None,
                result_type: None,
            })),
            "tools/call" => {
                let ask = self.client.borrow().elicitation;
                let result = call::tools_call(self, params, id, ask, cancel).await?;
                Ok(wire::value(&result))
            }
            "resources/read" | "resources/templates/list" | "prompts/get" => Err(RpcError::new(
                LEGACY_RESOURCE_NOT_FOUND,
                "Ling's server has only tools",
            )),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/cancelled" => {
                let Some(id) = params.get("requestId") else {
                    return;
                };
                let key = match serde_json::from_value::<RequestId>(id.clone()) {
                    Ok(id) => id.to_string(),
                    Err(_) => return,
                };
                if let Some(token) = self.calls.borrow().get(&key) {
                    tracing::info!("mcp serve: request {key} cancelled by the client");
                    token.cancel();
                }
            }
            "notifications/initialized" => {}
            other => tracing::debug!("mcp serve: notification {other} ignored"),
        }
    }

    /// The tools this server offers.
    fn tool_list(&self) -> Vec<wire::ToolDef> {
        if self.options.agent {
            return vec![tools::agent()];
        }
        self.host
            .tools()
            .iter()
            .filter(|tool| tools::served(tool.name()))
            .map(|tool| tools::builtin(tool.as_ref()))
            .collect()
    }
}
