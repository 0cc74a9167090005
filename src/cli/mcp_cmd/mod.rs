//! `ling mcp list|get|add|remove|import|call|login|logout|serve` (`docs/mcp.md`): each
//! subcommand is a `run_*` with its own `*Args`, and [`run`] only dispatches. What a command
//! does is [`crate::mcp::commands`] (it returns data); how its answer reads is `print.rs`.
//! An untrusted project's servers are listed as `untrusted` and never started.

mod import;
mod login;
pub mod print;

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use tokio_util::sync::CancellationToken;

use super::agent_flags::McpSources;
use super::{CliError, Exit};
use crate::config::mcp::{ServerConfig, load_servers};
use crate::config::{ConfigError, Paths, Settings, SettingsOverrides};
use crate::mcp::ManagerOptions;
use crate::mcp::commands::{self, CommandError, Scope};
use crate::process::{ChildEnv, Trampoline};
use crate::setup::{children, project_root};
use crate::trust::{ProjectConfig, TrustStatus};
use crate::ui::output::{stderr_line, stdout, stdout_data};

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Every configured server: transport, status and tool count
    List(ListArgs),
    /// One server: its config (secrets masked), server info and tools
    Get(GetArgs),
    /// Add a server to .ling/mcp.json: `NAME -- COMMAND [ARGS...]` or `--transport http NAME URL`
    Add(AddArgs),
    /// Remove a server from .ling/mcp.json (or ~/.ling/mcp.json with --scope user)
    Remove(RemoveArgs),
    /// Copy the MCP servers of Claude Desktop, Claude Code, Cursor, VS Code or Codex into
    /// .ling/mcp.json (or ~/.ling/mcp.json with --scope user)
    Import(import::ImportArgs),
    /// Connect to a server, call one tool and print its result (exit 1 if it is an error)
    Call(CallArgs),
    /// Log in to an HTTP server with OAuth: prints the URL to open (and opens the browser)
    Login(login::LoginArgs),
    /// Forget the OAuth tokens Ling keeps for a server (LING_HOME/credentials/)
    Logout(login::LogoutArgs),
    /// Serve Ling's tools over stdio MCP, for other agents (`--agent`: the whole agent as one
    /// tool)
    #[command(
        after_help = "Started by the other agent, e.g. `claude mcp add ling -- ling mcp \
                      serve`; docs/mcp.md shows the setups."
    )]
    Serve(super::serve_cmd::ServeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    Stdio,
    Http,
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    Project,
    User,
}

pub async fn run(command: McpCommand, sources: McpSources) -> Result<Exit, CliError> {
    let cx = McpContext::new(&sources)?;
    match command {
        McpCommand::List(args) => run_list(cx, args).await,
        McpCommand::Get(args) => run_get(cx, args).await,
        McpCommand::Add(args) => run_add(&cx, args),
        McpCommand::Remove(args) => run_remove(&cx, args),
        McpCommand::Import(args) => import::run_import(&cx, &args),
        McpCommand::Call(args) => run_call(cx, args).await,
        McpCommand::Login(args) => login::run_login(cx, args).await,
        McpCommand::Logout(args) => login::run_logout(cx, args).await,
        McpCommand::Serve(args) => super::serve_cmd::run(args, sources).await,
    }
}

/// What every subcommand starts from: the project and its trust, and the options its servers
/// start with.
struct McpContext {
    paths: Paths,
    project: ProjectConfig,
    options: ManagerOptions,
    extra: Vec<PathBuf>,
    strict: bool,
    /// (name, transport) of the servers of an untrusted project: shown, never started.
    untrusted: Vec<(String, &'static str)>,
    /// The settings' `env`, whose files a server outside the sandbox is checked against.
    env: std::collections::BTreeMap<String, String>,
}

impl McpContext {
    fn new(sources: &McpSources) -> Result<Self, CliError> {
        let paths = Paths::new(project_root(sources.cwd.as_ref())?);
        let project = ProjectConfig::read(&paths)?;
        let mut options = ManagerOptions::new(paths.clone());
        // Servers probed here start as in a run. Settings that cannot be read leave the
        // default (no `OPENAI_API_KEY`), the safe side: these commands need no settings
        // otherwise.
        let settings = Settings::load(&paths, project.layer(), &SettingsOverrides::default()).ok();
        let env = settings.as_ref().map(|s| s.env.clone()).unwrap_or_default();
        let guarded = crate::trust::guard::attach(
            &project,
            &mut crate::config::hooks::HooksConfig::default(),
            &mut [],
            &[],
            &env,
        );
        options.child_env = match &settings {
            Some(settings) => children(settings),
            None => ChildEnv::default().with_trampoline(Trampoline::current()),
        }
        .with_outside(guarded.outside);
        let untrusted = if sources.strict {
            Vec::new()
        } else {
            project.untrusted_servers()
        };
        Ok(Self {
            paths,
            project,
            options,
            extra: sources.extra.clone(),
            strict: sources.strict,
            untrusted,
            env,
        })
    }

