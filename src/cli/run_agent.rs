//! An agent run from the flags: what it prepares (the resolved spellings, the checks between
//! flags, the options, the worktree of `-w`), then the one front end it runs (stream-json on
//! stdin, a `-p` run, or the REPL) and how that ended.

use std::io::IsTerminal;

use super::args::{OutputFormat, RunArgs};
use super::compat_args::InputFormat;
use super::{CliError, Exit, codex_resolve, compat_resolve, prompt, warn, worktree_cmd};
use crate::config::Paths;
use crate::front::print::schema::OutputSchema;
use crate::session::{Host, Resume, RunOptions, Start};
use crate::trust::{ProjectConfig, TrustStatus};

pub(super) type RunWorktree = Option<worktree_cmd::RunWorktree>;

/// What a run has settled before its front end starts.
struct Prepared {
    resolved: compat_resolve::Resolved,
    options: RunOptions,
    located: Paths,
    worktree: RunWorktree,
    output_schema: Option<OutputSchema>,
    /// The REPL (stdin is a terminal and no `-p`).
    interactive: bool,
    /// `--resume` without an id: the REPL's picker chooses.
    pick: bool,
}

/// Runs the agent as the flags ask; the worktree of `-w`, if any, is the caller's to end.
pub(super) async fn run_agent_in(args: RunArgs) -> Result<(Exit, RunWorktree), CliError> {
    let run = prepare(&args).await?;
    check_input_mode(&args, &run.resolved, run.interactive)?;
    if run.resolved.input_format == InputFormat::StreamJson {
        let schema = run.output_schema;
        let exit = run_stream_json(&args, &run.resolved, run.options, run.located, schema).await?;
        return Ok((exit, run.worktree));
    }
    if !run.interactive {
        let schema = run.output_schema;
        let exit = run_print(&args, &run.resolved, run.options, run.located, schema).await?;
        return Ok((exit, run.worktree));
    }
    run_repl(&args, run).await
}

/// Resolves the flags into the run's options and enters the worktree of `-w`.
async fn prepare(args: &RunArgs) -> Result<Prepared, CliError> {
    let mut resolved = compat_resolve::resolve(args)?;
    let codex = codex_resolve::settings(args)?;
    codex_resolve::fill(args, &codex, &mut resolved);
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
    let output_schema = output_schema(args)?;
    let interactive = !args.print && std::io::stdin().is_terminal();
    let pick = args.resume.as_deref() == Some("");
    check_resume(interactive, pick, args.compat.fork_session)?;
    let located = crate::session::locate(args.cwd.as_ref(), &args.add_dir)?;
    let mut options = run_options(args, &resolved, &located.project_root)?;
    codex_resolve::apply(args, &codex, &mut options);
    options.ephemeral = args.compat.codex.ephemeral;
    options.plugin_dirs = args.compat.plugin_dir.clone();
    let stream_input = resolved.input_format == InputFormat::StreamJson;
    // Under stream-json input `initialize` may still bring one, and its own system prompt
    // texts: the stream-json front end tells the model.
    if let Some(schema) = output_schema.as_ref().filter(|_| !stream_input) {
        let append = options.prompt.append.take().unwrap_or_default();
        options.prompt.append = Some(format!("{append}\n\n{}", schema.instruction()));
    }
    let (located, worktree) = match &args.worktree {
        None => (located, None),
        Some(name) => {
            let (paths, project) = read_project(located, &resolved)?;
            let (moved, worktree) =
                worktree_cmd::enter(name, &paths, &project, &options, interactive).await?;
            (moved, Some(worktree))
        }
    };
    Ok(Prepared {
        resolved,
        options,
        located,
        worktree,
        output_schema,
        interactive,
        pick,
    })
}

