//! The Messages API on raw bytes: event sequences as the API documents them, split anywhere,
//! and the request body the history becomes.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::llm::LlmConfig;
use crate::llm::stream::StreamError;
use crate::llm::types::{Completion, FinishReason, StreamEvent, ToolCall, ToolSpec, Usage};
use crate::sse::SseDecoder;

/// `event: NAME` / `data: JSON` pairs, as the API writes them.
fn events(list: &[Value]) -> String {
    list.iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or("x")
            )
        })
        .collect()
}

fn run(pieces: &[&[u8]]) -> (Vec<StreamEvent>, Result<Completion, StreamError>) {
    let mut seen = Vec::new();
    let mut on_event = |e: StreamEvent| seen.push(e);
    let mut decoder = SseDecoder::new();
    let mut parser: Box<dyn StreamParser> = Messages.parser();
    let mut result = Ok(());
    for piece in pieces {
        for event in decoder.feed(piece).unwrap_or_default() {
            result = result.and_then(|()| parser.push(&event.data, &mut on_event));
        }
    }
    let completion = result.and_then(|()| parser.finish(&mut on_event));
    (seen, completion)
}

fn start(input: u64, read: u64, write: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-6", "content": [], "stop_reason": null,
        "usage": {"input_tokens": input, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": write, "output_tokens": 1}}})
}

fn stop(reason: &str, output: u64) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
               "usage": {"output_tokens": output}}),
        json!({"type": "message_stop"}),
    ]
}

fn text_stream() -> String {
    let mut list = vec![
        start(25, 1000, 200),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    list.extend(stop("end_turn", 15));
    events(&list)
}

#[test]
fn a_text_answer_with_its_cache_usage() {
    let (seen, result) = run(&[text_stream().as_bytes()]);
    assert_eq!(
        seen,
        vec![
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta("!".into())
        ]
    );
    assert_eq!(
        result,
        Ok(Completion {
            content: "Hello!".into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            // Every input token, cached or not, and the cache's part of them.
            usage: Some(Usage {
                prompt_tokens: 1225,
                completion_tokens: 15,
                cache_read_tokens: 1000,
                cache_write_tokens: 200,
                reasoning_tokens: 0,
            }),
            reasoning_items: Vec::new(),
            citations: Vec::new(),
        })
    );
}

fn tool_stream() -> String {
    let mut list = vec![
        start(10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Looking."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ".rs\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "list_dir", "input": {}}}),
        json!({"type": "content_block_stop", "index": 2}),
    ];
    list.extend(stop("tool_use", 40));
    events(&list)
}

#[test]
fn two_tool_calls_in_one_message_split_anywhere() {
    let (seen, result) = run(&[tool_stream().as_bytes()]);
    let done = result.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        done.tool_calls,
        vec![
            ToolCall::new("toolu_a", "read_file", r#"{"path": "a.rs"}"#),
            // No fragment at all for a call without arguments.
            ToolCall::new("toolu_b", "list_dir", "{}"),
        ]
    );
    assert_eq!(done.finish_reason, FinishReason::ToolCalls);
    assert_eq!(done.content, "Looking.");
    let started: Vec<&StreamEvent> = seen
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
        .collect();
    assert_eq!(started.len(), 2, "{seen:?}");
    let body = tool_stream();
    let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
    let (byte_seen, byte_result) = run(&bytes);
    assert_eq!(byte_seen, seen);
    assert_eq!(byte_result, Ok(done));
}

