//! The command-line entry: parses the arguments, builds what a run needs ([`crate::setup`]), and
//! hands it to the REPL, the one-shot runner (both in `ui`) or a subcommand. It is the one place
//! that turns how things ended into the exit codes of `docs/cli.md`: a frontend's
//! [`RunOutcome`] in [`Exit::from`], every failure a [`CliError`] in [`CliError::exit`].

mod acp_cmd;
mod agent_flags;
mod args;
mod codex_args;
mod codex_resolve;
mod compat_args;
mod compat_resolve;
mod completion_cmd;
mod hooks_cmd;
pub mod mcp_cmd;
mod plugin_cmd;
mod prompt;
mod sandbox_cmd;
mod serve_cmd;
mod sessions_cmd;
mod trust_cmd;
mod worktree_cmd;

#[cfg(test)]
mod man_tests;

use std::io::IsTerminal;

use clap::Parser;

pub use args::{Cli, Command, HooksCommand, OutputFormat, RunArgs};
pub use mcp_cmd::McpCommand;

use crate::config::{ConfigError, Paths};
use crate::session::{Host, Resume, RunOptions, SetupError, Start};
use crate::trust::{ProjectConfig, TrustError, TrustStatus};
use crate::ui::{RunOutcome, Signal, TerminalError};

/// Exit codes of `docs/cli.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    Failure,
    Usage,
    Interrupted,
    /// Ended by SIGHUP (the terminal went away).
    HungUp,
    /// Ended by SIGTERM.
    Terminated,
    /// The exit code of the command `ling sandbox run` ran.
    Command(u8),
    /// `--until`'s check never passed.
    CheckFailed,
    /// `--replay`: the run sent a request the recording does not have.
    ReplayMismatch,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Failure => 1,
            Self::Usage => 2,
            Self::Interrupted => 130,
            Self::HungUp => 129,
            Self::Terminated => 143,
            Self::Command(code) => code,
            Self::CheckFailed => 3,
            Self::ReplayMismatch => 4,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit.code())
    }
}

impl From<RunOutcome> for Exit {
    fn from(outcome: RunOutcome) -> Self {
        match outcome {
            RunOutcome::Success => Self::Success,
            RunOutcome::Failed => Self::Failure,
            RunOutcome::CheckFailed => Self::CheckFailed,
            RunOutcome::Interrupted(Signal::Interrupt) => Self::Interrupted,
            RunOutcome::Interrupted(Signal::Terminate) => Self::Terminated,
            RunOutcome::Interrupted(Signal::HangUp) => Self::HungUp,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A bad flag or argument: exit 2.
    #[error("{0}")]
    Usage(String),
    /// An unreadable or invalid configuration file: exit 2.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `LING_HOME/trust.json` cannot be read or written: exit 2.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// The run could not be set up (bad rules, settings, session, model URL): exit 2.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// `-w`'s worktree could not be made: exit 2.
    #[error(transparent)]
    Worktree(#[from] crate::process::worktree::WorktreeError),
    /// The terminal failed the REPL or its questions: exit 1.
    #[error(transparent)]
    Terminal(#[from] TerminalError),
    /// The run failed (API error after retries, a tool loop aborted): exit 1.
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    pub fn exit(&self) -> Exit {
        match self {
            Self::Usage(_)
            | Self::Config(_)
            | Self::Trust(_)
            | Self::Setup(_)
            | Self::Worktree(_) => Exit::Usage,
            Self::Terminal(_) | Self::Failed(_) => Exit::Failure,
        }
    }
}

/// Runs Ling with the process arguments. Printing of `--help`, `--version` and argument errors is
/// clap's; everything else goes through the `ui` module.
pub fn run() -> Result<Exit, CliError> {
    let cli = match Cli::try_parse_from(codex_args::codex_spellings(std::env::args_os().collect()))
    {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            };
            let _ = e.print();
            return Ok(code);
        }
    };
    // Not dumpable: no child of the same user (a hook, an unsandboxed command or server) can
    // trace Ling or read its environment and memory through /proc/PID/ (the API key is there).
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_dumpable(false);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let exit = dispatch(cli).await;
        // What is left of the run's telemetry goes out before the process ends.
        crate::telemetry::shutdown().await;
        if let Some(failure) = crate::telemetry::failure() {
            warn(&failure);
        }
        exit
    })
}

