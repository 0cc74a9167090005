//! One agent run, assembled: what both frontends (the REPL and `ling -p`) drive. Built from the
//! run's options and the configuration files (the project's own only as far as its trust allows):
//! the project root, settings, permissions, the model client, the debug log, the session (new,
//! or found again with `--continue` / `--resume ID`), the MCP servers and the agent itself.
//! It sits between the frontends (`cli`, `ui`) and `agent`, and prints nothing: warnings go to
//! the caller's `warn`, failures are a [`SetupError`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::mcp::reload::McpSources;
use crate::agent::{
    Agent, AgentOptions, ContextOptions, HostPolicy, McpHost, PromptOptions, Resumed, Session,
    SessionError,
};
use crate::checkpoint::{self, Checkpoints};
use crate::config::extensions::Extensions;
use crate::config::hooks::HooksConfig;
use crate::config::{ConfigError, Paths, Settings, SettingsOverrides};
use crate::hooks::HookEngine;
use crate::llm::{LlmClient, LlmConfig, LlmError};
use crate::mcp::{ManagerOptions, McpManager};
use crate::media::ImageStore;
use crate::permissions::{PermissionError, Permissions};
use crate::process::sandbox::{self, Decision, SandboxError};
use crate::process::{ChildEnv, Trampoline};
use crate::tools::{ToolRegistry, WebFetch, WebSearch};
use crate::trust::surface::{Part, Surface};
use crate::trust::{ProjectConfig, TrustStatus};

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
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
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
    /// The shell sandbox of the `bash` tool (`/status`, stream-json `init`).
    pub sandbox: Decision,
    /// Whether the project's own config applies (`project_trust` of the json outputs).
    pub project_trust: TrustStatus,
    /// For an untrusted project: the one line saying what was skipped and how to trust it.
    pub trust_notice: Option<String>,
    /// Problems that did not stop the run (a bad `LING_LOG`, skipped transcript lines), one
    /// sentence each, for the UI to show.
    pub warnings: Vec<String>,
    /// The MCP config files, to see them change during the session.
    pub mcp_sources: McpSources,
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
        let forked = fork(&transcript, &self.paths, &mut self.warnings)?;
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
        let checkpoints = checkpoints_of(&self.settings, &self.paths, &id, true);
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
        let mut warnings = Vec::new();
        if let Some(passed_over) = &paths.passed_over {
            warn(&passed_over.warning(&paths.project_root));
        }
        if let Err(e) = crate::log::init(&paths.logs_dir()) {
            warnings.push(e.to_string());
        }
        let mut settings = Settings::load(&paths, project.layer(), &options.overrides)?;
        // `--add-dir`: the sandbox may write them too, as it may its writable roots.
        for dir in &paths.add_dirs {
            if !settings.sandbox.writable_roots.contains(dir) {
                settings.sandbox.writable_roots.push(dir.clone());
            }
        }
        let (mut servers, mcp_warnings) = crate::config::mcp::load_servers(
            &paths,
            project.layer(),
            &options.mcp_config,
            options.strict_mcp_config,
        )?;
        crate::config::mcp::apply_switches(&mut servers, &settings.project_state);
        let mcp_sources = McpSources::new(&paths, &options.mcp_config, options.strict_mcp_config);
        let mut hook_config = HooksConfig::load_with(
            &paths,
            project.layer(),
            settings.hook_layers(),
            settings.flag_settings.as_ref(),
        )?;
        // Each hook and server checks, before it runs, that the files it runs are the ones
        // trusted; the sandbox keeps them read-only and file edits of them ask.
        let guarded = crate::trust::guard::attach(
            &project,
            &mut hook_config,
            &mut servers,
            &settings.sandbox.writable_roots,
            &settings.env,
        );
        let mut sandbox = sandbox::decide(
            &settings.sandbox,
            sandbox::availability(),
            &paths.home,
            sandbox::home_dir().as_deref(),
        )?;
        let extensions = Extensions::load(&paths, project.layer());
        let trampoline = Trampoline::current();
        let surface = surface_of(
            &paths,
            options,
            &settings,
            &project,
            &guarded.protect,
            &extensions,
            trampoline.as_ref(),
        );
        sandbox.read_only = surface.read_only();
        let child_env = ChildEnv::from_settings(&settings)
            .with_trampoline(trampoline)
            .with_sandbox(sandbox.clone(), paths.project_root.clone())
            .with_outside(guarded.outside.clone());
        let (hooks, hook_warnings) = HookEngine::from_config(hook_config)?;
        crate::agent::check_hook_conditions(&hooks, &paths)?;
        let hooks = hooks
            .with_child_env(child_env.clone())
            .with_conditions(crate::agent::RuleConditions::new(&paths));
        let trust_notice = project.skipped_notice(&paths);
        let all_warnings = settings.warnings.iter().chain(&hook_warnings);
        for warning in all_warnings.chain(&mcp_warnings) {
            warn(warning);
        }
        if let Some(warning) = &sandbox.warning {
            warn(warning);
        }
        if let Some(notice) = sandbox::start_notice(&sandbox, &paths.project_root) {
            warn(&notice);
        }
        let mut permissions = Permissions::new(
            settings.permission_mode,
            &settings.allow_rules,
            &settings.deny_rules,
            &paths,
        )?
        .with_ask_rules(&settings.ask_rules)?;
        for warning in permissions.ignored_rules() {
            warn(&warning);
        }
        permissions.protect_outside(&surface.asked());
        permissions.hide(&sandbox.hidden);
        permissions.set_sandboxed(sandbox.is_on());
        let llm = LlmClient::new(LlmConfig::from_settings(&settings))?;
        llm.preflight()?;
        let resumed = resume(&options.resume, &paths)?;
        let resumed = match resumed {
            Some(found) if options.fork_session => {
                let mut forked = fork(&found.session.transcript_path, &paths, &mut warnings)?;
                forked.warnings.splice(0..0, found.warnings);
                Some(forked)
            }
            other => other,
        };
        let run_tools = options.tools.clone();
        let session_id = options.session_id.clone();
        let options = AgentOptions {
            root: paths.project_root.clone(),
            max_turns: turn_limit(settings.max_turns, interactive),
            tool_output_limit: settings.tool_output_limit,
            prompt: PromptOptions {
                no_claude_memory: !project.claude().project,
                working_dir: Some(paths.working_dir.clone()),
                user_files: user_instruction_files(&paths, project.claude().project),
                ..options.prompt.clone()
            },
            add_dirs: paths.add_dirs.clone(),
            child_env: child_env.clone(),
            context: ContextOptions {
                window: settings.context_window,
                auto_compact: settings.auto_compact,
                percent: settings.auto_compact_percent,
            },
            sandbox: sandbox.clone(),
            never_ask: settings.never_ask,
            stop_hook_limit: settings.max_stop_hook_blocks,
            subagent: None,
            idle_notify_after: settings.idle_notify_after,
        };
        let (session, history) = match resumed {
            Some(Resumed {
                session,
                messages,
                warnings: found,
                children,
            }) => {
                warnings.extend(found);
                (session, Some((messages, children)))
            }
            None => (
                match session_id {
                    Some(id) => Session::with_id(
                        &paths.sessions_dir(),
                        &paths.project_root,
                        &llm.config().model,
                        id,
                    ),
                    None => Session::new(
                        &paths.sessions_dir(),
                        &paths.project_root,
                        &llm.config().model,
                    ),
                },
                None,
            ),
        };
        tracing::info!(
            "session {} ({}), transcript {}",
            session.id,
            if history.is_some() { "resumed" } else { "new" },
            session.transcript_path.display()
        );
        let mcp_host = McpHost::new(
            llm.clone(),
            HostPolicy {
                allow_sampling: settings.allow_sampling,
                interactive,
                elicitation: settings.elicitation,
            },
        );
        for warning in &extensions.warnings {
            warn(warning);
        }
        if let Some(crate::config::web::SearchProvider::Keyed { key: Some(key), .. }) =
            &settings.web_search.provider
        {
            crate::redact::register(key);
        }
        let mut builtins = ToolRegistry::builtins();
        builtins.register(Arc::new(WebFetch::new(settings.web_fetch)));
        match WebSearch::new(&settings.web_search, settings.web_fetch.timeout) {
            Some(search) => builtins.register(Arc::new(search)),
            // A provider named without its key: said once, at start.
            None if settings.web_search.provider.is_some() => {
                warn(&settings.web_search.describe());
            }
            None => {}
        }
        if let Some(keep) = &run_tools {
            builtins = builtins.only(keep);
        }
        let mut agent = Agent::new(llm, builtins, permissions, options, session)
            .with_images(ImageStore::in_home(&paths.home))
            .with_hooks(hooks)
            .with_tool_search(settings.tool_search)
            .with_extensions(Arc::new(extensions))
            .with_delegation(settings.max_parallel_agents, settings.model_aliases.clone());
        agent.probe_context_window();
        warnings.extend(agent.take_warnings());
        agent.set_checkpoints(checkpoints_of(
            &settings,
            &paths,
            &agent.session().id,
            interactive,
        ));
        // Started last, once nothing else can fail, so no server is left running on an error.
        let mut manager_options = ManagerOptions::new(paths.clone());
        manager_options.handler = Some(mcp_host.clone());
        manager_options.output_cap = settings.tool_output_limit;
        manager_options.child_env = child_env;
        let mcp = McpManager::start(servers, manager_options);
        agent = agent.with_mcp(mcp.clone());
        mcp_host.set_notifier(agent.notifier());
        let resumed = history.is_some();
        if let Some((history, children)) = history {
            agent.resume(history);
            agent.restore_children(children);
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
            sandbox,
            warnings,
            mcp_sources,
        })
    }
}

