//! One agent run, assembled: what the session host (its only caller) drives.
//! [`Setup::prepare`] reads as its steps, one service each: the debug log; the configuration
//! files (`files.rs`; the project's own only as far as its trust allows); the trust guard, the
//! run's surface and the sandbox decision, which goes into the one environment every child
//! starts from (`sandbox.rs`); the hooks; the permissions; the model client; the session, new or
//! found again with `--continue` / `--resume ID` (`session.rs`); the agent; and the MCP servers,
//! started last. It prints nothing: warnings go to the caller's `warn`, failures are a
//! [`SetupError`].

mod files;
mod program;
mod sandbox;
mod session;

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::mcp::reload::McpSources;
use crate::agent::{
    Agent, AgentOptions, ContextOptions, HostPolicy, McpHost, PromptOptions, Resumed, SessionError,
};
use crate::config::mcp::ServerConfig;
use crate::config::{ConfigError, Paths, Settings, SettingsOverrides};
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmConfig, LlmError};
use crate::mcp::{ManagerOptions, McpManager};
use crate::media::ImageStore;
use crate::permissions::{PermissionError, Permissions};
use crate::process::sandbox::SandboxError;
use crate::process::{ChildEnv, Trampoline};
use crate::tools::{ToolRegistry, WebFetch, WebSearch};
use crate::trust::{ProjectConfig, TrustStatus};

use self::files::ConfigFiles;
use self::sandbox::Confined;

/// Model requests a `-p` run may make when neither `--max-turns` nor settings `maxTurns` says:
/// a model stuck calling tools ends with `error_max_turns` instead of running up a bill forever.
/// The REPL has no default limit (the user is watching and can press Ctrl-C).
pub const DEFAULT_PRINT_MAX_TURNS: u32 = 100;

/// What the command line asks of a run, beyond the configuration files.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Flags that win over the settings files.
    pub overrides: SettingsOverrides,
    /// `--mcp-config` files, and `--strict-mcp-config` (only those).
    pub mcp_config: Vec<PathBuf>,
    pub strict_mcp_config: bool,
    pub prompt: PromptOptions,
    pub resume: Resume,
    /// `--tools`: only these builtin tools (Ling's names); `None`: all of them.
    pub tools: Option<Vec<String>>,
    /// `--session-id`: the new session's id.
    pub session_id: Option<String>,
    /// `--fork-session`: the resumed session's conversation goes on under a new id, the
    /// original left as it is.
    pub fork_session: bool,
    /// `--ephemeral` (Codex): the session is recorded in a temporary folder removed when the
    /// run ends, and has no checkpoints.
    pub ephemeral: bool,
    /// `--plugin-dir` (Claude Code): plugin folders to load.
    pub plugin_dirs: Vec<PathBuf>,
    /// What the program driving Ling gave in-process (stream-json's `initialize`): hook
    /// callbacks, MCP servers, sub-agents.
    pub program: crate::program::Program,
}

/// Which recorded session the run continues.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Resume {
    /// A new session.
    #[default]
    New,
    /// `--continue`: the latest session of this project.
    Latest,
    /// `--resume ID`.
    Id(String),
}

/// Why a run could not be set up. Each is a usage or configuration problem (exit 2 in `cli`).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    #[error("project root {} is not usable: {source}; pass an existing directory to -C", .path.display())]
    ProjectRoot {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--add-dir {}: not an existing directory; pass a directory that exists", .path.display())]
    AddDir { path: PathBuf },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Permissions(#[from] PermissionError),
    #[error("{origin}: {source}")]
    RuleIn {
        /// The settings file the rule is in, or the flags that gave it.
        origin: String,
        #[source]
        source: PermissionError,
    },
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Something the program driving Ling gave at `initialize` that Ling cannot honour.
    #[error("{0}")]
    Program(String),
}

/// A run ready to be driven: [`Setup::prepare`] builds it, a frontend runs the agent in it, and
/// [`Setup::shutdown`] ends what it started.
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
    /// The MCP config files, to see them change during the session.
    pub mcp_sources: McpSources,
    /// `--ephemeral`: the session's temporary folder, removed with the setup.
    pub ephemeral: Option<session::EphemeralDir>,
}

