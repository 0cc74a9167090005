//! The model client against the scripted mock server: what it sends, how it assembles streamed
//! answers and tool calls, what it retries, and what its errors tell the user.

use crate::support::mock_openai;

use std::time::{Duration, Instant};

use ling::llm::{
    Completion, FinishReason, LlmClient, LlmConfig, LlmError, Message, StreamEvent, TimeoutKind,
    ToolCall, ToolSpec, Usage,
};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

fn config(server: &MockServer) -> LlmConfig {
    LlmConfig {
        max_retries: 2,
        retry_base_delay: Duration::from_millis(1),
        first_byte_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        ..LlmConfig::new(server.base_url(), "test-model")
    }
}

fn client(config: LlmConfig) -> LlmClient {
    LlmClient::new(config).unwrap()
}

async fn run(
    client: &LlmClient,
    messages: &[Message],
    tools: &[ToolSpec],
) -> (Vec<StreamEvent>, Result<Completion, LlmError>) {
    let mut events = Vec::new();
    let mut on_event = |e: StreamEvent| events.push(e);
    let result = client.stream_chat(messages, tools, &mut on_event).await;
    (events, result)
}

async fn ask(client: &LlmClient) -> (Vec<StreamEvent>, Result<Completion, LlmError>) {
    run(client, &[Message::user("hi")], &[]).await
}

fn error_text(result: Result<Completion, LlmError>) -> (LlmError, String) {
    match result {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => {
            let text = e.to_string();
            (e, text)
        }
    }
}

