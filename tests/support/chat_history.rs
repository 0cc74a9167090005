//! The rule the OpenAI API enforces on the tool calls in a chat history, checked by the mock
//! model on every request it receives: each assistant tool call is answered by a `tool` message
//! in the run of `tool` messages right after it, and each `tool` message answers a call of the
//! assistant message before that run. The API answers 400 to any other history, so a history
//! Ling would send wrong must fail the test that produced it.

use serde_json::Value;

/// `Ok` if the API would accept the tool calls and results in `messages`; else what is wrong,
/// naming the message.
pub fn check_tool_calls(messages: &[Value]) -> Result<(), String> {
    // The calls of the last assistant message still waiting for a result, while its run of
    // `tool` messages lasts; `None` outside such a run.
    let mut pending: Option<Vec<String>> = None;
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let Some(waiting) = pending.as_mut() else {
                return Err(format!(
                    "messages[{i}] is a tool result ({id:?}) that follows no assistant message \
                     with tool calls"
                ));
            };
            let Some(at) = waiting.iter().position(|w| w == id) else {
                return Err(format!(
                    "messages[{i}] is a tool result for {id:?}, which the assistant message \
                     before it did not call (or which already has its result)"
                ));
            };
            waiting.remove(at);
            continue;
        }
        if let Some(id) = pending
            .take()
            .and_then(|waiting| waiting.into_iter().next())
        {
            return Err(format!(
                "the tool call {id:?} has no result: messages[{i}] ({role}) comes first"
            ));
        }
        if role == "assistant"
            && let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null())
        {
            let calls = calls.as_array().filter(|c| !c.is_empty()).ok_or_else(|| {
                format!("messages[{i}].tool_calls is not a non-empty array: {calls}")
            })?;
            let ids = calls.iter().map(|c| c["id"].as_str().unwrap_or_default());
            pending = Some(ids.map(str::to_string).collect());
        }
    }
    match pending.and_then(|waiting| waiting.into_iter().next()) {
        Some(id) => Err(format!(
            "the tool call {id:?} has no result: the history ends first"
        )),
        None => Ok(()),
    }
}
