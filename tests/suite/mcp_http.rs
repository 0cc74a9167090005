//! The Streamable HTTP and legacy HTTP+SSE transports against scripted loopback servers: reply
//! kinds, session and version headers, resuming a cut stream, re-initializing an expired
//! session, DELETE on close, and HTTP failures that fail the request at once.

use crate::support::mcphttp;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ling::mcp::jsonrpc::{Message, RequestId};
use ling::mcp::transport::{Connection, TransportEvent, http, sse};
use ling::mcp::{ClientOptions, McpClient, McpError, ServerLog};
use mcphttp::{Recorded, Reply, Step, TestServer, event};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

const TIMEOUT: Duration = Duration::from_secs(5);

async fn next(conn: &mut Connection) -> Message {
    match tokio::time::timeout(TIMEOUT, conn.events.recv()).await {
        Ok(Some(TransportEvent::Message(m))) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn initialize(id: i64) -> Message {
    Message::request(
        RequestId::Number(id),
        "initialize",
        Some(
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
    )
}

fn initialized() -> Message {
    Message::notification("notifications/initialized", None)
}

fn request(id: i64, method: &str) -> Message {
    Message::request(RequestId::Number(id), method, Some(json!({})))
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn init_result(id: Value) -> Value {
    result(
        id,
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    )
}

/// A server that answers every request with JSON, notifications with 202, GET with 405.
fn json_server(session: &'static str) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| match (r.method.as_str(), r.rpc_method().as_str()) {
        ("GET", _) => Reply::Status(405),
        ("DELETE", _) => Reply::Status(200),
        (_, "initialize") => Reply::json_with(
            &[("Mcp-Session-Id", session)],
            init_result(r.json()["id"].clone()),
        ),
        (_, "notifications/initialized") | (_, "response") => Reply::Status(202),
        _ => Reply::json(result(
            r.json()["id"].clone(),
            json!({"tools": [], "echo": r.rpc_method()}),
        )),
    }
}

#[tokio::test]
async fn json_replies_carry_session_version_and_configured_headers() {
    let server = TestServer::start(json_server("sess-1")).await;
    let url = format!("{}/mcp", server.base);
    let headers = [("X-Api-Key".to_string(), "k1".to_string())];
    let mut conn = http::connect(&url, &headers, TIMEOUT).await.unwrap();
    conn.transport.send(initialize(0)).await.unwrap();
    assert_eq!(next(&mut conn).await.to_value(), init_result(json!(0)));
    conn.transport.set_protocol_version("2025-11-25");
    conn.transport.send(initialized()).await.unwrap();
    conn.transport.send(request(1, "tools/list")).await.unwrap();
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(1), json!({"tools": [], "echo": "tools/list"}))
    );
    conn.transport
        .close(ling::mcp::client::Shutdown::Graceful)
        .await;

    let posts = server.with_method("POST");
    let seen: Vec<_> = posts
        .iter()
        .map(|r| {
            (
                r.rpc_method(),
                r.header("mcp-session-id"),
                r.header("mcp-protocol-version"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("initialize".to_string(), None, None),
            (
                "notifications/initialized".to_string(),
                Some("sess-1"),
                Some("2025-11-25")
            ),
            ("tools/list".to_string(), Some("sess-1"), Some("2025-11-25")),
        ]
    );
    for r in server.requests() {
        assert_eq!(
            r.header("x-api-key"),
            Some("k1"),
            "{} {}",
            r.method,
            r.rpc_method()
        );
        assert_eq!(r.path, "/mcp");
    }
    for r in &posts {
        assert_eq!(
            r.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    let deletes = server.with_method("DELETE");
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].header("mcp-session-id"), Some("sess-1"));
    // The standalone GET stream was tried with the session, refused with 405, and tolerated.
    let gets = server.with_method("GET");
    assert!(
        gets.iter()
            .all(|g| g.header("mcp-session-id") == Some("sess-1"))
    );
    assert!(
        conn.transport.send(request(2, "ping")).await.is_err(),
        "send after close must fail"
    );
}

#[tokio::test]
async fn sse_reply_skips_priming_and_delivers_notifications_before_the_response() {
    let server = TestServer::start(|r: &Recorded| {
        let id = r.json()["id"].clone();
        Reply::sse(vec![
            Step::Send("id: p-0\ndata: \n\n".into()),
            Step::Send(": keep-alive\n\n".into()),
            event("p-1", &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})),
            event("p-2", &result(id, json!({"content": []}))),
        ])
    })
    .await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(request(7, "tools/call")).await.unwrap();
    assert_eq!(
        next(&mut conn).await,
        Message::notification("notifications/progress", Some(json!({"progress": 1})))
    );
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(7), json!({"content": []}))
    );
}

