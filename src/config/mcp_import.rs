//! `ling mcp import --from SOURCE`: the MCP server entries of other tools' config files, found at
//! their documented paths on Linux and macOS (resolved from `HOME`) and converted to Ling's
//! `mcp.json` entries: Claude Desktop, Claude Code (`~/.claude.json`, user and this project's
//! `mcpServers`, and `.mcp.json`; under `CLAUDE_CONFIG_DIR` when set), Cursor, VS Code
//! (`servers` with `inputs`, JSON with comments) and Codex (`config.toml` of `CODEX_HOME`, else
//! `~/.codex`, then the project's own `.codex/config.toml`, `[mcp_servers.NAME]` tables).
//! `${workspaceFolder}` becomes `${LING_PROJECT_DIR}`, which Ling resolves to the project root
//! when the server starts, so a shared file names no machine's path. Reading only; the command
//! writes the result with [`super::mcp::add_server_entries`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::ConfigError;
use super::json::{read_config_text, syntax_error};
use super::mcp::{RawServer, transport_kind, validate_server_name};

/// The tools `--from` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportSource {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Codex,
}

impl ImportSource {
    pub fn label(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "Claude Desktop",
            Self::ClaudeCode => "Claude Code",
            Self::Cursor => "Cursor",
            Self::VsCode => "VS Code",
            Self::Codex => "Codex",
        }
    }

    /// The files this tool keeps MCP servers in, user files first, as (path, format).
    fn files(self, dirs: &ToolDirs, root: &Path) -> Vec<(PathBuf, Format)> {
        let home = dirs.home.as_path();
        let mac = home.join("Library/Application Support");
        let linux = home.join(".config");
        match self {
            Self::ClaudeDesktop => vec![
                (
                    linux.join("Claude/claude_desktop_config.json"),
                    Format::McpServers,
                ),
                (
                    mac.join("Claude/claude_desktop_config.json"),
                    Format::McpServers,
                ),
            ],
            Self::ClaudeCode => vec![
                (
                    dirs.claude_config
                        .as_deref()
                        .unwrap_or(home)
                        .join(".claude.json"),
                    Format::ClaudeCodeState,
                ),
                (root.join(".mcp.json"), Format::McpServers),
            ],
            Self::Cursor => vec![
                (home.join(".cursor/mcp.json"), Format::McpServers),
                (root.join(".cursor/mcp.json"), Format::McpServers),
            ],
            Self::VsCode => vec![
                (
                    linux.join("Code/User/settings.json"),
                    Format::VsCodeSettings,
                ),
                (mac.join("Code/User/settings.json"), Format::VsCodeSettings),
                (linux.join("Code/User/mcp.json"), Format::VsCode),
                (mac.join("Code/User/mcp.json"), Format::VsCode),
                (root.join(".vscode/mcp.json"), Format::VsCode),
            ],
            Self::Codex => vec![
                (
                    dirs.codex_home
                        .clone()
                        .unwrap_or_else(|| home.join(".codex"))
                        .join("config.toml"),
                    Format::CodexToml,
                ),
                (root.join(".codex/config.toml"), Format::CodexToml),
            ],
        }
    }
}

/// Where the other tools keep their user config: `HOME`, and `CLAUDE_CONFIG_DIR` and
/// `CODEX_HOME` when set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDirs {
    pub home: PathBuf,
    pub claude_config: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
}

impl ToolDirs {
    /// From `HOME` (given) and the environment.
    pub fn from_env(home: PathBuf) -> Self {
        let dir = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Self {
            home,
            claude_config: dir("CLAUDE_CONFIG_DIR"),
            codex_home: dir("CODEX_HOME"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `{"mcpServers": {...}}`.
    McpServers,
    /// `~/.claude.json`: `mcpServers` and `projects[ROOT].mcpServers`.
    ClaudeCodeState,
    /// `{"servers": {...}, "inputs": [...]}`, JSON with comments.
    VsCode,
    /// VS Code's user `settings.json`: the same under `"mcp"`.
    VsCodeSettings,
    /// `[mcp_servers.NAME]` tables.
    CodexToml,
}

/// One server found, converted.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub name: String,
    pub server: RawServer,
    pub from: PathBuf,
    /// What did not carry over, or what to set up (a VS Code input became a variable).
    pub notes: Vec<String>,
}

/// One server that could not be converted, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub name: String,
    pub from: PathBuf,
    pub reason: String,
}

/// What `--from` found.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub found: Vec<Found>,
    pub rejected: Vec<Rejected>,
    /// The files that exist and were read.
    pub read: Vec<PathBuf>,
    /// Every file looked for.
    pub looked_in: Vec<PathBuf>,
}

