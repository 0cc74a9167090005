//! `ling plugin list [--plugin-dir DIR] [--json]`: the Claude Code plugins a run here would
//! load (`--plugin-dir` folders and `enabledPlugins` found on disk), each with its origin, its
//! folder and what it brings, and the enabled plugins that are not loaded, with why.

use std::path::PathBuf;

use super::{CliError, Exit};
use crate::config::Paths;
use crate::config::plugins::{PluginSources, Plugins};
use crate::setup::project_root;
use crate::trust::ProjectConfig;
use crate::ui::output::{stdout, stdout_json};

pub fn list(cwd: Option<PathBuf>, plugin_dirs: &[PathBuf], json: bool) -> Result<Exit, CliError> {
    let paths = Paths::new(project_root(cwd.as_ref())?);
    let project = ProjectConfig::read(&paths)?;
    let sources = PluginSources::of(&paths, project.layer());
    let found = Plugins::find(plugin_dirs, &sources)?;
    if json {
        let plugins: Vec<serde_json::Value> = found
            .plugins
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "origin": p.origin,
                    "path": p.root,
                    "parts": p.parts(),
                })
            })
            .collect();
        let value = serde_json::json!({"plugins": plugins, "not_loaded": found.warnings});
        stdout_json(&format!("{value}\n"));
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    if found.plugins.is_empty() {
        text.push_str("no plugins (--plugin-dir DIR, or enabledPlugins of a plugin on disk)\n");
    }
    for p in &found.plugins {
        text.push_str(&format!(
            "{}  ({})  {}\n  {}\n",
            p.name,
            p.origin,
            p.root.display(),
            p.parts()
        ));
    }
    for warning in &found.warnings {
        text.push_str(&format!("{warning}\n"));
    }
    stdout(text);
    Ok(Exit::Success)
}
