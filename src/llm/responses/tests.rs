//! The Responses API on raw bytes: `response.*` event sequences as the API documents them,
//! split anywhere, and the stateless request the history becomes.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::config::ReasoningEffort;
use crate::llm::LlmConfig;
use crate::llm::stream::StreamError;
use crate::llm::types::{Completion, FinishReason, StreamEvent, ToolCall, ToolSpec, Usage};
use crate::sse::SseDecoder;

fn events(list: &[Value]) -> String {
    list.iter()
        .enumerate()
        .map(|(n, e)| {
            let mut e = e.clone();
            e["sequence_number"] = json!(n);
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
    let mut parser: Box<dyn StreamParser> = Responses.parser();
    let mut result = Ok(());
    for piece in pieces {
        for event in decoder.feed(piece).unwrap_or_default() {
            result = result.and_then(|()| parser.push(&event.data, &mut on_event));
        }
    }
    let completion = result.and_then(|()| parser.finish(&mut on_event));
    (seen, completion)
}

fn completed(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                  "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
                  "total_tokens": input + output}}})
}

fn created() -> Value {
    json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}})
}

#[test]
fn a_text_answer_with_cached_and_reasoning_tokens() {
    let body = events(&[
        created(),
        json!({"type": "response.in_progress", "response": {"id": "resp_1"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": ""}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hel"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "lo"}),
        json!({"type": "response.output_text.done", "output_index": 0, "text": "Hello"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}}),
        completed(900, 768, 50, 20),
    ]);
    let (seen, result) = run(&[body.as_bytes()]);
    assert_eq!(
        seen,
        vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into())
        ]
    );
    assert_eq!(
        result,
        Ok(Completion {
            content: "Hello".into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Some(Usage {
                cache_read_tokens: 768,
                reasoning_tokens: 20,
                ..Usage::new(900, 50)
            }),
            reasoning_items: Vec::new(),
            citations: Vec::new(),
        })
    );
}

fn reasoning_and_calls() -> String {
    events(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "Reading "}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "both."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Reading both."}], "encrypted_content": "gAAAA-secret"}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"path\":"}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"id": "fc_2", "type": "function_call", "call_id": "call_b", "name": "bash", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 2, "delta": "{\"command\":\"ls\"}"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "\"a.rs\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": "{\"path\":\"a.rs\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"id": "fc_1", "type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"id": "fc_2", "type": "function_call", "call_id": "call_b", "name": "bash", "arguments": "{\"command\":\"ls\"}"}}),
        completed(100, 0, 60, 40),
    ])
}

#[test]
fn reasoning_and_two_calls_split_anywhere() {
    let body = reasoning_and_calls();
    let (seen, result) = run(&[body.as_bytes()]);
    let done = result.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        done.tool_calls,
        vec![
            ToolCall::new("call_a", "read_file", r#"{"path":"a.rs"}"#),
            ToolCall::new("call_b", "bash", r#"{"command":"ls"}"#),
        ]
    );
    assert_eq!(done.finish_reason, FinishReason::ToolCalls);
    assert_eq!(done.reasoning, "Reading both.");
    assert_eq!(
        done.reasoning_items,
        vec![ReasoningItem::Reasoning {
            summary: vec!["Reading both.".into()],
            encrypted_content: Some("gAAAA-secret".into()),
        }]
    );
    assert_eq!(
        seen[..2],
        [
            StreamEvent::ReasoningDelta("Reading ".into()),
            StreamEvent::ReasoningDelta("both.".into())
        ]
    );
    let bytes: Vec<&[u8]> = body.as_bytes().chunks(1).collect();
    let (byte_seen, byte_result) = run(&bytes);
    assert_eq!(byte_seen, seen);
    assert_eq!(byte_result, Ok(done));
}

#[test]
fn failures_in_the_stream_say_whether_to_retry_or_compact() {
    let failed = |code: &str, message: &str| {
        events(&[
            created(),
            json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed",
                "error": {"code": code, "message": message}}}),
        ])
    };
    assert_eq!(
        run(&[failed("server_error", "try again").as_bytes()]).1,
        Err(StreamError::Overloaded("try again".into()))
    );
    assert_eq!(
        run(&[failed(
            "context_length_exceeded",
            "Your input exceeds the context window of this model."
        )
        .as_bytes()])
        .1,
        Err(StreamError::Overflow {
            message: "Your input exceeds the context window of this model.".into(),
            window: None
        })
    );
    let error = events(&[
        json!({"type": "error", "code": "invalid_prompt", "message": "bad", "param": null}),
    ]);
    assert_eq!(
        run(&[error.as_bytes()]).1,
        Err(StreamError::Server("bad".into()))
    );
}

#[test]
fn an_incomplete_answer_says_why_and_a_cut_one_is_cut() {
    let incomplete = events(&[
        created(),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "long"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}}}),
    ]);
    let done = run(&[incomplete.as_bytes()])
        .1
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(done.finish_reason, FinishReason::Length);
    let cut = events(&[
        created(),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "par"}),
    ]);
    assert_eq!(run(&[cut.as_bytes()]).1, Err(StreamError::Cut));
}

