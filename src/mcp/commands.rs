//! What the `ling mcp` subcommands do, without their text: each returns data (or an error
//! saying what to change), and the command line's `ling mcp` says it. `probe` starts servers for
//! `list`/`get`, `add_*`/`remove` edit `.ling/mcp.json` (or `~/.ling/mcp.json` with `--scope
//! user`), `call` connects, calls one tool and returns its rendered result.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::client::Shutdown;
use super::error::McpError;
use super::manager::{ManagerOptions, McpManager, McpToolInfo, ServerState, ServerStatus};
use super::redact::Redactor;
use super::render::RenderedResult;
use crate::config::mcp::{
    MCP_FILE, RawServer, ServerConfig, TransportConfig, add_server_entry, remove_server_entry,
};
use crate::config::{ConfigError, Paths};

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// A bad argument; the message says which and how to write it.
    #[error("{0}")]
    Usage(String),
    /// `ling mcp call` failed; the message is scrubbed of the server config's secrets.
    #[error("{0}")]
    Call(String),
}

/// Which file `add`/`remove` edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `.ling/mcp.json`.
    Project,
    /// `~/.ling/mcp.json` (`--scope user`).
    User,
}

/// What `add_stdio`/`add_remote` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The `mcp.json` written.
    pub file: PathBuf,
    /// A server of that name was there before and is replaced.
    pub replaced: bool,
}

pub fn scope_file(paths: &Paths, scope: Scope) -> PathBuf {
    match scope {
        Scope::Project => paths.project_file(MCP_FILE),
        Scope::User => paths.user_file(MCP_FILE),
    }
}

/// Starts the servers, waits until each is connected or failed, and closes them again: what
/// `ling mcp list` and `get` show. Failure reasons come back scrubbed of the configs' secrets.
pub async fn probe(
    configs: Vec<ServerConfig>,
    options: ManagerOptions,
) -> (Vec<ServerStatus>, Vec<McpToolInfo>) {
    let redactors: Vec<(String, Redactor)> = configs
        .iter()
        .map(|c| (c.name.clone(), Redactor::for_config(c)))
        .collect();
    let manager = McpManager::start(configs, options);
    manager.wait_ready().await;
    let (mut statuses, tools) = (manager.statuses(), manager.tools());
    // What was asked is known: the servers need not be waited for (docs/mcp.md, "Shutdown").
    manager.shutdown_as(Shutdown::Prompt).await;
    for status in &mut statuses {
        if let (ServerState::Failed(why), Some((_, redactor))) = (
            &mut status.state,
            redactors.iter().find(|(name, _)| *name == status.name),
        ) {
            *why = redactor.scrub(why);
        }
    }
    (statuses, tools)
}

fn parse_pairs(
    items: &[String],
    separator: char,
    what: &str,
) -> Result<BTreeMap<String, String>, CommandError> {
    items
        .iter()
        .map(|item| match item.split_once(separator) {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim_start().to_string()))
            }
            _ => Err(CommandError::Usage(format!(
                "{what} {item:?} must be written as {}",
                if separator == '=' {
                    "KEY=VALUE"
                } else {
                    "'Name: value'"
                }
            ))),
        })
        .collect()
}

/// `ling mcp add NAME [-e K=V]... -- COMMAND [ARGS...]`.
pub fn add_stdio(
    paths: &Paths,
    scope: Scope,
    name: &str,
    env: &[String],
    command: &str,
    args: &[String],
) -> Result<Added, CommandError> {
    let env = parse_pairs(env, '=', "-e")?;
    let entry = RawServer {
        command: Some(command.to_string()),
        args: (!args.is_empty()).then(|| args.to_vec()),
        env: (!env.is_empty()).then_some(env),
        ..RawServer::default()
    };
    write_entry(paths, scope, name, &entry)
}

/// `ling mcp add --transport http|sse NAME URL [-H 'K: V']...`.
pub fn add_remote(
    paths: &Paths,
    scope: Scope,
    transport: &str,
    name: &str,
    url: &str,
    headers: &[String],
) -> Result<Added, CommandError> {
    if !matches!(transport, "http" | "sse") {
        return Err(CommandError::Usage(format!(
            "--transport {transport:?}: use \"http\" or \"sse\" (stdio servers take `-- COMMAND`)"
        )));
    }
    let headers = parse_pairs(headers, ':', "-H")?;
    let entry = RawServer {
        kind: Some(transport.to_string()),
        url: Some(url.to_string()),
        headers: (!headers.is_empty()).then_some(headers),
        ..RawServer::default()
    };
    write_entry(paths, scope, name, &entry)
}

fn write_entry(
    paths: &Paths,
    scope: Scope,
    name: &str,
    entry: &RawServer,
) -> Result<Added, CommandError> {
    let file = scope_file(paths, scope);
    let replaced = add_server_entry(&file, name, entry, file.starts_with(&paths.home))?;
    Ok(Added { file, replaced })
}

/// `ling mcp remove NAME`: from the given scope, or else the project file, then the user file.
/// Returns the file it was removed from.
pub fn remove(paths: &Paths, scope: Option<Scope>, name: &str) -> Result<PathBuf, CommandError> {
    let scopes = match scope {
        Some(scope) => vec![scope],
        None => vec![Scope::Project, Scope::User],
    };
    for scope in scopes {
        let file = scope_file(paths, scope);
        if remove_server_entry(&file, name, file.starts_with(&paths.home))? {
            return Ok(file);
        }
    }
    Err(CommandError::Usage(format!(
        "no MCP server named {name:?} in {} or {}",
        scope_file(paths, Scope::Project).display(),
        scope_file(paths, Scope::User).display()
    )))
}

/// The config of `ling mcp call --url URL` (an ad-hoc Streamable HTTP server).
pub fn adhoc_http(url: &str, headers: &[String]) -> Result<ServerConfig, CommandError> {
    let headers = parse_pairs(headers, ':', "-H")?.into_iter().collect();
    Ok(ServerConfig::new(
        "url",
        TransportConfig::Http {
            url: url.to_string(),
            headers,
        },
    ))
}

/// `ling mcp call NAME TOOL [JSON_ARGS]`: connects, calls, closes. The caller exits 1 when the
/// result `is_error`.
pub async fn call(
    config: ServerConfig,
    tool: &str,
    json_args: Option<&str>,
    options: ManagerOptions,
    cancel: &CancellationToken,
) -> Result<RenderedResult, CommandError> {
    let arguments = match json_args {
        None => json!({}),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => {
                return Err(CommandError::Usage(
                    "JSON_ARGS must be a JSON object".into(),
                ));
            }
            Err(e) => {
                return Err(CommandError::Usage(format!(
                    "JSON_ARGS is not valid JSON: {e}"
                )));
            }
        },
    };
    let server = config.name.clone();
    let redactor = Redactor::for_config(&config);
    let manager: Arc<McpManager> = McpManager::start(vec![config], options);
    manager.wait_ready().await;
    let result = manager
        .call_server_tool(&server, tool, arguments, cancel, None)
        .await;
    manager.shutdown_as(Shutdown::Prompt).await;
    result.map_err(|e| CommandError::Call(redactor.scrub(&e.to_string())))
}