impl Setup {
    /// The line a run starts with when `--add-dir` gave directories: which, and what they may.
    pub fn add_dirs_line(&self) -> Option<String> {
        if self.paths.add_dirs.is_empty() {
            return None;
        }
        let dirs: Vec<String> = self
            .paths
            .add_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        Some(format!(
            "--add-dir: the file tools and the sandbox may also write {}",
            dirs.join(", ")
        ))
    }

    /// `/fork`: the conversation goes on in a new session holding this one's history and a
    /// copy of its checkpoints; the session it was is left as it is. Returns the new id;
    /// problems that did not stop it are added to [`Setup::warnings`].
    pub fn fork(&mut self) -> Result<String, SetupError> {
        let transcript = self.agent.session().transcript_path.clone();
        let forked = session::fork(&transcript, &self.paths, &mut self.warnings)?;
        let Resumed {
            session,
            messages,
            warnings,
            children,
        } = forked;
        let id = session.id.clone();
        self.warnings.extend(warnings);
        // The old session's journal is let go before the new one is opened.
        self.agent.set_checkpoints(None);
        self.agent.switch_session(session, messages);
        self.agent.restore_children(children);
        let checkpoints = session::checkpoints_of(&self.settings, &self.paths, &id, true);
        self.agent.set_checkpoints(checkpoints);
        Ok(id)
    }

    /// Ends everything the run started: the MCP servers (bounded).
    pub async fn shutdown(&self) {
        self.mcp.shutdown().await;
    }
}

/// The project root of a run started in `-C DIR` or the current directory: the nearest
/// ancestor holding `.git`, else `.ling` or `.claude`, else that directory itself
/// ([`crate::config::find_project_root`]).
pub fn project_root(cwd: Option<&PathBuf>) -> Result<PathBuf, SetupError> {
    Ok(locate(cwd, &[])?.project_root)
}

/// Where a run is: its working directory (`-C DIR` or the current directory, canonical), the
/// project root found from it, `LING_HOME`, and the `--add-dir` directories (each must exist).
pub fn locate(cwd: Option<&PathBuf>, add_dirs: &[PathBuf]) -> Result<Paths, SetupError> {
    let dir = match cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(SetupError::CurrentDir)?,
    };
    let working_dir = std::fs::canonicalize(&dir)
        .map_err(|source| SetupError::ProjectRoot { path: dir, source })?;
    let home = crate::config::ling_home();
    let found = crate::config::find_root(&working_dir, &home);
    let root = found.root;
    let mut added = Vec::new();
    for dir in add_dirs {
        let canonical = std::fs::canonicalize(dir)
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| SetupError::AddDir { path: dir.clone() })?;
        if !added.contains(&canonical) && !canonical.starts_with(&root) {
            added.push(canonical);
        }
    }
    let mut paths = Paths::with_home(root, home)
        .in_working_dir(working_dir)
        .with_add_dirs(added);
    paths.passed_over = found.passed_over;
    Ok(paths)
}