fn retries(events: &[StreamEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_text_is_reported_and_assembled() {
    let server = MockServer::start(vec![Reply::text("hello there, world").usage(7, 3)]).await;
    let (events, result) = ask(&client(config(&server))).await;
    let completion = result.unwrap();
    let shown: String = events
        .iter()
        .map(|e| match e {
            StreamEvent::TextDelta(t) => t.as_str(),
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    assert!(events.len() > 1, "the text should arrive in pieces");
    assert_eq!(shown, "hello there, world");
    assert_eq!(
        completion,
        Completion {
            content: "hello there, world".into(),
            reasoning: String::new(),
            tool_calls: vec![],
            finish_reason: FinishReason::Stop,
            usage: Some(Usage::new(7, 3)),
            reasoning_items: Vec::new(),
            citations: Vec::new(),
        }
    );
}

#[tokio::test]
async fn reasoning_is_reported_apart_from_the_answer() {
    let server = MockServer::start(vec![Reply::reasoning_then_text("let me think", "42")]).await;
    let (events, result) = ask(&client(config(&server))).await;
    let completion = result.unwrap();
    assert_eq!(completion.reasoning, "let me think");
    assert_eq!(completion.content, "42");
    assert!(
        matches!(events[0], StreamEvent::ReasoningDelta(_)),
        "{events:?}"
    );
}

#[tokio::test]
async fn fragmented_parallel_tool_calls_are_assembled() {
    let server = MockServer::start(vec![Reply::tool_calls(vec![
        ("call_read_1", "read_file", json!({"path": "src/main.rs"})),
        ("call_bash_2", "bash", json!({"command": "ls -la"})),
    ])])
    .await;
    let (events, result) = ask(&client(config(&server))).await;
    let completion = result.unwrap();
    assert_eq!(
        completion.tool_calls,
        vec![
            ToolCall::new("call_read_1", "read_file", r#"{"path":"src/main.rs"}"#),
            ToolCall::new("call_bash_2", "bash", r#"{"command":"ls -la"}"#),
        ]
    );
    assert_eq!(completion.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "call_read_1".into(),
                name: "read_file".into()
            },
            StreamEvent::ToolCallStarted {
                index: 1,
                id: "call_bash_2".into(),
                name: "bash".into()
            },
        ]
    );
}

#[tokio::test]
async fn malformed_tool_arguments_are_passed_through_verbatim() {
    let server = MockServer::start(vec![Reply::tool_calls_raw(vec![(
        "c1",
        "bash",
        "{not json",
    )])])
    .await;
    let (_, result) = ask(&client(config(&server))).await;
    let completion = result.unwrap();
    assert_eq!(
        completion.tool_calls,
        vec![ToolCall::new("c1", "bash", "{not json")]
    );
}

#[tokio::test]
async fn the_request_body_has_the_documented_shape() {
    let server = MockServer::start(vec![Reply::text("a"), Reply::text("b")]).await;
    let keyed = client(LlmConfig {
        api_key: Some("sk-test".into()),
        ..config(&server)
    });
    let messages = vec![
        Message::system("be brief"),
        Message::user("list files"),
        Message::assistant(
            None,
            vec![ToolCall::new("c1", "bash", r#"{"command":"ls"}"#)],
        ),
        Message::tool("c1", "a.rs"),
    ];
    let tools = vec![ToolSpec {
        name: "bash".into(),
        description: "Run a command".into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }];
    let (_, result) = run(&keyed, &messages, &tools).await;
    result.unwrap();
    let plain = client(config(&server));
    let (_, result) = run(&plain, &[Message::user("hi")], &[]).await;
    result.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(
        (first.method.as_str(), first.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(first.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        first.body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "a.rs"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {
                "name": "bash", "description": "Run a command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            }}],
            "parallel_tool_calls": true,
        })
    );
    let second = &requests[1];
    assert_eq!(second.header("authorization"), None);
    assert_eq!(
        second.body,
        json!({
            "model": "test-model",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_servers_delay() {
    let server =
        MockServer::start(vec![Reply::status(429).retry_after(1), Reply::text("ok")]).await;
    let started = Instant::now();
    let (events, result) = ask(&client(config(&server))).await;
    assert_eq!(result.map(|c| c.content).unwrap(), "ok");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(retries(&events), vec![1000]);
    match &events[0] {
        StreamEvent::Retrying {
            attempt, reason, ..
        } => {
            assert_eq!(*attempt, 1);
            assert!(reason.contains("429"), "{reason}");
        }
        other => panic!("expected Retrying, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_ms_is_honoured_too() {
    let server = MockServer::start(vec![
        Reply::status(503).retry_after_ms(120).retry_after(30),
        Reply::status(409),
        Reply::text("ok"),
    ])
    .await;
    let (events, result) = ask(&client(config(&server))).await;
    assert_eq!(result.map(|c| c.content).unwrap(), "ok");
    let delays = retries(&events);
    assert_eq!(delays.len(), 2);
    assert_eq!(delays[0], 120);
    assert!(delays[1] < 10, "backoff with a 1ms base: {delays:?}");
}

#[tokio::test]
async fn server_errors_are_retried_until_the_limit() {
    let server = MockServer::start(vec![
        Reply::status(500).message("upstream exploded"),
        Reply::status(502),
        Reply::status(500).message("upstream exploded"),
        Reply::text("too late"),
    ])
    .await;
    server.expect_unasked(1);
    let (events, result) = ask(&client(config(&server))).await;
    let (_, text) = error_text(result);
    assert_eq!(
        text,
        format!(
            "HTTP 500 from {}/chat/completions after 3 attempts: upstream exploded",
            server.base_url()
        )
    );
    assert_eq!(retries(&events).len(), 2);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_empty_queue_answers_500_instead_of_hanging() {
    let server = MockServer::start(vec![]).await;
    let (_, result) = ask(&client(LlmConfig {
        max_retries: 0,
        ..config(&server)
    }))
    .await;
    let (_, text) = error_text(result);
    assert!(text.contains("mock: no scripted response left"), "{text}");
}

#[tokio::test]
async fn unauthorized_names_the_key_variable_and_is_not_retried() {
    let server = MockServer::start(vec![Reply::status(401).message("Incorrect API key")]).await;
    let (_, result) = ask(&client(LlmConfig {
        api_key: Some("sk-wrong".into()),
        api_key_env: "DEEPSEEK_API_KEY".into(),
        ..config(&server)
    }))
    .await;
    let (err, text) = error_text(result);
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    assert!(text.contains("Incorrect API key"), "{text}");
    assert!(text.contains("export DEEPSEEK_API_KEY=..."), "{text}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn not_found_names_the_base_url_and_the_model() {
    let server = MockServer::start(vec![Reply::status(404).message("model not found")]).await;
    let (_, result) = ask(&client(config(&server))).await;
    let (_, text) = error_text(result);
    assert!(
        text.contains(&format!("base URL ({})", server.base_url())),
        "{text}"
    );
    assert!(text.contains("model (test-model)"), "{text}");
    assert!(text.contains("model not found"), "{text}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_request_shows_the_servers_message() {
    let server = MockServer::start(vec![
        Reply::status(400).message("invalid value for temperature: 7"),
    ])
    .await;
    let (_, result) = ask(&client(config(&server))).await;
    let (_, text) = error_text(result);
    assert_eq!(
        text,
        "the server rejected the request (HTTP 400): invalid value for temperature: 7"
    );
}

#[tokio::test]
async fn a_stream_cut_before_any_output_is_retried() {
    let server = MockServer::start(vec![Reply::cut_before_text(), Reply::text("second try")]).await;
    let (events, result) = ask(&client(config(&server))).await;
    assert_eq!(result.map(|c| c.content).unwrap(), "second try");
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_after_text_is_reported_not_retried() {
    let server = MockServer::start(vec![Reply::cut_after_text("partial"), Reply::text("x")]).await;
    server.expect_unasked(1);
    let (events, result) = ask(&client(config(&server))).await;
    let (err, text) = error_text(result);
    assert!(
        matches!(err, LlmError::StreamCut { shown: true, .. }),
        "{err:?}"
    );
    assert!(text.contains("stopped before it finished"), "{text}");
    assert_eq!(retries(&events), Vec::<u64>::new());
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn a_finish_reason_without_done_counts_as_complete() {
    let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fine\"},\"finish_reason\":\"stop\"}]}\n\n";
    let server = MockServer::start(vec![Reply::raw_sse(vec![body.to_vec()])]).await;
    let (_, result) = ask(&client(config(&server))).await;
    assert_eq!(result.map(|c| c.content).unwrap(), "fine");
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_reported() {
    let server = MockServer::start(vec![Reply::raw_sse(vec![
        b": ping\r\n\r\n".to_vec(),
        b"data: {\"error\":{\"message\":\"model overloaded\"}}\r\n\r\n".to_vec(),
    ])])
    .await;
    let (_, result) = ask(&client(config(&server))).await;
    let (err, text) = error_text(result);
    assert!(matches!(err, LlmError::Server { .. }), "{err:?}");
    assert!(text.contains("model overloaded"), "{text}");
}

#[tokio::test]
async fn first_byte_timeout_fires_and_is_bounded() {
    let server = MockServer::start(vec![Reply::text("late").delay(Duration::from_secs(10))]).await;
    let started = Instant::now();
    let (_, result) = ask(&client(LlmConfig {
        first_byte_timeout: Duration::from_millis(300),
        max_retries: 0,
        ..config(&server)
    }))
    .await;
    let elapsed = started.elapsed();
    let (err, text) = error_text(result);
    assert!(
        matches!(
            err,
            LlmError::Timeout {
                kind: TimeoutKind::FirstByte,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(text.contains("timed out after 300ms"), "{text}");
    assert!(text.contains("firstByteTimeoutMs"), "{text}");
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn idle_timeout_fires_between_chunks_and_is_bounded() {
    let server = MockServer::start(vec![
        Reply::text("slow").chunk_delay(Duration::from_secs(10)),
    ])
    .await;
    let started = Instant::now();
    let (_, result) = ask(&client(LlmConfig {
        idle_timeout: Duration::from_millis(300),
        max_retries: 0,
        ..config(&server)
    }))
    .await;
    let elapsed = started.elapsed();
    let (err, text) = error_text(result);
    assert!(
        matches!(
            err,
            LlmError::Timeout {
                kind: TimeoutKind::Idle,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(text.contains("idleTimeoutMs"), "{text}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[tokio::test]
async fn an_idle_timeout_after_text_is_not_retried() {
    let first = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"shown\"}}]}\n\n";
    let server = MockServer::start(vec![
        Reply::raw_sse(vec![first.to_vec(), b"data: [DONE]\n\n".to_vec()])
            .chunk_delay(Duration::from_secs(10)),
        Reply::text("never"),
    ])
    .await;
    server.expect_unasked(1);
    let (events, result) = ask(&client(LlmConfig {
        idle_timeout: Duration::from_millis(200),
        ..config(&server)
    }))
    .await;
    let (err, _) = error_text(result);
    assert!(
        matches!(
            err,
            LlmError::Timeout {
                kind: TimeoutKind::Idle,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(events, vec![StreamEvent::TextDelta("shown".into())]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn no_key_for_api_openai_com_fails_before_sending() {
    let config = LlmConfig {
        max_retries: 0,
        ..LlmConfig::new("https://api.openai.com/v1", "gpt-4o-mini")
    };
    let client = client(config);
    let started = Instant::now();
    let (events, result) = ask(&client).await;
    let (err, text) = error_text(result);
    assert!(matches!(err, LlmError::MissingApiKey { .. }), "{err:?}");
    assert!(text.contains("export OPENAI_API_KEY=..."), "{text}");
    assert!(
        text.contains("--base-url http://127.0.0.1:8080/v1"),
        "{text}"
    );
    assert!(text.contains("OPENAI_BASE_URL"), "{text}");
    assert!(events.is_empty());
    assert!(started.elapsed() < Duration::from_millis(100));
    assert!(client.preflight().is_err());
}

#[tokio::test]
async fn connection_refused_names_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let (events, result) = ask(&client(LlmConfig {
        max_retries: 1,
        retry_base_delay: Duration::from_millis(1),
        ..LlmConfig::new(base_url.clone(), "m")
    }))
    .await;
    let (err, text) = error_text(result);
    assert!(
        matches!(err, LlmError::Connect { attempts: 2, .. }),
        "{err:?}"
    );
    assert!(
        text.contains(&format!("could not reach {base_url}/chat/completions")),
        "{text}"
    );
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn dropping_the_future_mid_stream_leaves_the_client_usable() {
    let server = MockServer::start(vec![
        Reply::text("very slow answer").chunk_delay(Duration::from_secs(5)),
        Reply::text("next"),
    ])
    .await;
    let client = client(config(&server));
    let mut on_event = |_: StreamEvent| {};
    let cancelled = tokio::time::timeout(
        Duration::from_millis(200),
        client.stream_chat(&[Message::user("hi")], &[], &mut on_event),
    )
    .await;
    assert!(
        cancelled.is_err(),
        "the slow answer should still be streaming"
    );
    let (_, result) = ask(&client).await;
    assert_eq!(result.map(|c| c.content).unwrap(), "next");
}

#[test]
fn the_blocking_mock_serves_plain_tests() {
    let server = MockServer::start_blocking(vec![Reply::text("from a thread")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, result) = runtime.block_on(async { ask(&client(config(&server))).await });
    assert_eq!(result.map(|c| c.content).unwrap(), "from a thread");
    assert_eq!(server.requests().len(), 1);
}
