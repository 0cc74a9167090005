//! One MCP client over one [`Connection`]: the era of its server (a 2026-07-28 one found by the
//! `server/discover` probe, in `client/era.rs`, else the `initialize` handshake and version
//! negotiation), requests with a timeout each (`client/request.rs`: a timed-out or cancelled one
//! sends `notifications/cancelled` and its late reply is ignored), progress routing, the server's
//! requests and notifications (`client/incoming.rs`), and the typed calls the host makes
//! (`tools/list` with every page, `tools/call`, resources, prompts).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use super::handler::{ClientHandler, HandlerSupport, client_capabilities};
use super::jsonrpc::{INVALID_PARAMS, Message};
use super::log::ServerLog;
use super::modern::{Era, HeaderPath, LEGACY_RESOURCE_NOT_FOUND};
use super::peer::{Incoming, Pending, ProgressRoutes};
pub use super::transport::Shutdown;
use super::transport::{Connection, Transport};
use super::types::{
    CallToolResult, LATEST_PROTOCOL_VERSION, ProgressCallback, SUPPORTED_PROTOCOL_VERSIONS,
    ServerInfo, ToolDef,
};

mod era;
mod incoming;
mod request;

pub use era::DISCOVER_TIMEOUT;

/// How a client behaves towards its server.
#[derive(Clone)]
pub struct ClientOptions {
    /// The configured server name (used in errors and given to the handler).
    pub server: String,
    /// The roots `roots/list` answers with (the project root).
    pub roots: Vec<PathBuf>,
    pub handler: Option<Arc<dyn ClientHandler>>,
    pub log: Arc<ServerLog>,
    /// The timeout of every request other than `tools/call`.
    pub request_timeout: Duration,
    /// The server's era when it is known from an earlier connection (no probe then).
    pub era: Option<Era>,
    /// How long the `server/discover` probe waits before taking the server for a legacy one.
    pub discover_timeout: Duration,
}

impl ClientOptions {
    pub fn new(server: impl Into<String>, log: Arc<ServerLog>) -> Self {
        Self {
            server: server.into(),
            roots: Vec::new(),
            handler: None,
            log,
            request_timeout: Duration::from_secs(60),
            era: None,
            discover_timeout: DISCOVER_TIMEOUT,
        }
    }
}

/// A connected MCP client. Cheap to clone; all clones share the connection.
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

struct Inner {
    options: ClientOptions,
    transport: Arc<dyn Transport>,
    pending: Pending,
    progress: ProgressRoutes,
    incoming: Incoming,
    roots: RwLock<Vec<PathBuf>>,
    tools_changed: AtomicBool,
    info: OnceLock<ServerInfo>,
    closed: watch::Sender<Option<String>>,
    /// Legacy until the probe found a modern server.
    era: RwLock<Era>,
    /// The `x-mcp-header` annotations of each tool (modern HTTP servers).
    header_paths: RwLock<HashMap<String, Vec<HeaderPath>>>,
    /// When the tool list's `ttlMs` runs out (modern servers, which send no list_changed).
    tools_stale_at: std::sync::Mutex<Option<tokio::time::Instant>>,
}

/// Options of one request.
#[derive(Default, Clone)]
struct Call<'a> {
    timeout: Option<Duration>,
    cancel: Option<&'a CancellationToken>,
    progress: Option<ProgressCallback>,
    /// `initialize` must never be cancelled.
    no_cancel_notice: bool,
    /// The modern version to send the request in, before the era is settled (the probe).
    version: Option<String>,
}

