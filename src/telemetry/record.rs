//! The recording calls the agent makes: [`Span`] for the six kinds of span, the metric
//! instruments, and [`event`] for log events. Each is a no-op (one atomic load) when telemetry
//! is off.

use std::future::Future;

use opentelemetry::logs::{AnyValue, LogRecord, Logger, LoggerProvider, Severity};
use opentelemetry::metrics::{Counter, MeterProvider};
use opentelemetry::trace::{FutureExt, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::metrics::SdkMeterProvider;

use super::state;

/// The metric instruments (docs/telemetry.md#metrics).
pub(super) struct Instruments {
    tokens: Counter<u64>,
    cost: Counter<f64>,
    sessions: Counter<u64>,
    tool_calls: Counter<u64>,
    lines: Counter<u64>,
}

impl Instruments {
    pub(super) fn new(provider: &SdkMeterProvider) -> Self {
        let meter = provider.meter("ling");
        Self {
            tokens: meter
                .u64_counter("ling.token.usage")
                .with_unit("tokens")
                .with_description(
                    "Tokens of model requests, by type (input, output, cache_read, cache_write)",
                )
                .build(),
            cost: meter
                .f64_counter("ling.cost.usage")
                .with_unit("USD")
                .with_description("What model requests cost, from settings prices or Ling's table")
                .build(),
            sessions: meter
                .u64_counter("ling.session.count")
                .with_description("Sessions started")
                .build(),
            tool_calls: meter
                .u64_counter("ling.tool.calls")
                .with_description("Tool calls, by tool, decision and success")
                .build(),
            lines: meter
                .u64_counter("ling.lines_of_code.count")
                .with_description("Lines changed by the file tools, by type (added, removed)")
                .build(),
        }
    }
}

/// A span while it lasts: ended when dropped. Off, it holds nothing.
pub struct Span(Option<Context>);

impl Span {
    /// Starts `name` under the span the current future runs in (or the caller's trace from
    /// `TRACEPARENT`); `attributes` is only built when telemetry is on.
    pub fn start(name: &'static str, attributes: impl FnOnce() -> Vec<KeyValue>) -> Self {
        let Some(state) = state() else {
            return Self(None);
        };
        let current = Context::current();
        let parent = if current.has_active_span() {
            current
        } else {
            state.root.clone()
        };
        let tracer = state.traces.tracer("ling");
        let span = tracer
            .span_builder(name)
            .with_attributes(attributes())
            .start_with_context(&tracer, &parent);
        Self(Some(parent.with_span(span)))
    }

    /// Runs `work` inside this span, so that the spans it starts are this one's children.
    pub async fn run<F: Future>(&self, work: F) -> F::Output {
        match &self.0 {
            Some(cx) => work.with_context(cx.clone()).await,
            None => work.await,
        }
    }

    pub fn set(&self, key: &'static str, value: impl Into<Value>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value.into()));
        }
    }

    /// The span's outcome is an error, with this description.
    pub fn fail(&self, why: impl Into<String>) {
        if let Some(cx) = &self.0 {
            let why: String = why.into();
            cx.span().set_status(Status::error(why));
        }
    }

    pub fn is_recording(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(cx) = &self.0 {
            cx.span().end();
        }
    }
}

/// One model response's tokens and cost, by model: `tokens` are (input, output, cache read,
/// cache write).
pub fn tokens_and_cost(model: &str, tokens: [u64; 4], cost: Option<f64>) {
    let Some(state) = state() else { return };
    let kinds = ["input", "output", "cache_read", "cache_write"];
    for (kind, n) in kinds.into_iter().zip(tokens) {
        if n > 0 {
            let attrs = [
                KeyValue::new("type", kind),
                KeyValue::new("model", model.to_string()),
            ];
            state.instruments.tokens.add(n, &attrs);
        }
    }
    if let Some(cost) = cost {
        state
            .instruments
            .cost
            .add(cost, &[KeyValue::new("model", model.to_string())]);
    }
}

pub fn session_started() {
    if let Some(state) = state() {
        state.instruments.sessions.add(1, &[]);
    }
}

/// A tool call's decision (`accept`, `reject_config`, `reject_hook`, `reject_user`) and
/// whether it succeeded.
pub fn tool_decision(tool: &str, decision: &'static str, success: bool) {
    if let Some(state) = state() {
        let attrs = [
            KeyValue::new("tool", tool.to_string()),
            KeyValue::new("decision", decision),
            KeyValue::new("success", success),
        ];
        state.instruments.tool_calls.add(1, &attrs);
    }
}

pub fn lines_changed(added: usize, removed: usize) {
    if let Some(state) = state() {
        for (kind, n) in [("added", added), ("removed", removed)] {
            if n > 0 {
                state
                    .instruments
                    .lines
                    .add(n as u64, &[KeyValue::new("type", kind)]);
            }
        }
    }
}

/// A log event named `name` with these attributes; `private` ones (prompt text, tool input)
/// only when the settings allow them (`prompt`: OTEL_LOG_USER_PROMPTS, else
/// OTEL_LOG_TOOL_DETAILS).
pub fn event(
    name: &'static str,
    attributes: impl FnOnce() -> Vec<(&'static str, AnyValue)>,
    private: Option<(&'static str, bool, String)>,
) {
    let Some(state) = state() else { return };
    let logger = state.logs.logger("ling");
    let mut record = logger.create_log_record();
    record.set_event_name(name);
    record.set_severity_number(Severity::Info);
    record.set_body(AnyValue::from(name));
    record.add_attribute("event.name", name);
    for (key, value) in attributes() {
        record.add_attribute(key, value);
    }
    if let Some((key, is_prompt, text)) = private {
        let allowed = if is_prompt {
            state.config.log_prompts
        } else {
            state.config.log_tool_details
        };
        if allowed {
            record.add_attribute(key, text);
        }
    }
    let cx = Context::current();
    let span = cx.span();
    let span_context = span.span_context();
    if span_context.is_valid() {
        record.set_trace_context(
            span_context.trace_id(),
            span_context.span_id(),
            Some(span_context.trace_flags()),
        );
    }
    logger.emit(record);
}

/// Whether tool inputs may be exported (`OTEL_LOG_TOOL_DETAILS`).
pub fn tool_details() -> bool {
    state().is_some_and(|s| s.config.log_tool_details)
}
