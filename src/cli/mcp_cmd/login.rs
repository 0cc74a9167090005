//! `ling mcp login NAME` and `ling mcp logout NAME`: an OAuth login to one HTTP server, through
//! the browser (`ui::login`), its tokens kept in `LING_HOME/credentials/`; and forgetting them.

use clap::Args;

use super::{CliError, Exit, McpContext};
use crate::config::mcp::ServerConfig;
use crate::mcp::{ManagerOptions, McpManager};
use crate::ui::output::stdout_line;

#[derive(Debug, Args)]
pub struct LoginArgs {
    name: String,
    /// Only print the URL; do not open a browser (also LING_NO_BROWSER=1)
    #[arg(long)]
    no_browser: bool,
}

pub(super) async fn run_login(cx: McpContext, args: LoginArgs) -> Result<Exit, CliError> {
    let config = cx.server(&args.name)?;
    login(config, cx.options, args.no_browser).await
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    name: String,
}

pub(super) async fn run_logout(cx: McpContext, args: LogoutArgs) -> Result<Exit, CliError> {
    let config = cx.server(&args.name)?;
    logout(config, cx.options).await
}

/// Logs in to `config`'s server and says how many tools it offers now.
async fn login(
    mut config: ServerConfig,
    options: ManagerOptions,
    no_browser: bool,
) -> Result<Exit, CliError> {
    let name = config.name.clone();
    let login = crate::ui::login::browser_login(&name, no_browser, options.child_env.clone());
    // Not started in the background: `login` connects it, allowed to ask the user.
    config.disabled = true;
    let manager = McpManager::start(vec![config], options);
    let outcome = manager.login(&name, login).await;
    let tools = manager.statuses().first().map_or(0, |s| s.tools);
    manager.shutdown().await;
    outcome.map_err(|e| CliError::Failed(format!("login to MCP server {name:?} failed: {e}")))?;
    stdout_line(format!(
        "Logged in to MCP server {name:?} ({tools} tool{}); the token is kept in \
         LING_HOME/credentials/.",
        if tools == 1 { "" } else { "s" }
    ));
    Ok(Exit::Success)
}

/// Deletes the stored credentials of `config`'s server.
async fn logout(mut config: ServerConfig, options: ManagerOptions) -> Result<Exit, CliError> {
    let name = config.name.clone();
    config.disabled = true;
    let manager = McpManager::start(vec![config], options);
    let removed = manager.logout(&name);
    manager.shutdown().await;
    let text = match removed.map_err(|e| CliError::Failed(e.to_string()))? {
        true => format!("Logged out of MCP server {name:?}: its OAuth tokens are deleted."),
        false => format!("MCP server {name:?} has no stored OAuth tokens; nothing to do."),
    };
    stdout_line(text);
    Ok(Exit::Success)
}
