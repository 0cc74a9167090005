//! The model client's own checks: its config from settings, the preflight, URL checks.

use super::*;
use std::time::Duration;

use crate::config::Settings;
use crate::llm::config::DEFAULT_RETRY_BASE_DELAY;

#[test]
fn the_defaults_are_the_settings_defaults() {
    let none = |_: &str| None;
    let raw = crate::config::RawSettings::default();
    let settings =
        Settings::resolve(&raw, &raw, &Default::default(), &none).unwrap_or_else(|e| panic!("{e}"));
    let mut from_settings = LlmConfig::from_settings(&settings);
    // Only the tests' retry delay and the cache's place come from the environment.
    from_settings.retry_base_delay = DEFAULT_RETRY_BASE_DELAY;
    from_settings.cache_dir = None;
    assert_eq!(
        LlmConfig::new(settings.base_url.clone(), settings.model.clone()),
        from_settings
    );
}

#[test]
fn preflight_needs_a_key_only_for_api_openai_com() {
    let config = LlmConfig::new("https://api.openai.com/v1", "gpt-4o-mini");
    let client = LlmClient::new(config.clone()).unwrap();
    let message = client
        .preflight()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(message.contains("export OPENAI_API_KEY=..."), "{message}");
    assert!(
        message.contains("--base-url http://127.0.0.1:8080/v1"),
        "{message}"
    );

    let keyed = LlmConfig {
        api_key: Some("sk".into()),
        ..config
    };
    assert!(LlmClient::new(keyed).is_ok_and(|c| c.preflight().is_ok()));
    let local = LlmConfig::new("http://127.0.0.1:8080/v1", "m");
    assert!(LlmClient::new(local).is_ok_and(|c| c.preflight().is_ok()));
}

#[test]
fn config_comes_from_settings() {
    use crate::config::{RawSettings, SettingsOverrides};
    let raw: RawSettings = serde_json::from_str(
        r#"{"baseUrl":"http://127.0.0.1:9/v1","apiKeyEnv":"K","idleTimeoutMs":1234,"maxRetries":7}"#,
    )
    .unwrap();
    let env = |name: &str| (name == "K").then(|| "secret".to_string());
    let settings = Settings::resolve(
        &RawSettings::default(),
        &raw,
        &SettingsOverrides::default(),
        &env,
    )
    .unwrap();
    let config = LlmConfig::from_settings(&settings);
    assert_eq!(config.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(config.api_key.as_deref(), Some("secret"));
    assert_eq!(config.api_key_env, "K");
    assert_eq!(config.idle_timeout, Duration::from_millis(1234));
    assert_eq!(config.max_retries, 7);
    assert_eq!(config.model, settings.model);
}

#[test]
fn an_invalid_base_url_is_refused_at_once() {
    let err = LlmClient::new(LlmConfig::new("localhost:8080", "m")).err();
    let message = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("\"localhost:8080\" is not a valid URL"),
        "{message}"
    );
}

#[test]
fn the_stream_future_is_send() {
    fn assert_send<T: Send>(_: T) {}
    let client = LlmClient::new(LlmConfig::new("http://127.0.0.1:1/v1", "m")).unwrap();
    let mut on_event = |_: StreamEvent| {};
    assert_send(client.stream_chat(&[], &[], &mut on_event));
}

#[test]
fn preflight_needs_a_key_for_api_anthropic_com_naming_its_variable() {
    let config = LlmConfig {
        api: WireApi::Anthropic,
        api_key_env: "ANTHROPIC_API_KEY".into(),
        ..LlmConfig::new("https://api.anthropic.com", "claude-sonnet-4-6")
    };
    let message = LlmClient::new(config)
        .ok()
        .and_then(|c| c.preflight().err())
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains("export ANTHROPIC_API_KEY=..."),
        "{message}"
    );
}

#[test]
fn each_api_has_its_endpoint() {
    let endpoint = |api, base: &str| {
        LlmClient::new(LlmConfig {
            api,
            ..LlmConfig::new(base, "m")
        })
        .map(|c| c.endpoint())
        .unwrap_or_default()
    };
    assert_eq!(
        endpoint(WireApi::Chat, "http://h/v1"),
        "http://h/v1/chat/completions"
    );
    assert_eq!(
        endpoint(WireApi::Responses, "http://h/v1?x=1"),
        "http://h/v1/responses?x=1"
    );
    assert_eq!(
        endpoint(WireApi::Anthropic, "https://api.anthropic.com"),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        endpoint(WireApi::Anthropic, "http://127.0.0.1:9/v1/"),
        "http://127.0.0.1:9/v1/messages"
    );
}
