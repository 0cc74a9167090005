//! Limits that fail fast: a reply over the stdio line limit or the HTTP message limit fails the
//! call it answers at once, naming the limit (never a wait for the tool timeout), and shutdown
//! does not wait long for a server that ignores its stdin closing.

use crate::support::{mcp, mcphttp, process};

use std::time::{Duration, Instant};

use ling::mcp::{McpClient, McpError, ServerLog};
use mcp::TestEnv;
use mcphttp::{Recorded, Reply, Step, TestServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Well below the tool timeout (60 s here): an over-limit reply must not wait for it.
const AT_ONCE: Duration = Duration::from_secs(15);

async fn huge_server(env: &TestEnv) -> std::sync::Arc<ling::mcp::McpManager> {
    let mut config = env.server("big", &["--tool-name", "huge"]);
    config.tool_timeout = Duration::from_secs(60);
    env.start(vec![config]).await
}

async fn call(
    manager: &ling::mcp::McpManager,
    tool: &str,
    args: Value,
) -> Result<ling::mcp::RenderedResult, McpError> {
    let cancel = CancellationToken::new();
    let call = manager.call_server_tool("big", tool, args, &cancel, None);
    tokio::time::timeout(AT_ONCE, call)
        .await
        .expect("the call waited for its tool timeout")
}

fn assert_names_the_limit(error: &McpError) {
    let text = error.to_string();
    assert!(matches!(error, McpError::TooLarge { .. }), "{error:?}");
    assert!(
        text.contains("over the 16 MiB limit of one stdio message"),
        "{text}"
    );
}

#[tokio::test]
async fn a_reply_over_the_line_limit_fails_its_call_at_once_wherever_its_id_is() {
    let env = TestEnv::new();
    let manager = huge_server(&env).await;
    for id_last in [false, true] {
        let started = Instant::now();
        let args = json!({"mib": 17, "id_last": id_last});
        let error = call(&manager, "huge", args).await.unwrap_err();
        assert_names_the_limit(&error);
        assert!(
            error.to_string().contains("its reply was 17.0 MiB"),
            "{error}"
        );
        assert!(started.elapsed() < AT_ONCE);
    }
    // The connection is still good.
    let echo = call(&manager, "echo", json!({"text": "still here"})).await;
    assert_eq!(echo.unwrap().text, "still here");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_reply_whose_id_cannot_be_read_fails_every_call_in_flight() {
    let env = TestEnv::new();
    let manager = huge_server(&env).await;
    let cancel = CancellationToken::new();
    let hanging = manager.call_server_tool("big", "hang", json!({}), &cancel, None);
    let huge = call(&manager, "huge", json!({"mib": 17, "id_hidden": true}));
    let (hanging, huge) = tokio::time::timeout(AT_ONCE, async { tokio::join!(hanging, huge) })
        .await
        .expect("the calls waited for their tool timeout");
    for error in [hanging.unwrap_err(), huge.unwrap_err()] {
        assert_names_the_limit(&error);
        assert!(
            error
                .to_string()
                .contains("every call in flight to this server failed"),
            "{error}"
        );
    }
    manager.shutdown().await;
}

/// An HTTP server whose `tools/call` reply is `mib` MiB, as JSON or as one SSE event.
fn huge_http(sse: bool) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let id = r.json()["id"].clone();
        match (r.method.as_str(), r.rpc_method().as_str()) {
            ("GET", _) => Reply::Status(405),
            ("DELETE", _) => Reply::Status(200),
            (_, "initialize") => Reply::json(json!({"jsonrpc":"2.0","id":id,"result":{
                "protocolVersion":"2025-11-25","capabilities":{"tools":{}},
                "serverInfo":{"name":"h","version":"1"}}})),
            (_, "tools/call") => {
                let text = "h".repeat(17 << 20);
                let body = json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}]}});
                if sse {
                    Reply::sse(vec![Step::Send(format!("data: {body}\n\n"))])
                } else {
                    Reply::json(body)
                }
            }
            (_, "server/discover") => Reply::json(json!({"jsonrpc":"2.0","id":id,
                "error":{"code":-32601,"message":"Method not found"}})),
            _ => Reply::Status(202),
        }
    }
}

#[tokio::test]
async fn an_http_reply_over_the_message_limit_fails_its_call_at_once() {
    for sse in [false, true] {
        let server = TestServer::start(huge_http(sse)).await;
        let url = format!("{}/mcp", server.base);
        let connection = ling::mcp::transport::http::connect(&url, &[], AT_ONCE)
            .await
            .unwrap();
        let options = ling::mcp::ClientOptions::new("h", std::sync::Arc::new(ServerLog::discard()));
        let client = McpClient::connect(connection, options).await.unwrap();
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let call = client.call_tool("big", json!({}), &cancel, None, Duration::from_secs(60));
        let error = tokio::time::timeout(AT_ONCE, call)
            .await
            .expect("the call waited for its timeout")
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("over the 16 MiB limit of one message"),
            "sse {sse}: {text}"
        );
        assert!(started.elapsed() < AT_ONCE);
        client.close().await;
    }
}

#[tokio::test]
async fn shutdown_gives_a_server_that_ignores_stdin_closing_a_short_grace_then_signals_it() {
    let env = TestEnv::new();
    let pid_file = env.dir.path().join("stubborn.pid");
    let mut config = env.server("stubborn", &["--ignore-stdin-eof"]);
    if let ling::config::mcp::TransportConfig::Stdio { command, args, .. } = &mut config.transport {
        let script = format!(
            "echo $$ > {}; exec {} --ignore-stdin-eof",
            pid_file.display(),
            command
        );
        *command = "sh".into();
        *args = vec!["-c".into(), script];
    }
    let manager = env.start(vec![config]).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = Instant::now();
    manager.shutdown().await;
    let took = started.elapsed();
    // 100 ms of grace after stdin closes, then SIGTERM ends it at once (it was a second).
    assert!(took < Duration::from_millis(400), "shutdown took {took:?}");
    assert!(
        took >= Duration::from_millis(90),
        "no grace before SIGTERM: {took:?}"
    );
    assert!(process::gone_within(pid, Duration::from_secs(2)));
    let log = std::fs::read_dir(env.paths.logs_dir()).unwrap();
    let text: String = log
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    assert!(
        text.contains("sent SIGTERM to the server's process group"),
        "{text}"
    );
}
