//! One other tool's server entry converted to Ling's [`RawServer`]: Claude Desktop's, Claude
//! Code's, Cursor's and VS Code's JSON (VS Code's `${input:ID}`, `${env:VAR}` and
//! `${workspaceFolder}` made Ling's variables) and Codex's TOML tables; what does not carry over
//! becomes a note, an entry that cannot be converted an [`Unconvertible`].

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::config::mcp::{PROJECT_DIR_VAR, RawServer, ServerEntryError};

/// Why one entry of another tool was not imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unconvertible {
    #[error("the entry is not an object")]
    NotObject,
    /// Codex's entries are TOML tables.
    #[error("the entry is not a table")]
    NotTable,
    #[error("`{key}` must be {expected}, not {found}")]
    WrongType {
        key: String,
        expected: &'static str,
        found: String,
    },
    /// Converted, but not an entry Ling can use (a bad name, no command or URL).
    #[error(transparent)]
    Entry(#[from] ServerEntryError),
}

/// VS Code's `${input:ID}` asks the user when the server starts; Ling reads `${ID}` (upper case,
/// `-` and `.` as `_`) from the environment instead. The input's description goes along, under
/// a key [`from_json`] turns into a note.
pub(super) fn with_inputs(
    entries: Vec<(String, Value)>,
    inputs: Option<&Value>,
) -> Vec<(String, Value)> {
    let inputs: Vec<(String, String)> = inputs
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|input| {
            let id = input.get("id")?.as_str()?.to_string();
            let description = input
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Some((id, description.to_string()))
        })
        .collect();
    entries
        .into_iter()
        .map(|(name, mut entry)| {
            let text = entry.to_string();
            let mut notes = Vec::new();
            for (id, description) in &inputs {
                if text.contains(&format!("${{input:{id}}}")) {
                    let var = input_var(id);
                    notes.push(Value::String(format!(
                        "set ${var} in the environment (VS Code asked for input `{id}`{})",
                        if description.is_empty() {
                            String::new()
                        } else {
                            format!(": {description}")
                        }
                    )));
                }
            }
            if let Some(map) = entry.as_object_mut()
                && !notes.is_empty()
            {
                map.insert(INPUT_NOTES.into(), Value::Array(notes));
            }
            (name, entry)
        })
        .collect()
}

const INPUT_NOTES: &str = "\u{0}ling-input-notes";

fn input_var(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// VS Code's variables in one value: `${input:ID}` → `${ID}`, `${env:VAR}` → `${VAR}`,
/// `${workspaceFolder}` → `${LING_PROJECT_DIR}` (the project root when the server starts, on
/// whatever machine), `${workspaceFolderBasename}` → the root's name.
fn vscode_vars(text: &str, root: &Path) -> String {
    let basename = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = text
        .replace("${workspaceFolderBasename}", &basename)
        .replace("${workspaceFolder}", &format!("${{{}}}", PROJECT_DIR_VAR));
    for (prefix, upper) in [("${input:", true), ("${env:", false)] {
        while let Some(at) = out.find(prefix) {
            let rest = &out[at + prefix.len()..];
            let Some(end) = rest.find('}') else { break };
            let id = &rest[..end];
            let var = if upper { input_var(id) } else { id.to_string() };
            out = format!("{}${{{var}}}{}", &out[..at], &rest[end + 1..]);
        }
    }
    out
}

/// A Claude Desktop, Claude Code, Cursor or VS Code entry: the same fields as Ling's, mostly.
pub(super) fn from_json(
    entry: &Value,
    root: &Path,
) -> Result<(RawServer, Vec<String>), Unconvertible> {
    let Some(map) = entry.as_object() else {
        return Err(Unconvertible::NotObject);
    };
    let mut notes: Vec<String> = map
        .get(INPUT_NOTES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    let wrong = |key: &str, expected: &'static str, found: &Value| Unconvertible::WrongType {
        key: key.to_string(),
        expected,
        found: found.to_string(),
    };
    let text = |key: &str| -> Result<Option<String>, Unconvertible> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(vscode_vars(s, root))),
            Some(other) => Err(wrong(key, "a string", other)),
        }
    };
    let list = |key: &str| -> Result<Option<Vec<String>>, Unconvertible> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => Ok(Some(
                items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => vscode_vars(s, root),
                        other => other.to_string(),
                    })
                    .collect(),
            )),
            Some(other) => Err(wrong(key, "a list", other)),
        }
    };
    let strings = |key: &str| -> Result<Option<BTreeMap<String, String>>, Unconvertible> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(
                m.iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k.clone(), vscode_vars(&v, root))
                    })
                    .collect(),
            )),
            Some(other) => Err(wrong(key, "an object", other)),
        }
    };
    let kind = text("type")?.map(|t| match t.as_str() {
        "streamableHttp" | "streamable-http" => "http".to_string(),
        _ => t,
    });
    let server = RawServer {
        kind,
        command: text("command")?,
        args: list("args")?,
        env: strings("env")?,
        cwd: text("cwd")?,
        url: text("url")?,
        headers: strings("headers")?,
        disabled: map.get("disabled").and_then(Value::as_bool),
        ..RawServer::default()
    };
    const KNOWN: [&str; 9] = [
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "disabled",
        INPUT_NOTES,
    ];
    for key in map.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        notes.push(format!("`{key}` has no Ling equivalent and was left out"));
    }
    Ok((server, notes))
}

