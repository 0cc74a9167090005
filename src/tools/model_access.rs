//! A tool's own small request to the model, as the agent offers it ([`ModelAccess`]): a question
//! over a fetched page (`web_fetch`'s `prompt`), or a search by the model API's own search tool
//! (`web_search` where the API has one). Tools know nothing of the model client: the agent
//! implements this with it.

use async_trait::async_trait;

/// An answer with the sources it cites.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cited {
    pub text: String,
    /// The pages the answer draws on: (title, URL).
    pub sources: Vec<(String, String)>,
}

/// Why a side request to the model failed: the model client's own error (its message says
/// what to change: a key, a limit, the endpoint), kept whole for its cause chain.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ModelError(Box<dyn std::error::Error + Send + Sync>);

impl ModelError {
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(error))
    }
}

#[async_trait]
pub trait ModelAccess: Send + Sync {
    /// One request without tools: `system`, then `prompt`; the answer's text.
    async fn ask(&self, system: &str, prompt: &str) -> Result<String, ModelError>;

    /// One request with the API's own web search tool: what the model found for `query`,
    /// with its sources. `None` when the API has no search tool of its own.
    async fn search(&self, query: &str) -> Option<Result<Cited, ModelError>>;
}
