//! One MCP client over one [`Connection`]: the `initialize` handshake and version negotiation,
//! requests with a timeout each (a timed-out or cancelled one sends `notifications/cancelled` and
//! its late reply is ignored), progress routing, the server's requests and notifications, and the
//! typed calls the host makes (`tools/list` with every page, `tools/call`, resources, prompts).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::elicitation::ElicitRequest;
use super::error::McpError;
use super::handler::{
    ClientHandler, HandlerSupport, client_capabilities, method_not_found, roots_result,
};
use super::jsonrpc::{ErrorObject, INVALID_PARAMS, Message, RequestId};
use super::log::ServerLog;
use super::peer::{Incoming, Outcome, Pending, ProgressRoutes};
use super::sampling::SamplingRequest;
use super::transport::http::is_transport_failure;
use super::transport::{Connection, Transport, TransportError, TransportEvent};
use super::types::{
    CallToolResult, LATEST_PROTOCOL_VERSION, ProgressCallback, SUPPORTED_PROTOCOL_VERSIONS,
    ServerInfo, Tool,
};

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
}

impl ClientOptions {
    pub fn new(server: impl Into<String>, log: Arc<ServerLog>) -> Self {
        Self {
            server: server.into(),
            roots: Vec::new(),
            handler: None,
            log,
            request_timeout: Duration::from_secs(60),
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
}

/// Options of one request.
#[derive(Default)]
struct Call<'a> {
    timeout: Option<Duration>,
    cancel: Option<&'a CancellationToken>,
    progress: Option<ProgressCallback>,
    /// `initialize` must never be cancelled.
    no_cancel_notice: bool,
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
        });
        tokio::spawn(read_events(Arc::downgrade(&inner), connection.events));
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

    /// The handshake: `initialize`, version negotiation, `notifications/initialized`.
    pub async fn initialize(&self) -> Result<&ServerInfo, McpError> {
        let support = self
            .inner
            .options
            .handler
            .as_ref()
            .map(|h| h.support())
            .unwrap_or_default();
        let support = HandlerSupport {
            elicitation_url: support.elicitation && support.elicitation_url,
            ..support
        };
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
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        let items = self.list_all("tools/list", "tools").await?;
        let mut tools = Vec::with_capacity(items.len());
        for item in items {
            match serde_json::from_value::<Tool>(item) {
                Ok(tool) => tools.push(tool),
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
            no_cancel_notice: false,
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

    /// `resources/read`: the raw result (`{contents: [...]}`).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, McpError> {
        self.request("resources/read", Some(json!({ "uri": uri })))
            .await
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
        self.send_roots_list_changed().await
    }

    pub async fn send_roots_list_changed(&self) -> Result<(), McpError> {
        self.notify("notifications/roots/list_changed", None).await
    }

    /// True once after the server sent `notifications/tools/list_changed` (any number of them).
    pub fn take_tools_changed(&self) -> bool {
        self.inner.tools_changed.swap(false, Ordering::AcqRel)
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

    /// Shuts the connection down (bounded by the transport's shutdown steps).
    pub async fn close(&self) {
        self.inner.transport.close().await;
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
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page = self.request(method, params).await?;
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(list)) => items.extend(list),
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(self.protocol_error(format!("{method}: \"{key}\" is not a list")));
                }
            }
            match page.get("nextCursor") {
                None | Some(Value::Null) => return Ok(items),
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

    async fn request_with(
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
            .map_err(|reason| McpError::Closed {
                server: server(),
                reason,
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
            sent = inner.transport.send(message) => sent,
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
            Ok(Outcome::Closed(reason)) => Err(McpError::Closed {
                server: server(),
                reason,
            }),
            Err(_) => Err(McpError::Closed {
                server: server(),
                reason: "the connection ended".into(),
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

/// Reads the connection until it closes. Holds the client weakly: once every [`McpClient`] is
/// dropped, the transport goes too.
async fn read_events(inner: Weak<Inner>, mut events: mpsc::Receiver<TransportEvent>) {
    let reason = loop {
        let Some(event) = events.recv().await else {
            break "the connection ended".to_string();
        };
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match event {
            TransportEvent::Message(message) => inner.dispatch(message),
            TransportEvent::Oversized { id, message } => inner.on_oversized(id, message),
            TransportEvent::Closed { reason } => break reason,
        }
    };
    if let Some(inner) = inner.upgrade() {
        inner.pending.close_all(&reason);
        inner.closed.send_if_modified(|r| {
            r.get_or_insert(reason);
            true
        });
    }
}

impl Inner {
    /// A message over the size limit was dropped: the call it answers fails now. When its id
    /// could not be read, every call in flight to this server fails, since any might be the one.
    fn on_oversized(&self, id: Option<RequestId>, message: String) {
        if let Some(id) = id {
            let failed = self.pending.complete(
                &id,
                Outcome::TooLarge(format!("its reply was {message}; it was dropped")),
            );
            if !failed {
                self.options.log.line(
                    "ling",
                    &format!("the dropped message (id {id}) answered no call in flight"),
                );
            }
            return;
        }
        let every = format!(
            "it sent a message of {message}, which was dropped; its id could not be read, so \
             every call in flight to this server failed"
        );
        let failed = self.pending.fail_all(|| Outcome::TooLarge(every.clone()));
        self.options.log.line(
            "ling",
            &format!("a dropped message without a readable id failed {failed} call(s) in flight"),
        );
    }

    fn dispatch(self: &Arc<Self>, message: Message) {
        match message {
            Message::Response { id, result } => {
                self.pending.complete(&id, Outcome::Result(result));
            }
            Message::Error {
                id: Some(id),
                error,
            } => {
                self.pending.complete(&id, Outcome::Error(error));
            }
            Message::Error { id: None, error } => self.options.log.line(
                "ling",
                &format!("server reported error {}: {}", error.code, error.message),
            ),
            Message::Request { id, method, params } => self.answer(id, method, params),
            Message::Notification { method, params } => {
                let params = params.unwrap_or(Value::Null);
                self.on_notification(&method, &params);
            }
        }
    }

    fn on_notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/progress" => self.progress.route(params),
            "notifications/cancelled" => self.incoming.cancel(params),
            "notifications/tools/list_changed" => {
                self.tools_changed.store(true, Ordering::Release);
            }
            "notifications/message" => {
                let level = params["level"].as_str().unwrap_or("info");
                let data = match &params["data"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let text = match params["logger"].as_str() {
                    Some(logger) => format!("[{level}] {logger}: {data}"),
                    None => format!("[{level}] {data}"),
                };
                self.options.log.line("server", &text);
            }
            _ => {}
        }
    }

    /// Answers one server request in its own task, so a slow handler never stalls the reading.
    fn answer(self: &Arc<Self>, id: RequestId, method: String, params: Option<Value>) {
        let inner = self.clone();
        let stop = self.incoming.start(&id);
        tokio::spawn(async move {
            let params = params.unwrap_or(Value::Null);
            let answer = tokio::select! {
                answer = inner.serve(&method, params) => answer,
                () = stop.cancelled() => return,
            };
            inner.incoming.finish(&id);
            let reply = match answer {
                Ok(result) => Message::Response { id, result },
                Err(error) => Message::Error {
                    id: Some(id),
                    error,
                },
            };
            let _ = inner.transport.send(reply).await;
        });
    }

    async fn serve(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let server = &self.options.server;
        let support = self.options.handler.as_ref().map(|h| (h, h.support()));
        match (method, support) {
            ("ping", _) => Ok(json!({})),
            ("roots/list", _) => {
                let roots = self.roots.read().map(|r| r.clone()).unwrap_or_default();
                Ok(roots_result(&roots))
            }
            ("sampling/createMessage", Some((handler, support))) if support.sampling => {
                let request = SamplingRequest::parse(&params).map_err(|e| ErrorObject {
                    code: INVALID_PARAMS,
                    message: e.to_string(),
                    data: None,
                })?;
                let result = handler.create_message(server, &request).await?;
                Ok(result.to_value())
            }
            ("elicitation/create", Some((handler, support))) if support.elicitation => {
                let request = ElicitRequest::parse(&params);
                let answer = handler.elicit(server, &request).await?;
                Ok(request.result(&answer))
            }
            _ => Err(method_not_found(method)),
        }
    }
}
