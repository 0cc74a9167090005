//! OpenTelemetry: spans (turn, model request, tool call, hook, MCP call, sub-agent), metrics
//! (tokens, cost, sessions, tool calls and their decisions, lines changed) and log events, sent
//! over OTLP/HTTP by the OpenTelemetry crates when `OTEL_EXPORTER_OTLP_ENDPOINT` (or settings
//! `env`) asks for them (`config.rs`); docs/telemetry.md lists every name.
//!
//! Off, nothing is set up: [`init`] reads a few variables and returns, and every recording
//! call is one relaxed load of a flag. On, the SDK's batch processors and periodic reader
//! export from their own threads through Ling's HTTP client (`client.rs`), so a run never waits on
//! the collector; a collector that fails is remembered once ([`failure`]) for the front end to
//! say. The providers are process-wide, as the OpenTelemetry API means them to be: every agent
//! and sub-agent of the process records into the same ones.

mod client;
mod config;
mod record;

pub use config::TelemetryError;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use config::OtelConfig;
pub use record::{
    Span, event, lines_changed, session_started, tokens_and_cost, tool_decision, tool_details,
};

/// Whether telemetry was set up: every recording call checks this first.
static ON: AtomicBool = AtomicBool::new(false);
static STATE: OnceLock<State> = OnceLock::new();
/// The first export that failed, said once.
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

struct State {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
    logs: SdkLoggerProvider,
    config: OtelConfig,
    /// The caller's trace (`TRACEPARENT`), parent of the run's top spans.
    root: Context,
    instruments: record::Instruments,
}

pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

fn state() -> Option<&'static State> {
    if on() { STATE.get() } else { None }
}

fn failed(why: String) {
    let mut failure = FAILURE.lock().unwrap_or_else(PoisonError::into_inner);
    failure.get_or_insert(why);
}

/// The first export that failed (the collector's address in it), once: a later call gets
/// `None`.
pub fn failure() -> Option<String> {
    let config = STATE.get().map(|s| s.config.traces.clone());
    FAILURE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .map(|why| match config {
            Some(endpoint) => format!("telemetry: could not export to {endpoint}: {why}"),
            None => format!("telemetry: {why}"),
        })
}

/// Sets up the exporters when the environment (or settings `env`) asks for them; at most once
/// a process. Must run inside the tokio runtime. `Err`: the configuration is unusable (said as
/// a warning; the run goes on without telemetry).
pub fn init(
    settings_env: &std::collections::BTreeMap<String, String>,
) -> Result<(), TelemetryError> {
    if STATE.get().is_some() {
        return Ok(());
    }
    let Some(config) = config::read(settings_env)? else {
        return Ok(());
    };
    let runtime = tokio::runtime::Handle::try_current()?;
    // A plain-http collector (a local agent or sidecar, the usual case) needs no TLS roots,
    // whose loading costs more than everything else here.
    let endpoints = [&config.traces, &config.metrics, &config.logs];
    let plain = endpoints.iter().all(|e| e.starts_with("http://"));
    let http = crate::http_client::build(
        crate::http_client::ClientOptions::new(crate::http_client::Target::Model).plain_http(plain),
    )?;
    let client = client::RuntimeClient { http, runtime };
    let resource = resource(&config);
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client.clone())
        .with_protocol(config.protocol)
        .with_endpoint(config.traces.clone())
        .with_headers(config.headers.clone())
        .build()?;
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(client.clone())
        .with_protocol(config.protocol)
        .with_endpoint(config.metrics.clone())
        .with_headers(config.headers.clone())
        .build()?;
    let logs = opentelemetry_otlp::LogExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(config.protocol)
        .with_endpoint(config.logs.clone())
        .with_headers(config.headers.clone())
        .build()?;
    let spans = opentelemetry_sdk::trace::BatchSpanProcessor::builder(spans)
        .with_batch_config(span_batches())
        .build();
    let traces = SdkTracerProvider::builder()
        .with_span_processor(spans)
        .with_resource(resource.clone())
        .build();
    let mut reader = opentelemetry_sdk::metrics::PeriodicReader::builder(metrics);
    if let Some(ms) = config.metric_interval_ms {
        reader = reader.with_interval(std::time::Duration::from_millis(ms.max(100)));
    }
    let metrics = SdkMeterProvider::builder()
        .with_reader(reader.build())
        .with_resource(resource.clone())
        .build();
    let logs = opentelemetry_sdk::logs::BatchLogProcessor::builder(logs)
        .with_batch_config(log_batches())
        .build();
    let logs = SdkLoggerProvider::builder()
        .with_log_processor(logs)
        .with_resource(resource)
        .build();
    let instruments = record::Instruments::new(&metrics);
    let root = config
        .traceparent
        .as_deref()
        .and_then(remote_parent)
        .map(|parent| Context::new().with_remote_span_context(parent))
        .unwrap_or_default();
    let state = State {
        traces,
        metrics,
        logs,
        config,
        root,
        instruments,
    };
    if STATE.set(state).is_ok() {
        ON.store(true, Ordering::Relaxed);
    }
    Ok(())
}

