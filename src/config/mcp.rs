//! Raw and resolved forms of `mcp.json`: the `mcpServers` map exactly as written (camelCase, the
//! format Claude Desktop and Claude Code made common), its resolution into [`ServerConfig`]s with
//! defaults, expanded `${VAR}`s and absolute paths, the precedence of the files it is read from,
//! and the edits `ling mcp add/remove` make to one file (other entries kept, written atomically).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::ProjectFiles;
use super::claude::CLAUDE_MCP_FILE;
use super::hooks::locate::{Seg, locate};
use super::json::{read_config_text, syntax_error};
pub use super::mcp_oauth::{Idp, OAuthConfig, RawIdp, RawOAuth};
use super::sandbox::SandboxMode;
use super::shared_file::{Options, update_json_object};
use super::{ConfigError, Paths, read_json_value};

pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 600_000;
pub const MCP_FILE: &str = "mcp.json";

/// `mcp.json` as written. Keys other than `mcpServers` and `$schema` are ignored with a warning
/// (and kept by edits).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawMcpFile {
    /// Where this file's JSON Schema is, for editors; Ling does not read it.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// The servers, by name. Their tools reach the model as `mcp__<server>__<tool>`.
    #[serde(default)]
    pub mcp_servers: RawServers,
}

/// The servers in file order (the order `ling mcp list` shows them in).
#[derive(Debug, Default)]
pub struct RawServers(pub Vec<(String, RawServer)>);

impl JsonSchema for RawServers {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Servers".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": generator.subschema_for::<RawServer>(),
            // What `validate_server_name` refuses: `__` separates server and tool in tool names.
            "propertyNames": {"minLength": 1, "not": {"pattern": "__"}},
        })
    }
}

impl<'de> Deserialize<'de> for RawServers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = RawServers;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object mapping server names to server entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawServers, A::Error> {
                let mut servers = Vec::new();
                while let Some((name, server)) = map.next_entry::<String, RawServer>()? {
                    servers.push((name, server));
                }
                Ok(RawServers(servers))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// One server entry as written: a stdio server (`command`) or an HTTP one (`url`). `${VAR}` and
/// `${VAR:-default}` expand in `command`, `args`, `env`, `cwd`, `url` and `headers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    deny_unknown_fields,
    rename = "Server",
    extend(
        "anyOf" = [{"required": ["command"]}, {"required": ["url"]}],
        "allOf" = [
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "stdio"}}},
                "then": {"required": ["command"]}
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"enum": HTTP_TYPES}}},
                "then": {"required": ["url"]}
            }
        ]
    )
)]
pub struct RawServer {
    /// The transport: `stdio` (the default when `command` is set), `http` (Streamable HTTP, the
    /// default when only `url` is set; also spelled `streamable-http`, `streamableHttp`) or
    /// `sse` (the 2024-11-05 HTTP+SSE transport).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = SERVER_TYPES))]
    pub kind: Option<String>,
    /// stdio: the program to start. A relative path with a `/` in it is relative to the project
    /// root; a bare name is looked up in `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: the program's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// stdio: environment variables for the server, over Ling's own (which lack the API key
    /// variable unless `shareApiKeyWithTools` is set; this may pass it explicitly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// stdio: the working folder, relative to the project root. Default: the project root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// http, sse: the server's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// http, sse: headers sent with every request, e.g. `{"Authorization": "Bearer ${TOKEN}"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// stdio: run the server in the shell sandbox, `workspace-write` or `read-only` (its
    /// network as settings `sandbox.network`). Default: not sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["off", "workspace-write", "read-only"]))]
    pub sandbox: Option<String>,
    /// Keep the entry but do not start the server. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// How long the server may take to start and answer `initialize`, in milliseconds.
    /// Default 30000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// How long one tool call may take, in milliseconds. Default 600000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_ms: Option<u64>,
    /// Offer only these tools (the server's own names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<Vec<String>>,
    /// Do not offer these tools (the server's own names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_tools: Option<Vec<String>>,
    /// http: how Ling logs in to the server with OAuth (`ling mcp login NAME`). Without it Ling
    /// registers itself with the server's authorization server when that allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<RawOAuth>,
}

