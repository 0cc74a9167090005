//! Edits of `settings.json` made at the user's request (the REPL's "always, and keep it"):
//! one rule added to `permissions.allow`, every other key kept as written, merged into the file
//! as it is on disk now under its lock and replaced atomically (`shared_file`), so two sessions
//! answering "always" at once both keep their rule.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::ConfigError;
use super::shared_file::{Options, update_json_object};

/// Adds `rule` to `permissions.allow` of `file` (created if missing); false when it was there
/// already. `owner_only` (the user's file under `LING_HOME`) writes it 0600. The rule is added
/// to the file as it is on disk now, under its lock: a rule another session kept a moment ago
/// stays.
pub fn add_allow_rule(file: &Path, rule: &str, owner_only: bool) -> Result<bool, ConfigError> {
    let invalid = |message: &str| ConfigError::Invalid {
        path: file.to_path_buf(),
        message: message.to_string(),
    };
    update_json_object(
        file,
        Options::owner_only(owner_only),
        "expected a JSON object",
        |root| {
            let allow = list(
                object(root, "permissions")
                    .ok_or_else(|| invalid("\"permissions\" must be an object"))?,
                "allow",
            )
            .ok_or_else(|| invalid("\"permissions.allow\" must be an array of rules"))?;
            if allow.iter().any(|r| r.as_str() == Some(rule)) {
                return Ok((false, false));
            }
            allow.push(Value::String(rule.to_string()));
            Ok((true, true))
        },
    )
}

/// Keeps `/mcp enable NAME` or `/mcp disable NAME` for the project at `root` in the user's
/// settings `file` (`projects.<root>.disabledMcpServers` / `enabledMcpServers`), every other
/// key kept, under the file's lock, replaced atomically and owner-only.
pub fn set_mcp_server_enabled(
    file: &Path,
    root: &Path,
    name: &str,
    enabled: bool,
) -> Result<(), ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: file.to_path_buf(),
        message,
    };
    let root = root.to_string_lossy().into_owned();
    let (add, remove) = if enabled {
        ("enabledMcpServers", "disabledMcpServers")
    } else {
        ("disabledMcpServers", "enabledMcpServers")
    };
    update_json_object(file, Options::private(), "expected a JSON object", |top| {
        let projects = object(top, "projects")
            .ok_or_else(|| invalid("\"projects\" must be an object of project roots".into()))?;
        let state = object(projects, &root)
            .ok_or_else(|| invalid(format!("\"projects\".{root:?} must be an object")))?;
        let before = state.clone();
        for (key, keep) in [(remove, false), (add, true)] {
            let list = list(state, key)
                .ok_or_else(|| invalid(format!("`{key}` must be a list of server names")))?;
            list.retain(|n| n.as_str() != Some(name));
            if keep {
                list.push(Value::String(name.to_string()));
            }
        }
        Ok((*state != before, ()))
    })
}

/// The object at `key` of `map` (made empty when missing); `None` when it is something else.
fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    map.entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// The array at `key` of `map` (made empty when missing); `None` when it is something else.
fn list<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Vec<Value>> {
    map.entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_added_once_and_other_keys_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".ling/settings.json");
        assert!(add_allow_rule(&file, "bash(ls*)", false).unwrap());
        std::fs::write(
            &file,
            r#"{"model": "m", "permissions": {"allow": ["read_file"], "deny": ["bash(rm*)"]}}"#,
        )
        .unwrap();
        assert!(add_allow_rule(&file, "bash(ls*)", false).unwrap());
        assert!(!add_allow_rule(&file, "bash(ls*)", false).unwrap());
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"model": "m", "permissions": {
                "allow": ["read_file", "bash(ls*)"], "deny": ["bash(rm*)"]}})
        );
        std::fs::write(&file, r#"{"permissions": {"allow": "x"}}"#).unwrap();
        let err = add_allow_rule(&file, "r", false).unwrap_err().to_string();
        assert!(err.contains("must be an array"), "{err}");
    }

    #[test]
    fn rules_kept_by_sessions_at_once_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::sync::Arc::new(dir.path().join("settings.json"));
        std::fs::write(&*file, r#"{"model": "m"}"#).unwrap();
        let start = std::sync::Arc::new(std::sync::Barrier::new(8));
        let sessions: Vec<_> = (0..8)
            .map(|n| {
                let (file, start) = (file.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for m in 0..10 {
                        assert!(
                            add_allow_rule(&file, &format!("bash(tool{n}-{m}*)"), true).unwrap()
                        );
                        set_mcp_server_enabled(
                            &file,
                            Path::new("/p"),
                            &format!("s{n}"),
                            m % 2 == 0,
                        )
                        .unwrap();
                    }
                })
            })
            .collect();
        for session in sessions {
            session.join().unwrap();
        }
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&*file).unwrap()).unwrap();
        let mut rules: Vec<&str> = value["permissions"]["allow"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        rules.sort_unstable();
        let mut expected: Vec<String> = (0..8)
            .flat_map(|n| (0..10).map(move |m| format!("bash(tool{n}-{m}*)")))
            .collect();
        expected.sort_unstable();
        assert_eq!(rules, expected);
        let mut disabled: Vec<&str> = value["projects"]["/p"]["disabledMcpServers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        disabled.sort_unstable();
        assert_eq!(disabled, ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"]);
        assert_eq!(value["model"], "m");
    }

    #[test]
    fn a_read_only_settings_file_is_left_as_it_is() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{\"model\": \"m\"}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
        for private in [false, true] {
            let err = add_allow_rule(&file, "bash(ls*)", private).unwrap_err();
            assert!(matches!(err, ConfigError::ReadOnly { .. }), "{err:?}");
        }
        let err = set_mcp_server_enabled(&file, Path::new("/p"), "db", false).unwrap_err();
        assert!(matches!(err, ConfigError::ReadOnly { .. }), "{err:?}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\"model\": \"m\"}"
        );
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o444);
    }

    #[test]
    fn a_servers_switch_is_kept_per_project() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, r#"{"model": "m"}"#).unwrap();
        let root = Path::new("/p");
        set_mcp_server_enabled(&file, root, "db", false).unwrap();
        set_mcp_server_enabled(&file, root, "db", false).unwrap();
        set_mcp_server_enabled(&file, Path::new("/q"), "web", true).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"model": "m", "projects": {
                "/p": {"enabledMcpServers": [], "disabledMcpServers": ["db"]},
                "/q": {"disabledMcpServers": [], "enabledMcpServers": ["web"]}}})
        );
        set_mcp_server_enabled(&file, root, "db", true).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            value["projects"]["/p"]["disabledMcpServers"],
            serde_json::json!([])
        );
        assert_eq!(
            value["projects"]["/p"]["enabledMcpServers"],
            serde_json::json!(["db"])
        );
    }
}
