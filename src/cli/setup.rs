//! Builds what every agent run needs from the flags and the configuration files: the project
//! root, settings, permissions, the model client and the agent itself.

use std::path::PathBuf;

use super::{CliError, RunArgs};
use crate::agent::{Agent, AgentOptions, PromptOptions, Session};
use crate::config::{Paths, Settings, SettingsOverrides};
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmConfig};
use crate::permissions::Permissions;
use crate::tools::ToolRegistry;
use crate::ui::output::stderr_line;

pub struct Setup {
    pub paths: Paths,
    pub settings: Settings,
    pub agent: Agent,
}

/// The project root: `-C DIR` or the current directory, made absolute and canonical.
pub fn project_root(cwd: Option<&PathBuf>) -> Result<PathBuf, CliError> {
    let dir = match cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| CliError::Usage(format!("cannot read the current directory: {e}")))?,
    };
    std::fs::canonicalize(&dir).map_err(|e| {
        CliError::Usage(format!(
            "project root {} is not usable: {e}; pass an existing directory to -C",
            dir.display()
        ))
    })
}

impl Setup {
    pub async fn prepare(args: &RunArgs, interactive: bool) -> Result<Self, CliError> {
        let _ = interactive;
        let paths = Paths::new(project_root(args.cwd.as_ref())?);
        let overrides = SettingsOverrides {
            model: args.model.clone(),
            base_url: args.base_url.clone(),
            permission_mode: args.permission_mode.map(Into::into),
            allowed_tools: args.allowed_tools.clone(),
            disallowed_tools: args.disallowed_tools.clone(),
            max_turns: args.max_turns,
            no_hooks: args.no_hooks,
            allow_sampling: args.allow_sampling,
        };
        let settings = Settings::load(&paths, &overrides)?;
        let (hooks, hook_warnings) = HookEngine::load(&paths, settings.hooks_disabled)?;
        for warning in settings.warnings.iter().chain(&hook_warnings) {
            stderr_line(&format!("warning: {warning}"));
        }
        let permissions = Permissions::new(
            settings.permission_mode,
            &settings.allow_rules,
            &settings.deny_rules,
        )
        .map_err(|e| CliError::Usage(e.to_string()))?;
        let llm = LlmClient::new(LlmConfig::from_settings(&settings))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        llm.preflight()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        if args.continue_session || args.resume.is_some() {
            return Err(CliError::Usage(
                "--continue and --resume are not supported yet: sessions are recorded in LING_HOME/sessions but cannot be resumed".into(),
            ));
        }
        let options = AgentOptions {
            root: paths.project_root.clone(),
            max_turns: settings.max_turns,
            tool_output_limit: settings.tool_output_limit,
            prompt: PromptOptions {
                replace: args.system_prompt.clone(),
                append: args.append_system_prompt.clone(),
            },
        };
        let session = Session::new(&paths.sessions_dir());
        let agent = Agent::new(llm, ToolRegistry::builtins(), permissions, options, session)
            .with_hooks(hooks);
        Ok(Self {
            paths,
            settings,
            agent,
        })
    }
}
