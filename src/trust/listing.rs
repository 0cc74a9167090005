//! What a project's config would bring, item by item, for the trust question and `ling
//! trust`: every hook (event, matcher, command or URL) and every MCP server (command and
//! arguments or URL, the variables it expands, a user server it would replace), each with what
//! it runs ([`Runs`]: its folder, the environment it sets with the variables that load code
//! flagged, the files it executes), the settings' `env` that every command, hook and server
//! would get (the same way: the variables that load code flagged, the files and folders they
//! name), and every setting that widens what Ling may do or where requests go. Also what changed between the config that was trusted and the one on disk.
//! Rendering is the UI's.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::code::{self, Areas, Runs};
pub use super::listing_error::ListingError;
use crate::config::claude::{CLAUDE_MCP_FILE, CLAUDE_SETTINGS_FILES, ClaudeRules};
use crate::config::hooks::{HandlerKind, HooksConfig};
use crate::config::mcp::{RawServer, parse_mcp_text, transport_kind};
use crate::config::project::ALL_PROJECT_FILES;
use crate::config::{PermissionMode, RawSettings, var_names};

/// One thing the project would bring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Hook {
        event: String,
        /// `None`: every value matches.
        matcher: Option<String>,
        handler: HookTarget,
        /// A command hook's folder, the variables its command sets and the files it runs.
        runs: Option<Runs>,
    },
    Server {
        name: String,
        /// `stdio`, `http` or `sse`.
        transport: String,
        target: ServerTarget,
        /// The environment variables its `${VAR}`s read.
        variables: Vec<String>,
        /// A server of the same name in `~/.ling/mcp.json` that this one would replace.
        replaces_user_server: bool,
        disabled: bool,
        /// A stdio server's folder, environment and the files it runs.
        runs: Option<Runs>,
    },
    Setting {
        /// As written, with `permissions.` in front of permission keys.
        key: String,
        value: String,
        /// What it would change, in words.
        effect: String,
    },
    /// The settings' `env`: set for every command, hook and MCP server Ling starts. `runs` has
    /// the variables (those that load code flagged) and the files and folders they name.
    Environment { runs: Runs },
    /// A custom command, skill or sub-agent (`kind`), and what it does in words.
    Extension {
        kind: &'static str,
        name: String,
        detail: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookTarget {
    /// Run with `sh -c`.
    Command(String),
    /// POSTed to, with the variables its headers expand.
    Http { url: String, variables: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTarget {
    Command { command: String, args: Vec<String> },
    Url(String),
}

/// One project file and what it brings; `Err` when it cannot be parsed (the message says where).
#[derive(Debug, Clone)]
pub struct FileListing {
    pub name: &'static str,
    pub path: PathBuf,
    pub items: Result<Vec<Item>, ListingError>,
}

/// The project files that exist, in the order of [`ALL_PROJECT_FILES`].
#[derive(Debug, Clone, Default)]
pub struct ProjectListing {
    pub files: Vec<FileListing>,
}

/// How one file differs from the trusted one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChangeKind {
    Added,
    Removed,
    Changed,
}

#[derive(Debug, Clone)]
pub struct FileChange {
    pub name: &'static str,
    pub kind: FileChangeKind,
    pub added: Vec<Item>,
    pub removed: Vec<Item>,
    /// The new file cannot be parsed.
    pub error: Option<ListingError>,
}

/// What changed since the project was trusted.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub files: Vec<FileChange>,
    /// The files its hooks and servers run that differ from the ones trusted.
    pub code: Vec<CodeChange>,
}

/// A file a hook or server runs, as trusted (`None`: it was not run then) and now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeChange {
    pub shown: String,
    pub before: Option<super::store::StoredCode>,
    pub after: super::store::StoredCode,
}

/// What a listing compares the project with.
pub(super) struct Context<'a> {
    /// The server names of `~/.ling/mcp.json`.
    pub user_servers: &'a [String],
    /// `~/.ling/settings.json`: a project setting is listed where it is looser than this.
    pub user: &'a RawSettings,
    /// Where a sandboxed command can write: what a hook's or server's files are looked for in.
    pub areas: &'a Areas,
}

/// One project file's text (`None`: absent), the input of a listing.
pub(super) struct FileText<'a> {
    pub name: &'static str,
    pub path: PathBuf,
    pub text: Option<&'a str>,
}

