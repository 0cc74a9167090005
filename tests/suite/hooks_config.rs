//! Loading hooks.json: positions of every mistake, warnings, merging and dedupe across the user
//! and project files, and disabling all hooks.

use crate::support::hooks;

use hooks::{Project, command, hooks_file, pre_tool, write};
use ling::config::hooks::{HandlerKind, HookLayers, HooksConfig};
use ling::config::{ConfigError, Settings, SettingsOverrides};
use ling::hooks::{HookEngine, HookEventName, render_listing};
use pretty_assertions::assert_eq;
use serde_json::json;

/// Loads `text` as the project's hooks.json and returns the error's (line, column, message).
fn load_error(text: &str) -> (usize, usize, String) {
    let project = Project::new();
    let path = project.paths().project_file("hooks.json");
    write(&path, text);
    match HookEngine::load(&project.paths(), &project.trusted(), HookLayers::ALL) {
        Err(ConfigError::Syntax {
            path: at,
            line,
            column,
            message,
        }) => {
            assert_eq!(at, path);
            (line, column, message)
        }
        Err(other) => panic!("expected a syntax error, got {other}"),
        Ok(_) => panic!("{text} loaded"),
    }
}

#[test]
fn invalid_json_names_the_line_and_column() {
    let text = "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n";
    let (line, column, _) = load_error(text);
    assert_eq!((line, column), (3, 20));
}

#[test]
fn an_unknown_event_points_at_its_key_and_lists_the_valid_ones() {
    let text = r#"{
  "hooks": {
    "PreToolUse": [],
    "PreToolUsed": [{"hooks": [{"type": "command", "command": "true"}]}]
  }
}"#;
    let (line, column, message) = load_error(text);
    assert_eq!((line, column), (4, 5));
    assert!(message.contains("`PreToolUsed`"), "{message}");
    assert!(
        message.contains("SessionStart, UserPromptSubmit, PreToolUse, PostToolUse"),
        "{message}"
    );
}

#[test]
fn an_unknown_handler_type_points_at_its_value() {
    let text = r#"{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "true"},
             {"type": "prompt", "prompt": "is it done?"}]}
]}}"#;
    let (line, column, message) = load_error(text);
    assert_eq!((line, column), (3, 23));
    assert!(
        message.contains("unknown handler type `prompt`"),
        "{message}"
    );
    assert!(message.contains("command, http"), "{message}");
}

