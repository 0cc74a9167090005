//! Asks the model's server for its context window, once per base URL and model: the answer is
//! kept a day in `LING_HOME/cache/context-windows.json`, so the next run sends nothing.
//!
//! Only a server that can answer is asked. Anthropic's Models API says it for every model
//! (`GET {base}/v1/models/{model}`, `max_input_tokens`). For the OpenAI APIs the local servers do:
//! vLLM's `max_model_len` in `GET {base}/models`, llama.cpp's `n_ctx` in `GET {root}/props`,
//! Ollama's `context_length` in `POST {root}/api/show` (`{root}` is the base URL without its
//! `/v1`). They are asked only on a loopback or private address (a LAN, a tailnet, a single-label
//! or `.local` host), where such servers run, unless settings `serverKind` names the one server
//! to ask wherever it is; a cloud API is never sent a probe (and never a `POST`). Every request is
//! bounded by [`PROBE_TIMEOUT`] and goes to the base URL's own server through the model client
//! (same origin rules, same key).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::CONTENT_TYPE;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::timeout;

use super::LlmClient;
use crate::config::{ServerKind, WireApi};

/// How long one probe of the server may take, whole.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);
/// The most of a probe's answer that is read.
const PROBE_BODY_CAP: usize = 256 * 1024;
/// How long an answer is believed: a local server may be restarted with another window.
const CACHE_TTL: Duration = Duration::from_secs(24 * 60 * 60);
const CACHE_FILE: &str = "context-windows.json";

/// What one probe request got.
enum Answer {
    Json(Value),
    /// The server answered, but not with what was asked (a 404, not JSON): it cannot say.
    Nothing,
    /// No answer at all (refused, timed out): ask again next time.
    Unreachable,
}

/// The cache file: per key (API, base URL without secrets, model) the window, or `None` when
/// the server answered that it cannot say.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Cache {
    #[serde(default)]
    windows: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Entry {
    window: Option<u64>,
    /// Seconds since the epoch.
    at: u64,
}

impl LlmClient {
    /// The context window of the configured model as its server states it, from the cache or
    /// by asking; `None` when it cannot say (or is not asked). Each request is bounded by
    /// [`PROBE_TIMEOUT`].
    pub async fn probe_context_window(&self) -> Option<u64> {
        let cache = self.cache_path();
        let key = self.cache_key();
        if let Some(entry) = cache.as_deref().and_then(|path| read_entry(path, &key)) {
            tracing::debug!("llm: context window from the cache: {:?}", entry.window);
            return entry.window;
        }
        let (window, answered) = match self.config().api {
            WireApi::Anthropic => self.anthropic_window().await,
            WireApi::Chat | WireApi::Responses => self.server_window().await,
        };
        let window = window.filter(|n| *n > 0);
        tracing::debug!("llm: context window from the server: {window:?}");
        if answered && let Some(path) = cache {
            write_entry(&path, &key, window);
        }
        window
    }

    /// Whether the probe goes to a server over the internet (Anthropic's Models API on a
    /// public host), so that a request should not wait for its answer.
    pub fn probe_is_remote(&self) -> bool {
        let config = self.config();
        config.api == WireApi::Anthropic
            && !reqwest::Url::parse(&config.base_url).is_ok_and(|u| is_private(&u))
    }

    /// Keeps a window the server stated in an error (it refused a request over it), so that the
    /// next run starts from it.
    pub fn remember_window(&self, window: u64) {
        if let Some(path) = self.cache_path() {
            write_entry(&path, &self.cache_key(), Some(window));
        }
    }

    fn cache_path(&self) -> Option<PathBuf> {
        self.config().cache_dir.as_ref().map(|d| d.join(CACHE_FILE))
    }

    fn cache_key(&self) -> String {
        let config = self.config();
        format!(
            "{} {} {}",
            config.api.as_str(),
            crate::redact::url(&config.base_url),
            config.model
        )
    }

    /// Anthropic's Models API: `max_input_tokens` of the model. (window, whether it answered)
    async fn anthropic_window(&self) -> (Option<u64>, bool) {
        let config = self.config();
        let url = format!(
            "{}/{}",
            self.wire().models_url(&config.base_url),
            config.model
        );
        match self.probe_json(&url, None).await {
            Answer::Json(value) => (value["max_input_tokens"].as_u64(), true),
            Answer::Nothing => (None, true),
            Answer::Unreachable => (None, false),
        }
    }

