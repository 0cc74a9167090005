//! The command-line entry: parses the arguments, builds what a run needs, and hands it to the
//! REPL, the one-shot runner or a subcommand. Every failure is a [`CliError`], which maps to the
//! exit codes of `docs/cli.md` in [`CliError::exit`].

mod args;
mod completion_cmd;
mod hooks_cmd;
mod mcp_cmd;
mod print;
mod setup;
pub(crate) mod signals;
mod trust_cmd;

#[cfg(test)]
mod man_tests;

use std::io::IsTerminal;

use clap::Parser;

pub use args::{Cli, Command, HooksCommand, McpCommand, OutputFormat, RunArgs};
pub use setup::Setup;

use crate::config::{ConfigError, Paths, ProjectConfig, TrustError, TrustStatus};

/// Exit codes of `docs/cli.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    Failure = 1,
    Usage = 2,
    Interrupted = 130,
    /// Ended by SIGHUP (the terminal went away).
    HungUp = 129,
    /// Ended by SIGTERM.
    Terminated = 143,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit as u8)
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
    /// The run failed (API error after retries, a tool loop aborted): exit 1.
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    pub fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) | Self::Config(_) | Self::Trust(_) => Exit::Usage,
            Self::Failed(_) => Exit::Failure,
        }
    }
}

/// Runs Ling with the process arguments. Printing of `--help`, `--version` and argument errors is
/// clap's; everything else goes through the `ui` module.
pub fn run() -> Result<Exit, CliError> {
    let cli = match Cli::try_parse() {
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(dispatch(cli))
}

async fn dispatch(cli: Cli) -> Result<Exit, CliError> {
    match cli.command {
        Some(Command::Mcp {
            command,
            cwd,
            mcp_config,
            strict_mcp_config,
        }) => {
            let sources = mcp_cmd::McpSources {
                cwd,
                extra: mcp_config,
                strict: strict_mcp_config,
            };
            mcp_cmd::run(command, sources).await
        }
        Some(Command::Hooks { command, cwd }) => hooks_cmd::run(command, cwd).await,
        Some(Command::Trust { dir, list, revoke }) => trust_cmd::run(dir, list, revoke),
        Some(Command::Completion { shell }) => Ok(completion_cmd::run(shell)),
        None => run_agent(cli.run).await,
    }
}

async fn run_agent(args: RunArgs) -> Result<Exit, CliError> {
    let interactive = !args.print && std::io::stdin().is_terminal();
    if !interactive {
        let prompt = print::read_prompt(args.prompt.as_deref())?;
        // Nobody to ask: an untrusted project runs without its config (and is told so).
        let paths = Paths::new(setup::project_root(args.cwd.as_ref())?);
        let project = ProjectConfig::read(&paths)?;
        let setup = Setup::prepare(&args, paths, project, false).await?;
        return print::run(setup, &args, prompt).await;
    }
    if args.output_format != OutputFormat::Text {
        return Err(CliError::Usage(
            "--output-format applies to -p runs; add -p \"PROMPT\"".into(),
        ));
    }
    let paths = Paths::new(setup::project_root(args.cwd.as_ref())?);
    let mut project = ProjectConfig::read(&paths)?;
    // Asked before anything of the project runs: no hook has fired, no server has started.
    if project.status() == TrustStatus::Untrusted {
        match crate::ui::trust::ask(&project, &paths).await? {
            crate::ui::trust::Answer::Trust => project.trust()?,
            crate::ui::trust::Answer::Open => {}
            crate::ui::trust::Answer::Quit => return Ok(Exit::Success),
        }
    }
    let setup = Setup::prepare(&args, paths, project, true).await?;
    crate::ui::repl::run(setup, args.prompt.clone()).await
}
