//! The mock model's Anthropic Messages and OpenAI Responses modes. A scripted reply is written
//! once, as chat-completion chunks ([`super::mock_openai::Reply`]), and served in the API the
//! request came in: [`Script`] reads what the chunks say (reasoning, text in its pieces, tool
//! calls in their fragments, the finish reason, an error, whether the stream ends) and
//! [`anthropic_events`] / [`responses_events`] write it as that API's real event sequence.
//!
//! What each API checks of a request is checked here too ([`check_anthropic`],
//! [`check_responses`]): every tool call answered, thinking blocks and encrypted reasoning sent
//! back unchanged, no item ids with `store: false`. And each computes its usage honestly
//! ([`Caches`]): Anthropic's cache reads are the longest prefix (tools, system, messages, block by
//! block) that ends at a cache breakpoint of an earlier request, found from this request's own
//! breakpoints and up to 20 blocks before each, as the API looks them up; its writes are the rest
//! up to this request's last breakpoint. OpenAI's automatic caching (Responses) is the longest
//! prefix shared with an earlier request, in 128-token steps from 1024 on.

use std::collections::HashSet;
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

fn digest(text: &str) -> u64 {
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

/// Anthropic's rules on a request: each `tool_use` answered in the next user turn, each
/// `tool_result` answering one, thinking blocks sent back with the signature they came with, at
/// most 4 cache breakpoints.
pub fn check_anthropic(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut pending: Vec<String> = Vec::new();
    let mut marks = 0;
    for tool in body["tools"].as_array().into_iter().flatten() {
        marks += usize::from(tool.get("cache_control").is_some());
    }
    for block in body["system"].as_array().into_iter().flatten() {
        marks += usize::from(block.get("cache_control").is_some());
    }
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        if blocks.is_empty() && !message["content"].is_string() {
            return Err(format!(
                "messages.{i}: all messages must have non-empty content"
            ));
        }
        let mut answered = Vec::new();
        for block in &blocks {
            marks += usize::from(block.get("cache_control").is_some());
            match block["type"].as_str().unwrap_or_default() {
                "tool_result" => answered.push(
                    block["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
                "text" if block["text"].as_str().is_some_and(|t| t.is_empty()) => {
                    return Err(format!(
                        "messages.{i}: text content blocks must be non-empty"
                    ));
                }
                "thinking" => {
                    let thinking = block["thinking"].as_str().unwrap_or_default();
                    if block["signature"].as_str() != Some(signature(thinking).as_str()) {
                        return Err(format!(
                            "messages.{i}: invalid `signature` in `thinking` block"
                        ));
                    }
                }
                _ => {}
            }
        }
        if !pending.is_empty() {
            if role != "user" {
                return Err(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}",
                    pending.join(", ")
                ));
            }
            for id in &pending {
                if !answered.contains(id) {
                    return Err(format!(
                        "messages.{i}: `tool_use` id {id} has no `tool_result` block"
                    ));
                }
            }
        }
        for id in &answered {
            if !pending.contains(id) {
                return Err(format!(
                    "messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {id}"
                ));
            }
        }
        pending = if role == "assistant" {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                .collect()
        } else {
            Vec::new()
        };
    }
    if !pending.is_empty() {
        return Err(format!(
            "the history ends with tool_use ids unanswered: {}",
            pending.join(", ")
        ));
    }
    if marks > 4 {
        return Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {marks}."
        ));
    }
    Ok(())
}

