//! Codex CLI's user configuration, read so that a Codex user's setup works in Ling:
//! `config.toml` of `CODEX_HOME` (else `~/.codex`) with its `profile` and `[profiles.NAME]`
//! tables, and `exec`'s `--config key=value` overrides over it. Only the settings with a Ling
//! meaning are taken ([`CodexSettings`]); the file's other tables (its MCP servers are
//! `ling mcp import --from codex`'s) are left alone, while an override Ling cannot honour is an
//! error, never ignored.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::ReasoningEffort;

/// Codex's home: `CODEX_HOME`, else `~/.codex` (from `HOME`).
pub fn codex_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".codex"))
}

/// Why Codex's configuration cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodexConfigError {
    #[error("{}: {message}; fix the file, or pass --ignore-user-config", .path.display())]
    File { path: PathBuf, message: String },
    #[error("--config {0}: give key=value (the value in TOML, e.g. model=\"o3\")")]
    Override(String),
    #[error(
        "--config {key}: Ling does not read Codex's `{key}`; it reads model, approval_policy, \
         sandbox_mode, sandbox_workspace_write.network_access, openai_base_url, \
         model_reasoning_effort, web_search"
    )]
    UnknownKey { key: String },
    #[error("{what} `{value}` is not one of {allowed}")]
    Value {
        what: String,
        value: String,
        allowed: &'static str,
    },
    #[error("--profile {0}: no [profiles.{0}] in Codex's config.toml ({1}); name a profile it has")]
    NoProfile(String, String),
}

/// The settings of Codex's configuration that Ling honours, after the profile and the overrides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CodexSettings {
    pub model: Option<String>,
    /// `approval_policy`: `untrusted`, `on-failure`, `on-request` or `never`.
    pub approval_policy: Option<String>,
    /// `sandbox_mode`: `read-only`, `workspace-write` or `danger-full-access`.
    pub sandbox_mode: Option<String>,
    /// `sandbox_workspace_write.network_access`.
    pub network_access: Option<bool>,
    /// `openai_base_url`.
    pub base_url: Option<String>,
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `web_search = "disabled"`: no web search.
    pub web_search_disabled: bool,
    /// The file read, when one was.
    pub file: Option<PathBuf>,
    /// The profile applied.
    pub profile: Option<String>,
}

/// The keys an override may name (the others are refused).
const OVERRIDABLE: [&str; 8] = [
    "model",
    "approval_policy",
    "sandbox_mode",
    "sandbox_workspace_write.network_access",
    "openai_base_url",
    "model_reasoning_effort",
    "web_search",
    "profile",
];

impl CodexSettings {
    /// `config.toml` of `home` (unless `read_file` is false or it does not exist), the profile
    /// `profile` (else the file's `profile`), then `overrides` (`key=value`, in order).
    pub fn load(
        home: Option<&Path>,
        read_file: bool,
        profile: Option<&str>,
        overrides: &[String],
    ) -> Result<Self, CodexConfigError> {
        let file = home
            .map(|h| h.join("config.toml"))
            .filter(|f| read_file && f.is_file());
        let mut root = match &file {
            Some(path) => read_table(path)?,
            None => Table::new(),
        };
        let mut forced = Table::new();
        for raw in overrides {
            let (key, value) = parse_override(raw)?;
            if !OVERRIDABLE.contains(&key.as_str()) {
                return Err(CodexConfigError::UnknownKey { key });
            }
            set_dotted(&mut forced, &key, value);
        }
        let profile = profile
            .map(str::to_string)
            .or_else(|| str_of(&forced, "profile"))
            .or_else(|| str_of(&root, "profile"));
        if let Some(name) = &profile {
            let table = root
                .get("profiles")
                .and_then(|p| p.get(name))
                .and_then(Value::as_table)
                .cloned()
                .ok_or_else(|| {
                    let shown = file
                        .as_ref()
                        .map_or_else(|| "none read".to_string(), |f| f.display().to_string());
                    CodexConfigError::NoProfile(name.clone(), shown)
                })?;
            merge(&mut root, table);
        }
        merge(&mut root, forced);
        Self::of(&root, file, profile)
    }

