//! One `mcp.json` entry resolved into a [`ServerConfig`]: the transport picked, defaults
//! applied, `${VAR}`s expanded (`${LING_PROJECT_DIR}` as this run's project root) and paths made
//! absolute; and [`ServerEntryError`], what is wrong with an entry.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::oauth::OAuthConfig;
use super::raw::RawServer;
use crate::config::code_check::CodeCheck;
use crate::config::sandbox::SandboxMode;
use crate::config::{ConfigError, Paths};

pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 600_000;

/// How to reach one server, with variables expanded.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// The 2024-11-05 HTTP+SSE transport.
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A server inside the program driving Ling (the Agent SDK's `createSdkMcpServer`),
    /// reached over its control channel; never from a file.
    Sdk,
}

impl TransportConfig {
    /// `stdio`, `http` or `sse`, as `ling mcp list` shows it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
            Self::Sdk => "sdk",
        }
    }
}

/// One server, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: TransportConfig,
    pub disabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// `None`: every tool. `Some`: only these (original tool names).
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Vec<String>,
    /// stdio: the shell sandbox the server runs in (`"sandbox"` of its entry); `None`: none.
    pub sandbox: Option<SandboxMode>,
    /// http: the `oauth` object (defaults when absent).
    pub oauth: OAuthConfig,
    /// The file the entry came from.
    pub source: PathBuf,
    /// A `${VAR}` that could not be expanded: the server is not started and fails with this.
    /// The transport then holds the values as written.
    pub expand_error: Option<String>,
    /// stdio: the files the server runs from places a sandboxed command can write, checked
    /// before each start (set by trust when the run is set up; `None`: nothing to check).
    pub code: Option<std::sync::Arc<CodeCheck>>,
}

impl ServerConfig {
    /// A config with the defaults of `docs/mcp.md`, for ad-hoc servers and tests.
    pub fn new(name: impl Into<String>, transport: TransportConfig) -> Self {
        Self {
            name: name.into(),
            transport,
            disabled: false,
            startup_timeout: Duration::from_millis(DEFAULT_STARTUP_TIMEOUT_MS),
            tool_timeout: Duration::from_millis(DEFAULT_TOOL_TIMEOUT_MS),
            sandbox: None,
            include_tools: None,
            exclude_tools: Vec::new(),
            oauth: OAuthConfig::default(),
            source: PathBuf::new(),
            expand_error: None,
            code: None,
        }
    }

    /// Whether the include/exclude filters let this tool through.
    pub fn allows_tool(&self, tool: &str) -> bool {
        let included = self
            .include_tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == tool));
        included && !self.exclude_tools.iter().any(|n| n == tool)
    }
}

/// What is wrong with one server entry: each message names the server (or the name) and says
/// what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerEntryError {
    #[error("an MCP server name cannot be empty")]
    EmptyName,
    #[error(
        "MCP server name {0:?} contains \"__\", which separates server and tool in tool names; \
         rename it (e.g. {replaced:?})",
        replaced = .0.replace("__", "_")
    )]
    DoubleUnderscore(String),
    #[error("server {name:?}: unknown \"type\" {kind:?}; use \"stdio\", \"http\" or \"sse\"")]
    UnknownType { name: String, kind: String },
    #[error("server {0:?} needs a \"command\" (stdio) or a \"url\" (http)")]
    NoTransport(String),
    #[error("server {0:?} has type \"stdio\" but no \"command\"")]
    NoCommand(String),
    #[error("server {name:?} has type {kind:?} but no \"url\"")]
    NoUrl { name: String, kind: &'static str },
    #[error(
        "server {name:?}: \"sandbox\": {mode:?} must be \"workspace-write\", \"read-only\" or \
         \"off\", for a stdio server"
    )]
    Sandbox { name: String, mode: String },
}

/// Checks a server name: it becomes part of `mcp__<server>__<tool>`, so it may not contain `__`.
pub fn validate_server_name(name: &str) -> Result<(), ServerEntryError> {
    if name.is_empty() {
        return Err(ServerEntryError::EmptyName);
    }
    if name.contains("__") {
        return Err(ServerEntryError::DoubleUnderscore(name.to_string()));
    }
    Ok(())
}

/// The transport an entry asks for: `stdio`, `http` or `sse`, or what is wrong with it.
pub fn transport_kind(name: &str, raw: &RawServer) -> Result<&'static str, ServerEntryError> {
    match (raw.kind.as_deref(), &raw.command, &raw.url) {
        (Some("stdio"), _, _) | (None, Some(_), _) => Ok("stdio"),
        (Some("http" | "streamable-http" | "streamableHttp"), _, _) | (None, None, Some(_)) => {
            Ok("http")
        }
        (Some("sse"), _, _) => Ok("sse"),
        (Some(other), _, _) => Err(ServerEntryError::UnknownType {
            name: name.to_string(),
            kind: other.to_string(),
        }),
        (None, None, None) => Err(ServerEntryError::NoTransport(name.to_string())),
    }
}

