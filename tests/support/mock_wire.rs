//! The mock model's Anthropic Messages and OpenAI Responses modes. A scripted reply is written
//! once, as chat-completion chunks ([`super::mock_openai::Reply`]), and served in the API the
//! request came in: [`Script`] reads what the chunks say (reasoning, text in its pieces, tool
//! calls in their fragments, the finish reason, an error, whether the stream ends) and
//! [`anthropic_events`] / [`responses_events`] write it as that API's real event sequence.
//!
//! What each API checks of a request, and how it counts its prompt cache, are
//! [`super::mock_rules`]'s.

use std::hash::{Hash, Hasher};

use serde_json::{Value, json};

/// The API a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Chat,
    Anthropic,
    Responses,
}

impl Api {
    /// The API of a `POST` to this path, if it is a model request.
    pub fn of(method: &str, path: &str) -> Option<Self> {
        let path = path.split('?').next().unwrap_or_default();
        if method != "POST" {
            return None;
        }
        if path.ends_with("/chat/completions") {
            Some(Self::Chat)
        } else if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Self::Responses)
        } else {
            None
        }
    }
}

/// A tool call of a script: its whole id and name, its arguments in the fragments they came in.
#[derive(Debug, Default, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub fragments: Vec<String>,
}

/// What a chat-chunk reply says, API-neutral.
#[derive(Debug, Default, Clone)]
pub struct Script {
    pub reasoning: Vec<String>,
    pub text: Vec<String>,
    pub calls: Vec<Call>,
    pub finish: Option<String>,
    /// An error object sent inside the stream, after what came before it.
    pub error: Option<Value>,
    /// The stream ends properly (`[DONE]`); false: the connection just closes.
    pub done: bool,
}

impl Script {
    pub fn read(chunks: &[Value], done: bool) -> Self {
        let mut script = Self {
            done,
            ..Self::default()
        };
        let mut last: Option<usize> = None;
        for chunk in chunks {
            if let Some(error) = chunk.get("error") {
                script.error = Some(error.clone());
                break;
            }
            let Some(choice) = chunk["choices"].get(0) else {
                continue;
            };
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    script.reasoning.push(text.to_string());
                }
            }
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                script.text.push(text.to_string());
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = match call["index"].as_u64() {
                    Some(i) => i as usize,
                    None => match (last, call["id"].as_str()) {
                        (None, _) => 0,
                        (Some(l), Some(id))
                            if !id.is_empty() && script.calls.iter().all(|c| c.id != id) =>
                        {
                            l + 1
                        }
                        (Some(l), _) => l,
                    },
                };
                last = Some(index);
                while script.calls.len() <= index {
                    script.calls.push(Call::default());
                }
                let entry = &mut script.calls[index];
                if let Some(id) = call["id"].as_str() {
                    entry.id.push_str(id);
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    entry.name.push_str(name);
                }
                match &call["function"]["arguments"] {
                    Value::String(s) => entry.fragments.push(s.clone()),
                    Value::Null => {}
                    other => entry.fragments.push(other.to_string()),
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                script.finish = Some(reason.to_string());
            }
        }
        for (n, call) in script.calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{n}");
            }
        }
        script
    }

    fn arguments(call: &Call) -> String {
        let all: String = call.fragments.concat();
        if all.is_empty() { "{}".into() } else { all }
    }
}

/// The signature the mock gives a thinking text, and checks when it comes back.
pub fn signature(thinking: &str) -> String {
    format!("sig-{:016x}", digest(thinking))
}

/// The encrypted content the mock gives a reasoning summary, and checks when it comes back.
pub fn encrypted(summary: &str) -> String {
    format!("enc-{:016x}", digest(summary))
}