/// The Responses API's rules: each `function_call` answered by a `function_call_output`, no
/// output without its call, encrypted reasoning sent back unchanged, and no item ids when
/// `store` is false (nothing was stored for them to name).
pub fn check_responses(body: &Value) -> Result<(), String> {
    let store = body["store"].as_bool().unwrap_or(true);
    let mut calls = HashSet::new();
    let mut outputs = Vec::new();
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        if !store && let Some(id) = item["id"].as_str() {
            return Err(format!(
                "input[{i}]: Item with id '{id}' not found. Items are not persisted when `store` is set to false."
            ));
        }
        match item["type"].as_str().unwrap_or_default() {
            "function_call" => {
                calls.insert(item["call_id"].as_str().unwrap_or_default().to_string());
            }
            "function_call_output" => {
                let id = item["call_id"].as_str().unwrap_or_default().to_string();
                if !calls.contains(&id) {
                    return Err(format!(
                        "input[{i}]: No tool call found for function call output with call_id {id}."
                    ));
                }
                outputs.push(id);
            }
            "reasoning" => {
                let summary: String = item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["text"].as_str())
                    .collect();
                if item["encrypted_content"].as_str() != Some(encrypted(&summary).as_str()) {
                    return Err(format!(
                        "input[{i}]: The encrypted content could not be verified."
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(id) = calls.iter().find(|c| !outputs.contains(c)) {
        return Err(format!("No tool output found for function call {id}."));
    }
    Ok(())
}

/// Anthropic's least cacheable prefix, in tokens.
const MIN_CACHEABLE: u64 = 1024;
/// How many blocks before a breakpoint the API looks for an earlier cache entry.
const LOOKBACK: usize = 20;

/// What the mock's "servers" have cached: Anthropic's entries at breakpoints, and the prefixes of
/// earlier Responses requests.
#[derive(Debug, Default)]
pub struct Caches {
    anthropic: HashSet<u64>,
    responses: Vec<Vec<u8>>,
}

impl Caches {
    /// An Anthropic request: reads from, then writes to the cache, as the API does.
    pub fn anthropic(&mut self, body: &Value) -> InputUsage {
        let mut blocks: Vec<(Value, bool)> = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            blocks.push(unmarked(tool));
        }
        match &body["system"] {
            Value::String(s) => blocks.push((json!({"type": "text", "text": s}), false)),
            Value::Array(parts) => blocks.extend(parts.iter().map(unmarked)),
            _ => {}
        }
        for message in body["messages"].as_array().into_iter().flatten() {
            let role = message["role"].clone();
            match &message["content"] {
                Value::String(s) => blocks.push((json!({"role": role, "text": s}), false)),
                Value::Array(parts) => {
                    for part in parts {
                        let (mut block, marked) = unmarked(part);
                        block["role"] = role.clone();
                        blocks.push((block, marked));
                    }
                }
                _ => {}
            }
        }
        let seed = body["model"].to_string();
        let mut hashes = Vec::with_capacity(blocks.len());
        let mut totals = Vec::with_capacity(blocks.len());
        let (mut hash, mut total) = (digest(&seed), 0);
        for (block, _) in &blocks {
            let text = block.to_string();
            hash = digest(&format!("{hash:x}{text}"));
            total += tokens(&text);
            hashes.push(hash);
            totals.push(total);
        }
        let breakpoints: Vec<usize> = blocks
            .iter()
            .enumerate()
            .filter(|(_, (_, marked))| *marked)
            .map(|(i, _)| i)
            .collect();
        let mut read = 0;
        for &point in &breakpoints {
            for at in (point.saturating_sub(LOOKBACK)..=point).rev() {
                if self.anthropic.contains(&hashes[at]) {
                    read = read.max(totals[at]);
                    break;
                }
            }
        }
        let mut cached_to = read;
        for &point in &breakpoints {
            if totals[point] >= MIN_CACHEABLE {
                self.anthropic.insert(hashes[point]);
                cached_to = cached_to.max(totals[point]);
            }
        }
        InputUsage {
            input: total - cached_to,
            cache_read: read,
            cache_write: cached_to - read,
        }
    }

    /// A Responses request: OpenAI caches every prompt's prefix by itself.
    pub fn responses(&mut self, body: &Value) -> InputUsage {
        let prompt = serde_json::to_vec(&json!([
            body["model"],
            body["tools"],
            body["instructions"],
            body["input"]
        ]))
        .unwrap_or_default();
        let shared = self
            .responses
            .iter()
            .map(|earlier| {
                earlier
                    .iter()
                    .zip(&prompt)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        let total = (prompt.len() as u64).div_ceil(4);
        let shared = shared as u64 / 4;
        let read = if shared >= 1024 {
            shared / 128 * 128
        } else {
            0
        };
        self.responses.push(prompt);
        InputUsage {
            input: total - read,
            cache_read: read,
            cache_write: 0,
        }
    }
}

/// A block without its `cache_control`, and whether it had one.
fn unmarked(block: &Value) -> (Value, bool) {
    let mut block = block.clone();
    let marked = block
        .as_object_mut()
        .and_then(|o| o.remove("cache_control"))
        .is_some();
    (block, marked)
}

/// What the mock reported of one model request's input, for the cache measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub api: Api,
    pub input: InputUsage,
}