#[test]
fn thinking_is_shown_dimmed_and_kept_with_its_signature() {
    let mut list = vec![
        start(10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "see."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAh"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "IkAx"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "42"}}),
        json!({"type": "content_block_stop", "index": 2}),
    ];
    list.extend(stop("end_turn", 30));
    let (seen, result) = run(&[events(&list).as_bytes()]);
    assert_eq!(
        seen,
        vec![
            StreamEvent::ReasoningDelta("Let me ".into()),
            StreamEvent::ReasoningDelta("see.".into()),
            StreamEvent::TextDelta("42".into()),
        ]
    );
    let done = result.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(done.reasoning, "Let me see.");
    assert_eq!(
        done.reasoning_items,
        vec![
            ReasoningItem::Thinking {
                thinking: "Let me see.".into(),
                signature: "EqQBCgIYAhIkAx".into()
            },
            ReasoningItem::RedactedThinking {
                data: "EmwKAhgB".into()
            },
        ]
    );
}

#[test]
fn an_error_mid_stream_says_whether_to_retry_or_compact() {
    let partial = events(&[
        start(10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let (_, result) = run(&[partial.as_bytes()]);
    assert_eq!(result, Err(StreamError::Overloaded("Overloaded".into())));

    let too_long = events(&[
        json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "prompt is too long: 210345 tokens > 200000 maximum"}}),
    ]);
    let (_, result) = run(&[too_long.as_bytes()]);
    assert_eq!(
        result,
        Err(StreamError::Overflow {
            message: "prompt is too long: 210345 tokens > 200000 maximum".into(),
            window: Some(200_000)
        })
    );
    let other =
        events(&[json!({"type": "error", "error": {"type": "permission_error", "message": "no"}})]);
    assert_eq!(
        run(&[other.as_bytes()]).1,
        Err(StreamError::Server("no".into()))
    );
}

#[test]
fn a_stream_cut_before_its_stop_is_cut_and_unknown_events_are_skipped() {
    let cut = events(&[
        start(10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "par"}}),
    ]);
    assert_eq!(run(&[cut.as_bytes()]).1, Err(StreamError::Cut));
    let mut list = vec![
        start(1, 0, 0),
        json!({"type": "some_future_event", "x": 1}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "s"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}}),
    ];
    list.extend(stop("end_turn", 1));
    assert!(run(&[events(&list).as_bytes()]).1.is_ok());
}

#[test]
fn a_non_streamed_message_reads_like_the_stream() {
    let mut parser = Messages.parser();
    let body = json!({"id": "msg", "type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 4}});
    let mut on_event = |_: StreamEvent| {};
    assert_eq!(parser.push_whole(&body.to_string(), &mut on_event), Ok(()));
    let done = parser
        .finish(&mut on_event)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(done.content, "ok");
    assert_eq!(
        done.tool_calls,
        vec![ToolCall::new("toolu_1", "bash", r#"{"command":"ls"}"#)]
    );
}

fn body(config: &LlmConfig, messages: &[Message], tools: &[ToolSpec]) -> Value {
    let bytes = Messages
        .body(&Request {
            config,
            messages,
            tools,
            max_tokens: None,
            web_search: false,
        })
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

#[test]
fn the_history_becomes_blocks_with_four_cache_marks() {
    let config = LlmConfig::new("https://api.anthropic.com", "claude-sonnet-4-6");
    let thinking = ReasoningItem::Thinking {
        thinking: "plan".into(),
        signature: "sig".into(),
    };
    let history = vec![
        Message::system("You are Ling."),
        Message::user("fix it"),
        Message::Assistant {
            content: Some("Looking.".into()),
            tool_calls: vec![
                ToolCall::new("toolu_a", "read_file", r#"{"path":"a.rs"}"#),
                ToolCall::new("toolu_b", "bash", "{not json"),
            ],
            reasoning: vec![thinking],
        },
        Message::tool("toolu_a", "fn main() {}"),
        Message::tool("toolu_b", "error: the arguments are not JSON"),
        // An empty answer (the model said nothing) is left out; the turns around it merge.
        Message::assistant(None, Vec::new()),
        Message::user("and now?"),
    ];
    let sent = body(&config, &history, &[tool("read_file"), tool("bash")]);
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        sent,
        json!({
            "model": "claude-sonnet-4-6",
            "max_tokens": 32000,
            "system": [{"type": "text", "text": "You are Ling.", "cache_control": ephemeral}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "fix it", "cache_control": ephemeral}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "plan", "signature": "sig"},
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.rs"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "fn main() {}"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "error: the arguments are not JSON"},
                    {"type": "text", "text": "and now?", "cache_control": ephemeral},
                ]},
            ],
            "tools": [
                {"name": "read_file", "description": "the read_file tool", "input_schema": {"type": "object", "properties": {}}},
                {"name": "bash", "description": "the bash tool", "input_schema": {"type": "object", "properties": {}}, "cache_control": ephemeral},
            ],
            "stream": true,
        })
    );
}

#[test]
fn the_previous_request_s_end_stays_marked_as_the_conversation_grows() {
    let config = LlmConfig::new("https://api.anthropic.com", "claude-sonnet-4-6");
    let mut history = vec![Message::system("s"), Message::user("task")];
    for n in 0..3 {
        let id = format!("toolu_{n}");
        history.push(Message::assistant(
            None,
            vec![ToolCall::new(&id, "bash", "{}")],
        ));
        history.push(Message::tool(id, format!("out {n}")));
    }
    let sent = body(&config, &history, &[]);
    let marked: Vec<String> = sent["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b.get("cache_control").is_some())
        .map(|b| b["content"].as_str().unwrap_or_default().to_string())
        .collect();
    // The newest turn, and the one where the request before this one ended.
    assert_eq!(marked, vec!["out 1", "out 2"]);
}

#[test]
fn thinking_and_max_tokens_follow_the_settings() {
    let history = [Message::user("hi")];
    let mut config = LlmConfig::new("https://api.anthropic.com", "claude-3-5-haiku-latest");
    assert_eq!(body(&config, &history, &[])["max_tokens"], 8192);
    assert_eq!(body(&config, &history, &[]).get("thinking"), None);
    config.reasoning_effort = Some(ReasoningEffort::High);
    config.max_output_tokens = Some(16_000);
    let sent = body(&config, &history, &[]);
    assert_eq!(sent["max_tokens"], 16_000);
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 14_976})
    );
    // A tool loop whose last answer has no thinking (made before thinking was on) goes without.
    let unthought = [
        Message::user("hi"),
        Message::assistant(None, vec![ToolCall::new("toolu_1", "bash", "{}")]),
        Message::tool("toolu_1", "ok"),
    ];
    assert_eq!(body(&config, &unthought, &[]).get("thinking"), None);
    config.reasoning_effort = Some(ReasoningEffort::Minimal);
    assert_eq!(body(&config, &history, &[]).get("thinking"), None);
    assert_eq!(default_max_tokens("claude-3-haiku-20240307"), 4096);
    assert_eq!(default_max_tokens("claude-opus-4-1"), 32_000);
}

