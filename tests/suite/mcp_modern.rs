//! The 2026-07-28 revision beside the `initialize` handshake, against the test server in both
//! eras (stdio) and a scripted HTTP server: the `server/discover` probe and the legacy fallback
//! whatever a legacy server answers (or if it never does), `_meta` on every modern request,
//! `input_required` answered by the same handlers and retried with `inputResponses`, `ttlMs`
//! re-listing, the standard HTTP headers, tools dropped for an invalid `x-mcp-header`, and the
//! modern error codes.

use crate::support::{mcp, mcphttp};

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use ling::mcp::jsonrpc::ErrorObject;
use ling::mcp::modern::Era;
use ling::mcp::sampling::StopReason;
use ling::mcp::{
    ClientHandler, ClientOptions, ElicitAnswer, ElicitRequest, HandlerSupport, McpClient, McpError,
    McpManager, SamplingRequest, SamplingResult, ServerLog, ServerState,
};
use mcp::TestEnv;
use mcphttp::{Recorded, Reply, TestServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn received(env: &TestEnv, name: &str) -> Vec<Value> {
    std::fs::read_to_string(env.received_log(name))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn methods(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

fn client(manager: &McpManager, name: &str) -> McpClient {
    manager
        .client(name)
        .unwrap_or_else(|| panic!("{name} is not connected"))
}

async fn call(manager: &McpManager, server: &str, tool: &str, args: Value) -> String {
    let cancel = CancellationToken::new();
    let call = manager.call_server_tool(server, tool, args, &cancel, None);
    tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the call hung")
        .unwrap_or_else(|e| panic!("{server}/{tool}: {e}"))
        .text
}

#[tokio::test]
async fn a_modern_server_gets_no_handshake_and_every_request_carries_its_meta() {
    let env = TestEnv::new();
    let manager = env.start(vec![env.server("m", &["--modern"])]).await;
    let status = &manager.statuses()[0];
    assert_eq!(status.state, ServerState::Connected, "{status:?}");
    let info = status.server_info.as_ref().unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    assert_eq!(info.version, "2.0.0");
    assert_eq!(
        client(&manager, "m").era(),
        Era::Modern("2026-07-28".into())
    );
    assert_eq!(
        call(&manager, "m", "echo", json!({"text": "hi"})).await,
        "hi"
    );
    let sent = received(&env, "m");
    let sent_methods = methods(&sent);
    assert_eq!(
        sent_methods[..3],
        ["server/discover", "tools/list", "tools/call"]
    );
    assert!(
        !sent_methods
            .iter()
            .any(|m| m.starts_with("initialize") || m.contains("initialized"))
    );
    for request in sent.iter().filter(|m| m.get("id").is_some()) {
        let meta = &request["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{request}"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"], "ling",
            "{request}"
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"]["roots"].is_object());
    }
    manager.shutdown().await;
}

#[tokio::test]
async fn legacy_servers_get_initialize_whatever_they_answer_the_probe() {
    let env = TestEnv::new();
    let configs = vec![
        env.server("not-found", &[]),
        env.server("invalid", &["--discover-error", "-32600"]),
        env.server("internal", &["--discover-error", "-32603"]),
        env.server("silent", &["--discover-silent"]),
        env.server("dual", &["--dual-era"]),
    ];
    let started = Instant::now();
    let manager = env.start(configs).await;
    // The silent one costs the probe's timeout (5 s), no more.
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    for name in ["not-found", "invalid", "internal", "silent"] {
        let status = manager
            .statuses()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap();
        assert_eq!(status.state, ServerState::Connected, "{name}: {status:?}");
        let version = &status.server_info.as_ref().unwrap().protocol_version;
        assert_eq!(version, "2025-11-25", "{name}");
        assert_eq!(client(&manager, name).era(), Era::Legacy, "{name}");
        let sent = methods(&received(&env, name));
        assert_eq!(
            sent[..3],
            ["server/discover", "initialize", "notifications/initialized"]
        );
        assert_eq!(
            call(&manager, name, "echo", json!({"text": "x"})).await,
            "x"
        );
    }
    // A dual-era server answers the probe: spoken to in the modern revision.
    assert_eq!(
        client(&manager, "dual").era(),
        Era::Modern("2026-07-28".into())
    );
    assert!(!methods(&received(&env, "dual")).contains(&"initialize".to_string()));
    manager.shutdown().await;
}

#[tokio::test]
async fn the_era_is_kept_for_a_reconnect_without_probing_again() {
    let env = TestEnv::new();
    let manager = env
        .start(vec![env.server("m", &["--modern"]), env.server("l", &[])])
        .await;
    for name in ["m", "l"] {
        manager.reconnect(name).await.unwrap();
    }
    // The legacy server is not probed again; the modern one is asked for its info again.
    let sent = methods(&received(&env, "l"));
    assert_eq!(
        sent.iter().filter(|m| *m == "server/discover").count(),
        1,
        "{sent:?}"
    );
    assert_eq!(
        sent.iter().filter(|m| *m == "initialize").count(),
        2,
        "{sent:?}"
    );
    let sent = methods(&received(&env, "m"));
    assert_eq!(
        sent.iter().filter(|m| *m == "server/discover").count(),
        2,
        "{sent:?}"
    );
    assert_eq!(
        client(&manager, "m").era(),
        Era::Modern("2026-07-28".into())
    );
    assert_eq!(client(&manager, "l").era(), Era::Legacy);
    manager.shutdown().await;
}

/// Answers sampling and elicitation, as the agent's host does.
struct Handler;

#[async_trait]
impl ClientHandler for Handler {
    fn support(&self) -> HandlerSupport {
        HandlerSupport {
            sampling: true,
            elicitation: true,
            elicitation_url: false,
        }
    }
    async fn create_message(
        &self,
        server: &str,
        request: &SamplingRequest,
    ) -> Result<SamplingResult, ErrorObject> {
        Ok(SamplingResult {
            text: format!("{server} sampled {}", request.messages[0].text),
            model: "m".into(),
            stop_reason: StopReason::EndTurn,
        })
    }
    async fn elicit(&self, _: &str, _: &ElicitRequest) -> Result<ElicitAnswer, ErrorObject> {
        Ok(ElicitAnswer::Decline)
    }
}

#[tokio::test]
async fn input_required_is_answered_by_the_same_handlers_and_retried_with_the_state() {
    let env = TestEnv::new();
    let mut options = env.options();
    options.handler = Some(Arc::new(Handler));
    let manager = McpManager::start(vec![env.server("m", &["--modern"])], options);
    manager.wait_ready().await;
    let ask = |method: &str, params: Value| json!({"method": method, "params": params});
    let roots = call(&manager, "m", "ask_client", ask("roots/list", json!({}))).await;
    let root = env.paths.project_root.display().to_string();
    assert!(roots.contains(&format!("file://{root}")), "{roots}");
    assert!(roots.ends_with("state=\"state-1\""), "{roots}");
    let why = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "why"}}],
        "maxTokens": 10});
    let sampled = call(
        &manager,
        "m",
        "ask_client",
        ask("sampling/createMessage", why),
    )
    .await;
    assert!(sampled.contains("m sampled why"), "{sampled}");
    let form = json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}});
    let elicited = call(&manager, "m", "ask_client", ask("elicitation/create", form)).await;
    assert!(elicited.contains(r#"{"action":"decline"}"#), "{elicited}");
    // Each retry is a new request with the responses and the state echoed.
    let sent = received(&env, "m");
    let retries: Vec<&Value> = sent
        .iter()
        .filter(|m| !m["params"]["inputResponses"].is_null())
        .collect();
    assert_eq!(retries.len(), 3);
    assert!(
        retries
            .iter()
            .all(|m| m["params"]["requestState"] == "state-1")
    );
    let ids: std::collections::HashSet<String> = sent.iter().map(|m| m["id"].to_string()).collect();
    assert_eq!(ids.len(), sent.len(), "an id was reused");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_modern_tool_list_is_fetched_again_once_its_ttl_runs_out() {
    let env = TestEnv::new();
    let manager = env
        .start(vec![env.server("m", &["--modern", "--ttl-ms", "300"])])
        .await;
    assert!(!manager.refresh_if_changed().await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    manager.refresh_if_changed().await;
    let lists = methods(&received(&env, "m"))
        .iter()
        .filter(|m| *m == "tools/list")
        .count();
    assert_eq!(lists, 2);
    manager.shutdown().await;
}

fn rpc(id: &Value, result: Value) -> Reply {
    Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A modern HTTP server: discover, a tool list with one valid and two invalid `x-mcp-header`
/// tools, and calls that echo the headers they came with.
fn modern_http(r: &Recorded) -> Reply {
    let body = r.json();
    let id = body["id"].clone();
    let region = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}}});
    match body["method"].as_str().unwrap_or_default() {
        "server/discover" => rpc(
            &id,
            json!({"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "h", "version": "3"}}}),
        ),
        "tools/list" => rpc(
            &id,
            json!({"resultType": "complete", "ttlMs": 60000,
                "cacheScope": "public", "tools": [
                {"name": "sql", "inputSchema": region},
                {"name": "bad_type", "inputSchema": {"type": "object", "properties": {
                    "n": {"type": "number", "x-mcp-header": "N"}}}},
                {"name": "bad_place", "inputSchema": {"type": "object", "properties": {
                    "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}},
            ]}),
        ),
        "tools/call" if body["params"]["name"] == "slow" => Reply::sse(vec![
            mcphttp::Step::Sleep(Duration::from_secs(3)),
            mcphttp::event(
                "1",
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete", "content": []}}),
            ),
        ]),
        "tools/call" => {
            let seen: Vec<String> = [
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
                "mcp-param-region",
            ]
            .iter()
            .map(|h| format!("{h}={}", r.header(h).unwrap_or("-")))
            .collect();
            rpc(
                &id,
                json!({"resultType": "complete",
                "content": [{"type": "text", "text": seen.join(" ")}]}),
            )
        }
        "resources/read" => Reply::json(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": "Resource not found"}})),
        _ => Reply::Status(202),
    }
}

async fn connect_http(url: &str) -> Result<McpClient, McpError> {
    let connection = ling::mcp::transport::http::connect(url, &[], Duration::from_secs(5))
        .await
        .unwrap();
    let options = ClientOptions::new("h", Arc::new(ServerLog::discard()));
    McpClient::connect(connection, options).await
}

#[tokio::test]
async fn modern_http_requests_carry_the_standard_headers_and_bad_header_tools_are_dropped() {
    let server = TestServer::start(modern_http).await;
    let client = connect_http(&format!("{}/mcp", server.base)).await.unwrap();
    assert_eq!(client.era(), Era::Modern("2026-07-28".into()));
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tools, ["sql"]);
    let cancel = CancellationToken::new();
    let args = json!({"region": "eu west ☃", "q": "x"});
    let result = client
        .call_tool("sql", args, &cancel, None, Duration::from_secs(5))
        .await
        .unwrap();
    let text = result.content[0]["text"].as_str().unwrap().to_string();
    assert_eq!(
        text,
        "mcp-protocol-version=2026-07-28 mcp-method=tools/call mcp-name=sql \
         mcp-param-region==?base64?ZXUgd2VzdCDimIM=?="
    );
    let posts = server.with_method("POST");
    assert_eq!(posts[0].header("mcp-method"), Some("server/discover"));
    assert!(
        posts
            .iter()
            .all(|p| p.header("mcp-protocol-version") == Some("2026-07-28"))
    );
    assert!(
        server.with_method("GET").is_empty(),
        "a modern client opens no GET stream"
    );
    // A cancelled call sends no notification: the revision has none over HTTP.
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stop.cancel();
    });
    let slow = client.call_tool("slow", json!({}), &cancel, None, Duration::from_secs(10));
    assert!(matches!(slow.await, Err(McpError::Cancelled)));
    let posted: Vec<String> = server
        .with_method("POST")
        .iter()
        .map(|p| p.rpc_method())
        .collect();
    assert!(
        !posted.contains(&"notifications/cancelled".to_string()),
        "{posted:?}"
    );
    // Resource not found is -32602 in this revision.
    let missing = client.read_resource("file:///nope").await.unwrap_err();
    assert!(
        matches!(missing, McpError::ResourceNotFound { .. }),
        "{missing:?}"
    );
    client.close().await;
    assert!(
        server.with_method("DELETE").is_empty(),
        "no session, no DELETE"
    );
}

/// A legacy HTTP server: a modern request gets this 400 (server-everything's answer to a request
/// without a session); initialize works.
fn legacy_http(r: &Recorded) -> Reply {
    let body = r.json();
    let id = body["id"].clone();
    match body["method"].as_str().unwrap_or_default() {
        "server/discover" => Reply::error(
            400,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
        ),
        "initialize" => rpc(
            &id,
            json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}),
        ),
        "tools/list" => rpc(&id, json!({"tools": []})),
        _ => Reply::Status(202),
    }
}

/// A modern server that speaks none of Ling's versions, answering 400 with -32022.
fn future_http(r: &Recorded) -> Reply {
    let id = r.json()["id"].clone();
    Reply::error(
        400,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"}}})
        .to_string(),
    )
}

#[tokio::test]
async fn over_http_a_400_that_is_not_a_modern_error_falls_back_and_a_modern_one_does_not() {
    let legacy = TestServer::start(legacy_http).await;
    let client = connect_http(&format!("{}/mcp", legacy.base)).await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().unwrap().protocol_version, "2025-11-25");
    let initialize = legacy
        .with_method("POST")
        .into_iter()
        .find(|p| p.rpc_method() == "initialize");
    assert!(initialize.unwrap().header("mcp-protocol-version").is_none());
    client.close().await;

    let future = TestServer::start(future_http).await;
    let error = match connect_http(&format!("{}/mcp", future.base)).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("connected to a server of no shared version"),
    };
    assert!(
        error.contains("[\"2099-01-01\"], none of which Ling speaks"),
        "{error}"
    );
    assert!(
        !future
            .requests()
            .iter()
            .any(|r| r.rpc_method() == "initialize")
    );
}

#[tokio::test]
async fn a_modern_server_rejecting_the_first_request_with_32022_gets_it_again_in_a_listed_version()
{
    let rejected = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = Arc::clone(&rejected);
    let server = TestServer::start(move |r: &Recorded| {
        let id = r.json()["id"].clone();
        if !seen.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
            return Reply::error(400, &error.to_string());
        }
        modern_http(r)
    })
    .await;
    let client = connect_http(&format!("{}/mcp", server.base)).await.unwrap();
    assert_eq!(client.era(), Era::Modern("2026-07-28".into()));
    let discovers = server
        .with_method("POST")
        .iter()
        .filter(|p| p.rpc_method() == "server/discover")
        .count();
    assert_eq!(discovers, 2);
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r.rpc_method() == "initialize")
    );
}
