//! The MCP servers of a run: the files `mcp.json` is read from and their precedence, with
//! warnings for keys Ling does not know and the line and column of a bad entry. The file as
//! written is `raw.rs`'s, an entry's resolution into a [`ServerConfig`] `resolve.rs`'s, the
//! `oauth` object `oauth.rs`'s, and the edits `ling mcp add/remove/import` make `edit.rs`'s.

mod edit;
mod oauth;
mod raw;
mod resolve;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use edit::{add_server_entries, add_server_entry, remove_server_entry, server_names};
pub use oauth::{Idp, OAuthConfig, RawIdp, RawOAuth};
pub use raw::{RawMcpFile, RawServer, RawServers};
use raw::{SERVER_FIELDS, SERVER_TYPES};
pub use resolve::{
    DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, PROJECT_DIR_VAR, ServerConfig,
    ServerEntryError, TransportConfig, resolve_server, transport_kind, validate_server_name,
};

use super::ProjectFiles;
use super::claude::CLAUDE_MCP_FILE;
use super::hooks::locate::{Seg, locate};
use super::json::{read_config_text, syntax_error};
use super::{ConfigError, Paths};

pub const MCP_FILE: &str = "mcp.json";

/// Loads and resolves every configured server, with warnings about ignored keys. The sources,
/// in precedence order (a later one wins on a name clash): Claude Code's `.mcp.json` when
/// `project` is trusted (and `claudeCompat` is not off), `~/.ling/mcp.json`, `.ling/mcp.json`
/// when `project` is trusted, then each `--mcp-config` (a file, or the JSON itself when it starts
/// with `{`); with `strict`, only the `--mcp-config` ones. A missing user or project file is fine; a missing `--mcp-config` file, invalid JSON,
/// a file that is not an object or an invalid entry is an error naming the file.
pub fn load_servers(
    paths: &Paths,
    project: &ProjectFiles,
    extra: &[PathBuf],
    strict: bool,
) -> Result<(Vec<ServerConfig>, Vec<String>), ConfigError> {
    let mut sources: Vec<(PathBuf, Option<String>)> = Vec::new();
    if !strict {
        // Claude Code's `.mcp.json` first, so that a server of Ling's own files wins its name.
        if let Some((path, text)) = project.trusted_text(CLAUDE_MCP_FILE) {
            sources.push((path.to_path_buf(), Some(text.to_string())));
        }
        if let Some(user) = paths.user_config_file(MCP_FILE) {
            let text = read_config_text(&user)?;
            sources.push((user, text));
        }
        if let Some((path, text)) = project.trusted_text(MCP_FILE) {
            sources.push((path.to_path_buf(), Some(text.to_string())));
        }
    }
    for extra in extra {
        // Claude Code's `--mcp-config` also takes the JSON itself (the Agent SDK passes it so).
        if let Some(json) = extra.to_str().filter(|t| t.trim_start().starts_with('{')) {
            sources.push((PathBuf::from("--mcp-config"), Some(json.to_string())));
            continue;
        }
        let file = paths.project_root.join(extra);
        if sources.iter().any(|(seen, _)| *seen == file) {
            continue;
        }
        let Some(text) = read_config_text(&file)? else {
            return Err(ConfigError::Read {
                path: file,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        };
        sources.push((file, Some(text)));
    }
    let mut servers: Vec<ServerConfig> = Vec::new();
    let mut warnings = Vec::new();
    for (file, text) in sources {
        let Some(text) = text else { continue };
        let raw = parse_mcp_text(&file, &text, &mut warnings)?;
        for (name, entry) in raw.mcp_servers.0 {
            let server = resolve_server(&name, &entry, &file, paths)
                .map_err(|e| positioned(e, &text, &name, &entry))?;
            match servers.iter_mut().find(|s| s.name == name) {
                Some(existing) => *existing = server,
                None => servers.push(server),
            }
        }
    }
    Ok((servers, warnings))
}

/// What `/mcp disable` and `/mcp enable` kept for this project (the user's settings
/// `projects`) over what the config files say: a server named in `disabledMcpServers` is
/// disabled, one in `enabledMcpServers` enabled.
pub fn apply_switches(servers: &mut [ServerConfig], state: &super::RawProjectState) {
    for server in servers {
        if state.disabled_mcp_servers.contains(&server.name) {
            server.disabled = true;
        } else if state.enabled_mcp_servers.contains(&server.name) {
            server.disabled = false;
        }
    }
}

/// Parses one file's text, which must hold a JSON object, warning about keys Ling does not know.
pub fn parse_mcp_text(
    file: &Path,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<RawMcpFile, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| syntax_error(file, &e))?;
    let Value::Object(root) = &value else {
        // serde would happily build the struct from an array, so this is checked first.
        let start = text.len() - text.trim_start().len();
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        return Err(ConfigError::Syntax {
            path: file.to_path_buf(),
            line: text[..start].matches('\n').count() + 1,
            column: start - line_start + 1,
            message:
                "expected a JSON object like {\"mcpServers\": {\"NAME\": {\"command\": \"...\"}}}"
                    .into(),
        });
    };
    let shown = file.display();
    for key in root
        .keys()
        .filter(|k| *k != "mcpServers" && *k != "$schema")
    {
        warnings.push(format!("{shown}: unknown top-level key `{key}` ignored"));
    }
    let entries = root.get("mcpServers").and_then(Value::as_object);
    for (name, entry) in entries.into_iter().flatten() {
        let unknown = entry.as_object().into_iter().flat_map(|e| e.keys());
        for key in unknown.filter(|k| !SERVER_FIELDS.contains(&k.as_str())) {
            warnings.push(format!(
                "{shown}: server {name:?}: unknown field `{key}` ignored"
            ));
        }
    }
    serde_json::from_str(text).map_err(|e| syntax_error(file, &e))
}

/// Gives a mistake in one entry the line and column of what is wrong: the `type` value when it
/// is unknown, else the entry's name (a bad name, or no `command` or `url`).
fn positioned(error: ConfigError, text: &str, name: &str, raw: &RawServer) -> ConfigError {
    let ConfigError::Invalid { path, message } = &error else {
        return error;
    };
    let mut trail = vec![Seg::Key("mcpServers".into()), Seg::Key(name.into())];
    let bad_type = raw
        .kind
        .as_deref()
        .is_some_and(|k| !SERVER_TYPES.contains(&k));
    let on_type = bad_type && validate_server_name(name).is_ok();
    if on_type {
        trail.push(Seg::Key("type".into()));
    }
    let at = locate(text, &trail, !on_type);
    ConfigError::Syntax {
        path: path.clone(),
        line: at.line,
        column: at.column,
        message: message.clone(),
    }
}