/// The batch processors' queues, unless `OTEL_BSP_*`/`OTEL_BLRP_*` size them: the SDK's 2048
/// slots are allocated and touched at start (a span's slot is several hundred bytes, about a
/// megabyte in all, most of telemetry's start-up cost); a run makes far fewer spans between
/// two exports, and a batch goes out as soon as [`EXPORT_BATCH`] are waiting.
const QUEUE: usize = 256;
const EXPORT_BATCH: usize = 64;

fn span_batches() -> opentelemetry_sdk::trace::BatchConfig {
    use opentelemetry_sdk::trace::{
        BatchConfigBuilder, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_MAX_QUEUE_SIZE,
    };
    let mut config = BatchConfigBuilder::default();
    if std::env::var_os(OTEL_BSP_MAX_QUEUE_SIZE).is_none() {
        config = config.with_max_queue_size(QUEUE);
    }
    if std::env::var_os(OTEL_BSP_MAX_EXPORT_BATCH_SIZE).is_none() {
        config = config.with_max_export_batch_size(EXPORT_BATCH);
    }
    config.build()
}

fn log_batches() -> opentelemetry_sdk::logs::BatchConfig {
    use opentelemetry_sdk::logs::{
        BatchConfigBuilder, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_QUEUE_SIZE,
    };
    let mut config = BatchConfigBuilder::default();
    if std::env::var_os(OTEL_BLRP_MAX_QUEUE_SIZE).is_none() {
        config = config.with_max_queue_size(QUEUE);
    }
    if std::env::var_os(OTEL_BLRP_MAX_EXPORT_BATCH_SIZE).is_none() {
        config = config.with_max_export_batch_size(EXPORT_BATCH);
    }
    config.build()
}

fn resource(config: &OtelConfig) -> Resource {
    let mut builder = Resource::builder().with_attributes(
        config
            .resource
            .iter()
            .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
    );
    builder =
        builder.with_service_name(config.service_name.clone().unwrap_or_else(|| "ling".into()));
    builder
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}

/// `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>` (W3C Trace Context).
fn remote_parent(text: &str) -> Option<SpanContext> {
    let mut parts = text.trim().split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version != "00" || trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
        return None;
    }
    let trace = TraceId::from_hex(trace).ok()?;
    let span = SpanId::from_hex(span).ok()?;
    let flags = u8::from_str_radix(flags, 16).ok()?;
    (trace != TraceId::INVALID && span != SpanId::INVALID).then(|| {
        SpanContext::new(
            trace,
            span,
            TraceFlags::new(flags),
            true,
            TraceState::default(),
        )
    })
}

/// Sends what is left and stops the exporters, waiting at most a few seconds (on a thread of
/// its own: the SDK's shutdown blocks).
pub async fn shutdown() {
    if !on() {
        return;
    }
    ON.store(false, Ordering::Relaxed);
    // The three at once: each waits for its own last export.
    let Some(state) = STATE.get() else { return };
    let traces = tokio::task::spawn_blocking(|| state.traces.shutdown());
    let metrics = tokio::task::spawn_blocking(|| state.metrics.shutdown());
    let logs = tokio::task::spawn_blocking(|| state.logs.shutdown());
    let _ = tokio::join!(traces, metrics, logs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_and_a_bad_one_ignored() {
        let parent =
            remote_parent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(
            parent.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(parent.is_remote() && parent.is_sampled());
        assert!(remote_parent("00-0000-00f067aa0ba902b7-01").is_none());
        assert!(remote_parent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none());
    }
}
