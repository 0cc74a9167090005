//! `ling mcp list|get|add|remove|call|login|logout`: the commands of `docs/mcp.md` over `mcp::commands`.
//! An untrusted project's servers are listed as `untrusted` and never started.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use super::args::{ScopeArg, TransportArg};
use super::{CliError, Exit, McpCommand};
use crate::config::mcp::load_servers;
use crate::config::{ConfigError, Paths, Settings, SettingsOverrides};
use crate::mcp::ManagerOptions;
use crate::mcp::commands::{self, CommandError, Scope};
use crate::process::{ChildEnv, Trampoline};
use crate::setup::{children, project_root};
use crate::trust::{ProjectConfig, TrustStatus};
use crate::ui::output::{stderr_line, stdout, stdout_data, stdout_json};

/// Where `ling mcp` reads its servers from.
pub struct McpSources {
    pub cwd: Option<PathBuf>,
    pub extra: Vec<PathBuf>,
    pub strict: bool,
}

pub async fn run(command: McpCommand, sources: McpSources) -> Result<Exit, CliError> {
    let paths = Paths::new(project_root(sources.cwd.as_ref())?);
    let project = ProjectConfig::read(&paths)?;
    let mut options = ManagerOptions::new(paths.clone());
    // Servers probed here start as in a run. Settings that cannot be read leave the default
    // (no `OPENAI_API_KEY`), the safe side: these commands need no settings otherwise.
    options.child_env = match Settings::load(&paths, project.layer(), &SettingsOverrides::default())
    {
        Ok(settings) => children(&settings),
        Err(_) => ChildEnv::default().with_trampoline(Trampoline::current()),
    };
    let load = || {
        let (mut servers, warnings) =
            load_servers(&paths, project.layer(), &sources.extra, sources.strict)?;
        for warning in warnings {
            stderr_line(format!("warning: {warning}"));
        }
        // As in a run: a server whose files are not the ones trusted does not start.
        let mut no_hooks = crate::config::hooks::HooksConfig::default();
        crate::trust::guard::attach(&project, &mut no_hooks, &mut servers, &[]);
        Ok::<_, ConfigError>(servers)
    };
    // An untrusted project's servers are shown, never started.
    let untrusted = if sources.strict {
        Vec::new()
    } else {
        project.untrusted_servers()
    };
    let not_found = |name: &str| match untrusted.iter().any(|(n, _)| n == name) {
        true => untrusted_server(name),
        false => unknown_server(name),
    };
    match command {
        McpCommand::Serve(args) => super::serve_cmd::run(args, sources).await,
        McpCommand::List { json } => {
            let configs = load()?;
            let untrusted: Vec<_> = untrusted
                .iter()
                .filter(|(name, _)| !configs.iter().any(|c| c.name == *name))
                .cloned()
                .collect();
            let sources: Vec<(String, String)> = configs
                .iter()
                .map(|c| (c.name.clone(), paths.display(&c.source).into_owned()))
                .collect();
            let (statuses, _) = commands::probe(configs, options).await;
            let list = commands::render_list(&statuses, &untrusted, json);
            listing(&with_sources(&list, &sources, json), json);
            Ok(Exit::Success)
        }
        McpCommand::Get {
            url: Some(url),
            header,
            json,
            ..
        } => {
            let config = commands::adhoc_http(&url, &header).map_err(command_error)?;
            let (statuses, tools) = commands::probe(vec![config.clone()], options).await;
            let status = statuses.first();
            listing(&commands::render_get(&config, status, &tools, json), json);
            Ok(Exit::Success)
        }
        McpCommand::Get { name, json, .. } => {
            let name = name.unwrap_or_default();
            let mut configs = load()?;
            let config = configs
                .iter()
                .find(|c| c.name == name)
                .cloned()
                .ok_or_else(|| not_found(&name))?;
            // Only this server is started, but its tools are named within the whole config, as
            // the agent names them.
            for other in configs.iter_mut().filter(|c| c.name != name) {
                other.disabled = true;
            }
            let (statuses, tools) = commands::probe(configs, options).await;
            let status = statuses.iter().find(|s| s.name == name);
            listing(&commands::render_get(&config, status, &tools, json), json);
            Ok(Exit::Success)
        }
        McpCommand::Add {
            name,
            target,
            transport,
            env,
            header,
            scope,
        } => {
            let scope = scope_of(scope);
            let text = match transport {
                TransportArg::Stdio => {
                    let (command, args) = target.split_first().ok_or_else(|| {
                        CliError::Usage("give the server command after --".into())
                    })?;
                    commands::add_stdio(&paths, scope, &name, &env, command, args)
                }
                TransportArg::Http | TransportArg::Sse => {
                    let (target, header) = split_headers(target, header)?;
                    let [url] = target.as_slice() else {
                        return Err(CliError::Usage(
                            "an http or sse server takes exactly one URL: ling mcp add --transport http NAME URL [-H 'K: V']...".into(),
                        ));
                    };
                    let kind = if transport == TransportArg::Http { "http" } else { "sse" };
                    commands::add_remote(&paths, scope, kind, &name, url, &header)
                }
            }
            .map_err(command_error)?;
            keep_trust(&paths, &project)?;
            stdout(&text);
            Ok(Exit::Success)
        }
        McpCommand::Import {
            from,
            scope,
            force,
            dry_run,
        } => {
            let options = super::mcp_import_cmd::ImportOptions {
                from,
                scope: scope_of(scope),
                force,
                dry_run,
            };
            let imported = super::mcp_import_cmd::run(&paths, options)?;
            // Servers from the project's own files are the repository's, not the user's
            // word: the project is then asked about like any changed config.
            if !dry_run && !imported.from_project {
                keep_trust(&paths, &project)?;
            }
            Ok(Exit::Success)
        }
        McpCommand::Remove { name, scope } => {
            let text =
                commands::remove(&paths, scope.map(scope_of), &name).map_err(command_error)?;
            keep_trust(&paths, &project)?;
            stdout(&text);
            Ok(Exit::Success)
        }
        McpCommand::Call {
            name,
            tool,
            args,
            url,
            header,
        } => {
            // With --url there is no NAME: the positionals shift left by one.
            let (config, tool, args) = match url {
                Some(url) => {
                    let config = commands::adhoc_http(&url, &header).map_err(command_error)?;
                    (config, name, tool)
                }
                None => {
                    let name = name.unwrap_or_default();
                    let config = load()?
                        .into_iter()
                        .find(|c| c.name == name)
                        .ok_or_else(|| not_found(&name))?;
                    (config, tool, args)
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
            let result = commands::call(config, &tool, args.as_deref(), options, &cancel).await;
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
        McpCommand::Login { name, no_browser } => {
            let config = load()?
                .into_iter()
                .find(|c| c.name == name)
                .ok_or_else(|| not_found(&name))?;
            super::mcp_login::login(config, options, no_browser).await
        }
        McpCommand::Logout { name } => {
            let config = load()?
                .into_iter()
                .find(|c| c.name == name)
                .ok_or_else(|| not_found(&name))?;
            super::mcp_login::logout(config, options).await
        }
    }
}

/// A listing on stdout: JSON as serde_json wrote it (C1 and bidi characters escaped too, to a
/// terminal); text always neutralised, it is for reading.
fn listing(text: &str, json: bool) {
    if json {
        stdout_json(text);
    } else {
        stdout(text);
    }
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

/// After `add`/`remove` edited `.ling/mcp.json`: a folder that was trusted, or had no project
/// config at all, stays usable, since the only change is the one the user just made. An
/// untrusted folder stays untrusted.
/// `ling mcp list` with the file each server came from: a `source` key per server in JSON,
/// `[from FILE]` at the end of its first line in text.
fn with_sources(list: &str, sources: &[(String, String)], json: bool) -> String {
    let source = |name: &str| sources.iter().find(|(n, _)| n == name).map(|(_, s)| s);
    if json {
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(list) else {
            return list.to_string();
        };
        for server in value["servers"].as_array_mut().into_iter().flatten() {
            let found = server["name"].as_str().and_then(source).cloned();
            if let Some(found) = found {
                server["source"] = serde_json::Value::String(found);
            }
        }
        return format!("{value}\n");
    }
    let mut out = String::new();
    for line in list.split_inclusive('\n') {
        let named = sources.iter().find_map(|(name, file)| {
            let rest = line.strip_prefix(name.as_str())?.strip_prefix(" (")?;
            rest.split_once("):")?;
            Some(format!("{}  [from {file}]\n", line.trim_end_matches('\n')))
        });
        out.push_str(named.as_deref().unwrap_or(line));
    }
    out
}

fn keep_trust(paths: &Paths, before: &ProjectConfig) -> Result<(), CliError> {
    let was_usable = match before.status() {
        TrustStatus::Trusted => true,
        TrustStatus::None => !before.is_user_config(),
        TrustStatus::Untrusted => false,
    };
    let mut after = ProjectConfig::read(paths)?;
    if was_usable && after.status() == TrustStatus::Untrusted {
        after.trust()?;
    }
    Ok(())
}

fn untrusted_server(name: &str) -> CliError {
    CliError::Usage(format!(
        "MCP server {name:?} is in .ling/mcp.json of a project that is not trusted, so it is not \
         started; run `ling trust` in the project to use its config"
    ))
}

fn unknown_server(name: &str) -> CliError {
    CliError::Usage(format!(
        "no MCP server named {name:?} is configured; `ling mcp list` shows the configured servers"
    ))
}

fn command_error(e: CommandError) -> CliError {
    match e {
        CommandError::Config(e) => CliError::Config(e),
        CommandError::Usage(message) => CliError::Usage(message),
        CommandError::Mcp(e) => CliError::Failed(e.to_string()),
        CommandError::Call(message) => CliError::Failed(message),
    }
}