#[tokio::test]
async fn server_request_on_an_open_post_stream_is_answered_while_it_stays_open() {
    let answered = Arc::new(Notify::new());
    let answered_in_server = Arc::clone(&answered);
    let server = TestServer::start(move |r: &Recorded| match r.rpc_method().as_str() {
        "response" => {
            answered_in_server.notify_one();
            Reply::Status(202)
        }
        _ => Reply::sse(vec![
            Step::Send("id: 1\ndata: \n\n".into()),
            event("2", &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create", "params": {}})),
            Step::Wait(Arc::clone(&answered_in_server)),
            event("3", &result(r.json()["id"].clone(), json!({"done": true}))),
        ]),
    })
    .await;
    let _ = answered;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(request(3, "tools/call")).await.unwrap();
    let Message::Request { id, method, .. } = next(&mut conn).await else {
        panic!("expected the server's request")
    };
    assert_eq!(
        (id.clone(), method.as_str()),
        (RequestId::String("srv-1".into()), "elicitation/create")
    );
    conn.transport
        .send(Message::Response {
            id,
            result: json!({"action": "accept"}),
        })
        .await
        .unwrap();
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(3), json!({"done": true}))
    );
    let posted: Vec<_> = server
        .with_method("POST")
        .iter()
        .map(|r| r.json())
        .collect();
    assert_eq!(
        posted[1],
        json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"action": "accept"}})
    );
}

#[tokio::test]
async fn a_cut_stream_is_resumed_by_get_with_last_event_id_after_retry() {
    let server =
        TestServer::start(
            |r: &Recorded| match (r.method.as_str(), r.header("last-event-id")) {
                ("POST", _) => {
                    Reply::sse(vec![Step::Send("id: ev-7\nretry: 300\ndata: \n\n".into())])
                }
                ("GET", Some(_)) => Reply::sse(vec![
                    Step::Send("id: ev-8\ndata: \n\n".into()),
                    event("ev-9", &result(json!(5), json!({"resumed": true}))),
                ]),
                _ => Reply::Status(405),
            },
        )
        .await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(request(5, "tools/call")).await.unwrap();
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(5), json!({"resumed": true}))
    );
    let post = &server.with_method("POST")[0];
    let gets = server.with_method("GET");
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("last-event-id"), Some("ev-7"));
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    let waited = gets[0].at.duration_since(post.at);
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(1000),
        "{waited:?}"
    );
}

#[tokio::test]
async fn a_stream_that_cannot_be_resumed_fails_its_request() {
    let server = TestServer::start(|r: &Recorded| match r.method.as_str() {
        "POST" => Reply::sse(vec![Step::Send("id: a\nretry: 10\ndata: \n\n".into())]),
        _ => Reply::Status(405),
    })
    .await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(request(9, "tools/call")).await.unwrap();
    let Message::Error { id, error } = next(&mut conn).await else {
        panic!("expected an error")
    };
    assert_eq!(id, Some(RequestId::Number(9)));
    assert!(
        error.message.contains("could not be resumed"),
        "{}",
        error.message
    );
}

