//! HTTP hooks against a loopback server started by the test: the POSTed input, expanded headers,
//! a JSON decision in the response, and failures that do not block (unless failClosed).

use crate::support::hooks;

use hooks::{Project, hooks_file, pre_tool};
use ling::hooks::{Decision, NoticeKind};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A request the server saw: its head (request line and headers) and its body.
struct Seen {
    head: String,
    body: Value,
}

/// Serves every connection with `status` and `body`, reporting each request.
async fn serve(status: u16, reply: &'static str) -> (String, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                let (head, body) = loop {
                    let n = socket.read(&mut buf).await.unwrap();
                    assert!(n > 0, "the client closed early");
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    let Some((head, rest)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    if rest.len() >= length {
                        break (head.to_string(), rest[..length].to_string());
                    }
                };
                let _ = tx.send(Seen {
                    head,
                    body: serde_json::from_str(&body).unwrap_or(Value::Null),
                });
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, rx)
}

#[tokio::test]
async fn an_http_hook_gets_the_input_and_its_json_reply_decides() {
    let (url, mut seen) = serve(
        200,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"the audit service says no"}}"#,
    )
    .await;
    let project = Project::new();
    project.project_hooks(&hooks_file(
        "PreToolUse",
        Some("mcp__sqlite__.*"),
        json!([{"type": "http", "url": url, "headers": {
            "X-Path": "${PATH}",
            "X-Team": "${LING_HOOKS_TEST_SURELY_UNSET:-platform}",
        }}]),
    ));
    let outcome = project
        .engine()
        .run(
            &pre_tool("mcp__sqlite__query", json!({"sql": "drop table t"})),
            &project.ctx(),
        )
        .await;
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert_eq!(outcome.reason.as_deref(), Some("the audit service says no"));

    let request = seen.recv().await.unwrap();
    assert!(
        request.head.starts_with("POST /hook HTTP/1.1"),
        "{}",
        request.head
    );
    let head = request.head.to_ascii_lowercase();
    let path = std::env::var("PATH").unwrap().to_ascii_lowercase();
    assert!(head.contains(&format!("x-path: {path}")), "{head}");
    assert!(head.contains("x-team: platform"), "{head}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(request.body["hook_event_name"], "PreToolUse");
    assert_eq!(request.body["tool_name"], "mcp__sqlite__query");
    assert_eq!(request.body["tool_input"], json!({"sql": "drop table t"}));
    assert_eq!(request.body["session_id"], "session-1");
}

#[tokio::test]
async fn http_errors_are_notices_and_an_unset_header_variable_fails_only_that_hook() {
    let (url, _seen) = serve(503, "busy").await;
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let project = Project::new();
    project.project_hooks(&hooks_file(
        "PreToolUse",
        None,
        json!([
            {"type": "http", "url": url},
            {"type": "http", "url": closed},
            {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${LING_HOOKS_TEST_SURELY_UNSET}"}},
            {"type": "command", "command": "cat >/dev/null; echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'"},
        ]),
    ));
    let outcome = project
        .engine()
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    assert_eq!(outcome.decision, Some(Decision::Allow));
    let errors: Vec<&str> = outcome
        .notices
        .iter()
        .filter(|n| n.kind == NoticeKind::Error)
        .map(|n| n.message.as_str())
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("HTTP 503: busy"), "{}", errors[0]);
    assert!(errors[1].contains("failed"), "{}", errors[1]);
    assert!(
        errors[2].contains("LING_HOOKS_TEST_SURELY_UNSET is not set"),
        "{}",
        errors[2]
    );
}

#[tokio::test]
async fn a_fail_closed_http_hook_that_cannot_connect_blocks() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let project = Project::new();
    project.project_hooks(&hooks_file(
        "UserPromptSubmit",
        None,
        json!([{"type": "http", "url": closed, "failClosed": true, "timeout": 2}]),
    ));
    let outcome = project
        .engine()
        .run(
            &ling::hooks::HookInput::UserPromptSubmit {
                prompt: "hi".into(),
            },
            &project.ctx(),
        )
        .await;
    assert_eq!(outcome.decision, Some(Decision::Block));
    assert!(outcome.reason.unwrap_or_default().contains("failClosed"));
}
