//! The `webFetch` and `webSearch` settings: the bounds of the `web_fetch` tool, and where the
//! `web_search` tool searches (the model API's own search, a SearXNG instance, Brave's or
//! Tavily's API), resolved with their defaults (`docs/configuration.md`).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::WireApi;

/// The default `webFetch.maxBytes`: 10 MiB of response body.
pub const DEFAULT_FETCH_MAX_BYTES: u64 = 10 << 20;
/// The default `webFetch.timeoutMs`.
pub const DEFAULT_FETCH_TIMEOUT_MS: u64 = 30_000;
/// The default `webFetch.promptOverChars`.
pub const DEFAULT_PROMPT_OVER_CHARS: usize = 20_000;
/// The default `webSearch.maxResults`.
pub const DEFAULT_SEARCH_RESULTS: u32 = 8;
/// Brave's search API.
pub const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
/// Tavily's search API.
pub const TAVILY_URL: &str = "https://api.tavily.com/search";

/// `webFetch` of `settings.json` as written.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawWebFetch {
    /// The most bytes of one response read; the rest is cut (with a note). Default 10485760
    /// (10 MiB).
    #[schemars(range(min = 1), extend("default" = DEFAULT_FETCH_MAX_BYTES))]
    pub max_bytes: Option<u64>,
    /// How long one fetch may take, redirects included, in milliseconds. Default 30000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_FETCH_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// With a `prompt`, a page longer than this many characters is answered by a follow-up
    /// model request over it instead of going back whole. Default 20000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_PROMPT_OVER_CHARS))]
    pub prompt_over_chars: Option<usize>,
}

/// `webSearch` of `settings.json` as written.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawWebSearch {
    /// `native` (the model API's own web search: Anthropic's and the Responses API's),
    /// `searxng`, `brave`, `tavily`, or `off`. Default: `native` with `api: anthropic` or
    /// `responses`, else none (the tool is not offered).
    #[schemars(extend("enum" = ["native", "searxng", "brave", "tavily", "off"]))]
    pub provider: Option<String>,
    /// The provider's address: a SearXNG instance's (required for `searxng`; its JSON API is
    /// `GET {url}/search?q=...&format=json`), or another endpoint for `brave` and `tavily`.
    pub url: Option<String>,
    /// The environment variable holding the provider's key (`brave`: default
    /// `BRAVE_API_KEY`, `tavily`: default `TAVILY_API_KEY`).
    pub api_key_env: Option<String>,
    /// How many results a search returns at most. Default 8.
    #[schemars(range(min = 1, max = 50), extend("default" = DEFAULT_SEARCH_RESULTS))]
    pub max_results: Option<u32>,
}

/// Resolved `webFetch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebFetchSettings {
    pub max_bytes: u64,
    pub timeout: Duration,
    pub prompt_over_chars: usize,
}

impl Default for WebFetchSettings {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_FETCH_MAX_BYTES,
            timeout: Duration::from_millis(DEFAULT_FETCH_TIMEOUT_MS),
            prompt_over_chars: DEFAULT_PROMPT_OVER_CHARS,
        }
    }
}

impl WebFetchSettings {
    pub fn resolve(raw: Option<&RawWebFetch>) -> Self {
        let default = Self::default();
        let Some(raw) = raw else { return default };
        Self {
            max_bytes: raw.max_bytes.unwrap_or(default.max_bytes).max(1),
            timeout: raw
                .timeout_ms
                .map_or(default.timeout, |ms| Duration::from_millis(ms.max(1))),
            prompt_over_chars: raw
                .prompt_over_chars
                .unwrap_or(default.prompt_over_chars)
                .max(1),
        }
    }
}

/// Where `web_search` searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchProvider {
    /// The model API's own search tool, in a request of its own.
    Native(WireApi),
    Searxng {
        url: String,
    },
    /// A keyed API: Brave or Tavily.
    Keyed {
        kind: KeyedProvider,
        url: String,
        key_env: String,
        /// `None` when the variable is not set: the tool is then not offered.
        key: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyedProvider {
    Brave,
    Tavily,
}

impl KeyedProvider {
    pub fn name(self) -> &'static str {
        match self {
            Self::Brave => "brave",
            Self::Tavily => "tavily",
        }
    }
}

/// Resolved `webSearch`: the provider, if any, and how many results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchSettings {
    pub provider: Option<SearchProvider>,
    pub max_results: u32,
}

/// A `webSearch` setting Ling cannot use; the message names the key and what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebSearchError {
    #[error(
        "webSearch.provider `native`: the chat-completions API has no search tool of its own; \
         use `searxng`, `brave` or `tavily` there"
    )]
    NoNativeSearch,
    #[error(
        "webSearch.provider `searxng` needs `url`, the instance's address, e.g. {{\"provider\": \
         \"searxng\", \"url\": \"http://localhost:8888\"}}"
    )]
    SearxngWithoutUrl,
    #[error("webSearch.provider {0:?} is not one of native, searxng, brave, tavily, off")]
    UnknownProvider(String),
}

