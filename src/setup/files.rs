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
    /// The Claude Code plugins loaded (`--plugin-dir`, `enabledPlugins`).
    pub plugins: crate::config::plugins::Plugins,
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
        let sources = crate::config::plugins::PluginSources::of(paths, project.layer());
        let plugins = crate::config::plugins::Plugins::find(&options.plugin_dirs, &sources)?;
        // A plugin's MCP servers are one more MCP config each, its servers renamed.
        let mut mcp_config = options.mcp_config.clone();
        for plugin in &plugins.plugins {
            mcp_config.extend(plugin.mcp_config()?.map(std::path::PathBuf::from));
        }
        let (mut servers, mcp_warnings) = crate::config::mcp::load_servers(
            paths,
            project.layer(),
            &mcp_config,
            options.strict_mcp_config,
        )?;
        crate::config::mcp::apply_switches(&mut servers, &settings.project_state);
        let mcp_sources = McpSources::new(paths, &options.mcp_config, options.strict_mcp_config);
        let mut hooks = HooksConfig::load_with(
            paths,
            project.layer(),
            settings.hook_layers(),
            settings.flag_settings.as_ref(),
        )?;
        let mut extensions = Extensions::load(paths, project.layer());
        for plugin in &plugins.plugins {
            if settings.hook_layers().user
                && let Some((path, text)) = plugin.hooks()
            {
                hooks.merge(HooksConfig::parse_claude(&path, &text)?);
            }
            extensions.add_plugin(&plugin.name, &plugin.root);
        }
        extensions.warnings.extend(plugins.warnings.iter().cloned());
        Ok(Self {
            settings,
            servers,
            mcp_warnings,
            mcp_sources,
            hooks,
            extensions,
            plugins,
        })
    }
}
