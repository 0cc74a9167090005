//! One MCP client over one [`Connection`]: the era of its server (a 2026-07-28 one found by the
//! `server/discover` probe, in `client/era.rs`, else the `initialize` handshake and version
//! negotiation), requests with a timeout each (a timed-out or cancelled one sends `notifications/cancelled` and
//! its late reply is ignored), progress routing, the server's requests and notifications, and the
//! typed calls the host makes (`tools/list` with every page, `tools/call`, resources, prompts).

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
use super::jsonrpc::{INVALID_PARAMS, Message, RequestId};
use super::log::ServerLog;
use super::modern::{Era, HeaderPath, LEGACY_RESOURCE_NOT_FOUND};
use super::peer::{Incoming, Outcome, Pending, ProgressRoutes};
pub use super::transport::Shutdown;
use super::transport::http::is_transport_failure;
use super::transport::{Connection, Transport, TransportError};
use super::types::{
    CallToolResult, LATEST_PROTOCOL_VERSION, ProgressCallback, SUPPORTED_PROTOCOL_VERSIONS,
    ServerInfo, ToolDef,
};

mod era;
mod incoming;

pub use era::DISCOVER_TIMEOUT;

/// More pages than this in one listing means a server that never stops paginating.
const MAX_PAGES: usize = 10_000;
/// How long a failed write waits for the transport to say why the connection closed.
const CLOSE_REPORT_WAIT: Duration = Duration::from_secs(3);

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

    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, McpError> {
        Ok(self.list_all_with_ttl(method, key).await?.0)
    }

    /// Every page of a listing, and the `ttlMs` of the first page (modern servers).
    async fn list_all_with_ttl(
        &self,
        method: &str,
        key: &str,
    ) -> Result<(Vec<Value>, Option<u64>), McpError> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = std::collections::HashSet::new();
        let mut ttl = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page = self.request(method, params).await?;
            if cursor.is_none() {
                ttl = page.get("ttlMs").and_then(Value::as_u64);
            }
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(list)) => items.extend(list),
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(self.protocol_error(format!("{method}: \"{key}\" is not a list")));
                }
            }
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok((items, ttl)),
                Some(next) => {
                    if !seen.insert(next.to_string()) {
                        return Err(self.protocol_error(format!(
                            "{method}: the server repeated the cursor {next}; stopped paginating"
                        )));
                    }
                    cursor = Some(next.clone());
                }
            }
        }
        Err(self.protocol_error(format!("{method}: more than {MAX_PAGES} pages")))
    }

    /// One request as the caller sees it: for a modern server, an `input_required` result is
    /// answered ([`era`]) and the request sent again until it completes.
    async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        call: Call<'_>,
    ) -> Result<Value, McpError> {
        let mut params = params;
        let mut version_retried = false;
        for _ in 0..era::MAX_INPUT_ROUNDS {
            let result = match self
                .request_once(method, params.clone(), call.clone())
                .await
            {
                // A modern server that rejects the version it listed in discovery: once more.
                Err(e) if !version_retried && self.rejects_our_version(&e) => {
                    version_retried = true;
                    continue;
                }
                other => other?,
            };
            match self.next_round(method, params.as_ref(), result).await? {
                era::Round::Complete(result) => return Ok(result),
                era::Round::Retry(next) => params = Some(next),
            }
        }
        Err(self.protocol_error(format!(
            "{method}: the server asked for input {} times in a row; gave up",
            era::MAX_INPUT_ROUNDS
        )))
    }

    async fn request_once(
        &self,
        method: &str,
        params: Option<Value>,
        call: Call<'_>,
    ) -> Result<Value, McpError> {
        let inner = &self.inner;
        let server = || self.server().to_string();
        let (id, reply) = inner
            .pending
            .register()
            .map_err(|closed| McpError::Closed {
                server: server(),
                reason: closed.reason,
            })?;
        let mut guard = InFlight {
            inner,
            id,
            token: None,
            reason: None,
        };
        let mut params = params;
        if let Some(progress) = call.progress {
            let token = Value::from(id);
            let object = params.get_or_insert_with(|| json!({}));
            if let Some(object) = object.as_object_mut() {
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                meta["progressToken"] = token.clone();
                inner.progress.insert(&token, progress);
                guard.token = Some(token);
            }
        }
        let version = call.version.clone().or_else(|| self.modern_version());
        let headers = match &version {
            Some(version) => self.modern_headers(version, method, &mut params),
            None => Vec::new(),
        };
        let message = Message::request(RequestId::Number(id), method, params);
        let timeout = call.timeout.unwrap_or(inner.options.request_timeout);
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || McpError::Timeout {
            server: server(),
            method: method.to_string(),
            after: timeout,
        };
        let cancelled = async {
            match call.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        // The write is bounded too: a server that stops reading its stdin blocks it. Giving up
        // on an unsent request needs no notice to the server (the guard just forgets the id).
        let sent = tokio::select! {
            sent = inner.transport.send_with_headers(message, headers) => sent,
            () = tokio::time::sleep_until(deadline) => return Err(timed_out()),
            () = &mut cancelled => return Err(McpError::Cancelled),
        };
        if let Err(source) = sent {
            // A write usually fails because the server just exited: report why it did (exit
            // status and stderr) rather than the broken pipe, once the transport knows.
            return match tokio::time::timeout(CLOSE_REPORT_WAIT, self.closed()).await {
                Ok(reason) => Err(McpError::Closed {
                    server: server(),
                    reason,
                }),
                Err(_) => Err(McpError::Transport {
                    server: server(),
                    source,
                }),
            };
        }
        let outcome = tokio::select! {
            outcome = reply => outcome,
            () = tokio::time::sleep_until(deadline) => {
                if !call.no_cancel_notice {
                    guard.abandon(format!("timed out after {}s", timeout.as_secs_f64())).await;
                }
                return Err(timed_out());
            }
            () = &mut cancelled => {
                guard.abandon("interrupted by the user".to_string()).await;
                return Err(McpError::Cancelled);
            }
        };
        match outcome {
            Ok(Outcome::Result(value)) => Ok(value),
            // The HTTP transports answer a failed exchange (connection refused, HTTP 500) this
            // way; it is not the server's answer.
            Ok(Outcome::Error(error)) if is_transport_failure(&error) => Err(McpError::Transport {
                server: server(),
                source: TransportError::Http(error.message),
            }),
            Ok(Outcome::Error(error)) => Err(McpError::Rpc {
                server: server(),
                error: Box::new(error),
            }),
            Ok(Outcome::TooLarge(message)) => Err(McpError::TooLarge {
                server: server(),
                message,
            }),
            Err(_) => Err(McpError::Closed {
                server: server(),
                reason: inner
                    .pending
                    .closed_reason()
                    .unwrap_or_else(|| "the connection ended".into()),
            }),
        }
    }

    fn protocol_error(&self, message: String) -> McpError {
        McpError::Protocol {
            server: self.server().to_string(),
            message,
        }
    }
}