/// Runs the expiry scenario with the server answering a stale session with `stale`.
async fn reinitializes_once(stale: Reply) {
    let inits = Arc::new(AtomicUsize::new(0));
    let stale = Arc::new(Mutex::new(Some(stale)));
    let server = TestServer::start(move |r: &Recorded| {
        let id = r.json()["id"].clone();
        match (
            r.method.as_str(),
            r.rpc_method().as_str(),
            r.header("mcp-session-id"),
        ) {
            ("GET", ..) => Reply::Status(405),
            (_, "initialize", _) => {
                let n = inits.fetch_add(1, Ordering::SeqCst) + 1;
                let session = format!("s-{n}");
                Reply::json_with(&[("mcp-session-id", session.as_str())], init_result(id))
            }
            (_, _, Some("s-1")) if r.rpc_method() == "tools/list" => {
                stale.lock().unwrap().take().unwrap_or(Reply::Status(500))
            }
            (_, "notifications/initialized", _) => Reply::Status(202),
            (_, _, Some("s-2")) => Reply::json(result(id, json!({"tools": []}))),
            _ => Reply::Status(500),
        }
    })
    .await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(initialize(0)).await.unwrap();
    assert_eq!(next(&mut conn).await.to_value(), init_result(json!(0)));
    conn.transport.set_protocol_version("2025-11-25");
    conn.transport.send(initialized()).await.unwrap();
    conn.transport.send(request(1, "tools/list")).await.unwrap();
    // The replayed initialize's response is swallowed: the next event is the tools/list answer.
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(1), json!({"tools": []}))
    );
    let posts: Vec<_> = server
        .with_method("POST")
        .iter()
        .map(|r| {
            (
                r.rpc_method(),
                r.header("mcp-session-id").map(str::to_string),
            )
        })
        .collect();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        posts,
        vec![
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-1")),
            ("tools/list".into(), s("s-1")),
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-2")),
            ("tools/list".into(), s("s-2")),
        ]
    );
    assert!(
        conn.events.try_recv().is_err(),
        "nothing else may be delivered"
    );
}

#[tokio::test]
async fn an_expired_session_404_reinitializes_once_and_resends() {
    reinitializes_once(Reply::Status(404)).await;
}

#[tokio::test]
async fn server_everythings_400_for_an_unknown_session_counts_as_expiry() {
    let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
    reinitializes_once(Reply::error(400, body)).await;
}