#[test]
fn the_key_and_version_go_in_anthropic_s_headers() {
    let options = crate::http_client::ClientOptions::new(crate::http_client::Target::Model);
    let client =
        crate::http_client::build(options.plain_http(true)).unwrap_or_else(|e| panic!("{e}"));
    let request = Messages
        .authorize(
            client.post("http://127.0.0.1:1/v1/messages"),
            Some("sk-ant"),
        )
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    assert_eq!(header("x-api-key").as_deref(), Some("sk-ant"));
    assert_eq!(header("anthropic-version").as_deref(), Some(VERSION));
    assert_eq!(header("authorization"), None);
}

#[test]
fn the_web_search_s_results_and_citations_become_the_completion_s() {
    let mut list = vec![
        start(10, 0, 0),
        json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "input_json_delta", "partial_json": "{\"query\":\"ling\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://a.test/", "title": "A", "encrypted_content": "x"},
                {"type": "web_search_result", "url": "https://b.test/", "title": "B", "encrypted_content": "y"}]}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta",
            "citation": {"type": "web_search_result_location", "url": "https://b.test/",
                         "title": "B", "cited_text": "b", "encrypted_index": "z"}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "B says so."}}),
        json!({"type": "content_block_stop", "index": 2}),
    ];
    list.extend(stop("end_turn", 5));
    let stream = events(&list);
    let (_, result) = run(&[stream.as_bytes()]);
    let completion = result.unwrap();
    assert_eq!(completion.content, "B says so.");
    assert_eq!(completion.tool_calls, Vec::new());
    assert_eq!(completion.finish_reason, FinishReason::Stop);
    assert_eq!(
        completion.citations,
        vec![
            ("B".to_string(), "https://b.test/".to_string()),
            ("A".to_string(), "https://a.test/".to_string()),
        ]
    );
}

#[test]
fn images_go_as_image_blocks_in_user_turns_and_tool_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::media::ImageStore::new(dir.path().to_path_buf());
    let shot = store.add(&tiny_png(), "shot.png").unwrap();
    let messages = vec![
        Message::user_with_images("look", vec![shot.clone()]),
        Message::assistant(None, vec![ToolCall::new("t1", "read_file", "{}")]),
        Message::tool_with_images("t1", "an image", vec![shot]),
    ];
    let config = LlmConfig::new("http://127.0.0.1:1", "claude-sonnet-4-6");
    let body = body(&config, &messages, &[]);
    let user = &body["messages"][0]["content"];
    assert_eq!(user[0]["type"], "image");
    assert_eq!(user[0]["source"]["type"], "base64");
    assert_eq!(user[0]["source"]["media_type"], "image/png");
    assert_eq!(user[1]["text"], "look");
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][0],
        json!({"type": "text", "text": "an image"})
    );
    assert_eq!(result["content"][1]["type"], "image");
    // The cache mark goes on the result, never on an image.
    assert_eq!(result["cache_control"]["type"], "ephemeral");
}

/// A 2 x 2 PNG.
fn tiny_png() -> Vec<u8> {
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 2))
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}