impl WebSearchSettings {
    /// `raw` (the strongest layer's `webSearch`) for a model speaking `api`; `env` reads the
    /// key's variable. A provider Ling does not know, or `searxng` without a URL, is an error
    /// naming the key.
    pub fn resolve(
        raw: Option<&RawWebSearch>,
        api: WireApi,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, WebSearchError> {
        let max_results = raw
            .and_then(|r| r.max_results)
            .unwrap_or(DEFAULT_SEARCH_RESULTS)
            .clamp(1, 50);
        let url = raw.and_then(|r| r.url.clone()).filter(|u| !u.is_empty());
        let native = match api {
            WireApi::Anthropic | WireApi::Responses => Some(SearchProvider::Native(api)),
            WireApi::Chat => None,
        };
        let keyed = |kind: KeyedProvider, default_url: &str, default_env: &str| {
            let key_env = raw
                .and_then(|r| r.api_key_env.clone())
                .unwrap_or_else(|| default_env.to_string());
            SearchProvider::Keyed {
                kind,
                url: url.clone().unwrap_or_else(|| default_url.to_string()),
                key: env(&key_env).filter(|k| !k.is_empty()),
                key_env,
            }
        };
        let provider = match raw.and_then(|r| r.provider.as_deref()) {
            None => native,
            Some("native") => Some(native.ok_or(WebSearchError::NoNativeSearch)?),
            Some("off") => None,
            Some("searxng") => Some(SearchProvider::Searxng {
                url: url.ok_or(WebSearchError::SearxngWithoutUrl)?,
            }),
            Some("brave") => Some(keyed(KeyedProvider::Brave, BRAVE_URL, "BRAVE_API_KEY")),
            Some("tavily") => Some(keyed(KeyedProvider::Tavily, TAVILY_URL, "TAVILY_API_KEY")),
            Some(other) => return Err(WebSearchError::UnknownProvider(other.to_string())),
        };
        Ok(Self {
            provider,
            max_results,
        })
    }

    /// Whether `web_search` is offered.
    pub fn offered(&self) -> bool {
        match &self.provider {
            Some(SearchProvider::Keyed { key, .. }) => key.is_some(),
            Some(_) => true,
            None => false,
        }
    }

    /// One line saying where `web_search` searches, or why it is not offered and how to add a
    /// provider (for `/status` and the start-up warning of a missing key).
    pub fn describe(&self) -> String {
        match &self.provider {
            Some(SearchProvider::Native(WireApi::Anthropic)) => {
                "web search: Anthropic's web search tool (native)".into()
            }
            Some(SearchProvider::Native(_)) => {
                "web search: the Responses API's web_search tool (native)".into()
            }
            Some(SearchProvider::Searxng { url }) => {
                // Without a query, which may hold a key.
                let shown = url.split(['?', '#']).next().unwrap_or_default();
                format!("web search: SearXNG at {shown}")
            }
            Some(SearchProvider::Keyed {
                kind, key: Some(_), ..
            }) => format!("web search: {}", kind.name()),
            Some(SearchProvider::Keyed {
                kind,
                key: None,
                key_env,
                ..
            }) => format!(
                "web search: not offered: webSearch.provider is {} but ${key_env} is not set \
                 (set it, or name another variable in webSearch.apiKeyEnv)",
                kind.name()
            ),
            None => "web search: not offered; add a provider in settings webSearch, e.g. \
                     {\"provider\": \"searxng\", \"url\": \"http://localhost:8888\"} or \
                     {\"provider\": \"brave\"} with BRAVE_API_KEY set (docs/configuration.md)"
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn raw(json: &str) -> RawWebSearch {
        serde_json::from_str(json).unwrap()
    }

    fn resolve(json: Option<&str>, api: WireApi) -> Result<WebSearchSettings, WebSearchError> {
        let raw = json.map(raw);
        WebSearchSettings::resolve(raw.as_ref(), api, &|name| {
            (name == "BRAVE_API_KEY").then(|| "k".to_string())
        })
    }

    #[test]
    fn the_native_search_is_the_default_where_the_api_has_one() {
        let anthropic = resolve(None, WireApi::Anthropic).unwrap();
        assert_eq!(
            anthropic.provider,
            Some(SearchProvider::Native(WireApi::Anthropic))
        );
        assert!(anthropic.offered());
        let chat = resolve(None, WireApi::Chat).unwrap();
        assert_eq!(chat.provider, None);
        assert!(!chat.offered());
        assert!(
            chat.describe()
                .contains("add a provider in settings webSearch")
        );
        assert!(resolve(Some(r#"{"provider":"native"}"#), WireApi::Chat).is_err());
        let off = resolve(Some(r#"{"provider":"off"}"#), WireApi::Responses).unwrap();
        assert!(!off.offered());
    }

    #[test]
    fn providers_resolve_with_their_urls_and_keys() {
        let searx = resolve(
            Some(r#"{"provider":"searxng","url":"http://127.0.0.1:1"}"#),
            WireApi::Chat,
        )
        .unwrap();
        assert_eq!(
            searx.provider,
            Some(SearchProvider::Searxng {
                url: "http://127.0.0.1:1".into()
            })
        );
        assert_eq!(
            resolve(Some(r#"{"provider":"searxng"}"#), WireApi::Chat)
                .unwrap_err()
                .to_string(),
            "webSearch.provider `searxng` needs `url`, the instance's address, e.g. \
             {\"provider\": \"searxng\", \"url\": \"http://localhost:8888\"}"
        );
        let brave = resolve(Some(r#"{"provider":"brave"}"#), WireApi::Chat).unwrap();
        assert!(brave.offered());
        let tavily = resolve(Some(r#"{"provider":"tavily"}"#), WireApi::Chat).unwrap();
        assert!(!tavily.offered());
        assert!(tavily.describe().contains("$TAVILY_API_KEY is not set"));
        let error = resolve(Some(r#"{"provider":"google"}"#), WireApi::Chat)
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"google\" is not one of"), "{error}");
    }
}
