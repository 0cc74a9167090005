//! The messages of Claude Code's `stream-json` output, as the Claude Agent SDK types them
//! (`SDKMessage` in `@anthropic-ai/claude-agent-sdk`'s `sdk.d.ts`): the `system` lines (`init`,
//! `compact_boundary`, `hook_response`, `api_retry`, `permission_denied`, and Ling's
//! `mcp_status`), `assistant` and `user` messages with Anthropic content blocks, `stream_event`
//! with Anthropic stream events, and the `result`. Every message carries `session_id` and a
//! fresh `uuid`. Ling's own facts without a Claude field (`project_trust`, `sandbox`, a server's
//! `error`) are extra fields, which the SDK passes through.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::llm::Usage;

/// A new message id, as the SDK's `uuid` fields hold.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `system` / `init`: the first message of a run.
#[derive(Debug, Serialize)]
pub struct Init<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub subtype: &'static str,
    pub cwd: String,
    pub session_id: &'a str,
    /// Builtin tools in Claude Code's names (`Bash`, `Read`), MCP tools as they are.
    pub tools: Vec<String>,
    pub mcp_servers: Vec<Value>,
    pub model: &'a str,
    #[serde(rename = "permissionMode")]
    pub permission_mode: &'static str,
    pub slash_commands: Vec<String>,
    #[serde(rename = "apiKeySource")]
    pub api_key_source: &'static str,
    /// Ling's version: what answers in Claude Code's place.
    pub claude_code_version: &'static str,
    pub output_style: &'static str,
    pub agents: Vec<String>,
    pub skills: Vec<String>,
    pub plugins: Vec<Value>,
    pub uuid: String,
    pub project_trust: &'static str,
    pub sandbox: Value,
}

/// The `usage` of a `result` (and of a model response): Anthropic's field names, with the
/// OpenAI-style names Ling's own outputs use beside them.
pub fn usage(usage: Usage) -> Value {
    // Anthropic's (and Claude Code's) `input_tokens` leave out what the prompt cache read or
    // wrote; Ling's `prompt_tokens` count every input token.
    let cached = usage.cache_read_tokens + usage.cache_write_tokens;
    let mut value = json!({
        "input_tokens": usage.prompt_tokens.saturating_sub(cached),
        "output_tokens": usage.completion_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    });
    // Ling's own names of the cache and reasoning counts, where the server reported them.
    for (name, count) in [
        ("cache_read_tokens", usage.cache_read_tokens),
        ("cache_write_tokens", usage.cache_write_tokens),
        ("reasoning_tokens", usage.reasoning_tokens),
    ] {
        if count > 0 {
            value[name] = json!(count);
        }
    }
    value
}

/// An `assistant` message holding one content block of a model response (Claude Code sends one
/// message per block; the blocks of one response share `message.id`).
pub fn assistant(
    session_id: &str,
    message_id: &str,
    model: &str,
    block: Value,
    response_usage: Usage,
) -> Value {
    json!({
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage(response_usage),
        },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// A `user` message carrying one tool's result; `tool_use_result` is Claude Code's structured
/// result of a builtin tool (the same object PostToolUse hooks get).
pub fn tool_result(
    session_id: &str,
    tool_use_id: &str,
    content: &str,
    is_error: bool,
    tool_use_result: Value,
) -> Value {
    json!({
        "type": "user",
        "message": {
            "role": "user",
            "content": [{
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": content,
                "is_error": is_error,
            }],
        },
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
        "tool_use_result": tool_use_result,
    })
}

/// A `system` message of `subtype` with `fields` after it.
pub fn system(session_id: &str, subtype: &str, fields: Value) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), json!("system"));
    map.insert("subtype".into(), json!(subtype));
    if let Value::Object(fields) = fields {
        map.extend(fields);
    }
    map.insert("uuid".into(), json!(uuid()));
    map.insert("session_id".into(), json!(session_id));
    Value::Object(map)
}

/// A `stream_event` (with `--include-partial-messages`): one Anthropic stream event.
pub fn stream_event(session_id: &str, event: Value) -> Value {
    json!({
        "type": "stream_event",
        "event": event,
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid(),
    })
}

/// How a run ended, in the `subtype` of its `result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultSubtype {
    Success,
    ErrorMaxTurns,
    ErrorMaxBudgetUsd,
    ErrorDuringExecution,
    ErrorMaxStructuredOutputRetries,
}

/// The `result` message: Claude Code's fields, then Ling's (`mcp_servers`, `project_trust`).
/// `result` is there on errors too (the error's text), and `errors` holds it once more, as the
/// SDK reads it.
#[derive(Debug, Serialize)]
pub struct ResultMessage<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub subtype: ResultSubtype,
    pub is_error: bool,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    pub num_turns: u32,
    pub result: &'a str,
    pub stop_reason: Option<&'static str>,
    pub session_id: &'a str,
    pub total_cost_usd: f64,
    pub usage: Value,
    #[serde(rename = "modelUsage")]
    pub model_usage: Value,
    pub permission_denials: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<&'a str>>,
    pub uuid: String,
    pub mcp_servers: &'a [Value],
    pub project_trust: &'static str,
    /// Ling's own `cost_usd`: only when settings `prices` has the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The answer's value under `--json-schema` (the SDK's `outputFormat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<&'a Value>,
}

/// `modelUsage`: the one model of the run, in the SDK's `ModelUsage` shape.
pub fn model_usage(model: &str, usage: Usage, cost: f64, context_window: u64) -> Value {
    json!({
        model: {
            "inputTokens": usage.prompt_tokens,
            "outputTokens": usage.completion_tokens,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": cost,
            "contextWindow": context_window,
            "maxOutputTokens": 0,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn system_lines_put_type_and_subtype_first_and_ids_last() {
        let line = system(
            "s1",
            "mcp_status",
            json!({"name": "db", "status": "failed"}),
        );
        let keys: Vec<&str> = line
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            ["type", "subtype", "name", "status", "uuid", "session_id"]
        );
    }

    #[test]
    fn usage_has_both_spellings() {
        let u = usage(Usage::new(7, 2));
        assert_eq!(u["input_tokens"], json!(7));
        let cached = usage(Usage {
            cache_read_tokens: 5,
            cache_write_tokens: 1,
            ..Usage::new(7, 2)
        });
        assert_eq!(
            (
                &cached["input_tokens"],
                &cached["cache_read_input_tokens"],
                &cached["cache_creation_input_tokens"],
                &cached["prompt_tokens"]
            ),
            (&json!(1), &json!(5), &json!(1), &json!(7))
        );
        assert_eq!(u["completion_tokens"], json!(2));
    }
}
