//! Builds what every agent run needs from the flags and the configuration files (the project's
//! own only as far as its trust allows): the project root, settings, permissions, the model client, the debug log, the session (new, or found
//! again with `--continue` / `--resume ID`) and the agent itself.

use std::path::PathBuf;
use std::sync::Arc;

use super::{CliError, RunArgs};
use crate::agent::{Agent, AgentOptions, HostPolicy, McpHost, PromptOptions, Resumed, Session};
use crate::config::{Paths, ProjectConfig, Settings, SettingsOverrides, TrustStatus};
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmConfig};
use crate::mcp::{ManagerOptions, McpManager};
use crate::permissions::Permissions;
use crate::process::{ChildEnv, Trampoline};
use crate::tools::ToolRegistry;
use crate::ui::output::stderr_line;

/// Model requests a `-p` run may make when neither `--max-turns` nor settings `maxTurns` says:
/// a model stuck calling tools ends with `error_max_turns` instead of running up a bill forever.
/// The REPL has no default limit (the user is watching and can press Ctrl-C).
pub const DEFAULT_PRINT_MAX_TURNS: u32 = 100;

pub struct Setup {
    pub paths: Paths,
    pub settings: Settings,
    pub agent: Agent,
    /// The MCP servers, started in the background; shut down with [`Setup::shutdown`].
    pub mcp: Arc<McpManager>,
    /// Answers the servers' sampling and elicitation requests; the REPL installs itself as the
    /// one who is asked.
    pub mcp_host: Arc<McpHost>,
    /// True when the agent continues a recorded session.
    pub resumed: bool,
    /// Whether the project's own config applies (`project_trust` of the json outputs).
    pub project_trust: TrustStatus,
    /// For an untrusted project: the one line saying what was skipped and how to trust it.
    pub trust_notice: Option<String>,
    /// Problems that did not stop the run (a bad `LING_LOG`, skipped transcript lines), one
    /// sentence each, for the UI to show.
    pub warnings: Vec<String>,
}

impl Setup {
    /// Ends everything the run started: the MCP servers (bounded).
    pub async fn shutdown(&self) {
        self.mcp.shutdown().await;
    }
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
    /// `interactive`: the REPL, where the user can be asked (MCP sampling is then declared).
    /// `project`: the project's config and its trust, decided (and, in the REPL, asked) before.
    pub async fn prepare(
        args: &RunArgs,
        paths: Paths,
        project: ProjectConfig,
        interactive: bool,
    ) -> Result<Self, CliError> {
        let mut warnings = Vec::new();
        if let Err(e) = crate::log::init(&paths.logs_dir()) {
            warnings.push(e.to_string());
        }
        let overrides = SettingsOverrides {
            model: args.model.clone(),
            base_url: args.base_url.clone(),
            permission_mode: args.permission_mode.map(Into::into),
            allowed_tools: super::args::split_rules(&args.allowed_tools),
            disallowed_tools: super::args::split_rules(&args.disallowed_tools),
            max_turns: args.max_turns,
            no_hooks: args.no_hooks,
            allow_sampling: args.allow_sampling,
        };
        let settings = Settings::load(&paths, &project, &overrides)?;
        let (servers, mcp_warnings) = crate::config::mcp::load_servers(
            &paths,
            &project,
            &args.mcp_config,
            args.strict_mcp_config,
        )?;
        let child_env = children(&settings);
        let (hooks, hook_warnings) = HookEngine::load(&paths, &project, settings.hook_layers())?;
        let hooks = hooks.with_child_env(child_env.clone());
        let trust_notice = project.skipped_notice(&paths);
        let all_warnings = settings.warnings.iter().chain(&hook_warnings);
        for warning in all_warnings.chain(&mcp_warnings) {
            stderr_line(format!("warning: {warning}"));
        }
        let permissions = Permissions::new(
            settings.permission_mode,
            &settings.allow_rules,
            &settings.deny_rules,
            &paths,
        )
        .map_err(|e| CliError::Usage(e.to_string()))?;
        let llm = LlmClient::new(LlmConfig::from_settings(&settings))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        llm.preflight()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let resumed = resume(args, &paths)?;
        let options = AgentOptions {
            root: paths.project_root.clone(),
            max_turns: turn_limit(settings.max_turns, interactive),
            tool_output_limit: settings.tool_output_limit,
            prompt: PromptOptions {
                replace: args.system_prompt.clone(),
                append: args.append_system_prompt.clone(),
            },
            child_env: child_env.clone(),
        };
        let (session, history) = match resumed {
            Some(Resumed {
                session,
                messages,
                warnings: found,
            }) => {
                warnings.extend(found);
                (session, Some(messages))
            }
            None => (
                Session::new(
                    &paths.sessions_dir(),
                    &paths.project_root,
                    &llm.config().model,
                ),
                None,
            ),
        };
        crate::log::info(|| {
            format!(
                "session {} ({}), transcript {}",
                session.id,
                if history.is_some() { "resumed" } else { "new" },
                session.transcript_path.display()
            )
        });
        let mcp_host = McpHost::new(
            llm.clone(),
            HostPolicy {
                allow_sampling: settings.allow_sampling,
                interactive,
                elicitation: settings.elicitation,
            },
        );
        let mut agent = Agent::new(llm, ToolRegistry::builtins(), permissions, options, session)
            .with_hooks(hooks);
        warnings.extend(agent.take_warnings());
        // Started last, once nothing else can fail, so no server is left running on an error.
        let mut manager_options = ManagerOptions::new(paths.clone());
        manager_options.handler = Some(mcp_host.clone());
        manager_options.output_cap = settings.tool_output_limit;
        manager_options.child_env = child_env;
        let mcp = McpManager::start(servers, manager_options);
        agent = agent.with_mcp(mcp.clone());
        let resumed = history.is_some();
        if let Some(history) = history {
            agent.resume(history);
        }
        Ok(Self {
            project_trust: project.status(),
            trust_notice,
            paths,
            settings,
            agent,
            mcp,
            mcp_host,
            resumed,
            warnings,
        })
    }
}

/// What the children of this run start with: the settings' environment, and tied to this
/// process through the `ling` binary's own trampoline (`run` is only ever the binary's entry).
pub(super) fn children(settings: &Settings) -> ChildEnv {
    ChildEnv::from_settings(settings).with_trampoline(Trampoline::current())
}

/// The turn limit of a run: the configured one, else [`DEFAULT_PRINT_MAX_TURNS`] for a
/// non-interactive run and none for the REPL.
fn turn_limit(configured: Option<u32>, interactive: bool) -> Option<u32> {
    configured.or((!interactive).then_some(DEFAULT_PRINT_MAX_TURNS))
}

/// The session `--continue` or `--resume ID` asks for; `None` for a new one.
fn resume(args: &RunArgs, paths: &Paths) -> Result<Option<Resumed>, CliError> {
    let dir = paths.sessions_dir();
    let found = match (&args.resume, args.continue_session) {
        (Some(id), _) => Session::open(&dir, id.trim()),
        (None, true) => Session::open_latest(&dir, &paths.project_root),
        (None, false) => return Ok(None),
    };
    found.map(Some).map_err(|e| CliError::Usage(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_runs_have_a_default_turn_limit_and_the_repl_none() {
        assert_eq!(DEFAULT_PRINT_MAX_TURNS, 100);
        assert_eq!(turn_limit(None, false), Some(DEFAULT_PRINT_MAX_TURNS));
        assert_eq!(turn_limit(None, true), None);
        assert_eq!(turn_limit(Some(7), false), Some(7));
        assert_eq!(turn_limit(Some(500), true), Some(500));
    }
}
