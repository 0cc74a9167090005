//! One tool call made by someone other than the model (`ling mcp serve`, where another agent
//! calls Ling's tools): the same steps as a model's call at the one dispatch point (PreToolUse
//! hooks, the permission rules and mode, the sandbox, PostToolUse hooks, the output cap), its
//! events reported to the caller's sink, its questions to the caller's approver.

use std::sync::Mutex;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::turn::Turn;
use super::{Agent, AgentEvent, Approver, EventSink};
use crate::llm::ToolCall;

/// How a direct call ended: what the caller reads, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectResult {
    pub content: String,
    pub is_error: bool,
}

/// Passes every event on and keeps the end of the call.
struct Watch<'a> {
    inner: &'a dyn EventSink,
    id: &'a str,
    end: Mutex<Option<DirectResult>>,
}

impl EventSink for Watch<'_> {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::ToolCallEnd {
            id,
            content,
            is_error,
            ..
        } = &event
            && id == self.id
            && let Ok(mut end) = self.end.lock()
        {
            *end = Some(DirectResult {
                content: content.clone(),
                is_error: *is_error,
            });
        }
        self.inner.emit(event);
    }
}

impl Agent {
    /// Calls the tool `name` with `input` as if the model had, under the call id `id`.
    pub async fn call_tool_directly(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> DirectResult {
        let watch = Watch {
            inner: sink,
            id,
            end: Mutex::new(None),
        };
        let turn = Turn::new(&watch, approver, cancel);
        let call = ToolCall::new(id, name, input.to_string());
        let text = self.dispatch(&call, &turn).await;
        let end = watch.end.lock().ok().and_then(|mut end| end.take());
        end.unwrap_or(DirectResult {
            content: text,
            is_error: true,
        })
    }
}
