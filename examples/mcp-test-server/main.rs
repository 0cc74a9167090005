//! A deliberately misbehaving MCP server over stdio, for Ling's MCP tests and benches. Flags
//! choose the misbehaviour (slow start, crash, hang, garbage on stdout, a huge line, pagination,
//! list_changed, a given protocol version, no longer reading stdin...). Every message it receives
//! is appended to the file named by `MCP_TEST_LOG`, so tests can check what Ling sent (e.g.
//! `notifications/cancelled`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

#[derive(Default)]
struct Opts {
    name: String,
    slow_start_ms: u64,
    crash_on_call: Option<String>,
    hang_on_call: Option<String>,
    garbage: bool,
    huge_line: bool,
    page_size: Option<usize>,
    list_changed_after_call: bool,
    version_answer: Option<String>,
    exit_immediately: bool,
    extra_tools: usize,
    tool_names: Vec<String>,
    /// The description of the `--tool-name` tools (default "named by --tool-name").
    tool_description: Option<String>,
    stderr_lines: usize,
    stop_reading_after: Option<usize>,
    /// Keeps running after stdin closes (until a signal), as server-everything does once roots
    /// are declared.
    ignore_stdin_eof: bool,
    /// Speaks the 2026-07-28 revision: the versions `server/discover` lists (empty: legacy only).
    modern: Vec<String>,
    /// A legacy server that never answers `server/discover`.
    discover_silent: bool,
    /// A legacy server answering `server/discover` with this error code (default -32601).
    discover_error: Option<i64>,
    /// The `ttlMs` of a modern `tools/list`.
    ttl_ms: Option<u64>,
}

fn parse_args() -> Opts {
    let mut opts = Opts {
        name: "mcp-test-server".into(),
        ..Opts::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match arg.as_str() {
            "--name" => opts.name = value(),
            "--slow-start" => opts.slow_start_ms = value().parse().unwrap_or(0),
            "--crash-on-call" => opts.crash_on_call = Some(value()),
            "--hang-on-call" => opts.hang_on_call = Some(value()),
            "--garbage" => opts.garbage = true,
            "--huge-line" => opts.huge_line = true,
            "--page-size" => opts.page_size = value().parse().ok(),
            "--list-changed-after-call" => opts.list_changed_after_call = true,
            "--version-answer" => opts.version_answer = Some(value()),
            "--exit-immediately" => opts.exit_immediately = true,
            "--extra-tools" => opts.extra_tools = value().parse().unwrap_or(0),
            "--tool-name" => opts.tool_names.push(value()),
            "--tool-description" => opts.tool_description = Some(value()),
            "--stderr-lines" => opts.stderr_lines = value().parse().unwrap_or(0),
            "--stop-reading-after" => opts.stop_reading_after = value().parse().ok(),
            "--ignore-stdin-eof" => opts.ignore_stdin_eof = true,
            "--modern" => opts.modern = vec!["2026-07-28".into()],
            "--dual-era" => opts.modern = vec!["2026-07-28".into(), "2025-11-25".into()],
            "--discover-silent" => opts.discover_silent = true,
            "--discover-error" => opts.discover_error = value().parse().ok(),
            "--ttl-ms" => opts.ttl_ms = value().parse().ok(),
            other => eprintln!("mcp-test-server: ignoring unknown argument {other}"),
        }
    }
    opts
}

struct Server {
    opts: Opts,
    out: Mutex<std::io::Stdout>,
    log: Option<Mutex<std::fs::File>>,
    added_tool: AtomicBool,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<String, Sender<Value>>>,
}