/// The variable a server entry names the project root with (`${LING_PROJECT_DIR}`).
pub const PROJECT_DIR_VAR: &str = "LING_PROJECT_DIR";

/// Resolves one raw entry: picks the transport, applies defaults, expands variables and makes
/// paths absolute. Structural mistakes are errors; an unset variable only fails this server.
pub fn resolve_server(
    name: &str,
    raw: &RawServer,
    source: &Path,
    paths: &Paths,
) -> Result<ServerConfig, ConfigError> {
    let invalid = |error: ServerEntryError| ConfigError::Invalid {
        path: source.to_path_buf(),
        message: error.to_string(),
    };
    validate_server_name(name).map_err(invalid)?;
    let kind = transport_kind(name, raw).map_err(invalid)?;
    let mut expand_error = None;
    // `${LING_PROJECT_DIR}` is this run's project root, whatever the environment says, so a
    // shared `.ling/mcp.json` names the project without a machine's path.
    let root = paths.project_root.to_string_lossy().into_owned();
    let lookup = |name: &str| match name {
        PROJECT_DIR_VAR => Some(root.clone()),
        _ => std::env::var(name).ok(),
    };
    let mut expand = |text: &str| match crate::config::expand_vars_with(text, lookup) {
        Ok(value) => value,
        Err(e) => {
            expand_error.get_or_insert_with(|| format!("server {name:?}: {e}"));
            text.to_string()
        }
    };
    let transport =
        transport(name, kind, raw, &paths.project_root, &mut expand).map_err(invalid)?;
    let sandbox = sandbox_mode(name, kind, raw).map_err(invalid)?;
    let oauth = OAuthConfig::resolve(raw.oauth.as_ref(), &mut expand);
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        sandbox,
        oauth,
        disabled: raw.disabled.unwrap_or(false),
        startup_timeout: Duration::from_millis(
            raw.startup_timeout_ms.unwrap_or(DEFAULT_STARTUP_TIMEOUT_MS),
        ),
        tool_timeout: Duration::from_millis(raw.tool_timeout_ms.unwrap_or(DEFAULT_TOOL_TIMEOUT_MS)),
        include_tools: raw.include_tools.clone(),
        exclude_tools: raw.exclude_tools.clone().unwrap_or_default(),
        source: source.to_path_buf(),
        expand_error,
        code: None,
    })
}

/// The transport of an entry of `kind` (`stdio`, `http` or `sse`), its values expanded: a
/// stdio server's relative command and `cwd` are the project `root`'s.
fn transport(
    name: &str,
    kind: &'static str,
    raw: &RawServer,
    root: &Path,
    expand: &mut dyn FnMut(&str) -> String,
) -> Result<TransportConfig, ServerEntryError> {
    Ok(if kind == "stdio" {
        let Some(command) = &raw.command else {
            return Err(ServerEntryError::NoCommand(name.to_string()));
        };
        let command = expand(command);
        // A relative path like `./bin/server` means the project's; a bare name is looked up in PATH.
        let command = if command.contains('/') && Path::new(&command).is_relative() {
            root.join(&command).display().to_string()
        } else {
            command
        };
        let args = raw.args.iter().flatten().map(|a| expand(a)).collect();
        let env = raw
            .env
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), expand(v)))
            .collect();
        let cwd = match &raw.cwd {
            Some(cwd) => root.join(expand(cwd)),
            None => root.to_path_buf(),
        };
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        }
    } else {
        let Some(url) = &raw.url else {
            return Err(ServerEntryError::NoUrl {
                name: name.to_string(),
                kind,
            });
        };
        let url = expand(url);
        let headers = raw
            .headers
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), expand(v)))
            .collect();
        if kind == "sse" {
            TransportConfig::Sse { url, headers }
        } else {
            TransportConfig::Http { url, headers }
        }
    })
}

/// The sandbox a stdio server runs in: `None` when its entry says none or `off`.
fn sandbox_mode(
    name: &str,
    kind: &str,
    raw: &RawServer,
) -> Result<Option<SandboxMode>, ServerEntryError> {
    Ok(match raw.sandbox.as_deref() {
        None | Some("off") => None,
        Some(mode) => Some(
            SandboxMode::parse(mode)
                .filter(|_| kind == "stdio")
                .ok_or_else(|| ServerEntryError::Sandbox {
                    name: name.to_string(),
                    mode: mode.to_string(),
                })?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_include_then_exclude() {
        let mut config = ServerConfig::new(
            "s",
            TransportConfig::Http {
                url: "http://127.0.0.1".into(),
                headers: vec![],
            },
        );
        assert!(config.allows_tool("a"));
        config.include_tools = Some(vec!["a".into(), "b".into()]);
        config.exclude_tools = vec!["b".into()];
        assert!(config.allows_tool("a"));
        assert!(!config.allows_tool("b"));
        assert!(!config.allows_tool("c"));
    }

    #[test]
    fn rejects_double_underscore_names() {
        assert!(validate_server_name("my__server").is_err());
        assert!(validate_server_name("my_server").is_ok());
    }
}
