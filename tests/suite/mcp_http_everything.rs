//! Ling's Streamable HTTP transport against the real reference server, server-everything in
//! `streamableHttp` mode (installed into `.cache/npm`, or `LING_TEST_NPM_DIR`, by
//! `scripts/install-peers.sh`): initialize with its session and SSE replies, tools/list, a call of
//! `echo`, and DELETE on close. Without Node or the server the test fails.

use std::time::{Duration, Instant};

use crate::support::peers::{self, EVERYTHING};
use ling::mcp::jsonrpc::{Message, RequestId};
use ling::mcp::transport::{Connection, TransportEvent, http};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(15);

/// Waits for the response to `id`, skipping the notifications the server sends meanwhile.
async fn response(conn: &mut Connection, id: i64) -> Value {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, conn.events.recv()).await {
            Ok(Some(TransportEvent::Message(Message::Response { id: got, result })))
                if got == RequestId::Number(id) =>
            {
                return result;
            }
            Ok(Some(TransportEvent::Message(Message::Error { error, .. }))) => {
                panic!("request {id} failed: {error:?}")
            }
            Ok(Some(TransportEvent::Message(_))) => {}
            other => panic!("no response to {id}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let (node, server) = peers::npm_script(EVERYTHING);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(node)
        .arg(server)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < TIMEOUT,
            "server-everything did not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut conn = http::connect(&url, &[], TIMEOUT).await.unwrap();
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "ling-test", "version": "0"}});
    conn.transport
        .send(Message::request(
            RequestId::Number(0),
            "initialize",
            Some(params),
        ))
        .await
        .unwrap();
    let init = response(&mut conn, 0).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "mcp-servers/everything");
    conn.transport.set_protocol_version("2025-11-25");
    conn.transport
        .send(Message::notification("notifications/initialized", None))
        .await
        .unwrap();

    conn.transport
        .send(Message::request(RequestId::Number(1), "tools/list", None))
        .await
        .unwrap();
    let tools = response(&mut conn, 1).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    let call = json!({"name": "echo", "arguments": {"message": "hello over http"}});
    conn.transport
        .send(Message::request(
            RequestId::Number(2),
            "tools/call",
            Some(call),
        ))
        .await
        .unwrap();
    let result = response(&mut conn, 2).await;
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("hello over http"), "{result}");

    conn.transport
        .close(ling::mcp::client::Shutdown::Graceful)
        .await;
    let _ = child.kill().await;
}