#[tokio::test]
async fn http_500_fails_the_request_at_once_with_status_and_body() {
    let server = TestServer::start(|_: &Recorded| Reply::error(500, "boom: database down")).await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    let started = Instant::now();
    conn.transport.send(request(4, "tools/call")).await.unwrap();
    let Message::Error { id, error } = next(&mut conn).await else {
        panic!("expected an error")
    };
    assert_eq!(id, Some(RequestId::Number(4)));
    assert_eq!(error.code, http::HTTP_ERROR_CODE);
    assert!(http::is_transport_failure(&error));
    assert!(
        error.message.contains("500") && error.message.contains("boom: database down"),
        "{}",
        error.message
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    let err = conn.transport.send(initialized()).await.unwrap_err();
    assert!(err.to_string().contains("500"), "{err}");
}

#[tokio::test]
async fn unauthorized_says_authentication_is_required() {
    let server = TestServer::start(|_: &Recorded| Reply::Status(401)).await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(initialize(0)).await.unwrap();
    let Message::Error { error, .. } = next(&mut conn).await else {
        panic!("expected an error")
    };
    assert!(
        error.message.contains("requires authentication") && error.message.contains("OAuth"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn connection_refused_names_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut conn = http::connect(&url, &[], TIMEOUT).await.unwrap();
    conn.transport.send(initialize(0)).await.unwrap();
    let Message::Error { error, .. } = next(&mut conn).await else {
        panic!("expected an error")
    };
    assert!(
        error.message.contains(&url) && error.message.contains("cannot connect"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn legacy_sse_posts_to_the_endpoint_and_reads_message_events() {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let rx = Mutex::new(Some(rx));
    let server = TestServer::start(move |r: &Recorded| match r.method.as_str() {
        "GET" => Reply::sse(vec![
            Step::Send(": hello\n\nevent: endpoint\ndata: /messages?sessionId=abc\n\n".into()),
            Step::Relay(rx.lock().unwrap().take().unwrap()),
        ]),
        _ => {
            let message = r.json();
            if let Some(id) = message.get("id") {
                let answer = result(id.clone(), json!({"method": message["method"]}));
                tx.send(format!("event: message\ndata: {answer}\n\n"))
                    .unwrap();
            }
            Reply::Status(202)
        }
    })
    .await;
    let headers = [("Authorization".to_string(), "Bearer t".to_string())];
    let mut conn = sse::connect(&format!("{}/sse", server.base), &headers, TIMEOUT)
        .await
        .unwrap();
    conn.transport.send(initialize(0)).await.unwrap();
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(0), json!({"method": "initialize"}))
    );
    conn.transport.send(initialized()).await.unwrap();
    conn.transport.send(request(1, "tools/list")).await.unwrap();
    assert_eq!(
        next(&mut conn).await.to_value(),
        result(json!(1), json!({"method": "tools/list"}))
    );
    let requests = server.requests();
    let seen: Vec<_> = requests
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.as_str(),
                r.header("authorization"),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            ("GET", "/sse", Some("Bearer t")),
            ("POST", "/messages?sessionId=abc", Some("Bearer t")),
            ("POST", "/messages?sessionId=abc", Some("Bearer t")),
            ("POST", "/messages?sessionId=abc", Some("Bearer t")),
        ]
    );
    assert_eq!(requests[0].header("accept"), Some("text/event-stream"));
    conn.transport
        .close(ling::mcp::client::Shutdown::Graceful)
        .await;
}

#[tokio::test]
async fn legacy_sse_without_an_endpoint_event_times_out_with_a_hint() {
    let server = TestServer::start(|_: &Recorded| {
        Reply::sse(vec![
            Step::Send("data: x\n\n".into()),
            Step::Sleep(Duration::from_secs(3)),
        ])
    })
    .await;
    let Err(err) = sse::connect(&server.base, &[], Duration::from_millis(300)).await else {
        panic!("connect must fail without an endpoint event")
    };
    assert!(err.to_string().contains("no endpoint event"), "{err}");
}

#[tokio::test]
async fn a_cancelled_request_is_neither_resumed_nor_failed() {
    let server =
        TestServer::start(
            |r: &Recorded| match (r.method.as_str(), r.rpc_method().as_str()) {
                ("POST", "tools/call") => {
                    Reply::sse(vec![Step::Send("id: c-1\nretry: 300\ndata: \n\n".into())])
                }
                ("POST", _) => Reply::Status(202),
                _ => Reply::Status(405),
            },
        )
        .await;
    let mut conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    conn.transport.send(request(6, "tools/call")).await.unwrap();
    let cancel = Message::notification("notifications/cancelled", Some(json!({"requestId": 6})));
    conn.transport.send(cancel).await.unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        server.with_method("GET").is_empty(),
        "a cancelled request must not be resumed"
    );
    assert!(
        conn.events.try_recv().is_err(),
        "a cancelled request gets no made-up answer"
    );
}

#[tokio::test]
async fn a_refused_connection_reads_as_a_transport_error_not_a_server_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let conn = http::connect(&url, &[], TIMEOUT).await.unwrap();
    let options = ClientOptions::new("remote", Arc::new(ServerLog::discard()));
    let error = McpClient::connect(conn, options).await.err().unwrap();
    assert!(matches!(error, McpError::Transport { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with("MCP server \"remote\": cannot connect to")
            && text.contains("127.0.0.1")
            && !text.contains("returned error"),
        "{text}"
    );
}

#[tokio::test]
async fn a_servers_own_32000_error_stays_a_server_error() {
    // Every request, the server/discover probe included, gets the same error.
    let server = TestServer::start(move |r: &Recorded| {
        let id = r.json()["id"].clone();
        Reply::json(
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"quota exceeded"}}),
        )
    })
    .await;
    let conn = http::connect(&server.base, &[], TIMEOUT).await.unwrap();
    let options = ClientOptions::new("remote", Arc::new(ServerLog::discard()));
    let error = McpClient::connect(conn, options).await.err().unwrap();
    assert!(
        error
            .to_string()
            .contains("returned error -32000: quota exceeded"),
        "{error}"
    );
}
