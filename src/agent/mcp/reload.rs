//! MCP servers changed while Ling runs: a config file edited during the session
//! ([`McpSources`] sees it at the next turn and [`reload`] applies it, the changed servers
//! restarting and the tool list the model sees following), and one server switched off or on
//! for this project ([`switch_server`], kept in the user's settings). Whether a changed project
//! file applies is the trust decision's: the caller re-reads the project's config (and asks
//! about it again where somebody can be asked) before it reloads.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::claude::CLAUDE_MCP_FILE;
use crate::config::mcp::ServerConfig;
use crate::config::mcp::{MCP_FILE, apply_switches, load_servers};
use crate::config::{ConfigError, Paths, ProjectFiles, RawProjectState, SETTINGS_FILE};
use crate::mcp::{Applied, McpError, McpManager};

/// The MCP config files of a run and their text when last looked at.
#[derive(Debug, Clone)]
pub struct McpSources {
    paths: Paths,
    extra: Vec<PathBuf>,
    strict: bool,
    seen: Vec<(PathBuf, Option<String>)>,
}

impl McpSources {
    /// `extra` and `strict`: `--mcp-config` and `--strict-mcp-config`.
    pub fn new(paths: &Paths, extra: &[PathBuf], strict: bool) -> Self {
        let mut sources = Self {
            paths: paths.clone(),
            extra: extra.to_vec(),
            strict,
            seen: Vec::new(),
        };
        sources.seen = sources.read();
        sources
    }

    fn files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if !self.strict {
            files.extend(self.paths.user_config_file(MCP_FILE));
            files.push(self.paths.project_file(MCP_FILE));
            files.push(self.paths.project_root.join(CLAUDE_MCP_FILE));
        }
        // Inline JSON does not change; files do.
        files.extend(
            self.extra
                .iter()
                .filter(|e| !e.to_string_lossy().trim_start().starts_with('{'))
                .map(|e| self.paths.project_root.join(e)),
        );
        files
    }

    fn read(&self) -> Vec<(PathBuf, Option<String>)> {
        self.files()
            .into_iter()
            .map(|path| {
                let text = crate::config::read_config_text(&path).ok().flatten();
                (path, text)
            })
            .collect()
    }

    /// Whether a file changed since the last call (the first call compares with the start).
    pub fn changed(&mut self) -> bool {
        let now = self.read();
        let changed = now != self.seen;
        self.seen = now;
        changed
    }

    pub fn paths(&self) -> &Paths {
        &self.paths
    }
}

/// Loads the servers `project` (as the trust decision has it now) and the user's files
/// configure, with this project's switches, gives them to `guard` (which attaches the check of
/// the files each runs, as at the start of the run: `trust::guard`), makes `manager` run them,
/// and waits for the new ones to connect or fail (each within its startup timeout), so the next
/// request offers their tools.
pub async fn reload(
    sources: &McpSources,
    project: &ProjectFiles,
    manager: &Arc<McpManager>,
    guard: impl FnOnce(&mut [ServerConfig]),
) -> Result<(Applied, Vec<String>), ConfigError> {
    let (mut servers, warnings) =
        load_servers(&sources.paths, project, &sources.extra, sources.strict)?;
    apply_switches(&mut servers, &project_state(&sources.paths));
    guard(&mut servers);
    let applied = manager.apply(servers).await;
    manager.wait_ready().await;
    Ok((applied, warnings))
}

/// Why a server could not be switched.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    #[error(transparent)]
    Server(#[from] McpError),
    #[error("the choice was not kept: {0}")]
    Config(#[from] ConfigError),
}

/// `/mcp enable NAME`, `/mcp disable NAME`: the server starts (waiting until it is connected
/// or failed) or stops now, and the choice is kept for this project in the user's settings
/// (`projects.<root>`), so the next run does the same.
pub async fn switch_server(
    manager: &Arc<McpManager>,
    paths: &Paths,
    name: &str,
    enabled: bool,
) -> Result<(), SwitchError> {
    let started = manager.set_enabled(name, enabled).await;
    if !matches!(started, Err(McpError::UnknownServer(_))) {
        crate::config::settings_edit::set_mcp_server_enabled(
            &paths.user_file(SETTINGS_FILE),
            &paths.project_root,
            name,
            enabled,
        )?;
    }
    Ok(started?)
}

/// This project's entry of the user's settings `projects`.
fn project_state(paths: &Paths) -> RawProjectState {
    let Some(file) = paths.user_config_file(SETTINGS_FILE) else {
        return RawProjectState::default();
    };
    let raw: Option<crate::config::RawSettings> =
        crate::config::read_json_file(&file).ok().flatten();
    raw.and_then(|s| s.projects)
        .and_then(|p| {
            p.get(paths.project_root.to_string_lossy().as_ref())
                .cloned()
        })
        .unwrap_or_default()
}
