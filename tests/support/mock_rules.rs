//! What Anthropic's Messages API and OpenAI's Responses API check of a request, and how each
//! counts its prompt cache, for the mock model ([`super::mock_wire`]).
//!
//! The checks ([`check_anthropic`], [`check_responses`]): every tool call answered, no result
//! without its call, thinking blocks and encrypted reasoning sent back unchanged, at most four
//! cache breakpoints, no item ids with `store: false`. The usage is computed honestly
//! ([`Caches`]): Anthropic's cache reads are the longest prefix (tools, system, messages, block by
//! block) that ends at a cache breakpoint of an earlier request, found from this request's own
//! breakpoints and up to 20 blocks before each, as the API looks them up, and only from 1024
//! tokens on; its writes are the rest up to this request's last breakpoint. OpenAI's automatic
//! caching (Responses) is the longest prefix shared with a recent request, in 128-token steps from
//! 1024 on.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::mock_wire::{InputUsage, digest, encrypted, signature, tokens};

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
        // OpenAI keeps a prefix for minutes; the last few requests are what a session reuses.
        if self.responses.len() >= 16 {
            self.responses.remove(0);
        }
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