    /// The configured servers, their warnings printed; a server whose files are not the ones
    /// trusted is kept from starting, as in a run.
    fn servers(&self) -> Result<Vec<ServerConfig>, ConfigError> {
        let (mut servers, warnings) =
            load_servers(&self.paths, self.project.layer(), &self.extra, self.strict)?;
        for warning in warnings {
            stderr_line(format!("warning: {warning}"));
        }
        let mut no_hooks = crate::config::hooks::HooksConfig::default();
        crate::trust::guard::attach(&self.project, &mut no_hooks, &mut servers, &[], &self.env);
        Ok(servers)
    }

    /// The configured server `name`, or an error saying why there is none to start.
    fn server(&self, name: &str) -> Result<ServerConfig, CliError> {
        self.servers()?
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| self.not_found(name))
    }

    fn not_found(&self, name: &str) -> CliError {
        if self.untrusted.iter().any(|(n, _)| n == name) {
            CliError::Usage(format!(
                "MCP server {name:?} is in .ling/mcp.json of a project that is not trusted, so \
                 it is not started; run `ling trust` in the project to use its config"
            ))
        } else {
            CliError::Usage(format!(
                "no MCP server named {name:?} is configured; `ling mcp list` shows the \
                 configured servers"
            ))
        }
    }

    /// After `add`/`remove`/`import` edited an `mcp.json`: a folder that was trusted, or had
    /// no project config at all, stays usable, since the only change is the one the user just
    /// made. An untrusted folder stays untrusted.
    fn keep_trust(&self) -> Result<(), CliError> {
        let was_usable = match self.project.status() {
            TrustStatus::Trusted => true,
            TrustStatus::None => !self.project.is_user_config(),
            TrustStatus::Untrusted => false,
        };
        let mut after = ProjectConfig::read(&self.paths)?;
        if was_usable && after.status() == TrustStatus::Untrusted {
            after.trust()?;
        }
        Ok(())
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long)]
    json: bool,
}

async fn run_list(cx: McpContext, args: ListArgs) -> Result<Exit, CliError> {
    let configs = cx.servers()?;
    let untrusted: Vec<_> = cx
        .untrusted
        .iter()
        .filter(|(name, _)| !configs.iter().any(|c| c.name == *name))
        .cloned()
        .collect();
    let sources: Vec<(String, String)> = configs
        .iter()
        .map(|c| (c.name.clone(), cx.paths.display(&c.source).into_owned()))
        .collect();
    let (statuses, _) = commands::probe(configs, cx.options).await;
    let list = print::render_list(&statuses, &untrusted, args.json);
    print::listing(&print::with_sources(&list, &sources, args.json), args.json);
    Ok(Exit::Success)
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// Server name (omit with --url)
    #[arg(required_unless_present = "url", conflicts_with = "url")]
    name: Option<String>,
    #[arg(long)]
    json: bool,
    /// An ad-hoc Streamable HTTP server instead of a configured one
    #[arg(long)]
    url: Option<String>,
    /// HTTP header for --url, 'K: V' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "K: V", requires = "url")]
    header: Vec<String>,
}

async fn run_get(cx: McpContext, args: GetArgs) -> Result<Exit, CliError> {
    let (config, configs) = match &args.url {
        Some(url) => {
            let config = commands::adhoc_http(url, &args.header).map_err(command_error)?;
            (config.clone(), vec![config])
        }
        None => {
            let name = args.name.unwrap_or_default();
            let mut configs = cx.servers()?;
            let config = configs
                .iter()
                .find(|c| c.name == name)
                .cloned()
                .ok_or_else(|| cx.not_found(&name))?;
            // Only this server is started, but its tools are named within the whole config,
            // as the agent names them.
            for other in configs.iter_mut().filter(|c| c.name != name) {
                other.disabled = true;
            }
            (config, configs)
        }
    };
    let (statuses, tools) = commands::probe(configs, cx.options).await;
    let status = statuses.iter().find(|s| s.name == config.name);
    let text = print::render_get(&config, status, &tools, args.json);
    print::listing(&text, args.json);
    Ok(Exit::Success)
}

#[derive(Debug, Args)]
pub struct AddArgs {
    name: String,
    /// The command and its arguments (stdio), or the URL (http, sse)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    target: Vec<String>,
    #[arg(long, value_enum, default_value_t = TransportArg::Stdio)]
    transport: TransportArg,
    /// Environment variable for the server, K=V (repeatable)
    #[arg(short = 'e', long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// HTTP header, 'K: V' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "K: V")]
    header: Vec<String>,
    #[arg(long, value_enum, default_value_t = ScopeArg::Project)]
    scope: ScopeArg,
}