impl Setup {
    /// `interactive`: the REPL, where the user can be asked (MCP sampling is then declared).
    /// `project`: the project's config and its trust, decided (and, in the REPL, asked) before.
    /// `warn` gets each problem of the configuration files as it is found (the frontend shows
    /// them at once, before anything else can fail); later ones are in [`Setup::warnings`].
    pub async fn prepare(
        options: &RunOptions,
        paths: Paths,
        project: ProjectConfig,
        interactive: bool,
        warn: &dyn Fn(&str),
    ) -> Result<Self, SetupError> {
        let mut warnings = start_log(&paths, warn);
        let mut files = ConfigFiles::load(&paths, &project, options)?;
        program::add_servers(&options.program, &mut files.servers)?;
        let confined = sandbox::confine(&paths, options, &project, &mut files)?;
        program::add_agents(&options.program, &mut files.extensions)?;
        let start_as = program::start_agent(&options.program, &files.extensions)?;
        if let Some(def) = &start_as {
            // The agent's model, as a sub-agent of this session would get it.
            let (model, _) = crate::agent::subagent::resolve_model(
                def.model.as_deref(),
                &files.settings.model,
                &files.settings.model_aliases,
            );
            files.settings.model = model;
        }
        let (hooks, hook_warnings) = hooks(&mut files, &paths, &confined.child_env, options)?;
        let trust_notice = project.skipped_notice(&paths);
        let file_warnings = files.settings.warnings.iter().chain(&hook_warnings);
        for warning in file_warnings.chain(&files.mcp_warnings) {
            warn(warning);
        }
        confined.warn(&paths, warn);
        // Telemetry first, so that everything after it can be seen; off, this reads a few
        // variables and returns.
        if let Err(e) = crate::telemetry::init(&files.settings.env) {
            warn(&format!("telemetry is off: {e}"));
        }
        crate::telemetry::session_started();
        let permissions = permissions(&files.settings, &paths, &confined, warn)
            .map_err(|source| rule_origin(source, &paths))?;
        let llm = model_client(&files.settings)?;
        let ephemeral = options.ephemeral.then(session::EphemeralDir::new);
        let session = session::open(
            options,
            &paths,
            &llm.config().model,
            ephemeral.as_ref(),
            &mut warnings,
        )?;
        let mcp_host = McpHost::new(
            llm.clone(),
            HostPolicy {
                allow_sampling: files.settings.allow_sampling,
                interactive,
                elicitation: files.settings.elicitation,
            },
        );
        for warning in &files.extensions.warnings {
            warn(warning);
        }
        let mut agent_options = agent_options(
            options,
            &paths,
            &files.settings,
            &project,
            interactive,
            confined.child_env.clone(),
        );
        let extras = crate::config::user_compat::user_compat_extras(
            project.layer(),
            files.extensions.files(),
        );
        files.settings.user_compat_files.extend(extras);
        let plugin_roots = files.plugins.plugins.iter().map(|p| p.root.clone());
        files.settings.user_compat_files.extend(plugin_roots);
        if let Some(def) = &start_as
            && agent_options.prompt.replace.is_none()
        {
            agent_options.prompt.replace = Some(def.prompt.clone());
        }
        let builtins = builtins(options, &files.settings, warn);
        let settings = &files.settings;
        let mut agent = Agent::new(llm, builtins, permissions, agent_options, session.session)
            .with_images(ImageStore::in_home(&paths.home))
            .with_hooks(hooks)
            .with_tool_search(settings.tool_search)
            .with_extensions(Arc::new(std::mem::take(&mut files.extensions)))
            .with_delegation(
                settings.max_parallel_agents,
                settings.max_agent_depth,
                settings.model_aliases.clone(),
                settings.worktree_dir.clone(),
            );
        if let Some(tools) = start_as.as_ref().and_then(|def| def.tools.as_ref()) {
            let origin = format!(
                "the {} agent's tools",
                start_as.as_ref().map_or("", |d| &d.name)
            );
            agent = agent.with_tool_filter(crate::agent::ToolFilter::new(tools, origin));
        }
        agent.probe_context_window();
        warnings.extend(agent.take_warnings());
        let checkpoints =
            session::checkpoints_of(settings, &paths, &agent.session().id, interactive)
                .filter(|_| ephemeral.is_none());
        agent.set_checkpoints(checkpoints);
        // Started last, once nothing else can fail, so no server is left running on an error.
        let servers = std::mem::take(&mut files.servers);
        let mcp = start_mcp(
            servers,
            &paths,
            &files.settings,
            &mcp_host,
            confined.child_env,
            &options.program,
        );
        agent = agent.with_mcp(mcp.clone());
        mcp_host.set_notifier(agent.notifier());
        let resumed = session.resumed;
        if resumed {
            agent.resume(session.messages);
            agent.restore_children(session.children);
        }
        Ok(Self {
            project_trust: project.status(),
            trust_notice,
            paths,
            settings: files.settings,
            agent,
            mcp,
            mcp_host,
            resumed,
            warnings,
            mcp_sources: files.mcp_sources,
            ephemeral,
        })
    }
}

