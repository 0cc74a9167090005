//! Claude Code plugins already on disk: a folder with `.claude-plugin/plugin.json` (its
//! `name`) and any of `commands/`, `agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`.
//! They come from `--plugin-dir DIR`, and from `enabledPlugins` (`"NAME@MARKETPLACE": true`) of
//! Ling's settings, `~/.claude/settings.json` (`claudeCompat.userFiles`) and a trusted
//! project's `.claude/settings.json`, found in Claude Code's installed plugins
//! (`~/.claude/plugins/installed_plugins.json`) or in a marketplace that is a local folder
//! (`extraKnownMarketplaces` with a `directory` source, or `known_marketplaces.json`). Ling
//! installs nothing: a plugin or marketplace that would be fetched (git, GitHub, a URL) is a
//! warning saying what would be fetched. A plugin's parts are named as Claude Code names them:
//! `/NAME:command`, agent and skill `NAME:x`, MCP server `plugin_NAME_server` (tools
//! `mcp__plugin_NAME_server__tool`); `${CLAUDE_PLUGIN_ROOT}` in its hooks and MCP servers is its
//! folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ConfigError;

/// One plugin found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub name: String,
    pub root: PathBuf,
    /// `--plugin-dir`, or `NAME@MARKETPLACE` of `enabledPlugins`.
    pub origin: String,
}

/// The plugins of a run, and what could not be found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plugins {
    pub plugins: Vec<Plugin>,
    pub warnings: Vec<String>,
}

impl Plugin {
    /// The plugin in `root`: its manifest's `name`, else the folder's name.
    pub fn read(root: &Path, origin: &str) -> Result<Self, ConfigError> {
        let root = std::fs::canonicalize(root).map_err(|source| ConfigError::Read {
            path: root.to_path_buf(),
            source,
        })?;
        let manifest = root.join(".claude-plugin/plugin.json");
        let name = match std::fs::read_to_string(&manifest) {
            Ok(text) => {
                let value: Value = serde_json::from_str(&text)
                    .map_err(|e| super::json::syntax_error(&manifest, &e))?;
                value["name"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ConfigError::Invalid {
                        path: manifest.clone(),
                        message: "a plugin manifest needs a `name`".into(),
                    })?
            }
            Err(_) => root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(ConfigError::Invalid {
                path: manifest,
                message: format!("`{name}` is not a plugin name (letters, digits, - _ .)"),
            });
        }
        Ok(Self {
            name,
            root,
            origin: origin.to_string(),
        })
    }

    /// `text` with `${CLAUDE_PLUGIN_ROOT}` (and `$CLAUDE_PLUGIN_ROOT`) replaced by the folder,
    /// as it goes inside a JSON string.
    fn expand(&self, text: &str) -> String {
        let root = serde_json::to_string(&self.root.to_string_lossy()).unwrap_or_default();
        let root = root.trim_matches('"');
        text.replace("${CLAUDE_PLUGIN_ROOT}", root)
            .replace("$CLAUDE_PLUGIN_ROOT", root)
    }

    /// Its `hooks/hooks.json` (Claude Code's format), expanded.
    pub fn hooks(&self) -> Option<(PathBuf, String)> {
        let path = self.root.join("hooks/hooks.json");
        let text = std::fs::read_to_string(&path).ok()?;
        Some((path, self.expand(&text)))
    }