/// The schema the final answer must match: Codex's `--output-schema FILE` or Claude Code's
/// `--json-schema SCHEMA` (one of them).
fn output_schema(args: &RunArgs) -> Result<Option<OutputSchema>, CliError> {
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

/// `--resume` without an id opens the REPL's picker, which neither a `-p` run nor a fork has.
fn check_resume(interactive: bool, pick: bool, fork: bool) -> Result<(), CliError> {
    if !interactive && pick {
        return Err(CliError::Usage(
            "--resume needs a session ID in a -p run (`ling sessions list` shows them); \
             without one it opens the REPL's picker"
                .into(),
        ));
    }
    if pick && fork {
        return Err(CliError::Usage(
            "--fork-session needs the session's id (--resume ID) or --continue; the REPL's \
             picker does not fork"
                .into(),
        ));
    }
    Ok(())
}

/// `--image` and `--until` need a `-p` run's one prompt; stream-json input takes no argument.
fn check_input_mode(
    args: &RunArgs,
    resolved: &compat_resolve::Resolved,
    interactive: bool,
) -> Result<(), CliError> {
    let stream_json = resolved.input_format == InputFormat::StreamJson;
    if !args.image.is_empty() && (interactive || stream_json) {
        return Err(CliError::Usage(
            "--image attaches images to the prompt of a -p run (with a prompt argument or one on \
             stdin); in the REPL, ask the model to read the image file instead"
                .into(),
        ));
    }
    if args.until.is_some() && (interactive || stream_json) {
        return Err(CliError::Usage(
            "--until works until a check passes in a -p run with a prompt argument or one on \
             stdin; in the REPL, type /goal CMD instead"
                .into(),
        ));
    }
    if stream_json && args.prompt.is_some() {
        return Err(CliError::Usage(
            "with --input-format stream-json the prompts come on stdin as JSON lines; drop \
             the prompt argument"
                .into(),
        ));
    }
    Ok(())
}

/// The project's config as `--setting-sources` leaves it.
fn read_project(
    mut paths: Paths,
    resolved: &compat_resolve::Resolved,
) -> Result<(Paths, ProjectConfig), CliError> {
    let sources = resolved.setting_sources;
    paths.user_config = sources.user;
    let mut project = ProjectConfig::read(&paths)?;
    project.leave_out(&sources.left_out());
    Ok((paths, project))
}

/// `--input-format stream-json`: Claude Code's protocol on stdin and stdout.
async fn run_stream_json(
    args: &RunArgs,
    resolved: &compat_resolve::Resolved,
    options: RunOptions,
    located: Paths,
    output_schema: Option<OutputSchema>,
) -> Result<Exit, CliError> {
    let (paths, project) = read_project(located, resolved)?;
    let stream = crate::front::claude::StreamOptions {
        verbose: args.verbose,
        partial: args.compat.include_partial_messages,
        stdio_prompt: resolved.stdio_prompt,
        replay_user_messages: args.compat.replay_user_messages,
        output_schema,
    };
    crate::ui::signals::install_early();
    let outcome = crate::front::claude::run(options, paths, project, stream, &warn).await?;
    Ok(outcome.into())
}

/// A `-p` run: one prompt (the argument or stdin), its images, the answer in the asked format.
async fn run_print(
    args: &RunArgs,
    resolved: &compat_resolve::Resolved,
    options: RunOptions,
    located: Paths,
    output_schema: Option<OutputSchema>,
) -> Result<Exit, CliError> {
    let prompt = prompt::read_prompt(args.prompt.as_deref())?;
    // Nobody to ask: an untrusted project runs without its config (and is told so).
    let working_dir = located.working_dir.clone();
    let (paths, project) = read_project(located, resolved)?;
    let start = Start {
        options,
        paths,
        project,
        interactive: false,
    };
    crate::ui::signals::install_early();
    let mut host = Host::start(start, &warn).await?;
    for image in &args.image {
        let path = working_dir.join(image);
        host.attach_image(&path)
            .map_err(|e| CliError::Usage(format!("--image {}: {e}", image.display())))?;
    }
    let print = crate::front::print::PrintOptions {
        format: print_format(resolved.output_format),
        verbose: args.verbose,
        partial: args.compat.include_partial_messages,
        last_message: args.compat.output_last_message.clone(),
        until: args.until.clone(),
        output_schema,
    };
    let outcome = crate::front::print::run(host, print, prompt).await;
    Ok(outcome.into())
}

fn print_format(format: OutputFormat) -> crate::front::print::Format {
    match format {
        OutputFormat::Text => crate::front::print::Format::Text,
        OutputFormat::Json => crate::front::print::Format::Json,
        OutputFormat::StreamJson => crate::front::print::Format::StreamJson,
        OutputFormat::LingStreamJson => crate::front::print::Format::LingStreamJson,
        OutputFormat::CodexJson => crate::front::print::Format::CodexJson,
    }
}

/// The REPL, after the trust question an untrusted project gets before any of it runs.
async fn run_repl(args: &RunArgs, run: Prepared) -> Result<(Exit, RunWorktree), CliError> {
    if run.resolved.output_format != OutputFormat::Text {
        return Err(CliError::Usage(
            "--output-format applies to -p runs; add -p \"PROMPT\"".into(),
        ));
    }
    if run.output_schema.is_some() {
        return Err(CliError::Usage(
            "--output-schema and --json-schema apply to `ling exec` and -p runs; add -p \
             \"PROMPT\""
                .into(),
        ));
    }
    let (paths, mut project) = read_project(run.located, &run.resolved)?;
    // Asked before anything of the project runs: no hook has fired, no server has started.
    if project.status() == TrustStatus::Untrusted {
        match crate::ui::trust::ask(&project, &paths).await? {
            crate::ui::trust::Answer::Trust => project.trust()?,
            crate::ui::trust::Answer::Open => {}
            crate::ui::trust::Answer::Quit => return Ok((Exit::Success, run.worktree)),
        }
    }
    let start = Start {
        options: run.options,
        paths,
        project,
        interactive: true,
    };
    let host = Host::start(start, &warn).await?;
    let outcome = crate::front::repl::run(host, args.prompt.clone(), run.pick).await?;
    Ok((outcome.into(), run.worktree))
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