/// Reads every config file of `source` that exists. A file that cannot be parsed is an error
/// naming it; an entry that cannot be converted is [`Rejected`]. A later file's entry replaces
/// an earlier one of the same name (the project's over the user's).
pub fn read_source(
    source: ImportSource,
    dirs: &ToolDirs,
    root: &Path,
) -> Result<Imported, ConfigError> {
    let mut imported = Imported::default();
    for (path, format) in source.files(dirs, root) {
        imported.looked_in.push(path.clone());
        let Some(text) = read_config_text(&path)? else {
            continue;
        };
        imported.read.push(path.clone());
        for (name, entry) in entries(&path, &text, format, root)? {
            let converted = match format {
                Format::CodexToml => from_codex(&entry),
                _ => from_json(&entry, root),
            };
            let result = converted.and_then(|(server, notes)| {
                validate_server_name(&name)?;
                transport_kind(&name, &server)?;
                Ok((server, notes))
            });
            imported.found.retain(|f| f.name != name);
            imported.rejected.retain(|r| r.name != name);
            match result {
                Ok((server, notes)) => imported.found.push(Found {
                    name,
                    server,
                    from: path.clone(),
                    notes,
                }),
                Err(reason) => imported.rejected.push(Rejected {
                    name,
                    from: path.clone(),
                    reason,
                }),
            }
        }
    }
    Ok(imported)
}

/// The (name, entry) pairs of one file, in file order; Codex's tables come as JSON too.
fn entries(
    path: &Path,
    text: &str,
    format: Format,
    root: &Path,
) -> Result<Vec<(String, Value)>, ConfigError> {
    let value: Value = match format {
        Format::CodexToml => {
            let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!("not valid TOML: {}", e.message()),
            })?;
            serde_json::to_value(table).map_err(|e| ConfigError::Other(e.to_string()))?
        }
        Format::VsCode | Format::VsCodeSettings => {
            serde_json::from_str(&strip_jsonc(text)).map_err(|e| syntax_error(path, &e))?
        }
        _ => serde_json::from_str(text).map_err(|e| syntax_error(path, &e))?,
    };
    let object = |v: Option<&Value>| -> Vec<(String, Value)> {
        v.and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    Ok(match format {
        Format::McpServers => object(value.get("mcpServers")),
        Format::ClaudeCodeState => {
            let mut all = object(value.get("mcpServers"));
            let project = value
                .get("projects")
                .and_then(|p| p.get(root.to_string_lossy().as_ref()))
                .and_then(|p| p.get("mcpServers"));
            all.extend(object(project));
            all
        }
        Format::VsCode => with_inputs(object(value.get("servers")), value.get("inputs")),
        Format::VsCodeSettings => {
            let mcp = value.get("mcp");
            with_inputs(
                object(mcp.and_then(|m| m.get("servers"))),
                mcp.and_then(|m| m.get("inputs")),
            )
        }
        Format::CodexToml => object(value.get("mcp_servers")),
    })
}

/// VS Code's `${input:ID}` asks the user when the server starts; Ling reads `${ID}` (upper case,
/// `-` and `.` as `_`) from the environment instead. The input's description goes along, under
/// a key [`from_json`] turns into a note.
fn with_inputs(entries: Vec<(String, Value)>, inputs: Option<&Value>) -> Vec<(String, Value)> {
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
        .replace(
            "${workspaceFolder}",
            &format!("${{{}}}", super::mcp::PROJECT_DIR_VAR),
        );
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
fn from_json(entry: &Value, root: &Path) -> Result<(RawServer, Vec<String>), String> {
    let Some(map) = entry.as_object() else {
        return Err("the entry is not an object".into());
    };
    let mut notes: Vec<String> = map
        .get(INPUT_NOTES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(vscode_vars(s, root))),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        }
    };
    let list = |key: &str| -> Result<Option<Vec<String>>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(vscode_vars(s, root)),
                    other => Ok(other.to_string()),
                })
                .collect::<Result<Vec<_>, String>>()
                .map(Some),
            Some(other) => Err(format!("`{key}` must be a list, not {other}")),
        }
    };
    let strings = |key: &str| -> Result<Option<BTreeMap<String, String>>, String> {
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
            Some(other) => Err(format!("`{key}` must be an object, not {other}")),
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
fn from_codex(entry: &Value) -> Result<(RawServer, Vec<String>), String> {
    let Some(map) = entry.as_object() else {
        return Err("the entry is not a table".into());
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

/// JSON with comments (`//`, `/* */`) and trailing commas, as VS Code writes it, made JSON.
/// Strings are kept as they are; line breaks are kept, so errors keep their line numbers.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: a `,` followed (after blanks) by `}` or `]`, outside strings.
    let mut cleaned = String::with_capacity(out.len());
    let mut in_string = false;
    let mut escaped = false;
    let bytes: Vec<char> = out.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        if in_string {
            cleaned.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        if c == ',' {
            let next = bytes[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonc_comments_and_trailing_commas_are_dropped_but_not_inside_strings() {
        let text = "{\n // a comment\n \"a\": \"http://x//y\", /* block\n */ \"b\": [1, 2,],\n}";
        let value: Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
        assert_eq!(value, json!({"a": "http://x//y", "b": [1, 2]}));
    }

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