async fn dispatch(cli: Cli) -> Result<Exit, CliError> {
    match cli.command {
        Some(Command::Mcp {
            command,
            cwd,
            mcp_config,
            strict_mcp_config,
        }) => {
            let sources = agent_flags::McpSources {
                cwd,
                extra: mcp_config,
                strict: strict_mcp_config,
            };
            mcp_cmd::run(command, sources).await
        }
        Some(Command::Hooks { command, cwd }) => hooks_cmd::run(command, cwd).await,
        Some(Command::Sessions { command, cwd }) => sessions_cmd::run(command, cwd),
        Some(Command::Trust { dir, list, revoke }) => trust_cmd::run(dir, list, revoke),
        Some(Command::Completion { shell }) => Ok(completion_cmd::run(shell)),
        Some(Command::Plugin {
            command: args::PluginCommand::List { json },
            cwd,
            plugin_dir,
        }) => plugin_cmd::list(cwd, &plugin_dir, json),
        Some(Command::Sandbox { command }) => sandbox_cmd::run(command).await,
        Some(Command::Exec { mut run, action }) => {
            run.print = true;
            run.compat.codex.exec = true;
            if let Some(action) = action {
                exec_action(&mut run, action)?;
            }
            if run.prompt.as_deref() == Some("-") {
                run.prompt = None;
            }
            run_agent(*run).await
        }
        Some(Command::Acp(args)) => acp_cmd::run(args).await,
        None => run_agent(cli.run).await,
    }
}

/// Codex's `exec resume [ID|--last] [PROMPT]` as the run's `--resume ID` or `--continue`, with
/// the flags given after it; `exec review` is refused.
fn exec_action(run: &mut RunArgs, action: codex_args::ExecAction) -> Result<(), CliError> {
    let resume = match action {
        codex_args::ExecAction::Resume(resume) => resume,
        codex_args::ExecAction::Review { .. } => {
            return Err(CliError::Usage(codex_args::refusal(
                codex_args::CODEX_REFUSED[5],
            )));
        }
    };
    let (id, prompt) = resume.target();
    match (id, resume.last) {
        (_, true) => run.continue_session = true,
        (Some(id), false) => run.resume = Some(id),
        (None, false) => {
            return Err(CliError::Usage(
                "exec resume needs the session's id (`ling sessions list` shows them) or --last"
                    .into(),
            ));
        }
    }
    run.prompt = prompt.or(run.prompt.take());
    run.image.extend(resume.image);
    run.compat.json |= resume.json;
    run.agent.model = resume.model.or(run.agent.model.take());
    run.compat.codex.config.extend(resume.config);
    run.compat.output_last_message = resume
        .output_last_message
        .or(run.compat.output_last_message.take());
    run.compat.codex.ephemeral |= resume.ephemeral;
    Ok(())
}

/// A run, through `--record`'s or `--replay`'s tape when one is given: a replay that met a
/// request it does not have says so last and exits 4, whatever the run made of the error.
async fn run_agent(args: RunArgs) -> Result<Exit, CliError> {
    let mode = match (&args.record, &args.replay) {
        (Some(file), _) => Some(crate::llm::tape::TapeMode::Record(file.clone())),
        (None, Some(file)) => Some(crate::llm::tape::TapeMode::Replay(file.clone())),
        (None, None) => None,
    };
    let Some(mode) = mode else {
        return run_agent_now(args).await;
    };
    let located = crate::session::locate(args.cwd.as_ref(), &args.add_dir)?;
    let home = crate::config::ling_home();
    let norm = crate::llm::tape::Normaliser::new(&[
        (located.project_root.as_path(), "$ROOT"),
        (located.working_dir.as_path(), "$CWD"),
        (home.as_path(), "$LING_HOME"),
    ]);
    crate::llm::tape::install(mode, norm)
        .await
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let exit = run_agent_now(args).await;
    match crate::llm::tape::failure() {
        Some(said) => {
            crate::ui::output::stderr_line(format!("error: {said}"));
            Ok(Exit::ReplayMismatch)
        }
        None => exit,
    }
}

/// A run in its worktree (`-w`), which is ended (kept or removed) after it.
async fn run_agent_now(args: RunArgs) -> Result<Exit, CliError> {
    let (exit, worktree) = run_agent_in(args).await?;
    if let Some(worktree) = worktree {
        worktree.end().await;
    }
    Ok(exit)
}

type RunWorktree = Option<worktree_cmd::RunWorktree>;

/// The schema the final answer must match: Codex's `--output-schema FILE` or Claude Code's
/// `--json-schema SCHEMA` (one of them).
fn output_schema(
    args: &RunArgs,
) -> Result<Option<crate::front::print::schema::OutputSchema>, CliError> {
    use crate::front::print::schema::OutputSchema;
    match (&args.compat.codex.output_schema, &args.compat.json_schema) {
        (Some(_), Some(_)) => Err(CliError::Usage(
            "--output-schema and --json-schema both give the answer's schema; keep one".into(),
        )),
        (Some(file), None) => OutputSchema::read(file)
            .map(Some)
            .map_err(|e| CliError::Usage(format!("--output-schema {}: {e}", file.display()))),
        (None, Some(text)) => OutputSchema::from_arg(text).map(Some).map_err(|e| {
            CliError::Usage(format!(
                "--json-schema: {e}; give the JSON Schema itself as JSON, e.g. \
                 --json-schema '{{\"type\":\"object\"}}'"
            ))
        }),
        (None, None) => Ok(None),
    }
}