#[test]
fn a_message_sent_whole_without_deltas_is_shown_once() {
    let body = events(&[
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message",
            "content": [{"type": "output_text", "text": "all at once"}]}}),
        completed(1, 0, 1, 0),
    ]);
    let (seen, result) = run(&[body.as_bytes()]);
    assert_eq!(seen, vec![StreamEvent::TextDelta("all at once".into())]);
    assert_eq!(result.map(|c| c.content), Ok("all at once".into()));
}

fn body(config: &LlmConfig, messages: &[Message], tools: &[ToolSpec]) -> Value {
    let bytes = Responses
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

#[test]
fn the_request_is_stateless_and_carries_the_reasoning_back() {
    let config = LlmConfig::new("https://api.openai.com/v1", "o4-mini");
    let history = vec![
        Message::system("You are Ling."),
        Message::user("fix it"),
        Message::Assistant {
            content: Some("Looking.".into()),
            tool_calls: vec![ToolCall::new("call_a", "read_file", r#"{"path":"a.rs"}"#)],
            reasoning: vec![ReasoningItem::Reasoning {
                summary: vec!["Plan.".into()],
                encrypted_content: Some("gAAAA".into()),
            }],
        },
        Message::tool("call_a", "fn main() {}"),
    ];
    let tools = [ToolSpec {
        name: "read_file".into(),
        description: "reads".into(),
        parameters: json!({"type": "object"}),
    }];
    assert_eq!(
        body(&config, &history, &tools),
        json!({
            "model": "o4-mini",
            "instructions": "You are Ling.",
            "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan."}], "encrypted_content": "gAAAA"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
                {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"a.rs\"}"},
                {"type": "function_call_output", "call_id": "call_a", "output": "fn main() {}"},
            ],
            "tools": [{"type": "function", "name": "read_file", "description": "reads", "parameters": {"type": "object"}, "strict": false}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"summary": "auto"},
        })
    );
}

#[test]
fn reasoning_is_asked_only_of_reasoning_models_or_when_set() {
    let history = [Message::user("hi")];
    let mut config = LlmConfig::new("http://127.0.0.1:1/v1", "gpt-4o-mini");
    let sent = body(&config, &history, &[]);
    assert_eq!((sent.get("reasoning"), sent.get("include")), (None, None));
    assert_eq!(sent["store"], false);
    config.reasoning_effort = Some(ReasoningEffort::High);
    assert_eq!(
        body(&config, &history, &[])["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    for model in [
        "o3",
        "o4-mini",
        "gpt-5",
        "gpt-5-codex",
        "openai/gpt-oss-120b",
    ] {
        assert!(is_reasoning_model(model), "{model}");
    }
    for model in [
        "gpt-4o",
        "gpt-4.1-mini",
        "gpt-5-chat-latest",
        "ollama",
        "qwen3",
    ] {
        assert!(!is_reasoning_model(model), "{model}");
    }
}

#[test]
fn url_citations_become_the_completion_s_and_images_go_as_input_image() {
    let stream = events(&[
        created(),
        json!({"type": "response.output_item.done", "output_index": 0, "item":
            {"type": "web_search_call", "id": "ws_1", "status": "completed"}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": "See A."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": "See A.", "annotations": [
                {"type": "url_citation", "url": "https://a.test/", "title": "A", "start_index": 4, "end_index": 5},
                {"type": "url_citation", "url": "https://a.test/", "title": "A", "start_index": 0, "end_index": 1}]}]}}),
        completed(10, 0, 3, 0),
    ]);
    let (_, result) = run(&[stream.as_bytes()]);
    let completion = result.unwrap();
    assert_eq!(completion.content, "See A.");
    assert_eq!(
        completion.citations,
        vec![("A".to_string(), "https://a.test/".to_string())]
    );

    let dir = tempfile::tempdir().unwrap();
    let store = crate::media::ImageStore::new(dir.path().to_path_buf());
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 2))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let shot = store.add(&png, "shot.png").unwrap();
    let messages = vec![
        Message::user("read it"),
        Message::assistant(None, vec![ToolCall::new("c1", "read_file", "{}")]),
        Message::tool_with_images("c1", "an image", vec![shot]),
    ];
    let config = LlmConfig::new("http://127.0.0.1:1/v1", "gpt-4.1");
    let body = body(&config, &messages, &[]);
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[2]["type"], "function_call_output");
    assert_eq!(input[2]["output"], "an image");
    assert_eq!(input[3]["role"], "user");
    assert_eq!(
        input[3]["content"][0]["text"],
        "[The image returned by the tool calls above: shot.png (2x2)]"
    );
    assert_eq!(input[3]["content"][1]["type"], "input_image");
    assert!(
        input[3]["content"][1]["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
}
