//! What the `ling mcp` subcommands do, without printing: each returns the text to show (or an
//! error saying what to change), and the CLI hands it to `ui`. `list`/`get` render statuses,
//! `add`/`remove` edit `.ling/mcp.json` (or `~/.ling/mcp.json` with `--scope user`), `call`
//! connects, calls one tool and returns its rendered result.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::client::Shutdown;
use super::error::McpError;
use super::manager::{ManagerOptions, McpManager, McpToolInfo, ServerState, ServerStatus};
use super::redact::{Redactor, shown};
use super::render::RenderedResult;
use crate::config::mcp::{
    MCP_FILE, RawServer, ServerConfig, TransportConfig, add_server_entry, remove_server_entry,
};
use crate::config::{ConfigError, Paths};
use crate::redact::{MASK, redact_urls};

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

/// `ling mcp list [--json]`. `untrusted`: (name, transport) of the servers of an untrusted
/// project, shown after the others with status `untrusted`.
pub fn render_list(
    statuses: &[ServerStatus],
    untrusted: &[(String, &str)],
    as_json: bool,
) -> String {
    if as_json {
        let mut servers: Vec<Value> = statuses
            .iter()
            .map(|s| {
                let (status, error) = s.state.report();
                let mut entry = json!({"name": s.name, "transport": s.transport, "status": status});
                if let Some(error) = error {
                    entry["error"] = json!(error);
                }
                entry["tools"] = json!(s.tools);
                entry
            })
            .collect();
        servers.extend(untrusted.iter().map(|(name, transport)| {
            json!({"name": name, "transport": transport, "status": "untrusted", "tools": 0})
        }));
        return format!("{}\n", json!({ "servers": servers }));
    }
    if statuses.is_empty() && untrusted.is_empty() {
        return "No MCP servers configured. Add one with `ling mcp add NAME -- COMMAND [ARGS...]`.\n"
            .into();
    }
    let mut out = String::new();
    for s in statuses {
        let (status, error) = s.state.report();
        let detail = match (&s.state, error) {
            (ServerState::Connected, _) => {
                format!("connected, {} tool{}", s.tools, plural(s.tools))
            }
            (_, Some(error)) => format!("{status}: {}", indent_rest(error)),
            _ => status.to_string(),
        };
        out.push_str(&format!("{} ({}): {detail}\n", s.name, s.transport));
    }
    for (name, transport) in untrusted {
        out.push_str(&format!(
            "{name} ({transport}): untrusted: not started; run `ling trust` to use this \
             project's servers\n"
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn indent_rest(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n    ")
}

/// The config as `get` shows it: env and header values masked, values written with `${VAR}`
/// shown as written, URLs without userinfo or query values.
fn masked_config(config: &ServerConfig, redactor: &Redactor) -> Value {
    let mask = |pairs: &[(String, String)]| -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, _)| (k.clone(), json!(MASK)))
                .collect::<Map<_, _>>(),
        )
    };
    let raw = redactor.raw();
    match &config.transport {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let written = raw.and_then(|r| r.args.as_ref());
            let args: Vec<String> = args
                .iter()
                .enumerate()
                .map(|(i, arg)| {
                    let as_written = written.and_then(|w| w.get(i)).map(String::as_str);
                    redact_urls(shown(as_written, arg))
                })
                .collect();
            let cwd = cwd.display().to_string();
            json!({
                "command": shown(raw.and_then(|r| r.command.as_deref()), command),
                "args": args,
                "env": mask(env),
                "cwd": shown(raw.and_then(|r| r.cwd.as_deref()), &cwd),
            })
        }
        TransportConfig::Http { url, headers } | TransportConfig::Sse { url, headers } => {
            let url = redact_urls(shown(raw.and_then(|r| r.url.as_deref()), url));
            json!({"url": url, "headers": mask(headers)})
        }
    }
}

/// `ling mcp get NAME [--json]`.
pub fn render_get(
    config: &ServerConfig,
    status: Option<&ServerStatus>,
    tools: &[McpToolInfo],
    as_json: bool,
) -> String {
    let tools: Vec<&McpToolInfo> = tools.iter().filter(|t| t.server == config.name).collect();
    let redactor = Redactor::for_config(config);
    let (state, error) = status
        .map(|s| s.state.report())
        .unwrap_or(("failed", Some("not started")));
    let error = error.map(|e| redactor.scrub(e));
    let info = status.and_then(|s| s.server_info.as_ref());
    if as_json {
        let mut out = json!({
            "name": config.name,
            "transport": config.transport.kind(),
            "source": config.source,
            "config": masked_config(config, &redactor),
            "status": state,
        });
        if let Some(error) = &error {
            out["error"] = json!(error);
        }
        if let Some(info) = info {
            out["serverInfo"] = json!({"name": info.name, "version": info.version,
                "protocolVersion": info.protocol_version, "instructions": info.instructions});
        }
        out["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.original_name, "exposedName": t.exposed_name, "description": t.description}))
            .collect();
        return format!("{out:#}\n");
    }
    let mut out = format!("{} ({})\n", config.name, config.transport.kind());
    out.push_str(&format!("  source: {}\n", config.source.display()));
    if let Value::Object(fields) = masked_config(config, &redactor) {
        for (key, value) in fields {
            let shown = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.push_str(&format!("  {key}: {shown}\n"));
        }
    }
    match error {
        Some(error) => out.push_str(&format!("  status: {state}: {}\n", indent_rest(&error))),
        None => out.push_str(&format!("  status: {state}\n")),
    }
    if let Some(info) = info {
        out.push_str(&format!(
            "  server: {} {} (protocol {})\n",
            info.name, info.version, info.protocol_version
        ));
    }
    if !tools.is_empty() {
        out.push_str(&format!("  tools ({}):\n", tools.len()));
        for tool in tools {
            out.push_str(&format!(
                "    {}: {}\n",
                tool.original_name, tool.description
            ));
        }
    }
    out
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
) -> Result<String, CommandError> {
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
) -> Result<String, CommandError> {
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
) -> Result<String, CommandError> {
    let file = scope_file(paths, scope);
    let replaced = add_server_entry(&file, name, entry, file.starts_with(&paths.home))?;
    let verb = if replaced { "Replaced" } else { "Added" };
    Ok(format!(
        "{verb} MCP server {name:?} in {}\n",
        file.display()
    ))
}

/// `ling mcp remove NAME`: from the given scope, or else the project file, then the user file.
pub fn remove(paths: &Paths, scope: Option<Scope>, name: &str) -> Result<String, CommandError> {
    let scopes = match scope {
        Some(scope) => vec![scope],
        None => vec![Scope::Project, Scope::User],
    };
    for scope in scopes {
        let file = scope_file(paths, scope);
        if remove_server_entry(&file, name, file.starts_with(&paths.home))? {
            return Ok(format!(
                "Removed MCP server {name:?} from {}\n",
                file.display()
            ));
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
