// Temporary stand-in with the agreed API; replaced by the real client from the llm branch.
#![allow(dead_code, clippy::unused_async)]
use std::time::Duration;

use super::{Completion, Message, StreamEvent, ToolSpec};

#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub api_key_env: String,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub retry_base_delay: Duration,
}

impl LlmConfig {
    pub fn from_settings(s: &crate::config::Settings) -> Self {
        Self {
            base_url: s.base_url.clone(),
            model: s.model.clone(),
            api_key: s.api_key.clone(),
            api_key_env: s.api_key_env.clone(),
            connect_timeout: s.connect_timeout,
            first_byte_timeout: s.first_byte_timeout,
            idle_timeout: s.idle_timeout,
            max_retries: s.max_retries,
            retry_base_delay: Duration::from_millis(500),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Other(String),
}

#[derive(Clone)]
pub struct LlmClient {
    config: LlmConfig,
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        Ok(Self { config })
    }
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }
    pub fn set_model(&mut self, model: String) {
        self.config.model = model;
    }
    pub fn preflight(&self) -> Result<(), LlmError> {
        Ok(())
    }
    pub async fn stream_chat(
        &self,
        _messages: &[Message],
        _tools: &[ToolSpec],
        _on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, LlmError> {
        Err(LlmError::Other("stub".into()))
    }
}
