use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::*;

/// A connection over in-memory pipes; the test plays the other side through `remote`.
struct Harness {
    connection: Connection,
    remote_in: DuplexStream,
    remote_out: tokio::io::Lines<BufReader<DuplexStream>>,
}

fn harness() -> Harness {
    let (ours_in, remote_in) = tokio::io::duplex(1 << 16);
    let (ours_out, remote_out) = tokio::io::duplex(1 << 16);
    Harness {
        connection: connect(ours_in, ours_out),
        remote_in,
        remote_out: BufReader::new(remote_out).lines(),
    }
}

impl Harness {
    async fn send(&mut self, line: &str) {
        self.remote_in.write_all(line.as_bytes()).await.unwrap();
        self.remote_in.write_all(b"\n").await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.remote_out.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test]
async fn requests_and_notifications_come_in_and_answers_go_out() {
    let mut h = harness();
    h.send(r#"{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/"}}"#)
        .await;
    h.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#)
        .await;
    let first = h.connection.incoming.recv().await.unwrap();
    assert_eq!(
        first,
        Incoming::Request {
            id: RequestId::String("a".into()),
            method: "session/new".into(),
            params: json!({"cwd": "/"}),
        }
    );
    assert_eq!(
        h.connection.incoming.recv().await.unwrap(),
        Incoming::Notification {
            method: "session/cancel".into(),
            params: json!({"sessionId": "s"}),
        }
    );
    h.connection
        .peer
        .respond(RequestId::String("a".into()), Ok(json!({"sessionId": "s"})));
    h.connection.peer.respond(
        RequestId::Number(3),
        Err(RpcError::method_not_found("nope")),
    );
    assert_eq!(
        h.read().await,
        json!({"jsonrpc": "2.0", "id": "a", "result": {"sessionId": "s"}})
    );
    assert_eq!(
        h.read().await,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "unknown method \"nope\""}})
    );
}

#[tokio::test]
async fn a_request_of_ours_gets_its_answer_by_id() {
    let mut h = harness();
    let peer = h.connection.peer.clone();
    let asking = tokio::spawn(async move {
        peer.request("fs/read_text_file", json!({"path": "/a"}), None, None)
            .await
    });
    let sent = h.read().await;
    assert_eq!(sent["method"], "fs/read_text_file");
    assert_eq!(sent["id"], 1);
    h.send(r#"{"jsonrpc":"2.0","id":1,"result":{"content":"hello"}}"#)
        .await;
    assert_eq!(asking.await.unwrap(), Ok(json!({"content": "hello"})));

    let peer = h.connection.peer.clone();
    let refused = tokio::spawn(async move {
        peer.request("fs/write_text_file", json!({}), None, None)
            .await
    });
    let _ = h.read().await;
    h.send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad path"}}"#)
        .await;
    assert_eq!(
        refused.await.unwrap(),
        Err(RequestError::Rpc(RpcError::invalid_params("bad path")))
    );
}

#[tokio::test]
async fn a_request_times_out_and_a_cancelled_one_tells_the_other_side() {
    let mut h = harness();
    let late = h
        .connection
        .peer
        .request("x", json!({}), Some(Duration::from_millis(20)), None)
        .await;
    assert!(
        matches!(late, Err(RequestError::Timeout { .. })),
        "{late:?}"
    );
    let _ = h.read().await;
    // The late answer is ignored.
    h.send(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).await;

    let cancel = CancellationToken::new();
    let peer = h.connection.peer.clone();
    let token = cancel.clone();
    let asking = tokio::spawn(async move {
        peer.request("ask", json!({}), None, Some((&token, "$/cancel_request")))
            .await
    });
    let sent = h.read().await;
    assert_eq!(sent["id"], 2);
    cancel.cancel();
    assert_eq!(
        asking.await.unwrap(),
        Err(RequestError::Cancelled("ask".into()))
    );
    assert_eq!(
        h.read().await,
        json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
    );
}

#[tokio::test]
async fn garbage_gets_an_error_reply_and_the_connection_goes_on() {
    let mut h = harness();
    h.send("this is not json").await;
    let reply = h.read().await;
    assert_eq!(reply["error"]["code"], PARSE_ERROR);
    assert_eq!(reply["id"], Value::Null);
    h.send(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).await;
    assert_eq!(h.read().await["error"]["code"], INVALID_REQUEST);
    h.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
    assert!(matches!(
        h.connection.incoming.recv().await,
        Some(Incoming::Request { .. })
    ));
}

#[tokio::test]
async fn the_end_of_input_closes_incoming_and_fails_what_is_in_flight() {
    let h = harness();
    let Harness {
        mut connection,
        remote_in,
        remote_out,
    } = h;
    let peer = connection.peer.clone();
    let asking = tokio::spawn(async move { peer.request("x", json!({}), None, None).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(remote_in);
    assert_eq!(connection.incoming.recv().await, None);
    assert_eq!(asking.await.unwrap(), Err(RequestError::Closed("x".into())));
    let after = connection.peer.request("y", json!({}), None, None).await;
    assert_eq!(after, Err(RequestError::Closed("y".into())));
    drop(remote_out);
}
