//! Edits of `settings.json` made at the user's request (the REPL's "always, and keep it"):
//! one rule added to `permissions.allow`, every other key kept as written, the file replaced
//! atomically.

use std::path::Path;

use serde_json::Value;

use super::error::ConfigError;
use super::json::read_json_value;
use super::mcp::write_atomically;

/// Adds `rule` to `permissions.allow` of `file` (created if missing); false when it was there
/// already. `owner_only` (the user's file under `LING_HOME`) writes it 0600.
pub fn add_allow_rule(file: &Path, rule: &str, owner_only: bool) -> Result<bool, ConfigError> {
    let invalid = |message: &str| ConfigError::Invalid {
        path: file.to_path_buf(),
        message: message.to_string(),
    };
    let mut root = match read_json_value(file)? {
        None => serde_json::Map::new(),
        Some((_, Value::Object(map))) => map,
        Some(_) => return Err(invalid("expected a JSON object")),
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .ok_or_else(|| invalid("\"permissions\" must be an object"))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| invalid("\"permissions.allow\" must be an array of rules"))?;
    if allow.iter().any(|r| r.as_str() == Some(rule)) {
        return Ok(false);
    }
    allow.push(Value::String(rule.to_string()));
    write_atomically(file, &Value::Object(root), owner_only)?;
    Ok(true)
}

/// Keeps `/mcp enable NAME` or `/mcp disable NAME` for the project at `root` in the user's
/// settings `file` (`projects.<root>.disabledMcpServers` / `enabledMcpServers`), every other
/// key kept, the file replaced atomically and owner-only.
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
    let mut top = match read_json_value(file)? {
        None => serde_json::Map::new(),
        Some((_, Value::Object(map))) => map,
        Some(_) => return Err(invalid("expected a JSON object".into())),
    };
    let root = root.to_string_lossy().into_owned();
    let projects = top
        .entry("projects")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .ok_or_else(|| invalid("\"projects\" must be an object of project roots".into()))?;
    let state = projects
        .entry(root.clone())
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .ok_or_else(|| invalid(format!("\"projects\".{root:?} must be an object")))?;
    let (add, remove) = if enabled {
        ("enabledMcpServers", "disabledMcpServers")
    } else {
        ("disabledMcpServers", "enabledMcpServers")
    };
    for (key, keep) in [(remove, false), (add, true)] {
        let list = state
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| invalid(format!("`{key}` must be a list of server names")))?;
        list.retain(|n| n.as_str() != Some(name));
        if keep {
            list.push(Value::String(name.to_string()));
        }
    }
    write_atomically(file, &Value::Object(top), true)
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