    fn of(
        root: &Table,
        file: Option<PathBuf>,
        profile: Option<String>,
    ) -> Result<Self, CodexConfigError> {
        let approval_policy = str_of(root, "approval_policy");
        check(
            "approval_policy",
            approval_policy.as_deref(),
            &["untrusted", "on-failure", "on-request", "never"],
            "untrusted, on-failure, on-request, never",
        )?;
        let sandbox_mode = str_of(root, "sandbox_mode");
        check(
            "sandbox_mode",
            sandbox_mode.as_deref(),
            &["read-only", "workspace-write", "danger-full-access"],
            "read-only, workspace-write, danger-full-access",
        )?;
        let effort = str_of(root, "model_reasoning_effort");
        let reasoning_effort = match effort.as_deref() {
            None => None,
            Some(text) => Some(
                serde_json::from_value(serde_json::Value::String(text.into())).map_err(|_| {
                    CodexConfigError::Value {
                        what: "model_reasoning_effort".into(),
                        value: text.into(),
                        allowed: "none, minimal, low, medium, high",
                    }
                })?,
            ),
        };
        let web_search = str_of(root, "web_search");
        check(
            "web_search",
            web_search.as_deref(),
            &["live", "cached", "disabled"],
            "live, cached, disabled",
        )?;
        Ok(Self {
            model: str_of(root, "model"),
            approval_policy,
            sandbox_mode,
            network_access: root
                .get("sandbox_workspace_write")
                .and_then(|t| t.get("network_access"))
                .and_then(Value::as_bool),
            base_url: str_of(root, "openai_base_url"),
            reasoning_effort,
            web_search_disabled: web_search.as_deref() == Some("disabled"),
            file,
            profile,
        })
    }
}

fn check(
    what: &str,
    value: Option<&str>,
    allowed: &[&str],
    shown: &'static str,
) -> Result<(), CodexConfigError> {
    match value {
        Some(v) if !allowed.contains(&v) => Err(CodexConfigError::Value {
            what: what.into(),
            value: v.into(),
            allowed: shown,
        }),
        _ => Ok(()),
    }
}

fn read_table(path: &Path) -> Result<Table, CodexConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| CodexConfigError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    text.parse::<Table>().map_err(|e| CodexConfigError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn str_of(table: &Table, key: &str) -> Option<String> {
    table.get(key).and_then(Value::as_str).map(str::to_string)
}

/// `key=value` as Codex reads it: the value in TOML, else the text itself (quotes trimmed).
fn parse_override(raw: &str) -> Result<(String, Value), CodexConfigError> {
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| CodexConfigError::Override(raw.to_string()))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(CodexConfigError::Override(raw.to_string()));
    }
    let value = value.trim();
    let parsed = format!("x = {value}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("x"))
        .unwrap_or_else(|| Value::String(value.trim_matches(['"', '\'']).to_string()));
    Ok((key.to_string(), parsed))
}

/// Sets `a.b.c` in `table`, making the tables on the way.
fn set_dotted(table: &mut Table, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            table.insert(key.to_string(), value);
        }
        Some((head, rest)) => {
            let entry = table
                .entry(head.to_string())
                .or_insert_with(|| Value::Table(Table::new()));
            if !entry.is_table() {
                *entry = Value::Table(Table::new());
            }
            if let Value::Table(inner) = entry {
                set_dotted(inner, rest, value);
            }
        }
    }
}

/// `over` merged into `base`, table by table.
fn merge(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(inner)), Value::Table(more)) => merge(inner, more),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_with(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
        dir
    }

    #[test]
    fn the_profile_then_the_overrides_win_over_the_file() {
        let home = home_with(
            "model = \"base\"\napproval_policy = \"on-request\"\n\
             [profiles.ci]\nmodel = \"ci-model\"\nsandbox_mode = \"read-only\"\n",
        );
        let got = CodexSettings::load(Some(home.path()), true, Some("ci"), &[]).unwrap();
        assert_eq!(got.model.as_deref(), Some("ci-model"));
        assert_eq!(got.approval_policy.as_deref(), Some("on-request"));
        assert_eq!(got.sandbox_mode.as_deref(), Some("read-only"));
        let over = [
            "model=o3".to_string(),
            "sandbox_workspace_write.network_access=true".into(),
        ];
        let got = CodexSettings::load(Some(home.path()), true, Some("ci"), &over).unwrap();
        assert_eq!(got.model.as_deref(), Some("o3"));
        assert_eq!(got.network_access, Some(true));
        // Without the file, nothing of it.
        let got = CodexSettings::load(Some(home.path()), false, None, &[]).unwrap();
        assert_eq!(got.model, None);
    }

    #[test]
    fn what_ling_cannot_honour_is_an_error() {
        let home = home_with("");
        let load = |over: &str| CodexSettings::load(Some(home.path()), true, None, &[over.into()]);
        assert!(matches!(
            load("features.foo=true"),
            Err(CodexConfigError::UnknownKey { .. })
        ));
        assert!(matches!(load("model"), Err(CodexConfigError::Override(_))));
        assert!(matches!(
            load("approval_policy=\"sometimes\""),
            Err(CodexConfigError::Value { .. })
        ));
        assert!(matches!(
            CodexSettings::load(Some(home.path()), true, Some("nope"), &[]),
            Err(CodexConfigError::NoProfile(..))
        ));
        assert_eq!(
            load("model_reasoning_effort=\"high\"")
                .unwrap()
                .reasoning_effort,
            Some(ReasoningEffort::High)
        );
    }
}