    /// vLLM, llama.cpp and Ollama, those of them that may be asked. (window, whether any answered)
    async fn server_window(&self) -> (Option<u64>, bool) {
        let config = self.config();
        let kind = config.server_kind;
        let local = reqwest::Url::parse(&config.base_url).is_ok_and(|u| is_private(&u));
        let ask = |which: ServerKind| kind == Some(which) || (kind.is_none() && local);
        if !(ask(ServerKind::Vllm) || ask(ServerKind::LlamaCpp) || ask(ServerKind::Ollama)) {
            return (None, false);
        }
        let base = config.base_url.clone();
        let (root, query) = server_root(&base);
        let path = base[..base.len() - query.len()].trim_end_matches('/');
        let model = config.model.clone();
        let models = format!("{path}/models{query}");
        let vllm = async {
            if !ask(ServerKind::Vllm) {
                return Answer::Unreachable;
            }
            self.probe_json(&models, None).await
        };
        let props = format!("{root}/props{query}");
        let llama = async {
            if !ask(ServerKind::LlamaCpp) {
                return Answer::Unreachable;
            }
            self.probe_json(&props, None).await
        };
        let show = format!("{root}/api/show{query}");
        let body = serde_json::json!({ "model": model });
        let ollama = async {
            if !ask(ServerKind::Ollama) {
                return Answer::Unreachable;
            }
            self.probe_json(&show, Some(&body)).await
        };
        let (vllm, llama, ollama) = tokio::join!(vllm, llama, ollama);
        let answered = [&vllm, &llama, &ollama]
            .iter()
            .any(|a| !matches!(a, Answer::Unreachable));
        let from_vllm = json(vllm).and_then(|value| {
            let data = value["data"].as_array()?;
            let entry = data
                .iter()
                .find(|m| m["id"].as_str() == Some(model.as_str()))
                .or_else(|| (data.len() == 1).then(|| &data[0]))?;
            entry["max_model_len"].as_u64()
        });
        let from_llama = json(llama).and_then(|value| {
            value["default_generation_settings"]["n_ctx"]
                .as_u64()
                .or_else(|| value["n_ctx"].as_u64())
        });
        let from_ollama = json(ollama).and_then(|value| {
            let info = value["model_info"].as_object()?;
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        });
        (from_vllm.or(from_llama).or(from_ollama), answered)
    }

    /// One bounded GET (or POST of `body`) to the model's server.
    async fn probe_json(&self, url: &str, body: Option<&Value>) -> Answer {
        let Ok(http) = self.http().await else {
            return Answer::Unreachable;
        };
        let request = match body {
            Some(body) => http
                .post(url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_string()),
            None => http.get(url),
        };
        let request = self
            .wire()
            .authorize(request, self.config().api_key.as_deref());
        let fetch = async {
            let Ok(mut response) = request.send().await else {
                return Answer::Unreachable;
            };
            if !response.status().is_success() {
                return Answer::Nothing;
            }
            let mut bytes = Vec::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                if bytes.len() + chunk.len() > PROBE_BODY_CAP {
                    return Answer::Nothing;
                }
                bytes.extend_from_slice(&chunk);
            }
            serde_json::from_slice(&bytes).map_or(Answer::Nothing, Answer::Json)
        };
        timeout(PROBE_TIMEOUT, fetch)
            .await
            .unwrap_or(Answer::Unreachable)
    }
}

fn json(answer: Answer) -> Option<Value> {
    match answer {
        Answer::Json(value) => Some(value),
        Answer::Nothing | Answer::Unreachable => None,
    }
}

/// Whether the base URL's host is one where a local model server runs: loopback, a private
/// or link-local address, a tailnet's (100.64.0.0/10), or a name that only resolves at home
/// (`localhost`, one label, `.local`, `.lan`, `.internal`, `.home.arpa`).
pub fn is_private(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match ip {
            IpAddr::V4(v4) => {
                let [a, b, ..] = v4.octets();
                v4.is_loopback()
                    || v4.is_private()
                    || v4.is_link_local()
                    || (a == 100 && (64..128).contains(&b))
            }
            IpAddr::V6(v6) => {
                let first = v6.segments()[0];
                v6.is_loopback() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
            }
        };
    }
    !host.contains('.')
        || [".localhost", ".local", ".lan", ".internal", ".home.arpa"]
            .iter()
            .any(|suffix| host.ends_with(suffix))
}