impl ProjectListing {
    /// Lists the files that exist.
    pub(super) fn build(files: &[FileText<'_>], context: &Context<'_>) -> Self {
        let files = files
            .iter()
            .filter_map(|file| {
                let text = file.text?;
                Some(FileListing {
                    name: file.name,
                    path: file.path.clone(),
                    items: items_of(file.name, &file.path, text, context),
                })
            })
            .collect();
        Self { files }
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every item listed, for finding one (tests, summaries).
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.files.iter().flat_map(|f| f.items.iter().flatten())
    }

    fn file(&self, name: &str) -> Option<&FileListing> {
        self.files.iter().find(|f| f.name == name)
    }
}

impl Changes {
    /// The difference from `old` (as trusted) to `new` (on disk), file by file.
    pub(super) fn between(old: &ProjectListing, new: &ProjectListing) -> Self {
        let mut files = Vec::new();
        for name in ALL_PROJECT_FILES.into_iter().chain([super::EXTENSIONS]) {
            let (before, after) = (old.file(name), new.file(name));
            let items = |f: Option<&FileListing>| -> Vec<Item> {
                f.and_then(|f| f.items.as_ref().ok())
                    .cloned()
                    .unwrap_or_default()
            };
            let (was, is) = (items(before), items(after));
            let kind = match (before, after) {
                (None, None) => continue,
                (None, Some(_)) => FileChangeKind::Added,
                (Some(_), None) => FileChangeKind::Removed,
                (Some(_), Some(_)) => FileChangeKind::Changed,
            };
            files.push(FileChange {
                name,
                kind,
                added: is.iter().filter(|i| !was.contains(i)).cloned().collect(),
                removed: was.iter().filter(|i| !is.contains(i)).cloned().collect(),
                error: after.and_then(|f| f.items.as_ref().err()).cloned(),
            });
        }
        Self {
            files,
            code: Vec::new(),
        }
    }
}

fn items_of(
    name: &str,
    path: &Path,
    text: &str,
    context: &Context<'_>,
) -> Result<Vec<Item>, ListingError> {
    let areas = context.areas;
    match name {
        super::EXTENSIONS => Ok(crate::config::extensions::describe_manifest(text)
            .map_err(ListingError::Invalid)?
            .into_iter()
            .map(|(kind, name, detail)| Item::Extension { kind, name, detail })
            .collect()),
        "hooks.json" => hook_items(HooksConfig::parse(path, text), areas),
        "mcp.json" | CLAUDE_MCP_FILE => server_items(path, text, context.user_servers, areas),
        name if CLAUDE_SETTINGS_FILES.contains(&name) => claude_settings_items(path, text, areas),
        _ => setting_items(path, text, context.user, areas),
    }
}

/// A Claude Code settings file brings its hooks and its allow and ask rules (its deny rules
/// only narrow); Ling reads nothing else of it.
fn claude_settings_items(
    path: &Path,
    text: &str,
    areas: &Areas,
) -> Result<Vec<Item>, ListingError> {
    let mut items = hook_items(HooksConfig::parse_claude(path, text), areas)?;
    let rules = ClaudeRules::parse(path, text).map_err(ListingError::invalid)?;
    items.extend(environment_item(&rules.env, areas));
    for rule in rules.allow {
        items.push(Item::Setting {
            key: "permissions.allow".into(),
            value: rule,
            effect: "would run without asking".into(),
        });
    }
    // Plugins bring their own hooks and MCP servers, and a status line runs: code.
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let plugins = value["enabledPlugins"].as_object().into_iter().flatten();
    let enabled = plugins.filter(|(_, on)| on.as_bool() == Some(true));
    let status = value["statusLine"]["command"]
        .as_str()
        .map(|c| ("statusLine", c.into()));
    for (key, value) in enabled
        .map(|(id, _)| ("enabledPlugins", id.clone()))
        .chain(status)
    {
        let effect = match key {
            "statusLine" => "would run after every turn",
            _ => "would load the plugin's commands, hooks and MCP servers",
        };
        items.push(Item::Setting {
            key: key.into(),
            value,
            effect: effect.into(),
        });
    }
    Ok(items)
}

fn hook_items(
    config: Result<HooksConfig, crate::config::ConfigError>,
    areas: &Areas,
) -> Result<Vec<Item>, ListingError> {
    let config = config.map_err(ListingError::invalid)?;
    let mut items = Vec::new();
    for group in config.groups {
        for handler in group.handlers {
            let mut runs = None;
            let handler = match handler.kind {
                HandlerKind::Command { command } => {
                    runs = Some(code::hook(&command, areas));
                    HookTarget::Command(command)
                }
                // Only the program gives these, never a file to trust.
                HandlerKind::Callback { .. } => continue,
                HandlerKind::Http { url, headers } => {
                    let mut variables = var_names(&url);
                    for (_, value) in &headers {
                        add_new(&mut variables, var_names(value));
                    }
                    HookTarget::Http { url, variables }
                }
            };
            items.push(Item::Hook {
                event: group.event.to_string(),
                matcher: group.matcher.clone(),
                handler,
                runs,
            });
        }
    }
    Ok(items)
}

fn server_items(
    path: &Path,
    text: &str,
    user_servers: &[String],
    areas: &Areas,
) -> Result<Vec<Item>, ListingError> {
    let raw = parse_mcp_text(path, text, &mut Vec::new()).map_err(ListingError::invalid)?;
    let mut items = Vec::new();
    for (name, server) in raw.mcp_servers.0 {
        let transport = transport_kind(&name, &server).map_err(|e| ListingError::Server {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let runs = (transport == "stdio")
            .then(|| server_runs(&server, areas))
            .flatten();
        let target = match (&server.command, &server.url) {
            (Some(command), _) if transport == "stdio" => ServerTarget::Command {
                command: command.clone(),
                args: server.args.clone().unwrap_or_default(),
            },
            (_, Some(url)) => ServerTarget::Url(url.clone()),
            _ => ServerTarget::Url(String::new()),
        };
        items.push(Item::Server {
            replaces_user_server: user_servers.contains(&name),
            variables: server_variables(&server),
            transport: transport.to_string(),
            disabled: server.disabled.unwrap_or(false),
            name,
            target,
            runs,
        });
    }
    Ok(items)
}

/// A settings file's `env`, when it sets anything.
fn environment_item(
    env: &std::collections::BTreeMap<String, String>,
    areas: &Areas,
) -> Option<Item> {
    if env.is_empty() {
        return None;
    }
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    Some(Item::Environment {
        runs: code::environment(&env, areas),
    })
}

/// What a stdio entry runs, as `config::mcp` would start it: a relative `command` with a `/`
/// and the `cwd` are the project root's.
pub fn server_runs(server: &RawServer, areas: &Areas) -> Option<Runs> {
    let command = server.command.as_deref()?;
    let cwd = match &server.cwd {
        Some(cwd) => areas.root().join(code::expanded(cwd, areas.root())),
        None => areas.root().to_path_buf(),
    };
    let env: Vec<(String, String)> = server
        .env
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(code::server(
        command,
        server.args.as_deref().unwrap_or_default(),
        &env,
        &cwd,
        areas,
    ))
}

fn server_variables(server: &RawServer) -> Vec<String> {
    let mut texts: Vec<&str> = Vec::new();
    texts.extend(server.command.as_deref());
    texts.extend(server.args.iter().flatten().map(String::as_str));
    texts.extend(
        server
            .env
            .iter()
            .flat_map(|e| e.values())
            .map(String::as_str),
    );
    texts.extend(server.cwd.as_deref());
    texts.extend(server.url.as_deref());
    texts.extend(
        server
            .headers
            .iter()
            .flat_map(|h| h.values())
            .map(String::as_str),
    );
    let mut names = Vec::new();
    for text in texts {
        add_new(&mut names, var_names(text));
    }
    names
}

fn add_new(names: &mut Vec<String>, more: Vec<String>) {
    for name in more {
        if !names.contains(&name) {
            names.push(name);
        }
    }
}

/// Settings that neither widen what Ling may do nor change where requests go.
const HARMLESS_SETTINGS: [&str; 18] = [
    "$schema",
    "model",
    "maxRetryDelayMs",
    "maxStreamLineBytes",
    "maxTurns",
    "toolOutputLimit",
    "connectTimeoutMs",
    "firstByteTimeoutMs",
    "idleTimeoutMs",
    "maxRetries",
    "disableAllHooks",
    "contextWindow",
    "autoCompact",
    "autoCompactPercent",
    "toolSearch",
    "prices",
    // Only narrows.
    "sandbox.hooks:true",
    "permissions.deny",
];

/// The project's settings that are looser than the user's (their settings, or the default where
/// they set nothing), each as an item: the one rule for every key (docs/trust.md). A trusted
/// project's settings apply; these are what the question lists as widenings.
fn setting_items(
    path: &Path,
    text: &str,
    user: &RawSettings,
    areas: &Areas,
) -> Result<Vec<Item>, ListingError> {
    let shown = |e: serde_json::Error| ListingError::settings(path, e);
    let value: Value = serde_json::from_str(text).map_err(shown)?;
    let raw: RawSettings = serde_json::from_str(text).map_err(shown)?;
    let Value::Object(fields) = value else {
        return Err(ListingError::settings(path, "expected a JSON object"));
    };
    let mut items: Vec<Item> = raw
        .env
        .as_ref()
        .and_then(|env| environment_item(env, areas))
        .into_iter()
        .collect();
    let mut item = |key: &str, value: String, effect: String| {
        items.push(Item::Setting {
            key: key.to_string(),
            value,
            effect,
        });
    };
    let on = |v: Option<bool>| v.unwrap_or(false);
    for (key, value) in &fields {
        match (key.as_str(), value) {
            (key, _) if HARMLESS_SETTINGS.contains(&key) || raw.other.contains_key(key) => {}
            // Listed above, as what every child gets.
            ("env", Value::Object(_)) => {}
            ("baseUrl", Value::String(url)) if user.base_url.as_ref() != Some(url) => {
                let origin = origin_of(url);
                item(
                    key,
                    origin.clone(),
                    format!("model requests, with your API key, would go to {origin}"),
                );
            }
            ("apiKeyEnv", Value::String(name)) if user.api_key_env.as_ref() != Some(name) => item(
                key,
                name.clone(),
                format!("the value of ${name} would be sent to the model server as the API key"),
            ),
            ("baseUrl" | "apiKeyEnv", Value::String(_)) => {}
            ("permissions", Value::Object(_)) => permission_items(&raw, user, &mut item),
            ("sandbox", Value::Object(_)) => {
                let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                let widened = raw
                    .sandbox
                    .widenings(&user.sandbox, areas.root(), home.as_deref());
                for (key, value, effect) in widened {
                    item(&key, value, effect);
                }
            }
            ("shareApiKeyWithTools", _)
                if on(raw.share_api_key_with_tools) && !on(user.share_api_key_with_tools) =>
            {
                item(
                    key,
                    compact(value),
                    "commands, hooks and MCP servers would see your API key variable".into(),
                )
            }
            ("allowSampling", _) if on(raw.allow_sampling) && !on(user.allow_sampling) => item(
                key,
                compact(value),
                "MCP servers could use your model in -p runs without asking".into(),
            ),
            ("elicitation", Value::String(_))
                if raw.elicitation == Some(crate::config::ElicitationPolicy::AcceptDefaults)
                    && user.elicitation != raw.elicitation =>
            {
                item(
                    key,
                    compact(value),
                    "MCP servers' questions would be accepted with their defaults in -p runs"
                        .into(),
                )
            }
            ("shareApiKeyWithTools" | "allowSampling", Value::Bool(_))
            | ("elicitation", Value::String(_)) => {}
            ("claudeCompat", _) => {
                let ours = crate::config::claude::ClaudeCompat::resolve(&[raw.claude_compat]);
                let theirs = crate::config::claude::ClaudeCompat::resolve(&[user.claude_compat]);
                if ours.user_hooks && !theirs.user_hooks {
                    item(
                        key,
                        compact(value),
                        "the hooks of your ~/.claude/settings.json would run".into(),
                    );
                }
            }
            _ => item(key, compact(value), UNEXPLAINED.into()),
        }
    }
    Ok(items)
}

const UNEXPLAINED: &str = "a setting this list does not explain: read it before trusting";

/// How strict a permission mode is: lower asks more (or refuses instead of asking).
fn mode_rank(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Plan => 0,
        PermissionMode::Default | PermissionMode::DontAsk => 1,
        PermissionMode::AcceptEdits => 2,
        PermissionMode::Bypass => 3,
    }
}

fn permission_items(
    raw: &RawSettings,
    user: &RawSettings,
    item: &mut impl FnMut(&str, String, String),
) {
    let permissions = &raw.permissions;
    if let Some(ours) = permissions.default_mode {
        let theirs = user
            .permissions
            .default_mode
            .unwrap_or(PermissionMode::Default);
        let mode = ours.as_str().to_string();
        match ours {
            _ if mode_rank(ours) <= mode_rank(theirs) => {}
            ours => item(
                "permissions.defaultMode",
                mode,
                match ours {
                    PermissionMode::Bypass => {
                        "every tool would run without asking, and file tools outside the project"
                            .into()
                    }
                    PermissionMode::AcceptEdits => "file edits would be made without asking".into(),
                    _ => format!(
                        "Ling would start in {} mode instead of your {}",
                        ours.as_str(),
                        theirs.as_str()
                    ),
                },
            ),
        }
    }
    for rule in &permissions.allow {
        if !user.permissions.allow.contains(rule) {
            item(
                "permissions.allow",
                rule.clone(),
                "would run without asking".into(),
            );
        }
    }
    for (key, value) in &permissions.other {
        item(
            &format!("permissions.{key}"),
            compact(value),
            UNEXPLAINED.into(),
        );
    }
}

/// `scheme://host[:port]` of a URL, without any userinfo, path or query.
fn origin_of(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) if parsed.has_host() => parsed.origin().ascii_serialization(),
        _ => format!("{} (not a valid URL)", compact(&Value::String(url.into()))),
    }
}

/// A JSON value on one line, cut at 200 characters.
fn compact(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