pub(super) fn digest(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Tokens as the mock counts them: a quarter of the bytes.
pub fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Input usage: (uncached input, cache reads, cache writes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputUsage {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl InputUsage {
    pub fn total(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }
}

fn sse(event: &Value) -> Vec<u8> {
    let name = event["type"].as_str().unwrap_or("message");
    format!("event: {name}\ndata: {event}\n\n").into_bytes()
}

/// An Anthropic error type for a chat error object of the script.
fn anthropic_error(error: &Value) -> Value {
    let message = error["message"].as_str().unwrap_or("error").to_string();
    let kind = match error["type"].as_str().unwrap_or_default() {
        "overloaded_error" | "server_error" => "overloaded_error",
        "" | "mock_error" => "api_error",
        other => other,
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// The script as Anthropic streams it: `message_start`, one block at a time (thinking, text,
/// each `tool_use` with its `input_json_delta` fragments), `message_delta`, `message_stop`.
pub fn anthropic_events(script: &Script, input: InputUsage, output: Option<u64>) -> Vec<Vec<u8>> {
    let mut out = vec![sse(&json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input.input, "cache_read_input_tokens": input.cache_read,
                  "cache_creation_input_tokens": input.cache_write, "output_tokens": 1}}}))];
    let mut index = 0;
    let mut written = String::new();
    if !script.reasoning.is_empty() {
        let thinking: String = script.reasoning.concat();
        out.push(sse(&json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}})));
        for piece in &script.reasoning {
            out.push(sse(&json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": piece}})));
        }
        out.push(sse(&json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "signature_delta", "signature": signature(&thinking)}})));
        out.push(sse(&json!({"type": "content_block_stop", "index": index})));
        written.push_str(&thinking);
        index += 1;
    }
    if !script.text.is_empty() || (script.calls.is_empty() && script.error.is_none()) {
        out.push(sse(&json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}})));
        out.push(sse(&json!({"type": "ping"})));
        for piece in &script.text {
            out.push(sse(&json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}})));
            written.push_str(piece);
        }
        if script.error.is_none() && (script.done || script.finish.is_some()) {
            out.push(sse(&json!({"type": "content_block_stop", "index": index})));
        }
        index += 1;
    }
    if let Some(error) = &script.error {
        out.push(sse(&anthropic_error(error)));
        return out;
    }
    for call in &script.calls {
        out.push(sse(&json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}})));
        for fragment in &call.fragments {
            out.push(sse(&json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment}})));
            written.push_str(fragment);
        }
        out.push(sse(&json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    if !script.done && script.finish.is_none() {
        // Cut: the connection closes here.
        return out;
    }
    let stop = if !script.calls.is_empty() {
        "tool_use"
    } else {
        match script.finish.as_deref() {
            Some("length") => "max_tokens",
            _ => "end_turn",
        }
    };
    let output = output.unwrap_or_else(|| tokens(&written).max(1));
    out.push(sse(&json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": output}})));
    out.push(sse(&json!({"type": "message_stop"})));
    out
}

/// The script as the Responses API streams it: `response.created`, each output item (a
/// reasoning item with its summary deltas and encrypted content, the message with its text
/// deltas, each function call with its argument deltas), then `response.completed` with the
/// usage (or `response.failed`, or nothing when cut).
pub fn responses_events(script: &Script, input: InputUsage, output: Option<u64>) -> Vec<Vec<u8>> {
    let mut seq = 0;
    let mut out = Vec::new();
    let mut emit = |mut event: Value, out: &mut Vec<Vec<u8>>| {
        event["sequence_number"] = json!(seq);
        seq += 1;
        out.push(sse(&event));
    };
    let response = |status: &str| json!({"id": "resp_mock", "object": "response", "status": status, "model": "mock", "output": []});
    emit(
        json!({"type": "response.created", "response": response("in_progress")}),
        &mut out,
    );
    emit(
        json!({"type": "response.in_progress", "response": response("in_progress")}),
        &mut out,
    );
    let mut index = 0;
    let mut reasoning_tokens = 0;
    let mut written = String::new();
    if !script.reasoning.is_empty() {
        let summary: String = script.reasoning.concat();
        emit(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": "rs_mock", "type": "reasoning", "summary": []}}),
            &mut out,
        );
        emit(
            json!({"type": "response.reasoning_summary_part.added", "output_index": index,
            "item_id": "rs_mock", "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            &mut out,
        );
        for piece in &script.reasoning {
            emit(
                json!({"type": "response.reasoning_summary_text.delta", "output_index": index,
                "item_id": "rs_mock", "summary_index": 0, "delta": piece}),
                &mut out,
            );
        }
        emit(
            json!({"type": "response.reasoning_summary_text.done", "output_index": index,
            "item_id": "rs_mock", "summary_index": 0, "text": summary}),
            &mut out,
        );
        emit(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"id": "rs_mock", "type": "reasoning",
                     "summary": [{"type": "summary_text", "text": summary}],
                     "encrypted_content": encrypted(&summary)}}),
            &mut out,
        );
        reasoning_tokens = tokens(&summary) * 3;
        index += 1;
    }
    if !script.text.is_empty() || (script.calls.is_empty() && script.error.is_none()) {
        let text: String = script.text.concat();
        emit(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": "msg_mock", "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
            &mut out,
        );
        emit(
            json!({"type": "response.content_part.added", "output_index": index, "item_id": "msg_mock",
            "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
            &mut out,
        );
        for piece in &script.text {
            emit(
                json!({"type": "response.output_text.delta", "output_index": index, "item_id": "msg_mock",
                "content_index": 0, "delta": piece}),
                &mut out,
            );
        }
        written.push_str(&text);
        if script.error.is_none() && (script.done || script.finish.is_some()) {
            emit(
                json!({"type": "response.output_text.done", "output_index": index, "item_id": "msg_mock",
                "content_index": 0, "text": text}),
                &mut out,
            );
            emit(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": {"id": "msg_mock", "type": "message", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
                &mut out,
            );
        }
        index += 1;
    }
    if let Some(error) = &script.error {
        let code = match error["type"].as_str().unwrap_or_default() {
            "overloaded_error" | "server_error" => "server_error",
            other if !other.is_empty() && other != "mock_error" => other,
            _ => "server_error",
        };
        let message = error["message"].as_str().unwrap_or("error");
        let mut failed = response("failed");
        failed["error"] = json!({"code": code, "message": message});
        emit(
            json!({"type": "response.failed", "response": failed}),
            &mut out,
        );
        return out;
    }
    for (n, call) in script.calls.iter().enumerate() {
        let item_id = format!("fc_mock_{n}");
        emit(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": item_id, "type": "function_call", "call_id": call.id, "name": call.name,
                     "arguments": "", "status": "in_progress"}}),
            &mut out,
        );
        for fragment in &call.fragments {
            emit(
                json!({"type": "response.function_call_arguments.delta", "output_index": index,
                "item_id": item_id, "delta": fragment}),
                &mut out,
            );
            written.push_str(fragment);
        }
        let arguments = Script::arguments(call);
        emit(
            json!({"type": "response.function_call_arguments.done", "output_index": index,
            "item_id": item_id, "arguments": arguments}),
            &mut out,
        );
        emit(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"id": item_id, "type": "function_call", "call_id": call.id, "name": call.name,
                     "arguments": arguments, "status": "completed"}}),
            &mut out,
        );
        index += 1;
    }
    if !script.done && script.finish.is_none() {
        return out;
    }
    let output = output.unwrap_or_else(|| tokens(&written).max(1) + reasoning_tokens);
    let usage = json!({"input_tokens": input.total(),
        "input_tokens_details": {"cached_tokens": input.cache_read},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input.total() + output});
    let (kind, status) = match script.finish.as_deref() {
        Some("length") => ("response.incomplete", "incomplete"),
        _ => ("response.completed", "completed"),
    };
    let mut done = response(status);
    done["usage"] = usage;
    if status == "incomplete" {
        done["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    emit(json!({"type": kind, "response": done}), &mut out);
    out
}

/// An HTTP error body as the API writes it.
pub fn error_body(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::Anthropic => {
            let kind = match status {
                400 | 413 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Api::Chat | Api::Responses => {
            json!({"error": {"message": message, "type": "mock_error", "code": status}})
        }
    }
}

/// What the mock reported of one model request's input, for the cache measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub api: Api,
    pub input: InputUsage,
}