/// What Ling reads or runs outside the sandbox in this run (`trust::surface`): every config
/// file, the files hooks and servers run (`code`), the commands, skills and agents, the
/// instruction files and Ling's own programs. `LING_HOME` is made first when missing, so that
/// the sandbox can keep it read-only (a sandboxed command must not be the one to make it).
fn surface_of(
    paths: &Paths,
    options: &RunOptions,
    settings: &Settings,
    project: &ProjectConfig,
    code: &[PathBuf],
    extensions: &Extensions,
    trampoline: Option<&Trampoline>,
) -> Surface {
    let _ = crate::config::private_fs::create_dir(&paths.home);
    let mut surface = Surface::of_run(paths);
    surface.extend(code, Part::Code);
    let named = options
        .mcp_config
        .iter()
        .filter(|e| !e.to_string_lossy().trim_start().starts_with('{'))
        .map(|e| paths.project_root.join(e));
    let flag_settings = settings
        .flag_settings
        .as_ref()
        .map(|f| f.source.clone())
        .filter(|source| source.is_absolute());
    for file in named.chain(flag_settings) {
        surface.add(&file, Part::Config);
    }
    for file in extensions.files() {
        surface.add_extension(file);
    }
    let user_files = user_instruction_files(paths, project.claude().project);
    let instructions = crate::agent::instructions::files(&crate::agent::instructions::Sources {
        root: &paths.project_root,
        working_dir: Some(&paths.working_dir),
        user_files: &user_files,
        claude_memory: project.claude().project,
    });
    surface.extend(&instructions, Part::Instructions);
    // `/proc/self/exe` is Ling itself, already a member.
    if let Some(exe) = trampoline
        .map(Trampoline::exe)
        .filter(|exe| !exe.starts_with("/proc"))
    {
        surface.add(exe, Part::Ling);
    }
    surface
}

