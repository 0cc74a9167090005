//! The mock model's own guard: it checks every chat history as the OpenAI API does (each tool call
//! has its result, no result is orphaned), answers 400 to a bad one and fails the test that sent
//! it. These tests prove the guard can fail; every other suite relies on it staying quiet.

use std::io::{Read, Write};

use serde_json::{Value, json};

use crate::support::mock_openai::{MockServer, Reply, check_tool_calls};

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn calls(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn result(id: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": "ok"})
}

fn text(content: &str) -> Value {
    json!({"role": "assistant", "content": content})
}

fn error_of(messages: &[Value]) -> String {
    check_tool_calls(messages).expect_err("the history should be rejected")
}

#[test]
fn a_history_with_every_call_answered_passes() {
    let history = [
        json!({"role": "system", "content": "sys"}),
        user("go"),
        calls(&["a", "b"]),
        result("b"),
        result("a"),
        calls(&["c"]),
        result("c"),
        text("done"),
        user("again"),
    ];
    assert_eq!(check_tool_calls(&history), Ok(()));
    assert_eq!(check_tool_calls(&[user("hi"), text("hello")]), Ok(()));
}

#[test]
fn a_call_without_its_result_is_rejected() {
    let next_user = error_of(&[user("go"), calls(&["a", "b"]), result("a"), user("more")]);
    assert!(
        next_user.contains(r#"the tool call "b" has no result"#),
        "{next_user}"
    );
    let at_end = error_of(&[user("go"), calls(&["a"])]);
    assert!(at_end.contains("the history ends first"), "{at_end}");
    let text_first = error_of(&[user("go"), calls(&["a"]), text("hm"), result("a")]);
    assert!(text_first.contains(r#""a" has no result"#), "{text_first}");
}

#[test]
fn an_orphaned_or_repeated_result_is_rejected() {
    let orphan = error_of(&[user("go"), result("a")]);
    assert!(orphan.contains("follows no assistant message"), "{orphan}");
    let after_text = error_of(&[
        user("go"),
        calls(&["a"]),
        result("a"),
        text("x"),
        result("a"),
    ]);
    assert!(after_text.contains("messages[4]"), "{after_text}");
    let unknown = error_of(&[user("go"), calls(&["a"]), result("z")]);
    assert!(unknown.contains(r#"for "z""#), "{unknown}");
    let twice = error_of(&[user("go"), calls(&["a"]), result("a"), result("a")]);
    assert!(twice.contains("already has its result"), "{twice}");
}

#[test]
fn an_empty_tool_calls_array_is_rejected() {
    let empty = json!({"role": "assistant", "content": "x", "tool_calls": []});
    let error = error_of(&[user("go"), empty]);
    assert!(error.contains("not a non-empty array"), "{error}");
}

/// POSTs `messages` to the mock's chat endpoint; the HTTP status line and the body.
fn post(server: &MockServer, messages: &[Value]) -> (String, String) {
    let url = server.base_url();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let body = json!({"model": "m", "messages": messages, "stream": true}).to_string();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).unwrap();
    socket.write_all(body.as_bytes()).unwrap();
    let mut reply = String::new();
    socket.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

#[test]
fn the_mock_answers_400_to_a_bad_history_and_records_it() {
    let server = MockServer::start_blocking(vec![Reply::text("fine")]);
    let (status, body) = post(&server, &[user("go"), calls(&["a"]), user("more")]);
    assert!(status.contains(" 400 "), "{status}");
    assert!(
        body.contains(r#"the tool call \"a\" has no result"#),
        "{body}"
    );
    assert_eq!(
        server.remaining(),
        1,
        "a rejected request uses no scripted reply"
    );
    let (status, _) = post(&server, &[user("go"), calls(&["a"]), result("a")]);
    assert!(status.contains(" 200 "), "{status}");
    let violations = server.take_violations();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert!(violations[0].starts_with("request 1: "), "{violations:?}");
}

#[test]
#[should_panic(expected = "Ling sent 1 chat request(s) the OpenAI API rejects")]
fn a_bad_history_fails_the_test_when_the_mock_is_dropped() {
    let server = MockServer::start_blocking(vec![Reply::text("fine")]);
    let (status, _) = post(&server, &[user("go"), result("orphan")]);
    assert!(status.contains(" 400 "), "{status}");
    drop(server);
}

#[test]
#[should_panic(expected = "mock model: 1 scripted reply was never asked for")]
fn a_scripted_reply_never_asked_for_fails_the_test() {
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    let (status, _) = post(&server, &[user("go")]);
    assert!(status.contains(" 200 "), "{status}");
    drop(server);
}

#[test]
fn replies_left_on_purpose_are_counted_exactly_or_at_most() {
    let exact = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("never")]);
    exact.expect_unasked(1);
    post(&exact, &[user("go")]);
    drop(exact);

    let loose = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    loose.allow_unasked(2);
    post(&loose, &[user("go")]);
    drop(loose);
}

#[test]
#[should_panic(expected = "the test allowed Exactly(2)")]
fn an_exact_count_fails_when_more_were_asked_for() {
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    server.expect_unasked(2);
    post(&server, &[user("go")]);
    drop(server);
}
