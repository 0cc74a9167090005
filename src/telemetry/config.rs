//! Whether telemetry is on and where it goes: the standard `OTEL_*` variables, from Ling's
//! environment or else from settings `env` (as Claude Code's users set them). Nothing is on
//! unless an OTLP endpoint is given; `OTEL_SDK_DISABLED=true` turns it off whatever else says.

use std::collections::{BTreeMap, HashMap};

use opentelemetry_otlp::Protocol;

/// What the exporters are set up with.
#[derive(Debug, Clone)]
pub struct OtelConfig {
    /// The base endpoint (`/v1/traces`, `/v1/metrics`, `/v1/logs` are added), or each signal's
    /// own.
    pub traces: String,
    pub metrics: String,
    pub logs: String,
    pub protocol: Protocol,
    pub headers: HashMap<String, String>,
    pub service_name: Option<String>,
    /// `OTEL_RESOURCE_ATTRIBUTES`, `k=v` pairs.
    pub resource: Vec<(String, String)>,
    /// `OTEL_LOG_USER_PROMPTS=1`: prompt text goes into events (else only its length).
    pub log_prompts: bool,
    /// `OTEL_LOG_TOOL_DETAILS=1`: tool inputs go into events and spans (else only names).
    pub log_tool_details: bool,
    /// `TRACEPARENT`: the caller's trace, which every span of the run continues.
    pub traceparent: Option<String>,
    /// `OTEL_METRIC_EXPORT_INTERVAL` in milliseconds (default 60000; the rest is sent at exit).
    pub metric_interval_ms: Option<u64>,
}

/// Why the run goes on without telemetry (said as a warning).
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL {0:?} is not supported; Ling sends http/protobuf (the \
         default) or http/json"
    )]
    Protocol(String),
    /// Telemetry was set up outside the tokio runtime (a library user's mistake).
    #[error("{0}")]
    NoRuntime(#[from] tokio::runtime::TryCurrentError),
    /// The HTTP client for the collector cannot be built (its TLS roots).
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    /// An exporter refused the endpoint or headers.
    #[error("{0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// The telemetry settings, or `None` when it is off. `settings_env`: settings `env`, read for
/// the variables Ling's own environment lacks.
pub fn read(settings_env: &BTreeMap<String, String>) -> Result<Option<OtelConfig>, TelemetryError> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| settings_env.get(name).cloned())
            .filter(|v| !v.trim().is_empty())
    };
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
    let signal = |own: &str, route: &str| {
        var(own).or_else(|| {
            base.as_ref()
                .map(|b| format!("{}/{route}", b.trim_end_matches('/')))
        })
    };
    let traces = signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces");
    let metrics = signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics");
    let logs = signal("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "v1/logs");
    let (Some(traces), Some(metrics), Some(logs)) = (traces, metrics, logs) else {
        return Ok(None);
    };
    let protocol = match var("OTEL_EXPORTER_OTLP_PROTOCOL").as_deref() {
        None | Some("http/protobuf") => Protocol::HttpBinary,
        Some("http/json") => Protocol::HttpJson,
        Some(other) => {
            return Err(TelemetryError::Protocol(other.to_string()));
        }
    };
    let flag = |name: &str| var(name).is_some_and(|v| matches!(v.as_str(), "1" | "true"));
    Ok(Some(OtelConfig {
        traces,
        metrics,
        logs,
        protocol,
        headers: pairs(var("OTEL_EXPORTER_OTLP_HEADERS").as_deref())
            .into_iter()
            .collect(),
        service_name: var("OTEL_SERVICE_NAME"),
        resource: pairs(var("OTEL_RESOURCE_ATTRIBUTES").as_deref()),
        log_prompts: flag("OTEL_LOG_USER_PROMPTS"),
        log_tool_details: flag("OTEL_LOG_TOOL_DETAILS"),
        traceparent: std::env::var("TRACEPARENT").ok(),
        metric_interval_ms: var("OTEL_METRIC_EXPORT_INTERVAL").and_then(|v| v.parse().ok()),
    }))
}

/// `k=v,k2=v2` (W3C baggage style, as the OTel variables write them; values percent-decoded
/// only for `%20`, `%2C` and `%3D`).
fn pairs(text: Option<&str>) -> Vec<(String, String)> {
    let decode = |s: &str| {
        s.trim()
            .replace("%20", " ")
            .replace("%2C", ",")
            .replace("%3D", "=")
    };
    text.unwrap_or_default()
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_split_and_decode() {
        assert_eq!(
            pairs(Some("a=1, team=fleet%20one,bad")),
            vec![
                ("a".into(), "1".into()),
                ("team".into(), "fleet one".into())
            ]
        );
    }
}