impl McpClient {
    /// Wraps a connection and starts reading from it. Call [`McpClient::initialize`] next.
    pub fn new(connection: Connection, options: ClientOptions) -> Self {
        let (closed, _) = watch::channel(None);
        let inner = Arc::new(Inner {
            roots: RwLock::new(options.roots.clone()),
            options,
            transport: connection.transport,
            pending: Pending::default(),
            progress: ProgressRoutes::default(),
            incoming: Incoming::default(),
            tools_changed: AtomicBool::new(false),
            info: OnceLock::new(),
            closed,
            era: RwLock::new(Era::Legacy),
            header_paths: RwLock::default(),
            tools_stale_at: std::sync::Mutex::new(None),
        });
        tokio::spawn(incoming::read_events(
            Arc::downgrade(&inner),
            connection.events,
        ));
        Self { inner }
    }

    /// [`McpClient::new`] then [`McpClient::initialize`].
    pub async fn connect(connection: Connection, options: ClientOptions) -> Result<Self, McpError> {
        let client = Self::new(connection, options);
        client.initialize().await?;
        Ok(client)
    }

    pub fn server(&self) -> &str {
        &self.inner.options.server
    }

    /// Connects in the server's era: the `server/discover` probe first (unless the era is known
    /// from before), and when the server is a legacy one, the handshake: `initialize`, version
    /// negotiation, `notifications/initialized`.
    pub async fn initialize(&self) -> Result<&ServerInfo, McpError> {
        let known = self.inner.options.era.clone();
        if let (Some(era @ Era::Modern(_)), Ok(mut current)) = (&known, self.inner.era.write()) {
            // A modern server stays one: `server/discover` for its info, no fallback.
            *current = era.clone();
        }
        if known != Some(Era::Legacy)
            && let Some(info) = self.discover().await?
        {
            return Ok(self.inner.info.get_or_init(|| info));
        }
        self.initialize_legacy().await
    }

    /// The server's era (legacy until a probe found a modern server).
    pub fn era(&self) -> Era {
        self.inner
            .era
            .read()
            .map(|e| e.clone())
            .unwrap_or(Era::Legacy)
    }

    /// What Ling declares it serves (sampling, elicitation).
    fn support(&self) -> HandlerSupport {
        let support = self
            .inner
            .options
            .handler
            .as_ref()
            .map(|h| h.support())
            .unwrap_or_default();
        HandlerSupport {
            elicitation_url: support.elicitation && support.elicitation_url,
            ..support
        }
    }

