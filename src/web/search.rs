//! The search providers of settings `webSearch` for a model API without a search of its own:
//! a SearXNG instance's JSON API (`GET {url}/search?q=...&format=json`), Brave's search API
//! (`GET {url}?q=...&count=N` with the key in `X-Subscription-Token`) and Tavily's (`POST {url}`
//! with `{"query", "max_results"}` and the key as a bearer token). Each answer becomes titles,
//! URLs and snippets. The provider's address is the user's own setting, so it is not held to
//! the public-internet rule of `web_fetch`.

use std::time::Duration;

use serde_json::{Value, json};

use super::WebError;
use crate::config::web::{KeyedProvider, SearchProvider};
use crate::http_client::{self, ClientOptions, Target};

/// One result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// Searches `query` with `provider` (not the native one: that is a model request), at most
/// `max` results, within `timeout`.
pub async fn search(
    provider: &SearchProvider,
    query: &str,
    max: u32,
    timeout: Duration,
) -> Result<Vec<SearchHit>, WebError> {
    let client = http_client::build(
        ClientOptions::new(Target::Web).connect_timeout(Duration::from_secs(10)),
    )
    .map_err(|e| WebError::Search(format!("cannot set up the HTTP client: {e}")))?;
    let request = match provider {
        SearchProvider::Native(_) => {
            return Err(WebError::Search(
                "the model API's own search is asked through the model".into(),
            ));
        }
        SearchProvider::Searxng { url } => client.get(with_query(
            &format!("{}/search", url.trim_end_matches('/')),
            &[("q", query), ("format", "json")],
        )?),
        SearchProvider::Keyed {
            key: None, key_env, ..
        } => {
            return Err(WebError::Search(format!(
                "the search provider's key is not set: set ${key_env}"
            )));
        }
        SearchProvider::Keyed {
            kind: KeyedProvider::Brave,
            url,
            key: Some(key),
            ..
        } => client
            .get(with_query(
                url,
                &[("q", query), ("count", &max.to_string())],
            )?)
            .header("X-Subscription-Token", key),
        SearchProvider::Keyed {
            kind: KeyedProvider::Tavily,
            url,
            key: Some(key),
            ..
        } => client
            .post(url)
            .bearer_auth(key)
            .json(&json!({"query": query, "max_results": max})),
    };
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| WebError::Search(crate::error_chain::error_chain(&e)))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| WebError::Search(crate::error_chain::error_chain(&e)))?;
    if !status.is_success() {
        let start: String = text.chars().take(300).collect();
        return Err(WebError::Search(format!(
            "the provider answered HTTP {}: {start}",
            status.as_u16()
        )));
    }
    let body: Value = serde_json::from_str(&text).map_err(|e| {
        WebError::Search(format!(
            "the provider's answer is not the JSON expected ({e})"
        ))
    })?;
    Ok(hits(provider, &body, max))
}

/// `url` with these query parameters added.
fn with_query(url: &str, pairs: &[(&str, &str)]) -> Result<reqwest::Url, WebError> {
    let mut url = reqwest::Url::parse(url).map_err(|e| {
        WebError::Search(format!(
            "the provider's URL {url:?} is not a URL ({e}); fix webSearch.url"
        ))
    })?;
    url.query_pairs_mut().extend_pairs(pairs);
    Ok(url)
}

/// The results of a provider's answer.
fn hits(provider: &SearchProvider, body: &Value, max: u32) -> Vec<SearchHit> {
    let (list, snippet_key) = match provider {
        SearchProvider::Keyed {
            kind: KeyedProvider::Brave,
            ..
        } => (&body["web"]["results"], "description"),
        _ => (&body["results"], "content"),
    };
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|hit| {
            let url = hit["url"].as_str()?.to_string();
            Some(SearchHit {
                title: plain(hit["title"].as_str().unwrap_or(&url)),
                snippet: plain(hit[snippet_key].as_str().unwrap_or_default()),
                url,
            })
        })
        .take(max as usize)
        .collect()
}

/// A snippet without the markup some providers put in (`<strong>`), on one line.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        match c {
            '<' => inside = true,
            '>' if inside => inside = false,
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The results as the model reads them: numbered, title, URL, snippet.
pub fn format_hits(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("No results for {query:?}.");
    }
    let mut out = format!("Results for {query:?}:\n");
    for (n, hit) in hits.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", n + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_provider_s_answer_becomes_hits() {
        let searx = json!({"results": [
            {"url": "https://a.test/", "title": "A", "content": "about <b>a</b>"},
            {"title": "no url"},
            {"url": "https://b.test/", "title": "B", "content": "b\n  text"},
        ]});
        let provider = SearchProvider::Searxng {
            url: "http://x".into(),
        };
        assert_eq!(
            hits(&provider, &searx, 8),
            vec![
                SearchHit {
                    title: "A".into(),
                    url: "https://a.test/".into(),
                    snippet: "about a".into()
                },
                SearchHit {
                    title: "B".into(),
                    url: "https://b.test/".into(),
                    snippet: "b text".into()
                },
            ]
        );
        assert_eq!(hits(&provider, &searx, 1).len(), 1);
        let brave = SearchProvider::Keyed {
            kind: KeyedProvider::Brave,
            url: String::new(),
            key_env: String::new(),
            key: None,
        };
        let answer = json!({"web": {"results": [
            {"url": "https://c.test/", "title": "C", "description": "<strong>c</strong>"}
        ]}});
        assert_eq!(hits(&brave, &answer, 8)[0].snippet, "c");
        let text = format_hits("q", &hits(&brave, &answer, 8));
        assert_eq!(
            text,
            "Results for \"q\":\n\n1. C\n   https://c.test/\n   c\n"
        );
    }
}
