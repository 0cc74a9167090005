//! The few client steps the conformance driver needs, on Ling's Streamable HTTP transport:
//! initialize and version check, `notifications/initialized`, requests matched to responses, and
//! server→client requests answered by a handler. Kept apart from the scenarios so the driver can
//! move onto Ling's full MCP client by replacing this file alone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use ling::mcp::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, Message, RequestId};
use ling::mcp::transport::{Transport, TransportEvent, http};
use serde_json::{Value, json};

pub const PROTOCOL_VERSION: &str = "2025-11-25";
const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const TIMEOUT: Duration = Duration::from_secs(20);

/// Answers one server→client request: `Ok(result)` or `Err((code, message))`.
pub type Handler = Arc<dyn Fn(&str, Option<Value>) -> Result<Value, (i64, String)> + Send + Sync>;

type Pending = Arc<Mutex<HashMap<RequestId, tokio::sync::oneshot::Sender<Result<Value, String>>>>>;

pub struct MiniClient {
    transport: Arc<dyn Transport>,
    pending: Pending,
    next_id: AtomicI64,
}

impl MiniClient {
    /// Connects and runs the handshake, declaring `capabilities`.
    pub async fn connect(url: &str, capabilities: Value, handler: Handler) -> anyhow::Result<Self> {
        let connection = http::connect(url, &[], TIMEOUT).await?;
        let pending: Pending = Arc::default();
        tokio::spawn(dispatch(
            connection.events,
            Arc::clone(&connection.transport),
            Arc::clone(&pending),
            handler,
        ));
        let client = Self {
            transport: connection.transport,
            pending,
            next_id: AtomicI64::new(0),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "ling", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = client.request("initialize", Some(params)).await?;
        let version = result["protocolVersion"].as_str().unwrap_or_default();
        if !SUPPORTED_VERSIONS.contains(&version) {
            bail!("the server answered protocol version {version:?}, which ling cannot speak");
        }
        client.transport.set_protocol_version(version);
        client
            .transport
            .send(Message::notification("notifications/initialized", None))
            .await?;
        Ok(client)
    }

    pub async fn request(&self, method: &str, params: Option<Value>) -> anyhow::Result<Value> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = tokio::sync::oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        self.transport
            .send(Message::request(id.clone(), method, params))
            .await?;
        match tokio::time::timeout(TIMEOUT, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(message))) => Err(anyhow!("{method} failed: {message}")),
            Ok(Err(_)) => Err(anyhow!("{method}: the connection closed")),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(anyhow!(
                    "{method}: no response within {} s",
                    TIMEOUT.as_secs()
                ))
            }
        }
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_tools(&self) -> anyhow::Result<Vec<Value>> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let page = self.request("tools/list", params).await?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => return Ok(tools),
            }
        }
    }

    pub async fn call_tool(&self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        let result = self
            .request(
                "tools/call",
                Some(json!({"name": name, "arguments": arguments})),
            )
            .await
            .with_context(|| format!("calling tool {name}"))?;
        if result["isError"] == json!(true) {
            bail!("tool {name} returned an error: {}", result["content"]);
        }
        Ok(result)
    }

    pub async fn close(&self) {
        self.transport.close().await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Routes what the server sends: responses to their callers, requests to the handler.
async fn dispatch(
    mut events: tokio::sync::mpsc::Receiver<TransportEvent>,
    transport: Arc<dyn Transport>,
    pending: Pending,
    handler: Handler,
) {
    while let Some(event) = events.recv().await {
        match event {
            TransportEvent::Message(Message::Response { id, result }) => {
                if let Some(tx) = lock(&pending).remove(&id) {
                    let _ = tx.send(Ok(result));
                }
            }
            TransportEvent::Message(Message::Error {
                id: Some(id),
                error,
            }) => {
                if let Some(tx) = lock(&pending).remove(&id) {
                    let _ = tx.send(Err(format!("{} (code {})", error.message, error.code)));
                }
            }
            TransportEvent::Message(Message::Request { id, method, params }) => {
                let reply = match method.as_str() {
                    "ping" => Message::Response {
                        id,
                        result: json!({}),
                    },
                    _ => match handler(&method, params) {
                        Ok(result) => Message::Response { id, result },
                        Err((code, message)) => Message::Error {
                            id: Some(id),
                            error: ErrorObject {
                                code,
                                message,
                                data: None,
                            },
                        },
                    },
                };
                // Sent from a task: the reply's POST must not hold up the responses it may wait on.
                let transport = Arc::clone(&transport);
                tokio::spawn(async move {
                    let _ = transport.send(reply).await;
                });
            }
            TransportEvent::Message(_) => {}
            TransportEvent::Closed { reason } => {
                for (_, tx) in lock(&pending).drain() {
                    let _ = tx.send(Err(reason.clone()));
                }
            }
        }
    }
}

/// The answer to requests the client did not declare.
pub fn method_not_found(method: &str) -> (i64, String) {
    (METHOD_NOT_FOUND, format!("method not found: {method}"))
}
