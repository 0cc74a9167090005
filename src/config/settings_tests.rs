//! Unit tests of `settings.rs`.

use super::*;

fn raw(json: &str) -> RawSettings {
    serde_json::from_str(json).unwrap()
}

#[test]
fn flags_beat_env_beat_project_beat_user() {
    let user = raw(r#"{"model":"user-model","baseUrl":"http://user/v1","maxTurns":3}"#);
    let project = raw(r#"{"model":"project-model"}"#);
    let none = |_: &str| None;
    let s = Settings::resolve(&user, &project, &SettingsOverrides::default(), &none).unwrap();
    assert_eq!(s.model, "project-model");
    assert_eq!(s.base_url, "http://user/v1");
    assert_eq!(s.max_turns, Some(3));

    let env = |name: &str| (name == "LING_MODEL").then(|| "env-model".to_string());
    let s = Settings::resolve(&user, &project, &SettingsOverrides::default(), &env).unwrap();
    assert_eq!(s.model, "env-model");

    let flags = SettingsOverrides {
        model: Some("flag-model".into()),
        ..Default::default()
    };
    let s = Settings::resolve(&user, &project, &flags, &env).unwrap();
    assert_eq!(s.model, "flag-model");
}

#[test]
fn context_settings_have_defaults_and_refuse_nonsense() {
    let none = |_: &str| None;
    let resolve = |project: &str| {
        Settings::resolve(
            &RawSettings::default(),
            &raw(project),
            &SettingsOverrides::default(),
            &none,
        )
    };
    let s = resolve("{}").unwrap();
    assert_eq!(
        (s.context_window, s.auto_compact, s.auto_compact_percent),
        (None, true, 85)
    );
    let s =
        resolve(r#"{"contextWindow":4096,"autoCompact":false,"autoCompactPercent":70}"#).unwrap();
    assert_eq!(
        (s.context_window, s.auto_compact, s.auto_compact_percent),
        (Some(4096), false, 70)
    );
    assert_eq!(
        resolve(r#"{"contextWindow":0}"#).err(),
        Some(SettingsError::ContextWindowZero)
    );
    let err = resolve(r#"{"autoCompactPercent":5}"#).unwrap_err();
    assert_eq!(err, SettingsError::AutoCompactPercent(5));
    assert!(err.to_string().contains("between 10 and 100"), "{err}");
}

#[test]
fn an_untrusted_project_keeps_only_its_narrowing_rules() {
    let text = r#"{"model":"m","permissions":{"allow":["bash"],"deny":["x"],"ask":["y"]}}"#;
    for s in [
        raw(text).deny_only(),
        RawSettings::narrowing_only(text).unwrap(),
    ] {
        assert_eq!(s.model, None);
        assert!(s.permissions.allow.is_empty());
        assert_eq!(s.permissions.deny, ["x"]);
        assert_eq!(s.permissions.ask, ["y"]);
    }
    // A value only a trusted project's file would be checked for.
    let odd = r#"{"permissions":{"defaultMode":"a-newer-mode","deny":["x"]},"maxTurns":-1}"#;
    assert_eq!(
        RawSettings::narrowing_only(odd).unwrap().permissions.deny,
        ["x"]
    );
}

#[test]
fn api_key_comes_from_the_named_variable() {
    let project = raw(r#"{"apiKeyEnv":"DEEPSEEK_API_KEY"}"#);
    let env = |name: &str| (name == "DEEPSEEK_API_KEY").then(|| "sk-1".to_string());
    let s = Settings::resolve(
        &RawSettings::default(),
        &project,
        &SettingsOverrides::default(),
        &env,
    )
    .unwrap();
    assert_eq!(s.api_key.as_deref(), Some("sk-1"));
    assert_eq!(s.api_key_env, "DEEPSEEK_API_KEY");
}

#[test]
fn max_turns_0_is_an_error_naming_the_setting() {
    let project = raw(r#"{"maxTurns":0}"#);
    let err = Settings::resolve(
        &RawSettings::default(),
        &project,
        &SettingsOverrides::default(),
        &|_| None,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        err.contains("maxTurns is 0") && err.contains("1 or more"),
        "{err}"
    );
}

#[test]
fn retry_and_line_limits_have_defaults_and_refuse_0() {
    let none = |_: &str| None;
    let defaults = SettingsOverrides::default();
    let s = Settings::resolve(
        &RawSettings::default(),
        &RawSettings::default(),
        &defaults,
        &none,
    )
    .unwrap();
    assert_eq!(s.max_retry_delay, Duration::from_secs(60));
    assert_eq!(s.max_stream_line_bytes, 8 * 1024 * 1024);
    assert!(!s.share_api_key_with_tools);
    let set =
        raw(r#"{"maxRetryDelayMs":250,"maxStreamLineBytes":1000,"shareApiKeyWithTools":true}"#);
    let s = Settings::resolve(&RawSettings::default(), &set, &defaults, &none).unwrap();
    assert_eq!(s.max_retry_delay, Duration::from_millis(250));
    assert_eq!(s.max_stream_line_bytes, 1000);
    assert!(s.share_api_key_with_tools);
    for (json, needle) in [
        (r#"{"maxRetryDelayMs":0}"#, "maxRetryDelayMs is 0"),
        (r#"{"maxStreamLineBytes":0}"#, "maxStreamLineBytes is 0"),
    ] {
        let err = Settings::resolve(&RawSettings::default(), &raw(json), &defaults, &none)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn modes_are_read_in_either_spelling() {
    for (json, mode) in [
        ("acceptEdits", PermissionMode::AcceptEdits),
        ("accept-edits", PermissionMode::AcceptEdits),
        ("bypassPermissions", PermissionMode::Bypass),
        ("plan", PermissionMode::Plan),
    ] {
        let project = raw(&format!(r#"{{"permissions":{{"defaultMode":"{json}"}}}}"#));
        let s = Settings::resolve(
            &RawSettings::default(),
            &project,
            &SettingsOverrides::default(),
            &|_| None,
        )
        .unwrap();
        assert_eq!(s.permission_mode, mode, "{json}");
    }
    let s = raw(r#"{"elicitation":"accept-defaults"}"#);
    assert_eq!(s.elicitation, Some(ElicitationPolicy::AcceptDefaults));
}

#[test]
fn model_aliases_and_the_settings_flag_layer() {
    let user = raw(r#"{"model":"fast","modelAliases":{"fast":"gpt-4o-mini","sonnet":"x/sonnet"}}"#);
    let project = raw(r#"{"modelAliases":{"fast":"local-7b"},"permissions":{"deny":["bash"]}}"#);
    let none = |_: &str| None;
    let s = Settings::resolve(&user, &project, &SettingsOverrides::default(), &none).unwrap();
    assert_eq!(s.model, "local-7b");
    let flags = |model: &str| SettingsOverrides {
        model: Some(model.into()),
        ..Default::default()
    };
    let s = Settings::resolve(&user, &project, &flags("sonnet"), &none).unwrap();
    assert_eq!(s.model, "x/sonnet");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let s = Settings::resolve(&RawSettings::default(), &project, &flags("opus"), &none).unwrap();
    assert_eq!(s.model, "opus");
    assert!(s.warnings[0].contains("modelAliases"), "{:?}", s.warnings);
    let s = Settings::resolve(&user, &project, &flags("default"), &none).unwrap();
    assert_eq!(s.model, "local-7b");

    let flag = FlagSettings {
        source: "--settings".into(),
        text: String::new(),
        raw: raw(r#"{"model":"flagged","disableAllHooks":true,"permissions":{"deny":["glob"]}}"#),
    };
    let overrides = SettingsOverrides {
        settings: Some(flag),
        ..Default::default()
    };
    let s = Settings::resolve(&user, &project, &overrides, &none).unwrap();
    assert_eq!(s.model, "flagged");
    assert!(s.hooks_disabled);
    assert_eq!(s.deny_rules, ["glob", "bash"]);
    assert!(s.rule_origins.contains(&("glob".to_string(), "--settings")));
}

#[test]
fn unknown_permission_keys_are_kept_for_a_warning() {
    let s = raw(r#"{"permissions":{"alow":["bash"],"deny":["x"]}}"#);
    assert_eq!(s.permissions.other.keys().collect::<Vec<_>>(), ["alow"]);
    assert_eq!(s.permissions.deny, ["x"]);
}

#[test]
fn a_bad_mode_says_which_values_work_and_where() {
    let text = "{\n  \"permissions\": {\"defaultMode\": \"yolo\"}\n}";
    let err = serde_json::from_str::<RawSettings>(text).unwrap_err();
    assert_eq!((err.line(), err.column()), (2, 40));
    assert!(
        err.to_string().contains(
            "unknown permission mode `yolo`; expected one of default, accept-edits (also \
             acceptEdits), plan, bypass (also bypassPermissions)"
        ),
        "{err}"
    );
}
