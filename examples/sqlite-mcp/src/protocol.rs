//! The MCP side of the server: newline-delimited JSON-RPC 2.0 over stdin/stdout, version
//! negotiation, the method table (initialize, ping, logging, tools, resources) and the log
//! notifications. A reader thread takes lines off stdin so that `notifications/cancelled` can
//! interrupt the query running on the main thread; the main thread answers requests in order.
//! Nothing but protocol messages is ever written to stdout.

use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::db::{Canceller, Database};
use crate::{resources, tools};

pub const LATEST_VERSION: &str = "2025-11-25";
/// Versions this server can speak; an offered one is echoed, anything else gets the latest.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    fn to_json(&self) -> Value {
        let mut err = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            err["data"] = data.clone();
        }
        err
    }
}

/// RFC 5424 severities as MCP names them, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    const ALL: [(Level, &'static str); 8] = [
        (Level::Debug, "debug"),
        (Level::Info, "info"),
        (Level::Notice, "notice"),
        (Level::Warning, "warning"),
        (Level::Error, "error"),
        (Level::Critical, "critical"),
        (Level::Alert, "alert"),
        (Level::Emergency, "emergency"),
    ];

    fn parse(name: &str) -> Option<Level> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(l, _)| *l)
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(l, _)| *l == self)
            .map_or("info", |(_, n)| *n)
    }
}

/// A log line a handler wants sent to the client as `notifications/message`.
pub struct LogEvent {
    pub level: Level,
    pub message: String,
}

/// What the reader thread hands to the main thread.
enum Incoming {
    Message(Value),
    Garbage(String),
}

/// The request the main thread is working on, so the reader can cancel exactly that one.
#[derive(Default)]
struct InFlight {
    id: Option<Value>,
    cancelled: bool,
}

pub struct Server {
    db: Database,
    /// Messages below this level are not sent; `info` until the client sets one.
    level: Level,
    in_flight: Arc<Mutex<InFlight>>,
}

impl Server {
    pub fn new(db: Database) -> Self {
        Self {
            db,
            level: Level::Info,
            in_flight: Arc::new(Mutex::new(InFlight::default())),
        }
    }

    /// Serves until stdin closes (or stdout does).
    pub fn run(mut self, input: impl BufRead + Send + 'static, mut out: impl Write) {
        let (tx, rx) = mpsc::channel();
        let in_flight = Arc::clone(&self.in_flight);
        let canceller = self.db.canceller();
        let reader = std::thread::Builder::new()
            .name("stdin-reader".to_string())
            .spawn(move || read_loop(input, &tx, &in_flight, &canceller));
        if let Err(e) = reader {
            eprintln!("ling-sqlite-mcp: cannot start the stdin reader: {e}");
            return;
        }
        for incoming in rx {
            let replies = match incoming {
                Incoming::Garbage(reason) => {
                    eprintln!("ling-sqlite-mcp: unparsable input line: {reason}");
                    vec![error_response(
                        Value::Null,
                        &RpcError::new(PARSE_ERROR, format!("parse error: {reason}")),
                    )]
                }
                Incoming::Message(msg) => self.handle(msg),
            };
            for reply in replies {
                if let Err(e) = write_line(&mut out, &reply) {
                    eprintln!("ling-sqlite-mcp: stdout closed ({e}); exiting");
                    return;
                }
            }
        }
    }

    /// Handles one parsed message; returns what to write (log notifications, then the response).
    fn handle(&mut self, msg: Value) -> Vec<Value> {
        let Value::Object(obj) = msg else {
            let what = if msg.is_array() {
                "batches are not supported; send one JSON-RPC object per line"
            } else {
                "a JSON-RPC message must be a JSON object"
            };
            return vec![error_response(
                Value::Null,
                &RpcError::new(INVALID_REQUEST, what),
            )];
        };
        let id = obj.get("id").cloned();
        let Some(method) = obj
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            if obj.contains_key("result") || obj.contains_key("error") {
                // A response: this server sends no requests, so there is nothing to match it to.
                return Vec::new();
            }
            return vec![error_response(
                valid_id(id.as_ref()).unwrap_or(Value::Null),
                &RpcError::new(INVALID_REQUEST, "the message has no \"method\""),
            )];
        };
        let Some(id) = id else {
            self.notification(&method, obj.get("params"));
            return Vec::new();
        };
        let Some(id) = valid_id(Some(&id)) else {
            return vec![error_response(
                Value::Null,
                &RpcError::new(INVALID_REQUEST, "\"id\" must be a string or an integer"),
            )];
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return vec![error_response(
                id,
                &RpcError::new(INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\""),
            )];
        }
        let params = match obj.get("params") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => {
                return vec![error_response(
                    id,
                    &RpcError::invalid_params("\"params\" must be an object"),
                )];
            }
        };
        self.set_in_flight(Some(id.clone()));
        let mut logs = Vec::new();
        // A bug in a handler must cost one request, not the server: catch it and answer -32603.
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.request(&method, &params, &mut logs)
        }))
        .unwrap_or_else(|_| {
            Err(RpcError::new(
                INTERNAL_ERROR,
                format!("internal error while handling {method}; see the server's stderr"),
            ))
        });
        let cancelled = self.set_in_flight(None);
        let mut out: Vec<Value> = logs
            .into_iter()
            .filter(|l| l.level >= self.level)
            .map(|l| log_notification(&l))
            .collect();
        if cancelled {
            // The client gave up on this request; it must not get an answer.
            eprintln!("ling-sqlite-mcp: request {id} cancelled by the client");
            return out;
        }
        out.push(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => error_response(id, &e),
        });
        out
    }

    /// Records the request being worked on; returns whether the previous one was cancelled.
    fn set_in_flight(&self, id: Option<Value>) -> bool {
        match self.in_flight.lock() {
            Ok(mut f) => {
                let was = f.cancelled;
                f.id = id;
                f.cancelled = false;
                was
            }
            Err(_) => false,
        }
    }

    fn notification(&mut self, method: &str, _params: Option<&Value>) {
        match method {
            "notifications/initialized" => eprintln!("ling-sqlite-mcp: client initialized"),
            // Cancellation is handled on the reader thread, where it can interrupt a query.
            "notifications/cancelled" => {}
            other => eprintln!("ling-sqlite-mcp: ignoring notification {other}"),
        }
    }

    fn request(
        &mut self,
        method: &str,
        params: &Map<String, Value>,
        logs: &mut Vec<LogEvent>,
    ) -> Result<Value, RpcError> {
        match method {
            "initialize" => initialize(&self.db, params),
            "ping" => Ok(json!({})),
            "logging/setLevel" => {
                let name = params.get("level").and_then(Value::as_str).ok_or_else(|| {
                    RpcError::invalid_params("logging/setLevel needs \"level\" (a string)")
                })?;
                self.level = Level::parse(name).ok_or_else(|| {
                    RpcError::invalid_params(format!(
                        "unknown log level \"{name}\"; use one of: {}",
                        Level::ALL.map(|(_, n)| n).join(", ")
                    ))
                })?;
                Ok(json!({}))
            }
            "tools/list" => {
                reject_cursor(params)?;
                Ok(json!({"tools": tools::definitions()}))
            }
            "tools/call" => tools::call(&self.db, params, logs),
            "resources/list" => {
                reject_cursor(params)?;
                resources::list(&self.db)
            }
            "resources/read" => resources::read(&self.db, params),
            "resources/templates/list" => {
                reject_cursor(params)?;
                Ok(json!({"resourceTemplates": resources::templates()}))
            }
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }
}