/// The first steps of a run, before any file is read: the warning that the project root passed
/// over a folder's `.ling`, and the debug log. Returns the warnings for later.
fn start_log(paths: &Paths, warn: &dyn Fn(&str)) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(passed_over) = &paths.passed_over {
        warn(&passed_over.warning(&paths.project_root));
    }
    if let Err(e) = crate::log::init(&paths.logs_dir()) {
        warnings.push(e.to_string());
    }
    warnings
}

/// The hooks of `files`, run with the run's children's environment, each handler's `if`
/// checked; with the warnings of reading them.
fn hooks(
    files: &mut ConfigFiles,
    paths: &Paths,
    child_env: &ChildEnv,
    options: &RunOptions,
) -> Result<(HookEngine, Vec<String>), SetupError> {
    let mut config = std::mem::take(&mut files.hooks);
    program::add_hooks(&options.program, &mut config)?;
    let (hooks, warnings) = HookEngine::from_config(config)?;
    crate::agent::check_hook_conditions(&hooks, paths)?;
    let mut hooks = hooks
        .with_child_env(child_env.clone())
        .with_conditions(crate::agent::RuleConditions::new(paths));
    if let Some(channel) = &options.program.channel {
        hooks = hooks.with_program(channel.clone());
    }
    Ok((hooks, warnings))
}

/// The permission mode and rules of the settings, what the surface keeps asking about and what
/// the sandbox hides; rules that name a tool Ling lacks are warned about.
fn permissions(
    settings: &Settings,
    paths: &Paths,
    confined: &Confined,
    warn: &dyn Fn(&str),
) -> Result<Permissions, PermissionError> {
    let mut permissions = Permissions::new(
        settings.permission_mode,
        &settings.allow_rules,
        &settings.deny_rules,
        paths,
    )?
    .with_ask_rules(&settings.ask_rules)?;
    for warning in permissions.ignored_rules() {
        warn(&warning);
    }
    let decision = confined.child_env.decision();
    permissions.protect_outside(&confined.surface.asked());
    permissions.hide(&decision.hidden);
    permissions.set_sandboxed(decision.is_on());
    Ok(permissions)
}

/// A rule Ling cannot read, placed: the first settings file that holds it (Ling's, the
/// project's, Claude Code's), else the flags. Rules are merged from all of them before they
/// are parsed, so the file is found again by its text.
fn rule_origin(error: PermissionError, paths: &Paths) -> SetupError {
    let PermissionError::InvalidRule { rule, .. } = &error;
    let quoted = serde_json::Value::String(rule.clone()).to_string();
    let mut files = vec![
        paths.project_file("settings.json"),
        paths.user_file("settings.json"),
    ];
    files.extend(
        crate::config::claude::CLAUDE_SETTINGS_FILES
            .iter()
            .map(|name| paths.project_root.join(name)),
    );
    let origin = files
        .iter()
        .find(|file| std::fs::read_to_string(file).is_ok_and(|text| text.contains(&quoted)))
        .map_or_else(
            || "--allowed-tools, --disallowed-tools or --settings".to_string(),
            |file| paths.display(file).into_owned(),
        );
    SetupError::RuleIn {
        origin,
        source: error,
    }
}

/// The model client of the settings, checked before anything starts.
fn model_client(settings: &Settings) -> Result<LlmClient, LlmError> {
    let llm = LlmClient::new(LlmConfig::from_settings(settings))?;
    llm.preflight()?;
    Ok(llm)
}