/// A Codex `[mcp_servers.NAME]` table.
pub(super) fn from_codex(entry: &Value) -> Result<(RawServer, Vec<String>), Unconvertible> {
    let Some(map) = entry.as_object() else {
        return Err(Unconvertible::NotTable);
    };
    let mut notes = Vec::new();
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let list = |key: &str| -> Option<Vec<String>> {
        let items = map.get(key)?.as_array()?;
        Some(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect(),
        )
    };
    let table = |key: &str| -> Option<BTreeMap<String, String>> {
        let m: &Map<String, Value> = map.get(key)?.as_object()?;
        Some(
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect(),
        )
    };
    let ms = |key: &str| {
        map.get(key)
            .and_then(Value::as_f64)
            .filter(|s| *s > 0.0)
            .map(|s| (s * 1000.0) as u64)
    };
    let mut headers = table("http_headers").unwrap_or_default();
    for (header, var) in table("env_http_headers").unwrap_or_default() {
        headers.insert(header, format!("${{{var}}}"));
    }
    if let Some(var) = text("bearer_token_env_var") {
        headers.insert("Authorization".into(), format!("Bearer ${{{var}}}"));
    }
    let server = RawServer {
        command: text("command"),
        args: list("args"),
        env: table("env"),
        cwd: text("cwd"),
        url: text("url"),
        headers: (!headers.is_empty()).then_some(headers),
        disabled: map.get("enabled").and_then(Value::as_bool).map(|on| !on),
        startup_timeout_ms: ms("startup_timeout_sec").or_else(|| ms("startup_timeout_ms")),
        tool_timeout_ms: ms("tool_timeout_sec"),
        include_tools: list("enabled_tools"),
        exclude_tools: list("disabled_tools"),
        ..RawServer::default()
    };
    const KNOWN: [&str; 14] = [
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "http_headers",
        "env_http_headers",
        "bearer_token_env_var",
        "enabled",
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
        "enabled_tools",
        "disabled_tools",
    ];
    for key in map.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        notes.push(format!("`{key}` has no Ling equivalent and was left out"));
    }
    Ok((server, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vscode_variables_become_lings() {
        let root = Path::new("/p");
        assert_eq!(
            vscode_vars(
                "Bearer ${input:github-token} ${env:HOME} ${workspaceFolder}/db",
                root
            ),
            "Bearer ${GITHUB_TOKEN} ${HOME} ${LING_PROJECT_DIR}/db"
        );
    }

    #[test]
    fn codex_tables_map_to_lings_fields() {
        let entry = json!({
            "command": "npx", "args": ["-y", "srv"], "env": {"K": "v"},
            "startup_timeout_sec": 20, "tool_timeout_sec": 1.5, "enabled": false,
            "enabled_tools": ["a"], "bearer_token_env_var": "TOKEN", "mystery": 1
        });
        let (server, notes) = from_codex(&entry).unwrap();
        assert_eq!(server.command.as_deref(), Some("npx"));
        assert_eq!(server.startup_timeout_ms, Some(20_000));
        assert_eq!(server.tool_timeout_ms, Some(1_500));
        assert_eq!(server.disabled, Some(true));
        assert_eq!(server.include_tools, Some(vec!["a".to_string()]));
        assert_eq!(
            server
                .headers
                .unwrap_or_default()
                .get("Authorization")
                .map(String::as_str),
            Some("Bearer ${TOKEN}")
        );
        assert_eq!(notes, ["`mystery` has no Ling equivalent and was left out"]);
    }
}