/// What the children of this run start with: the settings' environment, and tied to this
/// process through the `ling` binary's own trampoline (`run` is only ever the binary's entry).
pub fn children(settings: &Settings) -> ChildEnv {
    ChildEnv::from_settings(settings).with_trampoline(Trampoline::current())
}

/// The user's own instruction files: `LING_HOME/AGENTS.md`, and Claude Code's
/// `~/.claude/CLAUDE.md` unless `claudeCompat` is off.
fn user_instruction_files(paths: &Paths, claude: bool) -> Vec<PathBuf> {
    let mut files = vec![paths.home.join("AGENTS.md")];
    if claude && let Some(dir) = crate::config::claude::user_dir() {
        files.push(dir.join(crate::agent::CLAUDE_MEMORY));
    }
    files
}

/// The turn limit of a run: the configured one, else [`DEFAULT_PRINT_MAX_TURNS`] for a
/// non-interactive run and none for the REPL.
fn turn_limit(configured: Option<u32>, interactive: bool) -> Option<u32> {
    configured.or((!interactive).then_some(DEFAULT_PRINT_MAX_TURNS))
}

/// The checkpoints of this run's session (`None` with settings `checkpoints: false`): the
/// project root and the writable folders, `LING_HOME` and the temp dir left out. Their first
/// look starts now, in the background, when somebody works in the session (`eager`); in a
/// one-shot run, at its first call that writes.
fn checkpoints_of(
    settings: &Settings,
    paths: &Paths,
    session_id: &str,
    eager: bool,
) -> Option<Checkpoints> {
    if !settings.checkpoints.enabled {
        return None;
    }
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let roots = checkpoint::roots_of(&paths.project_root, &settings.sandbox.writable_roots);
    // Left out where they lie inside a recorded folder, not where a folder lies inside them
    // (a project in the temp dir is recorded).
    let excluded = [
        real(&paths.home),
        real(&std::env::temp_dir()),
        real(std::path::Path::new("/dev/shm")),
    ]
    .into_iter()
    .filter(|e| !roots.iter().any(|r| r.starts_with(e)))
    .collect();
    Some(Checkpoints::open(checkpoint::OpenOptions {
        dir: paths.checkpoints_dir(),
        session_id: session_id.to_string(),
        roots,
        excluded,
        settings: settings.checkpoints,
        eager,
    }))
}

/// `--fork-session`: a copy of the session found, under a new id, with its checkpoints.
fn fork(
    transcript: &std::path::Path,
    paths: &Paths,
    warnings: &mut Vec<String>,
) -> Result<Resumed, SessionError> {
    let dir = paths.sessions_dir();
    let forked = Session::fork(&dir, transcript)?;
    let journals = paths.checkpoints_dir();
    let (from, to) = (&forked.from, &forked.resumed.session.id);
    if let Err(e) = checkpoint::fork_journal(&journals, from, to, forked.shift) {
        warnings.push(format!(
            "the checkpoints of session {} could not be copied to its fork ({e}): the fork can \
             rewind its conversation, not the files before it",
            forked.from
        ));
    }
    Ok(forked.resumed)
}

/// The session `--continue` or `--resume ID` asks for; `None` for a new one.
fn resume(resume: &Resume, paths: &Paths) -> Result<Option<Resumed>, SessionError> {
    let dir = paths.sessions_dir();
    let found = match resume {
        Resume::Id(id) => Session::open(&dir, id.trim()),
        Resume::Latest => Session::open_latest(&dir, &paths.project_root),
        Resume::New => return Ok(None),
    };
    found.map(Some)
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