/// The `type` values an entry may have; every one but `stdio` needs a `url`.
const SERVER_TYPES: [&str; 5] = ["stdio", "http", "streamable-http", "streamableHttp", "sse"];
const HTTP_TYPES: [&str; 4] = ["http", "streamable-http", "streamableHttp", "sse"];

/// The JSON names of [`RawServer`]'s fields; any other key in an entry gets a warning. Checked
/// against the struct by a test.
const SERVER_FIELDS: &[&str] = &[
    "type",
    "sandbox",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "disabled",
    "startupTimeoutMs",
    "toolTimeoutMs",
    "includeTools",
    "excludeTools",
    "oauth",
];

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
}

impl TransportConfig {
    /// `stdio`, `http` or `sse`, as `ling mcp list` shows it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
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
    pub code: Option<std::sync::Arc<super::code_check::CodeCheck>>,
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

/// Checks a server name: it becomes part of `mcp__<server>__<tool>`, so it may not contain `__`.
pub fn validate_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an MCP server name cannot be empty".into());
    }
    if name.contains("__") {
        return Err(format!(
            "MCP server name {name:?} contains \"__\", which separates server and tool in tool \
             names; rename it (e.g. {:?})",
            name.replace("__", "_")
        ));
    }
    Ok(())
}

/// The transport an entry asks for: `stdio`, `http` or `sse`, or what is wrong with it.
pub fn transport_kind(name: &str, raw: &RawServer) -> Result<&'static str, String> {
    match (raw.kind.as_deref(), &raw.command, &raw.url) {
        (Some("stdio"), _, _) | (None, Some(_), _) => Ok("stdio"),
        (Some("http" | "streamable-http" | "streamableHttp"), _, _) | (None, None, Some(_)) => {
            Ok("http")
        }
        (Some("sse"), _, _) => Ok("sse"),
        (Some(other), _, _) => Err(format!(
            "server {name:?}: unknown \"type\" {other:?}; use \"stdio\", \"http\" or \"sse\""
        )),
        (None, None, None) => Err(format!(
            "server {name:?} needs a \"command\" (stdio) or a \"url\" (http)"
        )),
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
    let invalid = |message: String| ConfigError::Invalid {
        path: source.to_path_buf(),
        message,
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
    let transport = if kind == "stdio" {
        let Some(command) = &raw.command else {
            return Err(invalid(format!(
                "server {name:?} has type \"stdio\" but no \"command\""
            )));
        };
        let command = expand(command);
        // A relative path like `./bin/server` means the project's; a bare name is looked up in PATH.
        let command = if command.contains('/') && Path::new(&command).is_relative() {
            paths.project_root.join(&command).display().to_string()
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
            Some(cwd) => paths.project_root.join(expand(cwd)),
            None => paths.project_root.clone(),
        };
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
        }
    } else {
        let Some(url) = &raw.url else {
            return Err(invalid(format!(
                "server {name:?} has type {kind:?} but no \"url\""
            )));
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
    };
    let sandbox = match raw.sandbox.as_deref() {
        None | Some("off") => None,
        Some(mode) => Some(
            SandboxMode::parse(mode)
                .filter(|_| kind == "stdio")
                .ok_or_else(|| {
                    invalid(format!(
                        "server {name:?}: \"sandbox\": {mode:?} must be \"workspace-write\", \
                         \"read-only\" or \"off\", for a stdio server"
                    ))
                })?,
        ),
    };
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

/// Adds (or replaces) one entry in `file`, keeping every other entry and key as they were, in
/// the file as it is on disk now (under its lock: see `shared_file`). Returns whether an entry of
/// that name was replaced. `owner_only` (a file under `LING_HOME`) writes it 0600 in a 0700
/// folder.
pub fn add_server_entry(
    file: &Path,
    name: &str,
    entry: &RawServer,
    owner_only: bool,
) -> Result<bool, ConfigError> {
    validate_server_name(name).map_err(|message| ConfigError::Invalid {
        path: file.to_path_buf(),
        message,
    })?;
    let entry = serde_json::to_value(entry).map_err(|e| ConfigError::Other(e.to_string()))?;
    update_servers(file, owner_only, |servers| {
        let replaced = servers.insert(name.to_string(), entry).is_some();
        (true, replaced)
    })
}

/// Adds (or replaces) several entries in `file` at once, keeping every other entry and key, and
/// returns the file's new content; with `write` false (`--dry-run`) nothing is written.
/// `owner_only` as for [`add_server_entry`].
pub fn add_server_entries(
    file: &Path,
    entries: &[(String, RawServer)],
    owner_only: bool,
    write: bool,
) -> Result<Value, ConfigError> {
    let entries = entries
        .iter()
        .map(|(name, entry)| {
            serde_json::to_value(entry)
                .map(|entry| (name.clone(), entry))
                .map_err(|e| ConfigError::Other(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let add = |root: &mut serde_json::Map<String, Value>| -> Result<Value, ConfigError> {
        let servers = servers_object(root, file)?;
        servers.extend(entries);
        Ok(Value::Object(root.clone()))
    };
    if !write {
        return add(&mut read_object(file)?);
    }
    update_json_object(file, Options::owner_only(owner_only), NOT_SERVERS, |root| {
        add(root).map(|value| (true, value))
    })
}

/// The server names already in `file` (none when it does not exist).
pub fn server_names(file: &Path) -> Result<Vec<String>, ConfigError> {
    let mut root = read_object(file)?;
    Ok(servers_object(&mut root, file)?.keys().cloned().collect())
}

/// Removes one entry from `file`. Returns false (and leaves the file alone) when it is not there.
/// `owner_only` as for [`add_server_entry`].
pub fn remove_server_entry(file: &Path, name: &str, owner_only: bool) -> Result<bool, ConfigError> {
    if !file.exists() {
        return Ok(false);
    }
    update_servers(file, owner_only, |servers| {
        let removed = servers.shift_remove(name).is_some();
        (removed, removed)
    })
}

const NOT_SERVERS: &str = "expected a JSON object with \"mcpServers\"";

/// Changes the `mcpServers` of `file` as it is on disk now: `change` says whether it changed
/// them, and what to hand back.
fn update_servers<T>(
    file: &Path,
    owner_only: bool,
    change: impl FnOnce(&mut serde_json::Map<String, Value>) -> (bool, T),
) -> Result<T, ConfigError> {
    update_json_object(file, Options::owner_only(owner_only), NOT_SERVERS, |root| {
        Ok(change(servers_object(root, file)?))
    })
}

fn read_object(file: &Path) -> Result<serde_json::Map<String, Value>, ConfigError> {
    match read_json_value(file)? {
        None => Ok(serde_json::Map::new()),
        Some((_, Value::Object(map))) => Ok(map),
        Some(_) => Err(ConfigError::Invalid {
            path: file.to_path_buf(),
            message: NOT_SERVERS.into(),
        }),
    }
}

fn servers_object<'a>(
    root: &'a mut serde_json::Map<String, Value>,
    file: &Path,
) -> Result<&'a mut serde_json::Map<String, Value>, ConfigError> {
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    servers.as_object_mut().ok_or_else(|| ConfigError::Invalid {
        path: file.to_path_buf(),
        message: "\"mcpServers\" must be an object".into(),
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
    fn server_fields_name_every_raw_server_field() {
        let full = RawServer {
            kind: Some(String::new()),
            command: Some(String::new()),
            args: Some(vec![]),
            env: Some(BTreeMap::new()),
            cwd: Some(String::new()),
            url: Some(String::new()),
            headers: Some(BTreeMap::new()),
            sandbox: Some(String::new()),
            disabled: Some(false),
            startup_timeout_ms: Some(0),
            tool_timeout_ms: Some(0),
            include_tools: Some(vec![]),
            exclude_tools: Some(vec![]),
            oauth: Some(RawOAuth::default()),
        };
        let value = serde_json::to_value(full).unwrap();
        let mut keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = SERVER_FIELDS.to_vec();
        expected.sort_unstable();
        assert_eq!(keys, expected);
    }

    #[test]
    fn rejects_double_underscore_names() {
        assert!(validate_server_name("my__server").is_err());
        assert!(validate_server_name("my_server").is_ok());
    }
}
