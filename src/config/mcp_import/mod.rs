//! `ling mcp import --from SOURCE`: the MCP server entries of other tools' config files, found at
//! their documented paths on Linux and macOS (resolved from `HOME`) and converted to Ling's
//! `mcp.json` entries: Claude Desktop, Claude Code (`~/.claude.json`, user and this project's
//! `mcpServers`, and `.mcp.json`; under `CLAUDE_CONFIG_DIR` when set), Cursor, VS Code
//! (`servers` with `inputs`, JSON with comments) and Codex (`config.toml` of `CODEX_HOME`, else
//! `~/.codex`, then the project's own `.codex/config.toml`, `[mcp_servers.NAME]` tables).
//! `${workspaceFolder}` becomes `${LING_PROJECT_DIR}`, which Ling resolves to the project root
//! when the server starts, so a shared file names no machine's path. Reading only; the command
//! writes the result with [`super::mcp::add_server_entries`].

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ConfigError;
use super::json::{read_config_text, syntax_error};
use super::mcp::{RawServer, transport_kind, validate_server_name};

mod convert;
mod jsonc;

pub use convert::Unconvertible;
use convert::{from_codex, from_json, with_inputs};
use jsonc::strip_jsonc;

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
    pub reason: Unconvertible,
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
