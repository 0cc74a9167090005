//! `ling mcp serve`: Ling's builtin tools (or with `--agent`, the whole agent as one `ling` tool)
//! served over stdio MCP to another agent ([`crate::front::serve`]). stdout carries protocol messages
//! only; setup warnings go to stderr.

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::agent_flags::{AgentFlags, McpSources};
use super::{CliError, Exit};
use crate::front::serve::{ServeError, ServeOptions};
use crate::setup::project_root;

/// `ling mcp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Offer the whole agent as one `ling` tool (a task in, the answer out) instead of the
    /// builtin tools
    #[arg(long)]
    pub agent: bool,

    #[command(flatten)]
    pub flags: AgentFlags,
}

pub async fn run(args: ServeArgs, sources: McpSources) -> Result<Exit, CliError> {
    let options = ServeOptions {
        root: project_root(sources.cwd.as_ref())?,
        run: args.flags.run_options(&sources.extra, sources.strict),
        agent: args.agent,
    };
    let shutdown = CancellationToken::new();
    let watcher = tokio::spawn(crate::ui::signals::watch(shutdown.clone()));
    let warn = |warning: &str| {
        crate::ui::output::stderr_line(format!("ling mcp serve: warning: {warning}"));
    };
    let served = crate::front::serve::run(options, shutdown.clone(), &warn).await;
    watcher.abort();
    match served {
        Ok(()) if shutdown.is_cancelled() => Ok(Exit::from(crate::ui::RunOutcome::Interrupted(
            crate::ui::signals::received(),
        ))),
        Ok(()) => Ok(Exit::Success),
        Err(ServeError::Setup(e)) => Err(CliError::Setup(e)),
        Err(ServeError::Trust(e)) => Err(CliError::Trust(e)),
    }
}
