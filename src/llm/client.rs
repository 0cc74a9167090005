//! The HTTP side of the model client: builds the `POST {base_url}/chat/completions` request,
//! bounds every wait (connect, first byte, idle between chunks), feeds the body through the SSE
//! decoder and the chunk assembler, and retries what can be retried. Cancelling is dropping the
//! future: nothing is spawned, so dropping closes the connection and leaves nothing behind.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde::Serialize;
use tokio::time::{Instant, timeout, timeout_at};

use super::error::{LlmError, TimeoutKind, server_message};
use super::retry::{RetryPolicy, is_retryable_status, server_delay};
use super::sse::{LineTooLong, SseDecoder};
use super::stream::{ChunkAssembler, StreamError};
use super::types::{Completion, Message, StreamEvent, ToolSpec};
use super::window::{is_context_overflow, window_in_error};
use crate::config::{
    DEFAULT_API_KEY_ENV, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FIRST_BYTE_TIMEOUT_MS,
    DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS,
    DEFAULT_MAX_STREAM_LINE_BYTES, Settings,
};
use crate::http_client::{self, ClientOptions, Target, redirect_refusal};
use crate::redact;

pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// Overrides `retry_base_delay` in milliseconds; the integration tests use it to retry quickly.
pub const RETRY_BASE_ENV: &str = "LING_RETRY_BASE_MS";
/// How much of an HTTP error body is read; the message quoted from it is shorter still.
const ERROR_BODY_CAP: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// Ends before `/chat/completions`, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The variable the key is read from, named in error messages.
    pub api_key_env: String,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub retry_base_delay: Duration,
    /// The cap on one wait before a retry, `Retry-After` included.
    pub max_retry_delay: Duration,
    /// The longest event-stream line (or non-streamed answer) read; a longer one fails the
    /// request without a retry.
    pub max_line_bytes: usize,
}

impl LlmConfig {
    /// The defaults of `Settings` (no key, `OPENAI_API_KEY`) for the given server and model.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: DEFAULT_API_KEY_ENV.to_string(),
            connect_timeout: Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS),
            first_byte_timeout: Duration::from_millis(DEFAULT_FIRST_BYTE_TIMEOUT_MS),
            idle_timeout: Duration::from_millis(DEFAULT_IDLE_TIMEOUT_MS),
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_retry_delay: Duration::from_millis(DEFAULT_MAX_RETRY_DELAY_MS),
            max_line_bytes: DEFAULT_MAX_STREAM_LINE_BYTES,
        }
    }

    pub fn from_settings(s: &Settings) -> Self {
        let retry_base_delay = std::env::var(RETRY_BASE_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_RETRY_BASE_DELAY, Duration::from_millis);
        Self {
            base_url: s.base_url.clone(),
            model: s.model.clone(),
            api_key: s.api_key.clone(),
            api_key_env: s.api_key_env.clone(),
            connect_timeout: s.connect_timeout,
            first_byte_timeout: s.first_byte_timeout,
            idle_timeout: s.idle_timeout,
            max_retries: s.max_retries,
            retry_base_delay,
            max_retry_delay: s.max_retry_delay,
            max_line_bytes: s.max_stream_line_bytes,
        }
    }
}

/// A client for one OpenAI-compatible server. Cheap to clone: the connection pool is shared.
#[derive(Debug, Clone)]
pub struct LlmClient {
    pub(super) http: reqwest::Client,
    config: LlmConfig,
}

/// The request body, field for field as the chat-completions API takes it.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct ToolJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionJson<'a>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

/// How one attempt failed, before it is known whether it will be retried.
#[derive(Debug)]
enum Failure {
    Connect(String),
    Network(String),
    Timeout {
        kind: TimeoutKind,
        shown: bool,
    },
    Status {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
        /// The body says the request did not fit the context (with the window, if it says).
        overflow: Option<Option<u64>>,
    },
    Cut {
        shown: bool,
        detail: Option<String>,
    },
    Fatal(LlmError),
}