/// `{base}` without a trailing `/v1`, where llama.cpp and Ollama serve their own routes, and the
/// query the base URL has (`?api-version=...`), to keep after a route.
fn server_root(base_url: &str) -> (String, &str) {
    let (base, query) = base_url.split_at(base_url.find(['?', '#']).unwrap_or(base_url.len()));
    let base = base.trim_end_matches('/');
    (base.strip_suffix("/v1").unwrap_or(base).to_string(), query)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn read_cache(path: &Path) -> Cache {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn read_entry(path: &Path, key: &str) -> Option<Entry> {
    let entry = *read_cache(path).windows.get(key)?;
    (now().saturating_sub(entry.at) < CACHE_TTL.as_secs()).then_some(entry)
}

/// Adds one answer to the cache as it is on disk now (under its lock: two runs probing at once
/// both keep theirs), dropping those that are out of date. A failure to write only means asking
/// again next time.
fn write_entry(path: &Path, key: &str, window: Option<u64>) {
    use crate::config::shared_file::{self, Change};
    let written = shared_file::update(path, shared_file::Options::private(), |text| {
        let mut cache: Cache = text
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let now = now();
        cache
            .windows
            .retain(|_, e| now.saturating_sub(e.at) < CACHE_TTL.as_secs());
        cache
            .windows
            .insert(key.to_string(), Entry { window, at: now });
        let bytes = serde_json::to_vec_pretty(&cache)
            .map_err(|e| crate::config::ConfigError::Other(e.to_string()))?;
        Ok::<_, crate::config::ConfigError>((Change::Write(bytes), ()))
    });
    if let Err(e) = written {
        tracing::debug!(
            "llm: could not keep the context window in {}: {e}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_drops_a_trailing_v1() {
        assert_eq!(
            server_root("http://h:8080/v1"),
            ("http://h:8080".into(), "")
        );
        assert_eq!(
            server_root("http://h:8080/v1/"),
            ("http://h:8080".into(), "")
        );
        assert_eq!(
            server_root("http://h/openai/v1?x=1"),
            ("http://h/openai".into(), "?x=1")
        );
        assert_eq!(server_root("http://h:11434"), ("http://h:11434".into(), ""));
    }

    #[test]
    fn only_local_and_private_hosts_are_probed_by_default() {
        let private = |u: &str| reqwest::Url::parse(u).is_ok_and(|u| is_private(&u));
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://[::1]:8000/v1",
            "http://10.1.2.3/v1",
            "http://172.20.0.5/v1",
            "http://192.168.1.20:8080/v1",
            "http://100.101.102.103:11434",
            "http://[fd12::1]/v1",
            "http://gpu-box:8000/v1",
            "http://ollama.local:11434",
            "http://llm.home.arpa/v1",
        ] {
            assert!(private(local), "{local}");
        }
        for cloud in [
            "https://api.openai.com/v1",
            "https://api.anthropic.com",
            "https://openrouter.ai/api/v1",
            "http://8.8.8.8/v1",
            "http://172.32.0.1/v1",
            "http://100.128.0.1/v1",
        ] {
            assert!(!private(cloud), "{cloud}");
        }
    }

    #[test]
    fn answers_are_kept_and_go_out_of_date() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("cache").join(CACHE_FILE);
        assert!(read_entry(&path, "k").is_none());
        write_entry(&path, "k", Some(4096));
        write_entry(&path, "none", None);
        assert_eq!(read_entry(&path, "k").map(|e| e.window), Some(Some(4096)));
        assert_eq!(read_entry(&path, "none").map(|e| e.window), Some(None));
        let mut cache = read_cache(&path);
        if let Some(entry) = cache.windows.get_mut("k") {
            entry.at = now() - CACHE_TTL.as_secs() - 1;
        }
        let bytes = serde_json::to_vec(&cache).unwrap_or_default();
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        assert!(read_entry(&path, "k").is_none(), "out of date");
    }
}