fn run_add(cx: &McpContext, args: AddArgs) -> Result<Exit, CliError> {
    let AddArgs {
        name,
        target,
        transport,
        env,
        header,
        scope,
    } = args;
    let scope = scope_of(scope);
    let added = match transport {
        TransportArg::Stdio => {
            let (command, args) = target
                .split_first()
                .ok_or_else(|| CliError::Usage("give the server command after --".into()))?;
            commands::add_stdio(&cx.paths, scope, &name, &env, command, args)
        }
        TransportArg::Http | TransportArg::Sse => {
            let (target, header) = split_headers(target, header)?;
            let [url] = target.as_slice() else {
                return Err(CliError::Usage(
                    "an http or sse server takes exactly one URL: ling mcp add --transport http \
                     NAME URL [-H 'K: V']..."
                        .into(),
                ));
            };
            let kind = if transport == TransportArg::Http {
                "http"
            } else {
                "sse"
            };
            commands::add_remote(&cx.paths, scope, kind, &name, url, &header)
        }
    }
    .map_err(command_error)?;
    cx.keep_trust()?;
    stdout(print::added(&name, &added));
    Ok(Exit::Success)
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    name: String,
    /// Which file (default: the project file, then the user file)
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
}

fn run_remove(cx: &McpContext, args: RemoveArgs) -> Result<Exit, CliError> {
    let file =
        commands::remove(&cx.paths, args.scope.map(scope_of), &args.name).map_err(command_error)?;
    cx.keep_trust()?;
    stdout(print::removed(&args.name, &file));
    Ok(Exit::Success)
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// Server name (omit with --url)
    #[arg(required_unless_present = "url")]
    name: Option<String>,
    tool: Option<String>,
    /// Arguments as a JSON object
    args: Option<String>,
    /// An ad-hoc Streamable HTTP server instead of a configured one
    #[arg(long)]
    url: Option<String>,
    /// HTTP header for --url, 'K: V' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "K: V")]
    header: Vec<String>,
}

async fn run_call(cx: McpContext, args: CallArgs) -> Result<Exit, CliError> {
    // With --url there is no NAME: the positionals shift left by one.
    let (config, tool, json_args) = match &args.url {
        Some(url) => {
            let config = commands::adhoc_http(url, &args.header).map_err(command_error)?;
            (config, args.name, args.tool)
        }
        None => {
            let config = cx.server(&args.name.unwrap_or_default())?;
            (config, args.tool, args.args)
        }
    };
    let tool = tool.ok_or_else(|| {
        CliError::Usage("name the tool to call: ling mcp call NAME TOOL [JSON_ARGS]".into())
    })?;
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let result = commands::call(config, &tool, json_args.as_deref(), cx.options, &cancel).await;
    watcher.abort();
    if cancel.is_cancelled() {
        return Ok(Exit::Interrupted);
    }
    let result = result.map_err(command_error)?;
    let mut text = result.text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // A tool's result is data: exact to a pipe, neutralised to a terminal.
    stdout_data(&text);
    Ok(if result.is_error {
        Exit::Failure
    } else {
        Exit::Success
    })
}

/// Takes the `-H`/`--header` flags written after the URL out of `target`: it collects every
/// argument after NAME, so that a stdio command keeps its own flags.
fn split_headers(
    target: Vec<String>,
    mut headers: Vec<String>,
) -> Result<(Vec<String>, Vec<String>), CliError> {
    let mut rest = Vec::new();
    let mut args = target.into_iter();
    while let Some(arg) = args.next() {
        if arg == "-H" || arg == "--header" {
            let value = args.next().ok_or_else(|| {
                CliError::Usage(format!("{arg} needs a value: {arg} 'Name: value'"))
            })?;
            headers.push(value);
        } else if let Some(value) = arg.strip_prefix("--header=") {
            headers.push(value.to_string());
        } else if let Some(value) = arg.strip_prefix("-H").filter(|v| !v.is_empty()) {
            headers.push(value.to_string());
        } else {
            rest.push(arg);
        }
    }
    Ok((rest, headers))
}

fn scope_of(scope: ScopeArg) -> Scope {
    match scope {
        ScopeArg::Project => Scope::Project,
        ScopeArg::User => Scope::User,
    }
}

fn command_error(e: CommandError) -> CliError {
    match e {
        CommandError::Config(e) => CliError::Config(e),
        CommandError::Usage(message) => CliError::Usage(message),
        CommandError::Mcp(e) => CliError::Failed(e.to_string()),
        CommandError::Call(message) => CliError::Failed(message),
    }
}
