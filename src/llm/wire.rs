//! The one seam between the model client and a wire API: [`Wire`] says where a request goes,
//! what its body is, how the key is sent and which parser reads the answer. The client
//! (`client.rs`) does the HTTP, the timeouts and the retries the same way for all three;
//! `chat/`, `anthropic/` and `responses/` each implement [`Wire`] with their own parser.

use reqwest::RequestBuilder;

use super::config::LlmConfig;
use super::stream::StreamParser;
use super::types::{Message, ToolSpec};

/// One model request, before it is written in an API's terms.
pub struct Request<'a> {
    pub config: &'a LlmConfig,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// A cap on the answer's tokens asked for by the caller (MCP sampling), over the settings'.
    pub max_tokens: Option<u32>,
    /// Offer the API's own web search tool (Anthropic's and the Responses API's; chat
    /// completions has none).
    pub web_search: bool,
}

/// A wire API.
pub trait Wire: Send + Sync + std::fmt::Debug {
    /// Where a model request goes, for this base URL (a query it has kept at the end).
    fn endpoint(&self, base_url: &str) -> String;

    /// Where the list of models is.
    fn models_url(&self, base_url: &str) -> String;

    /// The request body.
    fn body(&self, request: &Request<'_>) -> Result<Vec<u8>, serde_json::Error>;

    /// The key, and any header the API requires, on a request to its server: by default the
    /// key as `Authorization: Bearer` (OpenAI's APIs and most servers).
    fn authorize(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// A parser for one answer.
    fn parser(&self) -> Box<dyn StreamParser>;

    /// Whether a server on this host refuses every request without a key (so that none is
    /// sent without one): by default OpenAI's own.
    fn needs_key(&self, host: &str) -> bool {
        host == "api.openai.com"
    }
}

/// `{base}{route}`, keeping a query the base URL has (`?api-version=...`) after the path.
pub fn join(base: &str, route: &str) -> String {
    let (path, rest) = base.split_at(base.find(['?', '#']).unwrap_or(base.len()));
    format!("{}{route}{rest}", path.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_keep_the_query_of_the_base_url() {
        assert_eq!(join("http://h/v1/", "/models"), "http://h/v1/models");
        assert_eq!(
            join("http://h/v1?api-version=2", "/chat/completions"),
            "http://h/v1/chat/completions?api-version=2"
        );
    }
}