impl Server {
    fn send(&self, message: &Value) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if self.opts.garbage {
            let _ = writeln!(out, "garbage: this line is not JSON");
            let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":");
        }
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    fn reply(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc":"2.0","id":id,"result":result}));
    }

    fn fail(&self, id: &Value, code: i64, message: &str) {
        self.send(&json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}}));
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc":"2.0","method":method,"params":params}));
    }

    fn record(&self, line: &str) {
        if let Some(log) = &self.log {
            let mut file = log.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(file, "{line}");
        }
    }

    fn tools(&self) -> Vec<Value> {
        let object = |props: Value| json!({"type":"object","properties":props});
        let mut tools = vec![
            json!({"name":"echo","description":"Echoes its text","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}}),
            json!({"name":"add","description":"Adds two numbers","inputSchema":object(json!({"a":{"type":"number"},"b":{"type":"number"}}))}),
            json!({"name":"slow","description":"Takes steps, reporting progress","inputSchema":object(json!({"steps":{"type":"integer"},"ms":{"type":"integer"}}))}),
            json!({"name":"crash","description":"Exits mid-call","inputSchema":{"type":"object"}}),
            json!({"name":"hang","description":"Never answers","inputSchema":{"type":"object"}}),
            json!({"name":"error","description":"Fails with isError","inputSchema":{"type":"object"}}),
            json!({"name":"image","description":"Returns an image","inputSchema":{"type":"object"}}),
            json!({"name":"structured","description":"Returns only structuredContent","inputSchema":{"type":"object"}}),
            json!({"name":"big","description":"Returns N characters","inputSchema":object(json!({"chars":{"type":"integer"}}))}),
            json!({"name":"ask_client","description":"Sends a request to the client and reports the answer","inputSchema":object(json!({"method":{"type":"string"},"params":{"type":"object"}}))}),
            json!({"name":"research","description":"Needs tasks","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}),
        ];
        for i in 0..self.opts.extra_tools {
            tools.push(json!({"name":format!("tool_{i}"),"inputSchema":{"type":"object"}}));
        }
        let description = self
            .opts
            .tool_description
            .as_deref()
            .unwrap_or("named by --tool-name");
        for name in &self.opts.tool_names {
            tools.push(
                json!({"name":name,"description":description,"inputSchema":{"type":"object"}}),
            );
        }
        if self.added_tool.load(Ordering::SeqCst) {
            tools.push(json!({"name":"added","description":"Added after a call","inputSchema":{"type":"object"}}));
        }
        tools
    }

    fn initialize(&self, id: &Value, params: &Value) {
        let asked = params["protocolVersion"].as_str().unwrap_or("2025-11-25");
        let version = self
            .opts
            .version_answer
            .clone()
            .unwrap_or_else(|| asked.to_string());
        if self.opts.huge_line {
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let chunk = vec![b'x'; 1 << 20];
            let _ = out.write_all(b"{\"huge\":\"");
            for _ in 0..50 {
                let _ = out.write_all(&chunk);
            }
            let _ = out.write_all(b"\"}\n");
            let _ = out.flush();
        }
        self.reply(
            id,
            json!({
                "protocolVersion": version,
                "capabilities": {"tools":{"listChanged":true},"logging":{}},
                "serverInfo": {"name": self.opts.name, "version": "1.0.0"},
                "instructions": "A test server.",
            }),
        );
    }

    /// A 2026-07-28 request, when this server speaks that revision and the request is in it
    /// (`_meta` names the version): checked and answered; true when it was. Legacy requests of
    /// a dual-era server fall through.
    fn modern_request(&self, id: &Value, method: &str, params: &Value) -> bool {
        if self.opts.modern.is_empty() {
            return false;
        }
        let meta = &params["_meta"];
        let Some(version) = meta["io.modelcontextprotocol/protocolVersion"].as_str() else {
            // A legacy request: a dual-era server answers it; a modern-only one refuses it.
            if self.opts.modern.len() > 1 {
                return false;
            }
            self.send(&json!({"jsonrpc":"2.0","id":id,"error":{"code":-32022,
                "message":"Unsupported protocol version",
                "data":{"supported":self.opts.modern,"requested":params["protocolVersion"]}}}));
            return true;
        };
        if !self.opts.modern.iter().any(|v| v == version) {
            self.send(&json!({"jsonrpc":"2.0","id":id,"error":{"code":-32022,
                "message":"Unsupported protocol version",
                "data":{"supported":self.opts.modern,"requested":version}}}));
            return true;
        }
        if meta["io.modelcontextprotocol/clientCapabilities"].is_null()
            || meta["io.modelcontextprotocol/clientInfo"]["name"].is_null()
        {
            self.fail(id, -32602, "_meta lacks clientCapabilities or clientInfo");
            return true;
        }
        let complete = |mut result: Value| {
            result["resultType"] = json!("complete");
            result
        };
        match method {
            "server/discover" => self.reply(
                id,
                complete(json!({
                    "supportedVersions": self.opts.modern,
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo":
                        {"name": self.opts.name, "version": "2.0.0"}},
                    "instructions": "A modern test server.",
                    "ttlMs": 60000, "cacheScope": "public",
                })),
            ),
            "tools/list" => {
                let mut result = complete(json!({"tools": self.tools(), "cacheScope": "public"}));
                if let Some(ttl) = self.opts.ttl_ms {
                    result["ttlMs"] = json!(ttl);
                }
                self.reply(id, result);
            }
            "tools/call" if params["name"] == "ask_client" => {
                let args = &params["arguments"];
                let answer = &params["inputResponses"]["q1"];
                if answer.is_null() {
                    let request = json!({"method": args["method"], "params": args["params"]});
                    self.reply(
                        id,
                        json!({"resultType": "input_required",
                        "inputRequests": {"q1": request}, "requestState": "state-1"}),
                    );
                } else {
                    let text = format!("{answer} state={}", params["requestState"]);
                    self.reply(
                        id,
                        complete(json!({"content":[{"type":"text","text":text}]})),
                    );
                }
            }
            "tools/call" => {
                let text = match params["name"].as_str().unwrap_or_default() {
                    "echo" => params["arguments"]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    other => format!("called {other}"),
                };
                self.reply(
                    id,
                    complete(json!({"content":[{"type":"text","text":text}]})),
                );
            }
            "ping" => self.fail(id, -32601, "Method not found: ping (removed in 2026-07-28)"),
            other => self.fail(id, -32601, &format!("Method not found: {other}")),
        }
        true
    }

    fn list_tools(&self, id: &Value, params: &Value) {
        let tools = self.tools();
        let Some(size) = self.opts.page_size else {
            return self.reply(id, json!({"tools": tools}));
        };
        let start: usize = params["cursor"]
            .as_str()
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let end = (start + size).min(tools.len());
        let mut result = json!({"tools": tools[start.min(end)..end]});
        if end < tools.len() {
            result["nextCursor"] = json!(format!("page-{end}"));
        }
        self.reply(id, result);
    }

    fn call(self: &Arc<Self>, id: Value, params: Value) {
        let name = params["name"].as_str().unwrap_or_default().to_string();
        let args = params["arguments"].clone();
        if self.opts.crash_on_call.as_deref() == Some(name.as_str()) || name == "crash" {
            eprintln!("mcp-test-server: crashing in {name} as asked");
            std::process::exit(3);
        }
        if self.opts.hang_on_call.as_deref() == Some(name.as_str()) || name == "hang" {
            eprintln!("mcp-test-server: hanging in {name} as asked");
            return;
        }
        let text = |t: String| json!({"content":[{"type":"text","text":t}]});
        let result = match name.as_str() {
            "echo" => text(args["text"].as_str().unwrap_or_default().to_string()),
            "add" => {
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                json!({"content":[{"type":"text","text":sum.to_string()}],"structuredContent":{"sum":sum}})
            }
            "error" => {
                json!({"content":[{"type":"text","text":"something went wrong"}],"isError":true})
            }
            "image" => {
                json!({"content":[{"type":"image","data":"A".repeat(400),"mimeType":"image/png"}]})
            }
            "structured" => json!({"content":[],"structuredContent":{"answer":42}}),
            "big" => text("b".repeat(args["chars"].as_u64().unwrap_or(0) as usize)),
            // Listed with `--tool-name huge`: one reply line of `mib` MiB.
            "huge" => return self.huge_reply(&id, &args),
            "slow" | "ask_client" | "flood" => {
                let server = self.clone();
                std::thread::spawn(move || {
                    let result = match name.as_str() {
                        "slow" => server.slow(&params),
                        "flood" => server.flood(&args),
                        _ => server.ask_client(&args),
                    };
                    server.reply(&id, result);
                });
                return;
            }
            other if self.tools().iter().any(|t| t["name"] == other) => {
                text(format!("called {other}"))
            }
            other => {
                json!({"content":[{"type":"text","text":format!("MCP error -32602: Tool {other} not found")}],"isError":true})
            }
        };
        self.reply(&id, result);
        if self.opts.list_changed_after_call && !self.added_tool.swap(true, Ordering::SeqCst) {
            self.notify("notifications/tools/list_changed", json!({}));
        }
    }

    /// A reply of `mib` MiB on one line, streamed in chunks; `id_last` puts the id after the
    /// result (as the TypeScript SDK does), `id_hidden` between the result and another object
    /// member, where a reader skipping the line cannot find it cheaply.
    fn huge_reply(&self, id: &Value, args: &Value) {
        let mib = args["mib"].as_u64().unwrap_or(17);
        let id_hidden = args["id_hidden"].as_bool().unwrap_or(false);
        let id_last = id_hidden || args["id_last"].as_bool().unwrap_or(false);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let head = b"{\"jsonrpc\":\"2.0\",";
        let _ = out.write_all(head);
        if !id_last {
            let _ = write!(out, "\"id\":{id},");
        }
        let _ = out.write_all(b"\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
        let chunk = vec![b'h'; 1 << 20];
        for _ in 0..mib {
            let _ = out.write_all(&chunk);
        }
        let _ = out.write_all(b"\"}]}");
        if id_last {
            let _ = write!(out, ",\"id\":{id}");
        }
        if id_hidden {
            let _ = out.write_all(b",\"extra\":{\"x\":1}");
        }
        let _ = out.write_all(b"}\n");
        let _ = out.flush();
    }

    fn slow(&self, params: &Value) -> Value {
        let steps = params["arguments"]["steps"].as_u64().unwrap_or(3);
        let ms = params["arguments"]["ms"].as_u64().unwrap_or(50);
        let token = params["_meta"]["progressToken"].clone();
        for step in 1..=steps {
            std::thread::sleep(Duration::from_millis(ms));
            if !token.is_null() {
                self.notify(
                    "notifications/progress",
                    json!({"progressToken":token,"progress":step,"total":steps,"message":format!("step {step}")}),
                );
            }
        }
        // A progress for a token nobody knows: the client must ignore it.
        self.notify(
            "notifications/progress",
            json!({"progressToken":"unknown","progress":1}),
        );
        json!({"content":[{"type":"text","text":format!("done after {steps} steps")}]})
    }

    /// Listed with `--tool-name flood`: `count` requests of `method` (with `params`) sent to
    /// the client at once, as a flooding server does; the result lists how each was answered
    /// (the `action` of an elicitation, `result` or the error code otherwise).
    fn flood(self: &Arc<Self>, args: &Value) -> Value {
        let count = args["count"].as_u64().unwrap_or(20);
        let threads: Vec<_> = (0..count)
            .map(|_| {
                let server = self.clone();
                let args = args.clone();
                std::thread::spawn(move || server.ask_client(&args))
            })
            .collect();
        let mut answers = Vec::new();
        for thread in threads {
            let text = thread
                .join()
                .ok()
                .and_then(|r| r["content"][0]["text"].as_str().map(str::to_string))
                .unwrap_or_default();
            let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            answers.push(
                match (&answer["result"]["action"], &answer["error"]["code"]) {
                    (Value::String(action), _) => action.clone(),
                    (_, Value::Number(code)) => format!("error {code}"),
                    _ if answer["result"].is_object() => "result".to_string(),
                    _ => "none".to_string(),
                },
            );
        }
        answers.sort();
        json!({"content":[{"type":"text","text":format!("answers: {}", answers.join(","))}]})
    }

    fn ask_client(&self, args: &Value) -> Value {
        let method = args["method"].as_str().unwrap_or("roots/list");
        let id = format!("s-{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        let (tx, rx) = channel();
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), tx);
        let params = if args["params"].is_object() {
            args["params"].clone()
        } else {
            json!({})
        };
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        let answer = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| json!("no answer within 10s"));
        json!({"content":[{"type":"text","text":answer.to_string()}]})
    }
}

fn main() {
    let opts = parse_args();
    eprintln!("mcp-test-server {} starting", opts.name);
    for i in 0..opts.stderr_lines {
        eprintln!("chatter line {i}");
    }
    if opts.exit_immediately {
        eprintln!("fatal: exiting immediately as asked");
        std::process::exit(2);
    }
    std::thread::sleep(Duration::from_millis(opts.slow_start_ms));
    let log = std::env::var_os("MCP_TEST_LOG").and_then(|path| {
        std::fs::File::options()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    let server = Arc::new(Server {
        opts,
        out: Mutex::new(std::io::stdout()),
        log,
        added_tool: AtomicBool::new(false),
        next_id: AtomicU64::new(0),
        waiting: Mutex::new(HashMap::new()),
    });
    if server.opts.garbage {
        server.send(&json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"garbage mode"}}));
    }
    let stdin = std::io::stdin();
    for (count, line) in stdin.lock().lines().enumerate() {
        let Ok(line) = line else { break };
        server.record(&line);
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("mcp-test-server: not JSON: {line}");
            continue;
        };
        let id = message.get("id").cloned();
        let method = message["method"].as_str().map(str::to_string);
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) if server.modern_request(&id, &method, &params) => {}
            (Some(method), Some(id)) => match method.as_str() {
                "server/discover" if server.opts.discover_silent => {}
                "server/discover" => {
                    let code = server.opts.discover_error.unwrap_or(-32601);
                    server.fail(&id, code, "Method not found: server/discover");
                }
                "initialize" => server.initialize(&id, &params),
                "tools/list" => server.list_tools(&id, &params),
                "tools/call" => server.call(id, params),
                "ping" => server.reply(&id, json!({})),
                other => server.fail(&id, -32601, &format!("Method not found: {other}")),
            },
            (Some(method), None) => {
                if method == "notifications/initialized" {
                    server.notify(
                        "notifications/message",
                        json!({"level":"info","logger":"test","data":"initialized"}),
                    );
                }
            }
            (None, Some(id)) => {
                let key = id
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| id.to_string());
                let waiter = server
                    .waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                if let Some(tx) = waiter {
                    let _ = tx.send(message);
                }
            }
            (None, None) => eprintln!("mcp-test-server: neither request nor response: {line}"),
        }
        if server.opts.stop_reading_after == Some(count + 1) {
            // Keeps running, never reading again: the writer's pipe fills up.
            eprintln!("mcp-test-server: stopped reading stdin as asked");
            loop {
                std::thread::park();
            }
        }
    }
    if server.opts.ignore_stdin_eof {
        eprintln!("mcp-test-server: stdin closed, running on as asked");
        loop {
            std::thread::park();
        }
    }
    eprintln!("mcp-test-server: stdin closed, exiting");
}
