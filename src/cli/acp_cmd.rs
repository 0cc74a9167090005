//! `ling acp`: serves the Agent Client Protocol on stdin/stdout for an editor ([`crate::front::acp`]),
//! and the flags an agent run takes from a command line that editors and `ling mcp serve` share.
//! Setup warnings go to stderr (editors keep an agent's stderr in their logs); stdout carries
//! protocol messages only.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::args::{ApiArg, split_rules};
use super::{CliError, Exit};
use crate::agent::PromptOptions;
use crate::config::{PermissionMode, SandboxMode, SettingsOverrides};
use crate::setup::{Resume, RunOptions};

/// The flags of an agent run that a server front end (`ling acp`, `ling mcp serve`) takes.
#[derive(Debug, Args, Default, Clone)]
pub struct AgentFlags {
    /// Model id sent to the API [env: LING_MODEL]
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// OpenAI-compatible base URL, ending before /chat/completions [env: OPENAI_BASE_URL, LING_BASE_URL]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The model server's wire API (default: anthropic for api.anthropic.com, else chat) [settings: api]
    #[arg(long, value_enum, value_name = "API")]
    pub api: Option<ApiArg>,

    /// Permission mode
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionMode>,

    /// The shell sandbox of the bash tool (default: workspace-write where the kernel has Landlock)
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxMode>,

    /// Allow rules, comma-separated: a tool name, `mcp__server__*`, or `bash(PREFIX*)`.
    #[arg(long, value_name = "RULE,...")]
    pub allowed_tools: Vec<String>,

    /// Deny rules, comma-separated (deny wins over allow).
    #[arg(long, value_name = "RULE,...")]
    pub disallowed_tools: Vec<String>,

    /// Stop after N model requests in one run
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Load no hooks at all
    #[arg(long)]
    pub no_hooks: bool,

    /// Replace the built-in system prompt
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,

    /// Add to the built-in system prompt
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Allow MCP servers' sampling requests without asking
    #[arg(long)]
    pub allow_sampling: bool,
}

impl AgentFlags {
    /// The run options these flags ask for, with these `--mcp-config` files.
    pub fn run_options(&self, mcp_config: &[PathBuf], strict_mcp_config: bool) -> RunOptions {
        RunOptions {
            overrides: SettingsOverrides {
                model: self.model.clone(),
                base_url: self.base_url.clone(),
                permission_mode: self.permission_mode,
                allowed_tools: split_rules(&self.allowed_tools),
                disallowed_tools: split_rules(&self.disallowed_tools),
                max_turns: self.max_turns,
                no_hooks: self.no_hooks,
                allow_sampling: self.allow_sampling,
                sandbox: self.sandbox,
                api: self.api.map(Into::into),
                ..SettingsOverrides::default()
            },
            mcp_config: mcp_config.to_vec(),
            strict_mcp_config,
            prompt: PromptOptions {
                replace: self.system_prompt.clone(),
                append: self.append_system_prompt.clone(),
                ..PromptOptions::default()
            },
            resume: Resume::New,
            tools: None,
            session_id: None,
            fork_session: false,
        }
    }
}

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
