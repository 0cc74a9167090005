//! The model names the server offers, for the REPL's `/model` completion, through each API's
//! models endpoint (`GET {base_url}/models` for the OpenAI APIs, `GET {base}/v1/models?limit=1000`
//! for Anthropic's). One bounded request to the model's own base URL, with its key; any failure
//! is an empty list (completion simply offers nothing).

use std::time::Duration;

use serde::Deserialize;

use super::LlmConfig;
use super::attempt::is_loopback;
use super::client::for_api;
use crate::config::WireApi;
use crate::http_client::{self, ClientOptions, Target};

/// The longest the list may take: it is fetched while the user waits on Tab.
const TIMEOUT: Duration = Duration::from_secs(3);
/// At most this many names are kept.
const MAX_MODELS: usize = 500;

/// Both the OpenAI and the Anthropic list: `{"data": [{"id": ...}, ...]}`.
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
    let wire = for_api(config.api);
    let mut url = wire.models_url(&config.base_url);
    if config.api == WireApi::Anthropic {
        // One page of all there is (the API's largest).
        url.push_str(if url.contains('?') { "&" } else { "?" });
        url.push_str("limit=1000");
    }
    let url = reqwest::Url::parse(&url).ok()?;
    let options = ClientOptions::new(Target::Model)
        .connect_timeout(TIMEOUT)
        .no_proxy(is_loopback(&url))
        .plain_http(url.scheme() == "http");
    let http = http_client::build(options).ok()?;
    let request = wire.authorize(http.get(url).timeout(TIMEOUT), config.api_key.as_deref());
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
