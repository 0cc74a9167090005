//! `ling -p`: one run of the agent loop, its output in the chosen format, and the exit code.

use std::io::{IsTerminal, Read};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::signals::interrupted_exit;
use super::{CliError, Exit, OutputFormat, RunArgs, Setup};
use crate::agent::{AgentEvent, EventSink, NonInteractive, RunEnd};
use crate::mcp::{ServerState, ServerStatus};
use crate::ui::output::stderr_line;
use crate::ui::print::{JsonOutput, StreamJsonOutput, TextOutput, json_line};

/// How long a prompt given as an argument waits for piped stdin to say something before the
/// pipe is ignored (a parent that leaves stdin open but never writes must not hang the run).
const STDIN_WAIT: Duration = Duration::from_secs(1);

/// The prompt of a one-shot run: the argument, with piped stdin appended as context; or stdin
/// alone when there is no argument.
pub fn read_prompt(arg: Option<&str>) -> Result<String, CliError> {
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() || (arg.is_some() && !has_input(&stdin)) {
        String::new()
    } else {
        let mut bytes = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::Usage(format!("cannot read stdin: {e}")))?;
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let prompt = match (arg, piped.trim().is_empty()) {
        (Some(arg), true) => arg.to_string(),
        (Some(arg), false) => format!("{arg}\n\n<stdin>\n{}\n</stdin>", piped.trim_end()),
        (None, false) => piped.trim_end().to_string(),
        (None, true) => {
            return Err(CliError::Usage(
                "no prompt: give one as an argument (ling -p \"PROMPT\") or pipe it on stdin"
                    .into(),
            ));
        }
    };
    if prompt.trim().is_empty() {
        return Err(CliError::Usage("the prompt is empty".into()));
    }
    Ok(prompt)
}

/// Whether stdin has something to read (data or end of file) within [`STDIN_WAIT`]. A file
/// always has; a pipe whose writer says nothing in that time is left alone.
fn has_input(stdin: &std::io::Stdin) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let wait = PollTimeout::try_from(STDIN_WAIT).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, wait) {
        Ok(ready) => ready > 0,
        // Not pollable (unusual for a file): reading is the only way to know.
        Err(_) => true,
    }
}

enum Output {
    Text(TextOutput),
    Json(JsonOutput),
    StreamJson(StreamJsonOutput),
}

impl Output {
    fn sink(&self) -> &dyn EventSink {
        match self {
            Self::Text(o) => o,
            Self::Json(o) => o,
            Self::StreamJson(o) => o,
        }
    }

    fn is_json(&self) -> bool {
        !matches!(self, Self::Text(_))
    }
}

/// How the run ended, as the `result` object and the exit code say it.
struct Ending {
    subtype: &'static str,
    text: String,
    exit: Exit,
    num_turns: u32,
}

impl Ending {
    fn error(text: impl Into<String>, exit: Exit, num_turns: u32) -> Self {
        Self {
            subtype: "error_during_execution",
            text: text.into(),
            exit,
            num_turns,
        }
    }

    fn is_error(&self) -> bool {
        self.subtype != "success"
    }
}

pub async fn run(mut setup: Setup, args: &RunArgs, prompt: String) -> Result<Exit, CliError> {
    let started = Instant::now();
    let output = match args.output_format {
        OutputFormat::Text => Output::Text(TextOutput::new(args.verbose)),
        OutputFormat::Json => Output::Json(JsonOutput::new(args.verbose)),
        OutputFormat::StreamJson => Output::StreamJson(StreamJsonOutput::new(args.verbose)),
    };
    for warning in &setup.warnings {
        stderr_line(format!("warning: {warning}"));
    }
    if let Some(notice) = &setup.trust_notice {
        stderr_line(format!("ling: {notice}"));
    }
    // From here on Ctrl-C, or the reader of stdout going away, ends the run through the same
    // path as everything else: hooks, transcript and MCP servers all finish.
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(super::signals::watch(cancel.clone()));
    crate::ui::output::cancel_on_closed_stdout(cancel.clone());

    let (mut ending, session_started) = drive(&mut setup, &output, &prompt, &cancel).await;
    watcher.abort();
    if let Output::Text(text) = &output {
        text.finish();
    }
    if session_started {
        setup.agent.end_session("other", output.sink()).await;
    }
    let servers = mcp_servers_json(&setup.mcp.statuses());
    setup.shutdown().await;

    if crate::ui::output::stdout_closed() {
        // `ling -p ... | head -1`: the reader has what it wanted; end quietly.
        return Ok(Exit::Success);
    }
    if ending.is_error() {
        // The answer of a successful run stays byte-exact; an error is Ling's own text.
        ending.text = crate::redact::scrub(&ending.text);
        stderr_line(format!("error: {}", ending.text));
    }
    if output.is_json() {
        let usage = setup.agent.usage();
        json_line(&json!({
            "type": "result",
            "subtype": ending.subtype,
            "is_error": ending.is_error(),
            "result": ending.text,
            "session_id": setup.agent.session().id,
            "num_turns": ending.num_turns,
            "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "mcp_servers": servers,
            "project_trust": setup.project_trust.as_str(),
        }));
    }
    Ok(ending.exit)
}