async fn run_agent_in(args: RunArgs) -> Result<(Exit, RunWorktree), CliError> {
    let mut resolved = compat_resolve::resolve(&args)?;
    let codex = codex_resolve::settings(&args)?;
    codex_resolve::fill(&args, &codex, &mut resolved);
    if args.compat.codex.ignore_user_config {
        resolved.setting_sources.user = false;
    }
    if args.compat.codex.ephemeral && (args.resume.is_some() || args.continue_session) {
        return Err(CliError::Usage(
            "--ephemeral records no session, so it cannot continue one; drop --ephemeral or \
             the resume"
                .into(),
        ));
    }
    let output_schema = output_schema(&args)?;
    let interactive = !args.print && std::io::stdin().is_terminal();
    let pick = args.resume.as_deref() == Some("");
    if !interactive && pick {
        return Err(CliError::Usage(
            "--resume needs a session ID in a -p run (`ling sessions list` shows them); \
             without one it opens the REPL's picker"
                .into(),
        ));
    }
    if pick && args.compat.fork_session {
        return Err(CliError::Usage(
            "--fork-session needs the session's id (--resume ID) or --continue; the REPL's \
             picker does not fork"
                .into(),
        ));
    }
    let located = crate::session::locate(args.cwd.as_ref(), &args.add_dir)?;
    let mut options = run_options(&args, &resolved, &located.project_root)?;
    codex_resolve::apply(&args, &codex, &mut options);
    options.ephemeral = args.compat.codex.ephemeral;
    options.plugin_dirs = args.compat.plugin_dir.clone();
    let stream_input = resolved.input_format == compat_args::InputFormat::StreamJson;
    // Under stream-json input `initialize` may still bring one, and its own system prompt
    // texts: the stream-json front end tells the model.
    if let Some(schema) = output_schema.as_ref().filter(|_| !stream_input) {
        let append = options.prompt.append.take().unwrap_or_default();
        options.prompt.append = Some(format!("{append}\n\n{}", schema.instruction()));
    }
    let sources = resolved.setting_sources;
    let read_project = |mut paths: Paths| -> Result<(Paths, ProjectConfig), CliError> {
        paths.user_config = sources.user;
        let mut project = ProjectConfig::read(&paths)?;
        project.leave_out(&sources.left_out());
        Ok((paths, project))
    };
    let (located, worktree) = match &args.worktree {
        None => (located, None),
        Some(name) => {
            let (paths, project) = read_project(located)?;
            let (moved, worktree) =
                worktree_cmd::enter(name, &paths, &project, &options, interactive).await?;
            (moved, Some(worktree))
        }
    };
    let format = match resolved.output_format {
        OutputFormat::Text => crate::front::print::Format::Text,
        OutputFormat::Json => crate::front::print::Format::Json,
        OutputFormat::StreamJson => crate::front::print::Format::StreamJson,
        OutputFormat::LingStreamJson => crate::front::print::Format::LingStreamJson,
        OutputFormat::CodexJson => crate::front::print::Format::CodexJson,
    };
    if !args.image.is_empty()
        && (interactive || resolved.input_format == compat_args::InputFormat::StreamJson)
    {
        return Err(CliError::Usage(
            "--image attaches images to the prompt of a -p run (with a prompt argument or one on \
             stdin); in the REPL, ask the model to read the image file instead"
                .into(),
        ));
    }
    if args.until.is_some()
        && (interactive || resolved.input_format == compat_args::InputFormat::StreamJson)
    {
        return Err(CliError::Usage(
            "--until works until a check passes in a -p run with a prompt argument or one on \
             stdin; in the REPL, type /goal CMD instead"
                .into(),
        ));
    }
    if resolved.input_format == compat_args::InputFormat::StreamJson {
        if args.prompt.is_some() {
            return Err(CliError::Usage(
                "with --input-format stream-json the prompts come on stdin as JSON lines; drop \
                 the prompt argument"
                    .into(),
            ));
        }
        let (paths, project) = read_project(located.clone())?;
        let stream = crate::front::claude::StreamOptions {
            verbose: args.verbose,
            partial: args.compat.include_partial_messages,
            stdio_prompt: resolved.stdio_prompt,
            replay_user_messages: args.compat.replay_user_messages,
            output_schema,
        };
        crate::ui::signals::install_early();
        let outcome = crate::front::claude::run(options, paths, project, stream, &warn).await?;
        return Ok((outcome.into(), worktree));
    }
    if !interactive {
        let prompt = prompt::read_prompt(args.prompt.as_deref())?;
        // Nobody to ask: an untrusted project runs without its config (and is told so).
        let (paths, project) = read_project(located.clone())?;
        let start = Start {
            options,
            paths,
            project,
            interactive: false,
        };
        crate::ui::signals::install_early();
        let mut host = Host::start(start, &warn).await?;
        for image in &args.image {
            let path = located.working_dir.join(image);
            host.attach_image(&path)
                .map_err(|e| CliError::Usage(format!("--image {}: {e}", image.display())))?;
        }
        let print = crate::front::print::PrintOptions {
            format,
            verbose: args.verbose,
            partial: args.compat.include_partial_messages,
            last_message: args.compat.output_last_message.clone(),
            until: args.until.clone(),
            output_schema,
        };
        let outcome = crate::front::print::run(host, print, prompt).await;
        return Ok((outcome.into(), worktree));
    }
    if resolved.output_format != OutputFormat::Text {
        return Err(CliError::Usage(
            "--output-format applies to -p runs; add -p \"PROMPT\"".into(),
        ));
    }
    if output_schema.is_some() {
        return Err(CliError::Usage(
            "--output-schema and --json-schema apply to `ling exec` and -p runs; add -p \
             \"PROMPT\""
                .into(),
        ));
    }
    let (paths, mut project) = read_project(located)?;
    // Asked before anything of the project runs: no hook has fired, no server has started.
    if project.status() == TrustStatus::Untrusted {
        match crate::ui::trust::ask(&project, &paths).await? {
            crate::ui::trust::Answer::Trust => project.trust()?,
            crate::ui::trust::Answer::Open => {}
            crate::ui::trust::Answer::Quit => return Ok((Exit::Success, worktree)),
        }
    }
    let start = Start {
        options,
        paths,
        project,
        interactive: true,
    };
    let host = Host::start(start, &warn).await?;
    let outcome = crate::front::repl::run(host, args.prompt.clone(), pick).await?;
    Ok((outcome.into(), worktree))
}

