//! What the agent tells telemetry ([`crate::telemetry`]): the attributes and outcomes of its
//! turn, model request and tool call spans, the metrics of each response and call, and the log
//! events. Prompt text and tool inputs go only where `OTEL_LOG_USER_PROMPTS` and
//! `OTEL_LOG_TOOL_DETAILS` allow.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::logs::AnyValue;

use super::call_result::CallResult;
use super::{Agent, AgentError, RunEnd, RunResult};
use crate::llm::{Completion, ToolCall};
use crate::telemetry::{self, Span};

/// How a turn (or a sub-agent's run) ended, on its span.
pub(super) fn run_outcome(span: &Span, result: &Result<RunResult, AgentError>) {
    if !span.is_recording() {
        return;
    }
    match result {
        Ok(run) => {
            let outcome = match &run.end {
                RunEnd::Completed => "completed",
                RunEnd::MaxTurns => "max_turns",
                RunEnd::MaxBudget(_) => "max_budget",
                RunEnd::Interrupted => "interrupted",
                RunEnd::Stopped(_) => "stopped_by_hook",
                RunEnd::PromptBlocked(_) => "prompt_blocked",
                RunEnd::Declined => "declined",
            };
            span.set("ling.outcome", outcome);
            span.set("ling.requests", i64::from(run.num_turns));
        }
        Err(e) => {
            span.set("ling.outcome", "error");
            span.fail(e.to_string());
        }
    }
}

pub(super) fn tool_attributes(call: &ToolCall) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("ling.tool.name", call.name().to_string()),
        KeyValue::new("ling.tool.call_id", call.id.clone()),
    ];
    if telemetry::tool_details() {
        attributes.push(KeyValue::new(
            "ling.tool.input",
            call.arguments().to_string(),
        ));
    }
    attributes
}

/// A tool call's span outcome, its metrics (decision, lines changed) and its log event.
pub(super) fn tool_outcome(span: &Span, call: &ToolCall, result: &CallResult, started: Instant) {
    if !span.is_recording() {
        return;
    }
    let ms = started.elapsed().as_millis() as i64;
    span.set("ling.tool.decision", result.decision);
    span.set("ling.tool.success", !result.is_error);
    if result.is_error {
        span.fail(result.content.chars().take(200).collect::<String>());
    }
    telemetry::tool_decision(call.name(), result.decision, !result.is_error);
    if !result.is_error
        && let Some((added, removed)) = result
            .display
            .as_deref()
            .and_then(crate::tools::diff::display_counts)
    {
        telemetry::lines_changed(added, removed);
    }
    let name = call.name().to_string();
    telemetry::event(
        "ling.tool_result",
        || {
            vec![
                ("tool_name", AnyValue::from(name)),
                ("success", AnyValue::from(!result.is_error)),
                ("decision", AnyValue::from(result.decision)),
                ("duration_ms", AnyValue::from(ms)),
            ]
        },
        Some(("tool_input", false, call.arguments().to_string())),
    );
}

impl Agent {
    pub(super) fn turn_attributes(&self, prompt: &str) -> Vec<KeyValue> {
        let prompt_length = prompt.chars().count() as i64;
        telemetry::event(
            "ling.user_prompt",
            || vec![("prompt_length", AnyValue::from(prompt_length))],
            Some(("prompt", true, prompt.to_string())),
        );
        vec![
            KeyValue::new("session.id", self.conversation.session.id.clone()),
            KeyValue::new(
                "ling.agent",
                match &self.options.subagent {
                    Some(_) => "subagent",
                    None => "main",
                },
            ),
            KeyValue::new("ling.prompt_length", prompt_length),
        ]
    }

    pub(super) fn request_attributes(&self) -> Vec<KeyValue> {
        let config = self.llm.config();
        vec![
            KeyValue::new("gen_ai.request.model", config.model.clone()),
            KeyValue::new("gen_ai.system", config.api.as_str()),
            KeyValue::new("ling.messages", self.conversation.history.len() as i64 + 1),
        ]
    }

    /// The request's span outcome and tokens, and its log event.
    pub(super) fn request_outcome(
        &self,
        span: &Span,
        result: &Result<Option<Completion>, AgentError>,
        started: Instant,
    ) {
        if !span.is_recording() {
            return;
        }
        let ms = started.elapsed().as_millis() as i64;
        let model = self.llm.config().model.clone();
        match result {
            Ok(Some(completion)) => {
                let usage = completion.usage.unwrap_or_default();
                span.set("gen_ai.usage.input_tokens", usage.prompt_tokens as i64);
                span.set("gen_ai.usage.output_tokens", usage.completion_tokens as i64);
                span.set(
                    "ling.usage.cache_read_tokens",
                    usage.cache_read_tokens as i64,
                );
                span.set(
                    "ling.usage.cache_write_tokens",
                    usage.cache_write_tokens as i64,
                );
                span.set("ling.tool_calls", completion.tool_calls.len() as i64);
                span.set("ling.outcome", "ok");
                telemetry::event(
                    "ling.api_request",
                    || {
                        vec![
                            ("model", AnyValue::from(model)),
                            ("input_tokens", AnyValue::from(usage.prompt_tokens as i64)),
                            (
                                "output_tokens",
                                AnyValue::from(usage.completion_tokens as i64),
                            ),
                            ("duration_ms", AnyValue::from(ms)),
                        ]
                    },
                    None,
                );
            }
            Ok(None) => span.set("ling.outcome", "interrupted"),
            Err(e) => {
                span.set("ling.outcome", "error");
                span.fail(e.to_string());
                let error = e.to_string();
                telemetry::event(
                    "ling.api_error",
                    || {
                        vec![
                            ("model", AnyValue::from(model)),
                            ("error", AnyValue::from(error)),
                            ("duration_ms", AnyValue::from(ms)),
                        ]
                    },
                    None,
                );
            }
        }
    }
}