/// Everything between setup and the result: the wait for MCP servers, SessionStart, the agent
/// loop. Returns how it ended and whether the session started (so SessionEnd fires).
async fn drive(
    setup: &mut Setup,
    output: &Output,
    prompt: &str,
    cancel: &CancellationToken,
) -> (Ending, bool) {
    // A one-shot run waits for its servers (each up to its own startup timeout), so the model
    // sees every tool that could be had.
    tokio::select! {
        () = setup.mcp.wait_ready() => {}
        () = cancel.cancelled() => {
            return (Ending::error("interrupted", interrupted_exit(), 0), false);
        }
    }
    report_failed_servers(&setup.mcp.statuses(), output.sink());
    setup.agent.sync_tools().await;
    let default_turn_limit = setup.settings.max_turns.is_none();
    let agent = &mut setup.agent;
    if let Output::StreamJson(_) = output {
        json_line(&json!({
            "type": "system",
            "subtype": "init",
            "session_id": agent.session().id,
            "model": agent.model(),
            "cwd": agent.root(),
            "tools": agent.tools().names(),
            "mcp_servers": mcp_servers_json(&setup.mcp.statuses()),
            "project_trust": setup.project_trust.as_str(),
        }));
    }
    let source = if setup.resumed { "resume" } else { "startup" };
    if let Some(reason) = agent.fire_session_start(source, output.sink()).await {
        return (
            Ending::error(format!("stopped by hook: {reason}"), Exit::Failure, 0),
            true,
        );
    }
    let ending = match agent
        .run(prompt, output.sink(), &NonInteractive, cancel)
        .await
    {
        Ok(run) => match run.end {
            RunEnd::Completed => Ending {
                subtype: "success",
                text: run.text,
                exit: Exit::Success,
                num_turns: run.num_turns,
            },
            RunEnd::MaxTurns => Ending {
                subtype: "error_max_turns",
                text: max_turns_message(run.num_turns, default_turn_limit),
                exit: Exit::Failure,
                num_turns: run.num_turns,
            },
            RunEnd::Interrupted => Ending::error("interrupted", interrupted_exit(), run.num_turns),
            RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
                Ending::error(reason, Exit::Failure, run.num_turns)
            }
        },
        Err(e) => Ending::error(e.to_string(), Exit::Failure, agent.total_turns()),
    };
    (ending, true)
}

/// Why a run stopped at its turn limit, and how to raise it.
fn max_turns_message(turns: u32, default_limit: bool) -> String {
    let which = if default_limit {
        "the default limit of a -p run"
    } else {
        "the limit set by --max-turns or settings `maxTurns`"
    };
    format!(
        "stopped after {turns} model requests ({which}) before the model finished; raise it with \
         --max-turns N or settings `maxTurns`"
    )
}

/// `mcp_servers` of the json outputs: each enabled server with its status and error.
fn mcp_servers_json(statuses: &[ServerStatus]) -> Value {
    let servers = statuses
        .iter()
        .filter_map(|status| {
            let (word, error) = match &status.state {
                ServerState::Connected => ("connected", None),
                ServerState::Failed(why) => ("failed", Some(why.clone())),
                ServerState::Starting => ("failed", Some("still starting".to_string())),
                ServerState::Disabled => return None,
            };
            let mut entry = json!({"name": status.name, "status": word});
            if let Some(error) = error {
                entry["error"] = json!(error);
            }
            Some(entry)
        })
        .collect();
    Value::Array(servers)
}

/// A server that could not start is reported (the run goes on without its tools).
fn report_failed_servers(statuses: &[ServerStatus], sink: &dyn EventSink) {
    for status in statuses {
        if let ServerState::Failed(why) = &status.state {
            sink.emit(AgentEvent::McpStatus {
                server: status.name.clone(),
                status: "failed".into(),
                detail: Some(why.clone()),
            });
        }
    }
}