    /// Its `.mcp.json` as an MCP config (JSON text), each server renamed
    /// `plugin_NAME_server`.
    pub fn mcp_config(&self) -> Result<Option<String>, ConfigError> {
        let path = self.root.join(".mcp.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let value: Value = serde_json::from_str(&self.expand(&text))
            .map_err(|e| super::json::syntax_error(&path, &e))?;
        let servers = value.get("mcpServers").unwrap_or(&value);
        let Some(servers) = servers.as_object() else {
            return Ok(None);
        };
        let renamed: serde_json::Map<String, Value> = servers
            .iter()
            .map(|(name, server)| (format!("plugin_{}_{name}", self.name), server.clone()))
            .collect();
        Ok(Some(serde_json::json!({"mcpServers": renamed}).to_string()))
    }

    /// What it brings, for `ling plugin list`: `commands 2, agents 1, hooks, MCP servers 1`.
    pub fn parts(&self) -> String {
        let count = |dir: &str, skill: bool| {
            std::fs::read_dir(self.root.join(dir)).map_or(0, |d| {
                d.flatten()
                    .filter(|e| skill || e.path().extension().is_some_and(|x| x == "md"))
                    .count()
            })
        };
        let mut parts = Vec::new();
        for (label, dir, skill) in [
            ("commands", "commands", false),
            ("agents", "agents", false),
            ("skills", "skills", true),
        ] {
            let n = count(dir, skill);
            if n > 0 {
                parts.push(format!("{label} {n}"));
            }
        }
        if self.root.join("hooks/hooks.json").is_file() {
            parts.push("hooks".into());
        }
        if let Ok(Some(text)) = self.mcp_config() {
            let n = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["mcpServers"].as_object().map(serde_json::Map::len))
                .unwrap_or(0);
            parts.push(format!("MCP servers {n}"));
        }
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The settings texts that may enable plugins and name marketplaces, most important first.
pub struct PluginSources {
    pub settings: Vec<String>,
    /// Claude Code's plugins folder (`~/.claude/plugins`), when read.
    pub claude_plugins: Option<PathBuf>,
}

impl PluginSources {
    /// A trusted project's settings (Ling's, then Claude Code's local and shared), the user's
    /// Ling settings, and with `claudeCompat.userFiles` `~/.claude/settings.json` and Claude
    /// Code's plugins folder.
    pub fn of(paths: &super::Paths, project: &super::ProjectFiles) -> Self {
        let mut settings: Vec<String> = Vec::new();
        let project_files = [
            super::SETTINGS_FILE,
            super::claude::CLAUDE_SETTINGS_FILES[1],
            super::claude::CLAUDE_SETTINGS_FILES[0],
        ];
        settings.extend(
            project_files
                .iter()
                .filter_map(|name| project.trusted_text(name))
                .map(|(_, text)| text.to_string()),
        );
        let user = paths.user_config_file(super::SETTINGS_FILE);
        settings.extend(user.and_then(|f| std::fs::read_to_string(f).ok()));
        let claude = project.claude().user_files && paths.user_config;
        let claude_file = super::claude::user_settings_file().filter(|_| claude);
        settings.extend(claude_file.and_then(|f| std::fs::read_to_string(f).ok()));
        let claude_plugins = super::claude::user_dir()
            .filter(|_| claude)
            .map(|d| d.join("plugins"));
        Self {
            settings,
            claude_plugins,
        }
    }
}

impl Plugins {
    /// `--plugin-dir` folders, then the plugins enabled in `sources`.
    pub fn find(plugin_dirs: &[PathBuf], sources: &PluginSources) -> Result<Self, ConfigError> {
        let mut out = Self::default();
        for dir in plugin_dirs {
            out.add(Plugin::read(dir, "--plugin-dir")?);
        }
        let values: Vec<Value> = sources
            .settings
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect();
        let mut enabled: Vec<String> = Vec::new();
        let mut disabled: Vec<String> = Vec::new();
        for value in &values {
            for (id, on) in value["enabledPlugins"].as_object().into_iter().flatten() {
                let seen = enabled.contains(id) || disabled.contains(id);
                match on.as_bool() {
                    Some(true) if !seen => enabled.push(id.clone()),
                    _ if !seen => disabled.push(id.clone()),
                    _ => {}
                }
            }
        }
        for id in enabled {
            match locate(&id, &values, sources.claude_plugins.as_deref()) {
                Ok(root) => out.add(Plugin::read(&root, &id)?),
                Err(why) => out
                    .warnings
                    .push(format!("plugin {id} is not loaded: {why}")),
            }
        }
        Ok(out)
    }

    fn add(&mut self, plugin: Plugin) {
        if self.plugins.iter().any(|p| p.name == plugin.name) {
            self.warnings.push(format!(
                "plugin {} of {} is not loaded: one of the same name comes first",
                plugin.name,
                plugin.root.display()
            ));
        } else {
            self.plugins.push(plugin);
        }
    }
}

/// Why an enabled plugin is not loaded: its folder is not on disk, and Ling fetches nothing.
#[derive(Debug, thiserror::Error)]
enum NotOnDisk {
    #[error("{} has no .claude-plugin/marketplace.json", dir.display())]
    NoCatalog { dir: PathBuf },
    #[error("marketplace {market} lists no plugin {name}")]
    NotListed { market: String, name: String },
    #[error(
        "it would be fetched from {0} (Ling installs no plugins; install it with Claude Code or \
         give its folder with --plugin-dir)"
    )]
    PluginFetched(String),
    #[error("no marketplace {0} is known (extraKnownMarketplaces)")]
    UnknownMarketplace(String),
    #[error("marketplace {0}'s folder does not exist")]
    NoMarketplaceFolder(String),
    #[error("marketplace {market} would be fetched from {from} (Ling fetches nothing)")]
    MarketplaceFetched { market: String, from: String },
}