    async fn initialize_legacy(&self) -> Result<&ServerInfo, McpError> {
        let support = self.support();
        let params = json!({
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": client_capabilities(support),
            "clientInfo": { "name": "ling", "version": env!("CARGO_PKG_VERSION") },
        });
        let call = Call {
            no_cancel_notice: true,
            ..Call::default()
        };
        let result = self.request_with("initialize", Some(params), call).await?;
        let info = ServerInfo::from_result(&result);
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&info.protocol_version.as_str()) {
            let message = format!(
                "the server answered MCP protocol version {:?}, which Ling does not speak \
                 (it speaks {}); disconnected",
                info.protocol_version,
                SUPPORTED_PROTOCOL_VERSIONS.join(", ")
            );
            self.inner.options.log.line("ling", &message);
            self.close().await;
            return Err(self.protocol_error(message));
        }
        self.inner
            .transport
            .set_protocol_version(&info.protocol_version);
        self.notify("notifications/initialized", None).await?;
        self.inner.options.log.line(
            "ling",
            &format!(
                "connected to {} {} (protocol {})",
                info.name, info.version, info.protocol_version
            ),
        );
        Ok(self.inner.info.get_or_init(|| info))
    }

    /// What the server said in `initialize` (after [`McpClient::initialize`]).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.inner.info.get()
    }

    /// Every tool, following `nextCursor` through all pages.
    pub async fn list_tools(&self) -> Result<Vec<ToolDef>, McpError> {
        let (items, ttl) = self.list_all_with_ttl("tools/list", "tools").await?;
        self.tools_listed(ttl);
        let mut tools = Vec::with_capacity(items.len());
        for item in items {
            match serde_json::from_value::<ToolDef>(item) {
                Ok(tool) if self.keep_tool(&tool) => tools.push(tool),
                Ok(_) => {}
                Err(e) => self
                    .inner
                    .options
                    .log
                    .line("ling", &format!("skipped an invalid tool definition: {e}")),
            }
        }
        Ok(tools)
    }

    /// Calls one tool. `cancel` interrupts it (sending `notifications/cancelled`); `progress`
    /// receives its progress notifications.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        cancel: &CancellationToken,
        progress: Option<ProgressCallback>,
        timeout: Duration,
    ) -> Result<CallToolResult, McpError> {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let call = Call {
            timeout: Some(timeout),
            cancel: Some(cancel),
            progress,
            ..Call::default()
        };
        let params = json!({ "name": name, "arguments": arguments });
        let result = self.request_with("tools/call", Some(params), call).await?;
        serde_json::from_value(result)
            .map_err(|e| self.protocol_error(format!("invalid tools/call result: {e}")))
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Value>, McpError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, McpError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// `resources/read`: the raw result (`{contents: [...]}`). An unknown resource is
    /// [`McpError::ResourceNotFound`], whether the server says so with `-32602` (2026-07-28) or
    /// `-32002` (earlier revisions).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, McpError> {
        let result = self
            .request("resources/read", Some(json!({ "uri": uri })))
            .await;
        match result {
            Err(McpError::Rpc { server, error })
                if matches!(error.code, INVALID_PARAMS | LEGACY_RESOURCE_NOT_FOUND) =>
            {
                Err(McpError::ResourceNotFound {
                    server,
                    uri: uri.to_string(),
                    message: error.message,
                })
            }
            other => other,
        }
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, McpError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `prompts/get`: the raw result (`{description?, messages}`).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, McpError> {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let params = json!({ "name": name, "arguments": arguments });
        self.request("prompts/get", Some(params)).await
    }

    /// Replaces the roots and tells the server (`notifications/roots/list_changed`).
    pub async fn set_roots(&self, roots: Vec<PathBuf>) -> Result<(), McpError> {
        if let Ok(mut current) = self.inner.roots.write() {
            *current = roots;
        }
        // A modern server asks for roots in each request that needs them; the notice is gone.
        if matches!(self.era(), Era::Modern(_)) {
            return Ok(());
        }
        self.send_roots_list_changed().await
    }

    pub async fn send_roots_list_changed(&self) -> Result<(), McpError> {
        self.notify("notifications/roots/list_changed", None).await
    }

    /// True once after the server sent `notifications/tools/list_changed` (any number of them),
    /// or once the `ttlMs` of its last tool list ran out.
    pub fn take_tools_changed(&self) -> bool {
        self.inner.tools_changed.swap(false, Ordering::AcqRel) || self.tools_expired()
    }

    /// Why the connection closed, once it has.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Waits until the connection closes; returns why.
    pub async fn closed(&self) -> String {
        let mut rx = self.inner.closed.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the connection ended".to_string(),
        }
    }

    /// Shuts the connection down gracefully (bounded by the transport's shutdown steps).
    pub async fn close(&self) {
        self.close_as(Shutdown::Graceful).await;
    }

    /// Shuts the connection down as `how` says.
    pub async fn close_as(&self, how: Shutdown) {
        self.inner.transport.close(how).await;
        let reason = "closed by Ling".to_string();
        self.inner.pending.close_all(&reason);
        self.inner.closed.send_if_modified(|r| {
            r.get_or_insert(reason);
            true
        });
    }

    /// One request with the default timeout; the raw result.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, McpError> {
        self.request_with(method, params, Call::default()).await
    }

    /// One notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        self.inner
            .transport
            .send(Message::notification(method, params))
            .await
            .map_err(|source| McpError::Transport {
                server: self.server().to_string(),
                source,
            })
    }

    fn protocol_error(&self, message: String) -> McpError {
        McpError::Protocol {
            server: self.server().to_string(),
            message,
        }
    }
}
