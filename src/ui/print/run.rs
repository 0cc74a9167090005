//! `ling -p`: one run of the agent loop, its output in the chosen format, and how it ended
//! (which `cli` turns into the exit code).

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::lines::{Line, McpServer, RunResult, SandboxLine, Subtype, System};
use super::{Format, JsonOutput, StreamJsonOutput, TextOutput, json_line};
use crate::agent::{AgentEvent, EventSink, NonInteractive, RunEnd};
use crate::mcp::{ServerState, ServerStatus};
use crate::setup::Setup;
use crate::ui::RunOutcome;
use crate::ui::output::stderr_line;
use crate::ui::signals;

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

/// How the run ended, as the `result` object and the outcome say it.
struct Ending {
    subtype: Subtype,
    text: String,
    outcome: RunOutcome,
    num_turns: u32,
}

impl Ending {
    fn error(text: impl Into<String>, outcome: RunOutcome, num_turns: u32) -> Self {
        Self {
            subtype: Subtype::ErrorDuringExecution,
            text: text.into(),
            outcome,
            num_turns,
        }
    }

    fn interrupted(num_turns: u32) -> Self {
        Self::error(
            "interrupted",
            RunOutcome::Interrupted(signals::received()),
            num_turns,
        )
    }

    fn is_error(&self) -> bool {
        self.subtype != Subtype::Success
    }
}

/// Runs `prompt` in `format`; `verbose` shows more on stderr.
pub async fn run(mut setup: Setup, format: Format, verbose: bool, prompt: String) -> RunOutcome {
    let started = Instant::now();
    let output = match format {
        Format::Text => Output::Text(TextOutput::new(verbose)),
        Format::Json => Output::Json(JsonOutput::new(verbose)),
        Format::StreamJson => Output::StreamJson(StreamJsonOutput::new(verbose)),
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
    let watcher = tokio::spawn(signals::watch(cancel.clone()));
    crate::ui::output::cancel_on_closed_stdout(cancel.clone());

    let (mut ending, session_started) = drive(&mut setup, &output, &prompt, &cancel).await;
    watcher.abort();
    if let Output::Text(text) = &output {
        text.finish();
    }
    if session_started {
        setup.agent.end_session("other", output.sink()).await;
    }
    let statuses = setup.mcp.statuses();
    setup.shutdown().await;

    if crate::ui::output::stdout_closed() {
        // `ling -p ... | head -1`: the reader has what it wanted; end quietly.
        return RunOutcome::Success;
    }
    if ending.is_error() {
        // The answer of a successful run stays byte-exact; an error is Ling's own text.
        ending.text = crate::redact::scrub(&ending.text);
        stderr_line(format!("error: {}", ending.text));
    }
    if output.is_json() {
        let session_id = &setup.agent.session().id;
        json_line(&Line::Result(RunResult {
            subtype: ending.subtype,
            is_error: ending.is_error(),
            result: &ending.text,
            session_id,
            num_turns: ending.num_turns,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            usage: setup.agent.usage(),
            cost_usd: setup
                .settings
                .prices
                .get(setup.agent.model())
                .map(|price| crate::ui::session_commands::cost(setup.agent.usage(), *price)),
            mcp_servers: &McpServer::list(&statuses),
            project_trust: setup.project_trust.as_str(),
        }));
    }
    ending.outcome
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
            return (Ending::interrupted(0), false);
        }
    }
    report_failed_servers(&setup.mcp.statuses(), output.sink());
    setup.agent.sync_tools().await;
    let default_turn_limit = setup.settings.max_turns.is_none();
    let agent = &mut setup.agent;
    if let Output::StreamJson(_) = output {
        let statuses = setup.mcp.statuses();
        json_line(&Line::System(System::Init {
            session_id: &agent.session().id,
            model: agent.model(),
            cwd: agent.root().to_string_lossy().into_owned(),
            tools: agent.tools().names(),
            mcp_servers: &McpServer::list(&statuses),
            project_trust: setup.project_trust.as_str(),
            sandbox: SandboxLine {
                mode: setup.sandbox.mode.as_str(),
                network: !setup.sandbox.is_on() || setup.sandbox.network,
            },
        }));
    }
    let source = if setup.resumed { "resume" } else { "startup" };
    if let Some(reason) = agent.fire_session_start(source, output.sink()).await {
        return (
            Ending::error(format!("stopped by hook: {reason}"), RunOutcome::Failed, 0),
            true,
        );
    }
    let ending = match agent
        .run(prompt, output.sink(), &NonInteractive, cancel)
        .await
    {
        Ok(run) => match run.end {
            RunEnd::Completed => Ending {
                subtype: Subtype::Success,
                text: run.text,
                outcome: RunOutcome::Success,
                num_turns: run.num_turns,
            },
            RunEnd::MaxTurns => Ending {
                subtype: Subtype::ErrorMaxTurns,
                text: max_turns_message(run.num_turns, default_turn_limit),
                outcome: RunOutcome::Failed,
                num_turns: run.num_turns,
            },
            RunEnd::Interrupted => Ending::interrupted(run.num_turns),
            RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => {
                Ending::error(reason, RunOutcome::Failed, run.num_turns)
            }
            // Nobody is asked in `-p`; an approver that declines ends the run as a failure.
            RunEnd::Declined => Ending::error(
                String::from("a tool call was declined"),
                RunOutcome::Failed,
                run.num_turns,
            ),
        },
        Err(e) => Ending::error(e.to_string(), RunOutcome::Failed, agent.total_turns()),
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

/// A server that could not start is reported (the run goes on without its tools).
fn report_failed_servers(statuses: &[ServerStatus], sink: &dyn EventSink) {
    for status in statuses {
        if matches!(
            status.state,
            ServerState::Failed(_) | ServerState::NeedsAuth(_)
        ) {
            sink.emit(AgentEvent::McpStatus {
                server: status.name.clone(),
                state: status.state.clone(),
            });
        }
    }
}