/// The folder of `NAME@MARKETPLACE`, or why it is not on disk.
fn locate(
    id: &str,
    settings: &[Value],
    claude_plugins: Option<&Path>,
) -> Result<PathBuf, NotOnDisk> {
    let (name, market) = id.split_once('@').unwrap_or((id, ""));
    if let Some(dir) = claude_plugins {
        let installed = read_json(&dir.join("installed_plugins.json"));
        let entry = installed
            .as_ref()
            .and_then(|v| v.get("plugins").unwrap_or(v).get(id))
            .map(|e| e.as_array().and_then(|a| a.first()).unwrap_or(e).clone());
        if let Some(path) = entry
            .as_ref()
            .and_then(|e| e["installPath"].as_str())
            .map(PathBuf::from)
            && path.is_dir()
        {
            return Ok(path);
        }
    }
    let market_dir = marketplace_dir(market, settings, claude_plugins)?;
    let catalog =
        read_json(&market_dir.join(".claude-plugin/marketplace.json")).ok_or_else(|| {
            NotOnDisk::NoCatalog {
                dir: market_dir.clone(),
            }
        })?;
    let entry = catalog["plugins"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .ok_or_else(|| NotOnDisk::NotListed {
            market: market.to_string(),
            name: name.to_string(),
        })?;
    match &entry["source"] {
        Value::String(rel) => Ok(market_dir.join(rel)),
        other => Err(NotOnDisk::PluginFetched(fetched(other))),
    }
}

/// A local marketplace's folder, or why there is none.
fn marketplace_dir(
    market: &str,
    settings: &[Value],
    claude_plugins: Option<&Path>,
) -> Result<PathBuf, NotOnDisk> {
    let declared = settings
        .iter()
        .find_map(|v| v["extraKnownMarketplaces"].get(market).cloned());
    let known = claude_plugins
        .and_then(|d| read_json(&d.join("known_marketplaces.json")))
        .and_then(|v| v.get(market).cloned());
    if let Some(location) = known
        .as_ref()
        .and_then(|k| k["installLocation"].as_str())
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
    {
        return Ok(location);
    }
    let source = declared
        .or(known)
        .map(|m| m["source"].clone())
        .ok_or_else(|| NotOnDisk::UnknownMarketplace(market.to_string()))?;
    match source["source"].as_str() {
        Some("directory") => source["path"]
            .as_str()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .ok_or_else(|| NotOnDisk::NoMarketplaceFolder(market.to_string())),
        _ => Err(NotOnDisk::MarketplaceFetched {
            market: market.to_string(),
            from: fetched(&source),
        }),
    }
}

/// What a git, GitHub or URL source would fetch.
fn fetched(source: &Value) -> String {
    match (source["source"].as_str(), &source["repo"], &source["url"]) {
        (Some("github"), Value::String(repo), _) => format!("https://github.com/{repo}"),
        (_, _, Value::String(url)) => url.clone(),
        _ => source.to_string(),
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}