/// A request in flight. Dropped before its reply (timeout, cancel, or the caller gave up), it
/// forgets the id, so a late reply is ignored, and tells the server `notifications/cancelled`.
struct InFlight<'a> {
    inner: &'a Arc<Inner>,
    id: i64,
    token: Option<Value>,
    /// Set when the server should be told why the request was abandoned.
    reason: Option<String>,
}

impl InFlight<'_> {
    /// Gives the request up now and tells the server, waiting (briefly) until the notice is
    /// written, so a shutdown right after cannot overtake it.
    async fn abandon(self, reason: String) {
        if !self.inner.pending.forget(self.id) {
            return;
        }
        // 2026-07-28 over HTTP has no client notifications: the request just stops.
        let modern = matches!(self.inner.era.read().as_deref(), Ok(Era::Modern(_)));
        if modern && self.inner.transport.mirrors_headers() {
            return;
        }
        let notice = Message::notification(
            "notifications/cancelled",
            Some(json!({ "requestId": self.id, "reason": reason })),
        );
        let _ = tokio::time::timeout(CANCEL_NOTICE_LIMIT, self.inner.transport.send(notice)).await;
    }
}

/// How long [`InFlight::abandon`] waits for the cancel notice to be written.
const CANCEL_NOTICE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(token) = &self.token {
            self.inner.progress.remove(token);
        }
        let abandoned = self.inner.pending.forget(self.id);
        let Some(reason) = self.reason.take().filter(|_| abandoned) else {
            return;
        };
        let transport = self.inner.transport.clone();
        let notice = Message::notification(
            "notifications/cancelled",
            Some(json!({ "requestId": self.id, "reason": reason })),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = transport.send(notice).await;
            });
        }
    }
}