#[test]
fn a_wrong_field_type_points_at_the_value() {
    let text = "{\"hooks\": {\"PreToolUse\": [{\"hooks\": [\n  {\"type\": \"command\", \"command\": \"x\", \"timeout\": \"30\"}\n]}]}}";
    let (line, column, message) = load_error(text);
    assert_eq!((line, column), (2, 50));
    assert!(
        message.contains("`timeout` must be a positive number"),
        "{message}"
    );

    let (_, _, message) = load_error(r#"{"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}"#);
    assert!(message.contains("`matcher` must be a string"), "{message}");
    let (_, _, message) = load_error(r#"{"hooks": {"PreToolUse": {"hooks": []}}}"#);
    assert!(message.contains("must be a list"), "{message}");
    let (_, _, message) = load_error(r#"{"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}"#);
    assert!(message.contains("needs a `url`"), "{message}");
    let (_, _, message) = load_error(r#"{"hooks": {"Stop": [{"matcher": "*"}]}}"#);
    assert!(message.contains("no `hooks` list"), "{message}");
}

#[test]
fn an_invalid_matcher_regex_points_at_the_matcher() {
    let text = "{\"hooks\": {\"PreToolUse\": [\n  {\"matcher\": \"mcp__(\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}\n]}}";
    let (line, column, message) = load_error(text);
    assert_eq!((line, column), (2, 15));
    assert!(
        message.contains("not a valid regular expression"),
        "{message}"
    );
}

#[test]
fn unknown_fields_are_warnings_with_positions() {
    let project = Project::new();
    let path = project.paths().project_file("hooks.json");
    write(
        &path,
        r#"{"version": 2, "hooks": {"PreToolUse": [
  {"matcher": "bash", "comment": "guard", "hooks": [
    {"type": "command", "command": "true", "statusMessage": "checking", "colour": "red"}]}],
  "Stop": [{"matcher": "x", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    let (engine, warnings) =
        HookEngine::load(&project.paths(), &project.trusted(), HookLayers::ALL).unwrap();
    assert_eq!(engine.list().len(), 2);
    let p = path.display();
    assert_eq!(
        warnings,
        vec![
            format!("{p}:1:2: unknown top-level field `version` ignored"),
            format!("{p}:2:23: unknown field `comment` ignored"),
            format!("{p}:3:44: field not supported by Ling `statusMessage` ignored"),
            format!("{p}:3:73: unknown field for a `command` handler `colour` ignored"),
            format!("{p}:4:24: `matcher` is ignored for Stop: every Stop hook runs"),
        ]
    );
}

#[test]
fn defaults_and_http_handlers_resolve() {
    let config = HooksConfig::parse(
        std::path::Path::new("/x/hooks.json"),
        r#"{"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
            {"type": "http", "url": "http://127.0.0.1:9/a", "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 5, "async": true},
            {"type": "command", "command": "cargo fmt", "failClosed": true}
        ]}]}}"#,
    )
    .unwrap();
    assert_eq!(config.groups.len(), 1);
    let group = &config.groups[0];
    assert_eq!(group.event, HookEventName::PostToolUse);
    assert_eq!(group.matcher, None);
    let http = &group.handlers[0];
    assert_eq!(
        http.kind,
        HandlerKind::Http {
            url: "http://127.0.0.1:9/a".into(),
            headers: vec![("Authorization".into(), "Bearer ${TOKEN}".into())],
        }
    );
    assert_eq!(http.timeout.as_secs(), 5);
    assert!(http.is_async);
    let cmd = &group.handlers[1];
    assert_eq!(cmd.timeout.as_secs(), 60);
    assert!(cmd.fail_closed && !cmd.is_async);
}

#[tokio::test]
async fn user_and_project_files_merge_and_a_handler_in_both_runs_once() {
    let project = Project::new();
    let append = command("echo ran >> runs.txt");
    let user = project.user_hooks(&hooks_file(
        "PreToolUse",
        Some("bash"),
        json!([append.clone()]),
    ));
    let mut both = hooks_file(
        "PreToolUse",
        Some("bash"),
        json!([append.clone(), append.clone()]),
    );
    both["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"matcher": "*", "hooks": [append, command("echo other >> runs.txt")]}));
    let proj = project.project_hooks(&both);

    let engine = project.engine();
    let list = engine.list();
    let listed: Vec<_> = list
        .iter()
        .map(|l| (l.matcher.clone(), l.handler.clone(), l.source.clone()))
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                Some("bash".into()),
                "command `echo ran >> runs.txt`".into(),
                user.clone()
            ),
            (None, "command `echo ran >> runs.txt`".into(), proj.clone()),
            (None, "command `echo other >> runs.txt`".into(), proj),
        ]
    );
    assert!(render_listing(&list, false).contains(&user.display().to_string()));

    // The same handler under `bash` and `*` also runs once for one call.
    let outcome = engine
        .run(&pre_tool("bash", json!({})), &project.ctx())
        .await;
    assert!(outcome.notices.is_empty(), "{outcome:?}");
    let mut runs: Vec<String> = project.read("runs.txt").lines().map(String::from).collect();
    runs.sort();
    assert_eq!(runs, vec!["other", "ran"]);
}

#[test]
fn disable_all_hooks_loads_nothing_even_with_a_broken_file() {
    let project = Project::new();
    write(&project.paths().project_file("hooks.json"), "{ not json");
    write(
        &project.paths().project_file("settings.json"),
        r#"{"disableAllHooks": true}"#,
    );
    let trusted = project.trusted();
    let settings =
        Settings::load(&project.paths(), &trusted, &SettingsOverrides::default()).unwrap();
    assert!(settings.project_hooks_disabled);
    assert_eq!(
        settings.hook_layers(),
        HookLayers {
            user: true,
            project: false
        }
    );
    let (engine, warnings) =
        HookEngine::load(&project.paths(), &trusted, settings.hook_layers()).unwrap();
    assert!(engine.is_empty());
    assert!(warnings.is_empty());
    assert!(HookEngine::load(&project.paths(), &trusted, HookLayers::ALL).is_err());
}

#[test]
fn no_files_means_no_hooks() {
    let project = Project::new();
    let (engine, warnings) =
        HookEngine::load(&project.paths(), &project.trusted(), HookLayers::ALL).unwrap();
    assert!(engine.is_empty());
    assert!(warnings.is_empty());
}
