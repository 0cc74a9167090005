//! The model client: one [`LlmClient`] per model server, speaking its wire API (chat
//! completions, Anthropic Messages or OpenAI Responses, through [`Wire`]) with the same bounds,
//! retries and errors for all three. The agent loop sees only [`LlmClient::stream_chat`]; one
//! attempt at a request is `attempt.rs`. Several clients may live at once (one per agent).

use std::sync::Arc;

use bytes::Bytes;

use super::anthropic::Messages;
use super::attempt::{Attempt, Failure, is_loopback};
use super::chat::ChatCompletions;
use super::config::LlmConfig;
use super::error::{FinalRefusal, LlmError, TimeoutKind};
use super::http::LazyHttp;
use super::responses::Responses;
use super::retry::RetryPolicy;
use super::types::{Completion, Message, StreamEvent, ToolSpec};
use super::wire::{Request, Wire};
use crate::config::WireApi;
use crate::http_client::{ClientOptions, Target};
use crate::redact;

/// A client for one model server. Cheap to clone: the connection pool is shared.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: LazyHttp,
    config: LlmConfig,
    wire: Arc<dyn Wire>,
}

impl LlmClient {
    pub fn new(mut config: LlmConfig) -> Result<Self, LlmError> {
        // Through `--record`'s or `--replay`'s server when one is on.
        config.base_url = super::tape::route(&config.base_url);
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
        // Redirects stay on the origin, so an http:// server never needs the TLS roots.
        let options = ClientOptions::new(Target::Model)
            .connect_timeout(config.connect_timeout)
            .no_proxy(is_loopback(&url))
            .plain_http(url.scheme() == "http");
        let http = LazyHttp::start(options);
        // From here on the key and the URL's own secrets are masked in everything Ling shows.
        if let Some(key) = &config.api_key {
            redact::register(key);
        }
        redact::register_url(&config.base_url);
        Ok(Self {
            http,
            wire: for_api(config.api),
            config,
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub fn set_model(&mut self, model: String) {
        self.config.model = model;
    }

    /// The HTTP client, once its set-up is done.
    pub(super) async fn http(&self) -> Result<reqwest::Client, LlmError> {
        self.http
            .get()
            .await
            .map_err(|e| LlmError::Setup(e.to_string()))
    }

    pub(super) fn wire(&self) -> &dyn Wire {
        self.wire.as_ref()
    }

    /// Where a model request goes.
    pub fn endpoint(&self) -> String {
        self.wire.endpoint(&self.config.base_url)
    }

    /// The endpoint as errors and the log show it: without userinfo and query values.
    fn shown_endpoint(&self) -> String {
        redact::url(&self.endpoint())
    }

    /// Checks what can be checked before sending anything (no key for the API's own server).
    pub fn preflight(&self) -> Result<(), LlmError> {
        let host = reqwest::Url::parse(&self.config.base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        if self.config.api_key.is_none() && host.as_deref().is_some_and(|h| self.wire.needs_key(h))
        {
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
        let body = self.request_body(messages, tools, max_tokens, false)?;
        self.send(body, messages, tools, on_event).await
    }

    /// One request with the API's own web search tool and nothing else: the model searches for
    /// `query` and answers; the pages found are in [`Completion::citations`]. Chat completions
    /// has no such tool (the request then goes without it).
    pub async fn search_web(&self, query: &str, max_tokens: u32) -> Result<Completion, LlmError> {
        let messages = [Message::user(format!(
            "Search the web for: {query}\n\nAnswer with what the results say, briefly, citing \
             the pages."
        ))];
        let body = self.request_body(&messages, &[], Some(max_tokens), true)?;
        self.send(body, &messages, &[], &mut |_| {}).await
    }

    /// Sends one request body, with the retries.
    async fn send(
        &self,
        body: Bytes,
        messages: &[Message],
        tools: &[ToolSpec],
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        self.preflight()?;
        let url = self.endpoint();
        tracing::debug!(
            "llm: POST {} model={} messages={} tools={} bytes={} api={}",
            self.shown_endpoint(),
            self.config.model,
            messages.len(),
            tools.len(),
            body.len(),
            self.config.api.as_str()
        );
        let http = self.http().await?;
        let attempt = Attempt {
            http: &http,
            wire: self.wire.as_ref(),
            url: &url,
            api_key: self.config.api_key.as_deref(),
            first_byte_timeout: self.config.first_byte_timeout,
            idle_timeout: self.config.idle_timeout,
            max_line_bytes: self.config.max_line_bytes,
        };
        let policy = RetryPolicy {
            max_retries: self.config.max_retries,
            base_delay: self.config.retry_base_delay,
            max_delay: self.config.max_retry_delay,
        };
        let mut number = 1;
        loop {
            let failure = match attempt.run(body.clone(), on_event).await {
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
            if number > policy.max_retries || !failure.is_retryable() {
                let has_images = messages.iter().any(|m| !m.images().is_empty());
                let error = self.error_for(failure, number, has_images);
                tracing::error!("llm: request failed: {error}");
                return Err(error);
            }
            let delay = policy.delay(number, failure.retry_after());
            tracing::warn!(
                "llm: attempt {number} failed ({}); retry {number} in {} ms",
                failure.reason(),
                delay.as_millis()
            );
            on_event(StreamEvent::Retrying {
                attempt: number,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason: failure.reason(),
            });
            tokio::time::sleep(delay).await;
            number += 1;
        }
    }

    fn request_body(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        max_tokens: Option<u32>,
        web_search: bool,
    ) -> Result<Bytes, LlmError> {
        let request = Request {
            config: &self.config,
            messages,
            tools,
            max_tokens,
            web_search,
        };
        self.wire
            .body(&request)
            .map(Bytes::from)
            .map_err(|e| LlmError::Setup(format!("could not encode the request: {e}")))
    }

    fn error_for(&self, failure: Failure, attempts: u32, has_images: bool) -> LlmError {
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
            } if has_images && refuses_images(status, &message) => LlmError::ImagesRejected {
                model: self.config.model.clone(),
                status,
                message,
            },
            Failure::Status {
                status,
                message,
                refusal: Some(refusal),
                ..
            } => match refusal {
                FinalRefusal::Quota => LlmError::Quota {
                    status,
                    url,
                    message,
                },
                FinalRefusal::Key => LlmError::Auth {
                    status,
                    env: self.config.api_key_env.clone(),
                    key_sent: self.config.api_key.is_some(),
                    message,
                },
                FinalRefusal::Model => LlmError::NotFound {
                    url,
                    base_url: redact::url(&self.config.base_url),
                    model: self.config.model.clone(),
                    message,
                },
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
            Failure::Overloaded { message, .. } => LlmError::Server { message },
            Failure::TooLong(limit) => LlmError::LineTooLong { url, limit },
            Failure::Fatal(e) => e,
        }
    }
}

/// The implementation of an API.
pub(super) fn for_api(api: WireApi) -> Arc<dyn Wire> {
    match api {
        WireApi::Chat => Arc::new(ChatCompletions),
        WireApi::Responses => Arc::new(Responses),
        WireApi::Anthropic => Arc::new(Messages),
    }
}

/// Whether an error answer to a request with images says the images are the problem (OpenAI:
/// "image_url is only supported by certain models", llama.cpp: "image input is not supported",
/// vLLM and others: "... does not support multimodal ...").
fn refuses_images(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    matches!(status, 400 | 404 | 415 | 422 | 500 | 501)
        && ["image", "vision", "multimodal", "mmproj", "multi-modal"]
            .iter()
            .any(|word| message.contains(word))
}

#[cfg(test)]
mod tests;