/// The builtin tools of the run: the six of `docs/tools.md`, `web_fetch`, and `web_search` when
/// its provider can be reached (a provider named without its key is said once); only those
/// `--tools` names, when it does. A search provider's key is masked in what Ling prints.
fn builtins(options: &RunOptions, settings: &Settings, warn: &dyn Fn(&str)) -> ToolRegistry {
    if let Some(crate::config::web::SearchProvider::Keyed { key: Some(key), .. }) =
        &settings.web_search.provider
    {
        crate::redact::register(key);
    }
    let mut builtins = ToolRegistry::builtins();
    for tool in crate::agent::session_tools() {
        builtins.register(tool);
    }
    builtins.register(Arc::new(WebFetch::new(settings.web_fetch)));
    match WebSearch::new(&settings.web_search, settings.web_fetch.timeout) {
        Some(search) => builtins.register(Arc::new(search)),
        // A provider named without its key: said once, at start.
        None if settings.web_search.provider.is_some() => {
            warn(&settings.web_search.describe());
        }
        None => {}
    }
    match &options.tools {
        Some(keep) => builtins.only(keep),
        None => builtins,
    }
}

/// The agent's limits and choices for this run.
fn agent_options(
    options: &RunOptions,
    paths: &Paths,
    settings: &Settings,
    project: &ProjectConfig,
    interactive: bool,
    child_env: ChildEnv,
) -> AgentOptions {
    AgentOptions {
        root: paths.project_root.clone(),
        max_turns: turn_limit(settings.max_turns, interactive),
        tool_output_limit: settings.tool_output_limit,
        prompt: PromptOptions {
            no_claude_memory: !project.claude().project,
            working_dir: Some(paths.working_dir.clone()),
            user_files: user_instruction_files(paths, project.layer()),
            ..options.prompt.clone()
        },
        add_dirs: paths.add_dirs.clone(),
        child_env,
        context: ContextOptions {
            window: settings.context_window,
            auto_compact: settings.auto_compact,
            percent: settings.auto_compact_percent,
        },
        never_ask: settings.never_ask,
        stop_hook_limit: settings.max_stop_hook_blocks,
        background_buffer: settings.background_output_bytes,
        subagent: None,
        idle_notify_after: settings.idle_notify_after,
        budget: crate::agent::BudgetOptions {
            cap: settings.max_budget_usd,
            prices: settings.prices.clone(),
        },
    }
}

/// The MCP servers, started in the background; their sampling and elicitation requests go to
/// `mcp_host`.
fn start_mcp(
    servers: Vec<ServerConfig>,
    paths: &Paths,
    settings: &Settings,
    mcp_host: &Arc<McpHost>,
    child_env: ChildEnv,
    program: &crate::program::Program,
) -> Arc<McpManager> {
    let mut manager_options = ManagerOptions::new(paths.clone());
    manager_options.program = program.channel.clone();
    manager_options.handler = Some(mcp_host.clone());
    manager_options.output_cap = settings.tool_output_limit;
    manager_options.child_env = child_env;
    McpManager::start(servers, manager_options)
}

/// What the children of this run start with: the settings' environment, and tied to this
/// process through the `ling` binary's own trampoline (`run` is only ever the binary's entry).
pub fn children(settings: &Settings) -> ChildEnv {
    ChildEnv::from_settings(settings).with_trampoline(Trampoline::current())
}

/// The user's own instruction files: `LING_HOME/AGENTS.md`, and Claude Code's
/// `~/.claude/CLAUDE.md` unless `claudeCompat` is off.
pub(super) fn user_instruction_files(
    paths: &Paths,
    project: &crate::config::ProjectFiles,
) -> Vec<PathBuf> {
    let mut files = vec![paths.home.join("AGENTS.md")];
    if project.claude().project
        && let Some(dir) = crate::config::claude::user_dir()
    {
        files.push(dir.join(crate::agent::CLAUDE_MEMORY));
    }
    // Codex's own `AGENTS.md` (settings `codexCompat`).
    files.extend(project.codex().agents_md());
    files
}

/// The turn limit of a run: the configured one, else [`DEFAULT_PRINT_MAX_TURNS`] for a
/// non-interactive run and none for the REPL.
fn turn_limit(configured: Option<u32>, interactive: bool) -> Option<u32> {
    configured.or((!interactive).then_some(DEFAULT_PRINT_MAX_TURNS))
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
