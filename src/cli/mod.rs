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
mod run_agent;
mod sandbox_cmd;
mod serve_cmd;
mod sessions_cmd;
mod trust_cmd;
mod worktree_cmd;

#[cfg(test)]
mod man_tests;

use clap::Parser;

pub use args::{Cli, Command, HooksCommand, OutputFormat, RunArgs};
pub use mcp_cmd::McpCommand;

use crate::config::ConfigError;
use crate::session::SetupError;
use crate::trust::TrustError;
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
    let (exit, worktree) = run_agent::run_agent_in(args).await?;
    if let Some(worktree) = worktree {
        worktree.end().await;
    }
    Ok(exit)
}

/// A problem of the configuration files, shown as soon as the run's setup finds it.
fn warn(warning: &str) {
    crate::ui::output::stderr_line(format!("warning: {warning}"));
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
