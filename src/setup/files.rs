//! The configuration files of a run, read: the settings (with `--add-dir` among the sandbox's
//! writable roots), the MCP servers (with the project's on/off switches, and their sources to
//! watch during the session), the hooks and the custom commands, skills and agents. The
//! project's own files count only as far as its trust allows (`project.layer()`).

use crate::agent::mcp::reload::McpSources;
use crate::config::extensions::Extensions;
use crate::config::hooks::HooksConfig;
use crate::config::mcp::ServerConfig;
use crate::config::{ConfigError, Paths, Settings};
use crate::trust::ProjectConfig;

use super::RunOptions;

/// What the run's configuration files say.
pub(super) struct ConfigFiles {
    pub settings: Settings,
    pub servers: Vec<ServerConfig>,
    /// Problems of the MCP config files, shown with the others once the hooks are read.
    pub mcp_warnings: Vec<String>,
    /// The MCP config files, to see them change during the session.
    pub mcp_sources: McpSources,
    pub hooks: HooksConfig,
    pub extensions: Extensions,
}

impl ConfigFiles {
    pub fn load(
        paths: &Paths,
        project: &ProjectConfig,
        options: &RunOptions,
    ) -> Result<Self, ConfigError> {
        let mut settings = Settings::load(paths, project.layer(), &options.overrides)?;
        // `--add-dir`: the sandbox may write them too, as it may its writable roots.
        for dir in &paths.add_dirs {
            if !settings.sandbox.writable_roots.contains(dir) {
                settings.sandbox.writable_roots.push(dir.clone());
            }
        }
        let (mut servers, mcp_warnings) = crate::config::mcp::load_servers(
            paths,
            project.layer(),
            &options.mcp_config,
            options.strict_mcp_config,
        )?;
        crate::config::mcp::apply_switches(&mut servers, &settings.project_state);
        let mcp_sources = McpSources::new(paths, &options.mcp_config, options.strict_mcp_config);
        let hooks = HooksConfig::load_with(
            paths,
            project.layer(),
            settings.hook_layers(),
            settings.flag_settings.as_ref(),
        )?;
        let extensions = Extensions::load(paths, project.layer());
        Ok(Self {
            settings,
            servers,
            mcp_warnings,
            mcp_sources,
            hooks,
            extensions,
        })
    }
}