/// The `initialize` result: the offered version when spoken, else the latest (the client decides
/// whether it can live with that).
fn initialize(db: &Database, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let offered = match params.get("protocolVersion") {
        Some(Value::String(v)) => v.as_str(),
        _ => {
            return Err(RpcError::invalid_params(
                "initialize needs \"protocolVersion\" (a string)",
            ));
        }
    };
    let version = if SUPPORTED_VERSIONS.contains(&offered) {
        offered
    } else {
        LATEST_VERSION
    };
    let client = params
        .get("clientInfo")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("unknown client");
    eprintln!("ling-sqlite-mcp: initialize from {client}: offered {offered}, answering {version}");
    let file = db.path().file_name().map_or_else(
        || db.path().display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    Ok(json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": false},
            "resources": {"subscribe": false, "listChanged": false},
            "logging": {},
        },
        "serverInfo": {
            "name": "ling-sqlite-mcp",
            "title": "Ling SQLite (read-only)",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": format!(
            "Read-only access to the SQLite database {file}. Start with list_tables, then \
             describe_table for the columns, keys and indexes of a table, then query with one \
             SELECT (or WITH ... SELECT) statement; bind values with params ([\"?\" placeholders in \
             order]) rather than pasting them into the SQL. Results are capped by limit (default \
             {default}); \"truncated\": true means there were more rows. Writes, ATTACH, \
             transactions and setting pragmas are refused by SQLite itself, and long queries are \
             interrupted. Each table's schema is also a resource at sqlite:///<table>/schema.",
            default = tools::DEFAULT_LIMIT,
        ),
    }))
}

/// This server never hands out cursors, so any cursor it is given is not one of its own.
fn reject_cursor(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(RpcError::invalid_params(
            "invalid cursor: this server does not paginate",
        )),
    }
}

/// A request id as JSON-RPC allows it: a string or an integer (never null).
fn valid_id(id: Option<&Value>) -> Option<Value> {
    match id {
        Some(Value::String(_)) => id.cloned(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => id.cloned(),
        _ => None,
    }
}

fn error_response(id: Value, err: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": err.to_json()})
}

fn log_notification(event: &LogEvent) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": event.level.name(), "logger": "ling-sqlite-mcp", "data": event.message},
    })
}

fn write_line(out: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    // serde_json escapes newlines inside strings, so one message is always one line.
    let mut line = serde_json::to_string(msg).map_err(std::io::Error::other)?;
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// Reads stdin line by line; a cancellation of the request in flight interrupts its query here,
/// everything else goes to the main thread.
fn read_loop(
    mut input: impl BufRead,
    tx: &mpsc::Sender<Incoming>,
    in_flight: &Mutex<InFlight>,
    canceller: &Canceller,
) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) => {
                eprintln!("ling-sqlite-mcp: cannot read stdin: {e}");
                return;
            }
        }
        let Ok(line) = std::str::from_utf8(&buf) else {
            if tx
                .send(Incoming::Garbage("the line is not valid UTF-8".to_string()))
                .is_err()
            {
                return;
            }
            continue;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let incoming = match serde_json::from_str::<Value>(line) {
            Ok(msg) => {
                if msg.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
                    cancel(&msg, in_flight, canceller);
                }
                Incoming::Message(msg)
            }
            Err(e) => Incoming::Garbage(e.to_string()),
        };
        if tx.send(incoming).is_err() {
            return;
        }
    }
}

fn cancel(msg: &Value, in_flight: &Mutex<InFlight>, canceller: &Canceller) {
    let Some(request_id) = msg.get("params").and_then(|p| p.get("requestId")) else {
        return;
    };
    if let Ok(mut f) = in_flight.lock()
        && f.id.as_ref() == Some(request_id)
    {
        f.cancelled = true;
        canceller.cancel_current();
    }
}
