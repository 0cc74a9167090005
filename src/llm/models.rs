//! `GET {base_url}/models`: the model names the server offers, for the REPL's `/model`
//! completion. One bounded request to the model's own base URL, with its key; any failure is
//! an empty list (completion simply offers nothing).

use std::time::Duration;

use serde::Deserialize;

use super::LlmConfig;
use crate::http_client::{self, ClientOptions, Target};

/// The longest the list may take: it is fetched while the user waits on Tab.
const TIMEOUT: Duration = Duration::from_secs(3);
/// At most this many names are kept.
const MAX_MODELS: usize = 500;

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
}

/// The ids the server lists, sorted; empty when it cannot say within 3 seconds.
pub async fn list_models(config: &LlmConfig) -> Vec<String> {
    tokio::time::timeout(TIMEOUT, fetch(config))
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

async fn fetch(config: &LlmConfig) -> Option<Vec<String>> {
    let url = reqwest::Url::parse(&models_url(&config.base_url)).ok()?;
    let loopback = url
        .host_str()
        .is_some_and(|h| h == "127.0.0.1" || h == "localhost" || h == "[::1]");
    let options = ClientOptions::new(Target::Model)
        .connect_timeout(TIMEOUT)
        .no_proxy(loopback);
    let http = http_client::build(options).ok()?;
    let mut request = http.get(url).timeout(TIMEOUT);
    if let Some(key) = &config.api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.ok()?.error_for_status().ok()?;
    let list: ModelList = response.json().await.ok()?;
    let mut ids: Vec<String> = list
        .data
        .into_iter()
        .map(|m| m.id)
        .take(MAX_MODELS)
        .collect();
    ids.sort();
    ids.dedup();
    Some(ids)
}

/// `{base_url}/models`, keeping a query the base URL has after the path.
fn models_url(base: &str) -> String {
    let (path, rest) = base.split_at(base.find(['?', '#']).unwrap_or(base.len()));
    format!("{}/models{rest}", path.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_under_the_base_url() {
        assert_eq!(models_url("http://h/v1/"), "http://h/v1/models");
        assert_eq!(
            models_url("http://h/v1?api-version=2"),
            "http://h/v1/models?api-version=2"
        );
    }
}
