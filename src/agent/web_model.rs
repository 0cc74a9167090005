//! The model as the tools may ask it ([`crate::tools::ModelAccess`]): a small request of its own
//! for `web_fetch`'s question over a long page, and the API's own web search for `web_search`
//! (Anthropic's server-side tool, the Responses API's `web_search`), whose answer and cited
//! sources become the tool's result. Neither goes into the conversation's history; what they
//! use is kept for the agent, which counts it in the run's usage and against its spend cap.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use crate::config::WireApi;
use crate::llm::{Completion, LlmClient, Message, Usage};
use crate::tools::{Cited, ModelAccess, ModelError};

/// The most tokens a side answer may take.
const SIDE_ANSWER_TOKENS: u32 = 4096;

pub(super) struct SideModel {
    llm: LlmClient,
    /// Shared with the agent's tool host ([`super::tool_host::ToolHost::side_usage`]).
    used: Arc<Mutex<Usage>>,
}

impl SideModel {
    pub(super) fn new(llm: LlmClient, used: Arc<Mutex<Usage>>) -> Self {
        Self { llm, used }
    }

    fn count(&self, completion: &Completion) {
        if let Some(usage) = completion.usage {
            *self.used.lock().unwrap_or_else(PoisonError::into_inner) += usage;
        }
    }
}

#[async_trait]
impl ModelAccess for SideModel {
    async fn ask(&self, system: &str, prompt: &str) -> Result<String, ModelError> {
        let messages = [Message::system(system), Message::user(prompt)];
        let completion = self
            .llm
            .stream_chat_with(&messages, &[], Some(SIDE_ANSWER_TOKENS), &mut |_| {})
            .await
            .map_err(ModelError::new)?;
        self.count(&completion);
        Ok(completion.content)
    }

    async fn search(&self, query: &str) -> Option<Result<Cited, ModelError>> {
        if self.llm.config().api == WireApi::Chat {
            return None;
        }
        let found = self.llm.search_web(query, SIDE_ANSWER_TOKENS).await;
        if let Ok(completion) = &found {
            self.count(completion);
        }
        Some(found.map_err(ModelError::new).map(|completion| Cited {
            text: completion.content,
            sources: completion.citations,
        }))
    }
}
