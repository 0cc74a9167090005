//! `ling acp`: serves the Agent Client Protocol on stdin/stdout for an editor ([`crate::front::acp`]),
//! started with the flags of an agent run ([`AgentFlags`]).
//! Setup warnings go to stderr (editors keep an agent's stderr in their logs); stdout carries
//! protocol messages only.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::agent_flags::AgentFlags;
use super::{CliError, Exit};

/// `ling acp`.
#[derive(Debug, Args)]
pub struct AcpArgs {
    #[command(flatten)]
    pub agent: AgentFlags,

    /// Extra MCP config file for every session (repeatable), beside the editor's servers
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,

    /// Use only the --mcp-config files and the editor's servers
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// How long the editor may take to answer one file or terminal request, in ms
    #[arg(long, value_name = "MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub client_timeout_ms: u64,
}

pub async fn run(args: AcpArgs) -> Result<Exit, CliError> {
    let options = crate::front::acp::AcpOptions {
        run: args
            .agent
            .run_options(&args.mcp_config, args.strict_mcp_config),
        client_timeout: Duration::from_millis(args.client_timeout_ms),
    };
    let shutdown = CancellationToken::new();
    let watcher = tokio::spawn(crate::ui::signals::watch(shutdown.clone()));
    let warn: crate::front::acp::Warn = std::rc::Rc::new(|warning: &str| {
        crate::ui::output::stderr_line(format!("ling acp: warning: {warning}"));
    });
    crate::front::acp::run(options, shutdown.clone(), warn).await;
    watcher.abort();
    Ok(if shutdown.is_cancelled() {
        Exit::from(crate::ui::RunOutcome::Interrupted(
            crate::ui::signals::received(),
        ))
    } else {
        Exit::Success
    })
}
