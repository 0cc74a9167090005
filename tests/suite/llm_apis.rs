//! The model client speaking Anthropic Messages and OpenAI Responses to the mock model, which
//! answers in each API's real event sequences: a text answer, two tool calls in one message,
//! thinking (sent back as the API requires), an error mid-stream, an overflow, and the retries
//! and provider quirks the chat-completions suite (`llm_client`) checks, where they have a
//! counterpart.

use crate::support::mock_openai;

use std::time::Duration;

use ling::config::WireApi;
use ling::llm::{
    Completion, FinishReason, LlmClient, LlmConfig, LlmError, Message, ReasoningItem, StreamEvent,
    ToolCall, ToolSpec, Usage,
};
use mock_openai::{Api, InputUsage, MockServer, Overflow, Reply};
use pretty_assertions::assert_eq;
use serde_json::json;

const APIS: [WireApi; 2] = [WireApi::Anthropic, WireApi::Responses];

fn config(server: &MockServer, api: WireApi) -> LlmConfig {
    LlmConfig {
        api,
        max_retries: 2,
        retry_base_delay: Duration::from_millis(1),
        first_byte_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        api_key: Some("sk-test".into()),
        ..LlmConfig::new(server.base_url(), "test-model")
    }
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

async fn ask(
    api: WireApi,
    replies: Vec<Reply>,
) -> (MockServer, Vec<StreamEvent>, Result<Completion, LlmError>) {
    let server = MockServer::start(replies).await;
    let client = LlmClient::new(config(&server, api)).unwrap();
    let (events, result) = run(&client, &[Message::user("hi")], &[]).await;
    (server, events, result)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_text_answer_in_each_api_with_its_path_and_key() {
    for api in APIS {
        let (server, events, result) = ask(api, vec![Reply::text("hello there, world")]).await;
        let completion = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert!(
            events.len() > 1,
            "{api:?}: the text should arrive in pieces"
        );
        assert_eq!(text_of(&events), "hello there, world", "{api:?}");
        assert_eq!(completion.content, "hello there, world");
        assert_eq!(completion.finish_reason, FinishReason::Stop, "{api:?}");
        let request = &server.requests()[0];
        match api {
            WireApi::Anthropic => {
                assert_eq!(request.path, "/v1/messages");
                assert_eq!(request.header("x-api-key"), Some("sk-test"));
                assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(request.header("authorization"), None);
                assert_eq!(request.body["max_tokens"], 8192);
                assert_eq!(
                    request.body["messages"],
                    json!([{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}])
                );
            }
            _ => {
                assert_eq!(request.path, "/v1/responses");
                assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
                assert_eq!(request.body["store"], false);
                assert_eq!(
                    request.body["input"],
                    json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
                );
            }
        }
        // The usage the mock counted, which a small prompt gets no cache for.
        let reported = server.reported();
        let usage = completion.usage.unwrap_or_default();
        assert_eq!(usage.prompt_tokens, reported[0].input.total(), "{api:?}");
        assert_eq!(usage.cache_read_tokens, 0);
        assert!(usage.completion_tokens > 0);
    }
}

#[tokio::test]
async fn two_tool_calls_in_one_message() {
    for api in APIS {
        let (_, events, result) = ask(
            api,
            vec![Reply::tool_calls_with_text(
                "Let me look.",
                vec![
                    ("call_read_1", "read_file", json!({"path": "src/main.rs"})),
                    ("call_bash_2", "bash", json!({"command": "ls -la"})),
                ],
            )],
        )
        .await;
        let completion = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(
            completion.tool_calls,
            vec![
                ToolCall::new("call_read_1", "read_file", r#"{"path":"src/main.rs"}"#),
                ToolCall::new("call_bash_2", "bash", r#"{"command":"ls -la"}"#),
            ],
            "{api:?}"
        );
        assert_eq!(completion.finish_reason, FinishReason::ToolCalls);
        assert_eq!(completion.content, "Let me look.");
        let started: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStarted { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(started, ["read_file", "bash"], "{api:?}");
    }
}

#[tokio::test]
async fn reasoning_is_shown_dimmed_and_sent_back_unchanged() {
    for api in APIS {
        let server = MockServer::start(vec![
            Reply::reasoning_then_text("let me think", "42"),
            Reply::text("ok"),
            Reply::text("never"),
        ])
        .await;
        server.expect_unasked(1);
        let client = LlmClient::new(config(&server, api)).unwrap();
        let mut history = vec![Message::user("question")];
        let (events, result) = run(&client, &history, &[]).await;
        let completion = result.unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(completion.reasoning, "let me think", "{api:?}");
        assert_eq!(completion.content, "42");
        assert!(
            matches!(events[0], StreamEvent::ReasoningDelta(_)),
            "{events:?}"
        );
        assert_eq!(completion.reasoning_items.len(), 1, "{api:?}");
        history.push(Message::Assistant {
            content: Some(completion.content.clone()),
            tool_calls: Vec::new(),
            reasoning: completion.reasoning_items.clone(),
        });
        history.push(Message::user("and?"));
        // The mock verifies the signature (Anthropic) or the encrypted content (Responses).
        let (_, result) = run(&client, &history, &[]).await;
        assert_eq!(
            result.map(|c| c.content).ok().as_deref(),
            Some("ok"),
            "{api:?}"
        );
        let sent = &server.requests()[1].body;
        match api {
            WireApi::Anthropic => {
                let block = &sent["messages"][1]["content"][0];
                assert_eq!(block["type"], "thinking");
                assert_eq!(block["thinking"], "let me think");
            }
            _ => {
                let item = &sent["input"][1];
                assert_eq!(item["type"], "reasoning");
                assert!(item.get("id").is_none(), "{item}");
                assert!(
                    item["encrypted_content"]
                        .as_str()
                        .is_some_and(|e| e.starts_with("enc-"))
                );
            }
        }
        // Negative: reasoning altered on the way back is refused, as the API refuses it.
        let forged = match api {
            WireApi::Anthropic => ReasoningItem::Thinking {
                thinking: "let me think".into(),
                signature: "forged".into(),
            },
            _ => ReasoningItem::Reasoning {
                summary: vec!["let me think".into()],
                encrypted_content: Some("forged".into()),
            },
        };
        history[1] = Message::Assistant {
            content: Some("42".into()),
            tool_calls: Vec::new(),
            reasoning: vec![forged],
        };
        let (_, result) = run(&client, &history, &[]).await;
        assert!(
            matches!(result, Err(LlmError::BadRequest { .. })),
            "{api:?}: {result:?}"
        );
        assert_eq!(server.take_violations().len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_overload_mid_stream_is_retried_before_anything_shows_and_reported_after() {
    for api in APIS {
        let (server, events, result) = ask(
            api,
            vec![
                Reply::error_after_text("", "overloaded_error", "Overloaded"),
                Reply::text("second try"),
            ],
        )
        .await;
        assert_eq!(
            result.map(|c| c.content).ok().as_deref(),
            Some("second try"),
            "{api:?}"
        );
        assert!(
            events.iter().any(|e| matches!(e, StreamEvent::Retrying { reason, .. } if reason.contains("Overloaded"))),
            "{api:?}: {events:?}"
        );
        assert_eq!(server.requests().len(), 2);

        let (server, events, result) = ask(
            api,
            vec![
                Reply::error_after_text("half an answer", "overloaded_error", "Overloaded"),
                Reply::text("never"),
            ],
        )
        .await;
        server.expect_unasked(1);
        assert_eq!(text_of(&events), "half an answer");
        let message = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("Overloaded"), "{api:?}: {message}");
        assert_eq!(
            server.requests().len(),
            1,
            "{api:?}: shown output is not retried"
        );

        // An error that retrying will not fix is reported at once.
        let (server, _, result) = ask(
            api,
            vec![
                Reply::error_after_text("", "invalid_request_error", "bad request"),
                Reply::text("never"),
            ],
        )
        .await;
        server.expect_unasked(1);
        assert!(
            matches!(result, Err(LlmError::Server { .. })),
            "{api:?}: {result:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn an_overflow_is_the_context_overflow_error_with_the_window_anthropic_states() {
    for (api, style, window) in [
        (WireApi::Anthropic, Overflow::Anthropic, Some(250)),
        (WireApi::Responses, Overflow::Responses, None),
    ] {
        let server = MockServer::start(vec![Reply::text("never")]).await;
        server.expect_unasked(1);
        server.context_limit(1000, style);
        let client = LlmClient::new(config(&server, api)).unwrap();
        let (_, result) = run(&client, &[Message::user("x".repeat(2000))], &[]).await;
        match result {
            Err(LlmError::ContextOverflow { window: w, .. }) => assert_eq!(w, window, "{api:?}"),
            other => panic!("{api:?}: {other:?}"),
        }
        assert_eq!(server.requests().len(), 1, "an overflow is not retried");
    }
}

#[tokio::test]
async fn http_errors_are_retried_and_named_as_for_chat() {
    for api in APIS {
        // Anthropic's 529 overloaded_error and a 429 with Retry-After are retried.
        let (server, _, result) = ask(
            api,
            vec![
                Reply::status(529).message("Overloaded"),
                Reply::status(429).message("rate limited").retry_after_ms(5),
                Reply::text("fine"),
            ],
        )
        .await;
        assert_eq!(
            result.map(|c| c.content).ok().as_deref(),
            Some("fine"),
            "{api:?}"
        );
        assert_eq!(server.requests().len(), 3);
        // 401 names the key's variable and is not retried.
        let (server, _, result) =
            ask(api, vec![Reply::status(401).message("invalid x-api-key")]).await;
        let message = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("invalid x-api-key") && message.contains("OPENAI_API_KEY"),
            "{message}"
        );
        assert_eq!(server.requests().len(), 1);
        // A stream cut before anything showed is retried; after text it is reported.
        let (server, _, result) =
            ask(api, vec![Reply::cut_before_text(), Reply::text("whole")]).await;
        assert_eq!(
            result.map(|c| c.content).ok().as_deref(),
            Some("whole"),
            "{api:?}"
        );
        assert_eq!(server.requests().len(), 2);
        let (server, _, result) = ask(
            api,
            vec![Reply::cut_after_text("part of it"), Reply::text("x")],
        )
        .await;
        server.expect_unasked(1);
        assert!(
            matches!(result, Err(LlmError::StreamCut { shown: true, .. })),
            "{api:?}: {result:?}"
        );
    }
}

#[tokio::test]
async fn a_long_prefix_is_read_from_the_cache_on_the_next_request() {
    let system = "You are a careful coding agent. ".repeat(1000);
    let tools = [ToolSpec {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    for api in APIS {
        let server = MockServer::start(vec![
            Reply::tool_calls(vec![("c1", "read_file", json!({"path": "a.rs"}))]),
            Reply::tool_calls(vec![("c2", "read_file", json!({"path": "b.rs"}))]),
            Reply::text("done"),
        ])
        .await;
        let client = LlmClient::new(config(&server, api)).unwrap();
        let mut history = vec![Message::system(system.clone()), Message::user("read a.rs")];
        let mut last = None;
        for (id, output) in [
            ("c1", "fn a() {}\n".repeat(800)),
            ("c2", "fn b() {}".into()),
        ] {
            let (_, answer) = run(&client, &history, &tools).await;
            let answer = answer.unwrap_or_else(|e| panic!("{api:?}: {e}"));
            history.push(Message::assistant(None, answer.tool_calls.clone()));
            history.push(Message::tool(id, output));
            last = Some(answer);
        }
        assert!(last.is_some());
        let (_, third) = run(&client, &history, &tools).await;
        let usage = third
            .unwrap_or_else(|e| panic!("{api:?}: {e}"))
            .usage
            .unwrap_or_default();
        let reported = server.reported();
        assert_eq!(reported.len(), 3);
        if api == WireApi::Anthropic {
            assert_eq!(reported[0].api, Api::Anthropic);
            // The first request wrote its prefix to the cache, the second read it.
            assert!(reported[0].input.cache_write > 7000, "{reported:?}");
            assert!(reported[1].input.cache_read >= reported[0].input.cache_write);
        }
        assert_eq!(reported[0].input.cache_read, 0);
        // The third read all but its newest turn, the 8 KB tool output of the second included
        // (Anthropic: only because the second request's end is marked).
        let InputUsage { cache_read, .. } = reported[2].input;
        assert!(
            cache_read * 100 > reported[2].input.total() * 95,
            "{api:?}: {reported:?}"
        );
        assert_eq!(
            usage,
            Usage {
                prompt_tokens: reported[2].input.total(),
                completion_tokens: usage.completion_tokens,
                cache_read_tokens: cache_read,
                cache_write_tokens: reported[2].input.cache_write,
                reasoning_tokens: 0,
            }
        );
    }
}

#[tokio::test]
async fn the_models_endpoint_of_each_api_lists_the_models_and_anthropic_s_gives_the_window() {
    let server = MockServer::start(Vec::new()).await;
    server.route(
        "GET /v1/models?limit=1000",
        json!({"data": [{"id": "claude-b", "type": "model"}, {"id": "claude-a", "type": "model"}], "has_more": false}),
    );
    server.route(
        "GET /v1/models/claude-a",
        json!({"id": "claude-a", "type": "model", "max_input_tokens": 1_000_000, "max_tokens": 64_000}),
    );
    let anthropic = config(&server, WireApi::Anthropic);
    assert_eq!(
        ling::llm::list_models(&anthropic).await,
        ["claude-a", "claude-b"]
    );
    let client = LlmClient::new(LlmConfig {
        model: "claude-a".into(),
        ..anthropic
    })
    .unwrap();
    assert_eq!(client.probe_context_window().await, Some(1_000_000));
    let asked = server.all_requests();
    assert!(
        asked
            .iter()
            .all(|r| r.header("x-api-key") == Some("sk-test")),
        "{asked:?}"
    );
}