impl Failure {
    fn is_retryable(&self) -> bool {
        match self {
            Self::Connect(_) | Self::Network(_) => true,
            Self::Timeout { shown, .. } | Self::Cut { shown, .. } => !shown,
            Self::Status {
                status, overflow, ..
            } => overflow.is_none() && is_retryable_status(*status),
            Self::Fatal(_) => false,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// One line for `StreamEvent::Retrying` and the log, scrubbed: a server may quote the key.
    fn reason(&self) -> String {
        redact::scrub(&self.unscrubbed_reason())
    }

    fn unscrubbed_reason(&self) -> String {
        match self {
            Self::Connect(detail) => format!("could not connect: {detail}"),
            Self::Network(detail) => format!("connection failed: {detail}"),
            Self::Timeout { kind, .. } => format!("timed out ({})", kind.setting()),
            Self::Status {
                status, message, ..
            } => format!("HTTP {status}: {message}"),
            Self::Cut { .. } => "the response ended before it started".to_string(),
            Self::Fatal(e) => e.to_string(),
        }
    }
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let invalid = |reason: String| LlmError::InvalidBaseUrl {
            base_url: redact::url(&config.base_url),
            reason,
        };
        // `localhost:8080` parses as a URL with the scheme `localhost`, so check the scheme too.
        let url = reqwest::Url::parse(&config.base_url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(
                "it must start with http:// or https://".to_string(),
            ));
        }
        // A local server is never behind the user's HTTP proxy (and the tests' mock is not).
        let options = ClientOptions::new(Target::Model)
            .connect_timeout(config.connect_timeout)
            .no_proxy(is_loopback(&url));
        let http = http_client::build(options).map_err(|e| LlmError::Setup(e.to_string()))?;
        // From here on the key and the URL's own secrets are masked in everything Ling shows.
        if let Some(key) = &config.api_key {
            redact::register(key);
        }
        redact::register_url(&config.base_url);
        Ok(Self { http, config })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub fn set_model(&mut self, model: String) {
        self.config.model = model;
    }

    /// `{base_url}/chat/completions`, keeping a query the base URL has (`?api-version=...`)
    /// after the path.
    fn endpoint(&self) -> String {
        let base = &self.config.base_url;
        let (path, rest) = base.split_at(base.find(['?', '#']).unwrap_or(base.len()));
        format!("{}/chat/completions{rest}", path.trim_end_matches('/'))
    }

    /// The endpoint as errors and the log show it: without userinfo and query values.
    fn shown_endpoint(&self) -> String {
        redact::url(&self.endpoint())
    }

    /// Checks what can be checked before sending anything (no key for api.openai.com).
    pub fn preflight(&self) -> Result<(), LlmError> {
        let host = reqwest::Url::parse(&self.config.base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        if self.config.api_key.is_none() && host.as_deref() == Some("api.openai.com") {
            return Err(LlmError::MissingApiKey {
                base_url: redact::url(&self.config.base_url),
                env: self.config.api_key_env.clone(),
                settings: crate::config::ling_home()
                    .join(crate::config::SETTINGS_FILE)
                    .display()
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Sends the conversation, reports the response as it streams, and returns it whole.
    /// `on_event` sees `Retrying` before each retry; a retry only happens when nothing of the
    /// failed attempt was shown.
    pub async fn stream_chat(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        self.stream_chat_with(messages, tools, None, on_event).await
    }

    /// [`LlmClient::stream_chat`] with a cap on the answer's tokens (`max_tokens`), as MCP
    /// sampling requests ask.
    pub async fn stream_chat_with(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        max_tokens: Option<u32>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        self.preflight()?;
        let body = self.request_body(messages, tools, max_tokens)?;
        tracing::debug!(
            "llm: POST {} model={} messages={} tools={} bytes={}",
            self.shown_endpoint(),
            self.config.model,
            messages.len(),
            tools.len(),
            body.len()
        );
        let policy = RetryPolicy {
            max_retries: self.config.max_retries,
            base_delay: self.config.retry_base_delay,
            max_delay: self.config.max_retry_delay,
        };
        let mut attempt = 1;
        loop {
            let failure = match self.attempt(body.clone(), on_event).await {
                Ok(completion) => {
                    tracing::debug!(
                        "llm: completed: finish={:?} chars={} tool_calls={} usage={:?}",
                        completion.finish_reason,
                        completion.content.len(),
                        completion.tool_calls.len(),
                        completion.usage
                    );
                    return Ok(completion);
                }
                Err(failure) => failure,
            };
            if attempt > policy.max_retries || !failure.is_retryable() {
                let error = self.error_for(failure, attempt);
                tracing::error!("llm: request failed: {error}");
                return Err(error);
            }
            let delay = policy.delay(attempt, failure.retry_after());
            tracing::warn!(
                "llm: attempt {attempt} failed ({}); retry {attempt} in {} ms",
                failure.reason(),
                delay.as_millis()
            );
            on_event(StreamEvent::Retrying {
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason: failure.reason(),
            });
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    fn request_body(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        max_tokens: Option<u32>,
    ) -> Result<Bytes, LlmError> {
        let request = ChatRequest {
            model: &self.config.model,
            messages,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: tools
                .iter()
                .map(|tool| ToolJson {
                    kind: "function",
                    function: FunctionJson {
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                    },
                })
                .collect(),
            parallel_tool_calls: (!tools.is_empty()).then_some(true),
            max_tokens,
        };
        serde_json::to_vec(&request)
            .map(Bytes::from)
            .map_err(|e| LlmError::Setup(format!("could not encode the request: {e}")))
    }

    async fn attempt(
        &self,
        body: Bytes,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, Failure> {
        // One deadline covers the response headers and the first chunk of the body.
        let first_byte_deadline = Instant::now() + self.config.first_byte_timeout;
        let mut request = self
            .http
            .post(self.endpoint())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let mut response = match timeout_at(first_byte_deadline, request.send()).await {
            Err(_) => {
                return Err(Failure::Timeout {
                    kind: TimeoutKind::FirstByte,
                    shown: false,
                });
            }
            Ok(Err(e)) => return Err(send_failure(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        tracing::debug!(
            "llm: HTTP {} ({})",
            status.as_u16(),
            response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
        );
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            let text = timeout(self.config.idle_timeout, error_body(&mut response))
                .await
                .unwrap_or_default();
            let overflow =
                is_context_overflow(status.as_u16(), &text).then(|| window_in_error(&text));
            return Err(Failure::Status {
                status: status.as_u16(),
                // A server may quote the key or the URL back.
                message: redact::scrub(&server_message(&text)),
                retry_after,
                overflow,
            });
        }
        let mut assembler = ChunkAssembler::new();
        if is_json(response.headers()) {
            // The server ignored `stream: true` and sent the whole completion at once: one
            // "line", bounded like one.
            let body = read_capped(&mut response, self.config.max_line_bytes);
            let text = match timeout_at(first_byte_deadline, body).await {
                Err(_) => {
                    return Err(Failure::Timeout {
                        kind: TimeoutKind::FirstByte,
                        shown: false,
                    });
                }
                Ok(Err(BodyError::Network(e))) => return Err(Failure::Network(innermost(&e))),
                Ok(Err(BodyError::TooLong(e))) => return Err(self.too_long(e)),
                Ok(Ok(text)) => text,
            };
            assembler.push(&text, on_event).map_err(stream_failure)?;
            assembler.mark_done();
            return assembler.finish(on_event).map_err(stream_failure);
        }

        let mut decoder = SseDecoder::with_limit(self.config.max_line_bytes);
        let mut first_chunk = true;
        let mut broken = None;
        loop {
            let next = if first_chunk {
                timeout_at(first_byte_deadline, response.chunk()).await
            } else {
                timeout(self.config.idle_timeout, response.chunk()).await
            };
            let bytes = match next {
                Err(_) => {
                    let kind = if first_chunk {
                        TimeoutKind::FirstByte
                    } else {
                        TimeoutKind::Idle
                    };
                    let shown = assembler.has_shown_output();
                    return Err(Failure::Timeout { kind, shown });
                }
                Ok(Err(e)) => {
                    broken = Some(innermost(&e));
                    break;
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => bytes,
            };
            first_chunk = false;
            // An over-long line is not a passing failure: retrying would download it again.
            let events = decoder.feed(&bytes).map_err(|e| self.too_long(e))?;
            for event in events {
                assembler
                    .push(&event.data, on_event)
                    .map_err(stream_failure)?;
                if assembler.is_done() {
                    return assembler.finish(on_event).map_err(stream_failure);
                }
            }
        }
        if let Some(event) = decoder.finish().map_err(|e| self.too_long(e))? {
            // A half-written last line on a broken connection is the cut, not bad JSON.
            if let Err(e) = assembler.push(&event.data, on_event)
                && !matches!(e, StreamError::Malformed(_))
            {
                return Err(stream_failure(e));
            }
        }
        let shown = assembler.has_shown_output();
        assembler.finish(on_event).map_err(|e| match e {
            StreamError::Cut => Failure::Cut {
                shown,
                detail: broken,
            },
            other => stream_failure(other),
        })
    }

    fn too_long(&self, e: LineTooLong) -> Failure {
        Failure::Fatal(LlmError::LineTooLong {
            url: self.endpoint(),
            limit: e.limit,
        })
    }

    fn error_for(&self, failure: Failure, attempts: u32) -> LlmError {
        let url = self.shown_endpoint();
        match failure {
            Failure::Connect(detail) => LlmError::Connect {
                url,
                detail,
                attempts,
            },
            Failure::Network(detail) => LlmError::Network {
                url,
                detail,
                attempts,
            },
            Failure::Timeout { kind, .. } => LlmError::Timeout {
                kind,
                limit: match kind {
                    TimeoutKind::Connect => self.config.connect_timeout,
                    TimeoutKind::FirstByte => self.config.first_byte_timeout,
                    TimeoutKind::Idle => self.config.idle_timeout,
                },
                url,
                attempts,
            },
            Failure::Status {
                status,
                message,
                overflow: Some(window),
                ..
            } => LlmError::ContextOverflow {
                status,
                message,
                window,
            },
            Failure::Status {
                status, message, ..
            } => match status {
                401 | 403 => LlmError::Auth {
                    status,
                    env: self.config.api_key_env.clone(),
                    key_sent: self.config.api_key.is_some(),
                    message,
                },
                404 => LlmError::NotFound {
                    url,
                    base_url: redact::url(&self.config.base_url),
                    model: self.config.model.clone(),
                    message,
                },
                400 | 422 => LlmError::BadRequest { status, message },
                _ => LlmError::Status {
                    status,
                    url,
                    message,
                    attempts,
                },
            },
            Failure::Cut { shown, detail } => LlmError::StreamCut {
                url,
                attempts,
                shown,
                detail,
            },
            Failure::Fatal(e) => e,
        }
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn stream_failure(e: StreamError) -> Failure {
    match e {
        StreamError::Server(message) => Failure::Fatal(LlmError::Server { message }),
        StreamError::Malformed(detail) => Failure::Fatal(LlmError::Protocol { detail }),
        StreamError::Cut => Failure::Cut {
            shown: false,
            detail: None,
        },
    }
}

fn send_failure(e: &reqwest::Error) -> Failure {
    if e.is_connect() && e.is_timeout() {
        Failure::Timeout {
            kind: TimeoutKind::Connect,
            shown: false,
        }
    } else if e.is_connect() {
        Failure::Connect(innermost(e))
    } else if let Some(refusal) = redirect_refusal(e) {
        Failure::Fatal(LlmError::Redirect(refusal.clone()))
    } else if e.is_builder() {
        Failure::Fatal(LlmError::Setup(redact::scrub(&e.to_string())))
    } else {
        Failure::Network(innermost(e))
    }
}

/// reqwest's own message is "error sending request"; the cause at the bottom of the chain
/// ("Connection refused (os error 111)") is what tells the user something.
fn innermost(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

/// The start of an error body: at most [`ERROR_BODY_CAP`] bytes are read, however much the
/// server sends.
async fn error_body(response: &mut reqwest::Response) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_CAP {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_CAP - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    server_delay(
        header("retry-after-ms"),
        header("retry-after"),
        chrono::Utc::now(),
    )
}

enum BodyError {
    Network(reqwest::Error),
    TooLong(LineTooLong),
}

/// The whole body as text, refused as soon as it passes `limit` bytes.
async fn read_capped(response: &mut reqwest::Response, limit: usize) -> Result<String, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Network)? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLong(LineTooLong { limit }));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_settings_defaults() {
        let none = |_: &str| None;
        let raw = crate::config::RawSettings::default();
        let settings = Settings::resolve(&raw, &raw, &Default::default(), &none)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut from_settings = LlmConfig::from_settings(&settings);
        // Only the tests' retry delay comes from the environment.
        from_settings.retry_base_delay = DEFAULT_RETRY_BASE_DELAY;
        assert_eq!(
            LlmConfig::new(settings.base_url.clone(), settings.model.clone()),
            from_settings
        );
    }

    #[test]
    fn preflight_needs_a_key_only_for_api_openai_com() {
        let config = LlmConfig::new("https://api.openai.com/v1", "gpt-4o-mini");
        let client = LlmClient::new(config.clone()).unwrap();
        let message = client
            .preflight()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("export OPENAI_API_KEY=..."), "{message}");
        assert!(
            message.contains("--base-url http://127.0.0.1:8080/v1"),
            "{message}"
        );

        let keyed = LlmConfig {
            api_key: Some("sk".into()),
            ..config
        };
        assert!(LlmClient::new(keyed).is_ok_and(|c| c.preflight().is_ok()));
        let local = LlmConfig::new("http://127.0.0.1:8080/v1", "m");
        assert!(LlmClient::new(local).is_ok_and(|c| c.preflight().is_ok()));
    }

    #[test]
    fn config_comes_from_settings() {
        use crate::config::{RawSettings, SettingsOverrides};
        let raw: RawSettings = serde_json::from_str(
            r#"{"baseUrl":"http://127.0.0.1:9/v1","apiKeyEnv":"K","idleTimeoutMs":1234,"maxRetries":7}"#,
        )
        .unwrap();
        let env = |name: &str| (name == "K").then(|| "secret".to_string());
        let settings = Settings::resolve(
            &RawSettings::default(),
            &raw,
            &SettingsOverrides::default(),
            &env,
        )
        .unwrap();
        let config = LlmConfig::from_settings(&settings);
        assert_eq!(config.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(config.api_key.as_deref(), Some("secret"));
        assert_eq!(config.api_key_env, "K");
        assert_eq!(config.idle_timeout, Duration::from_millis(1234));
        assert_eq!(config.max_retries, 7);
        assert_eq!(config.model, settings.model);
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        let loopback = |u: &str| reqwest::Url::parse(u).is_ok_and(|u| is_loopback(&u));
        assert!(loopback("http://127.0.0.1:8080/v1"));
        assert!(loopback("http://localhost/v1"));
        assert!(loopback("http://[::1]:1234/v1"));
        assert!(!loopback("https://api.openai.com/v1"));
        assert!(!loopback("http://10.0.0.2/v1"));
    }

    #[test]
    fn an_invalid_base_url_is_refused_at_once() {
        let err = LlmClient::new(LlmConfig::new("localhost:8080", "m")).err();
        let message = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("\"localhost:8080\" is not a valid URL"),
            "{message}"
        );
    }

    #[test]
    fn the_stream_future_is_send() {
        fn assert_send<T: Send>(_: T) {}
        let client = LlmClient::new(LlmConfig::new("http://127.0.0.1:1/v1", "m")).unwrap();
        let mut on_event = |_: StreamEvent| {};
        assert_send(client.stream_chat(&[], &[], &mut on_event));
    }
}