/// A problem of the configuration files, shown as soon as the run's setup finds it.
fn warn(warning: &str) {
    crate::ui::output::stderr_line(format!("warning: {warning}"));
}

/// What the flags ask of an agent run: the shared flags' options, with what the run's other
/// spellings resolved to.
fn run_options(
    args: &RunArgs,
    resolved: &compat_resolve::Resolved,
    root: &std::path::Path,
) -> Result<RunOptions, CliError> {
    let mut options = args
        .agent
        .run_options(&args.mcp_config, args.strict_mcp_config);
    options.overrides.settings = match &args.compat.settings {
        Some(value) => Some(crate::config::FlagSettings::read(value, root)?),
        None => None,
    };
    options.overrides.permission_mode = resolved.permission_mode;
    options.overrides.sandbox = resolved.sandbox;
    options.overrides.never_ask = resolved.never_ask;
    options.overrides.reasoning_effort = resolved.reasoning_effort;
    options.program.agent.clone_from(&args.compat.agent);
    if let Some(json) = &args.compat.agents {
        let agents: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
            .map_err(|e| {
                CliError::Usage(format!(
                    "--agents: not a JSON object of agent definitions ({e}); write \
                     {{\"NAME\": {{\"description\": \"...\", \"prompt\": \"...\"}}}}"
                ))
            })?;
        options.program.agents = Some(agents);
    }
    options.prompt.replace = resolved.system_prompt.clone();
    options.prompt.append = resolved.append_system_prompt.clone();
    options.tools = resolved.tools.clone();
    options.session_id = resolved.session_id.clone();
    options.fork_session = args.compat.fork_session;
    options.resume = match (&args.resume, args.continue_session) {
        // `--resume` alone: the REPL's picker chooses, after setup.
        (Some(id), _) if id.is_empty() => Resume::New,
        (Some(id), _) => Resume::Id(id.clone()),
        (None, true) => Resume::Latest,
        (None, false) => Resume::New,
    };
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_has_its_exit_code() {
        let code = |outcome: RunOutcome| Exit::from(outcome).code();
        assert_eq!(code(RunOutcome::Success), 0);
        assert_eq!(code(RunOutcome::Failed), 1);
        assert_eq!(code(RunOutcome::Interrupted(Signal::Interrupt)), 130);
        assert_eq!(code(RunOutcome::Interrupted(Signal::Terminate)), 143);
        assert_eq!(code(RunOutcome::Interrupted(Signal::HangUp)), 129);
    }
}
