//! `ling -p`: one run of the agent loop, its output in the chosen format, and how it ended
//! (which `cli` turns into the exit code).

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::codex::CodexJsonl;
use super::ending::{Ending, ResultFacts, claude_result};
use super::lines::{Line, McpServer, RunResult, SandboxLine, System};
use super::schema::Next;
use super::{Format, JsonOutput, PrintOptions, StreamJsonOutput, TextOutput, json_line};
use crate::front::print::claude::{ClaudeStream, init_message, mcp_servers};
use crate::mcp::client::Shutdown;
use crate::mcp::{ServerState, ServerStatus};
use crate::session::{AgentEvent, Command, EndReason, EventSink, Host, Io, Reply};
use crate::ui::RunOutcome;
use crate::ui::output::stderr_line;
use crate::ui::signals;

enum Output {
    Text(TextOutput),
    Json(JsonOutput),
    Claude(ClaudeStream),
    Ling(StreamJsonOutput),
    Codex(CodexJsonl),
}

impl Output {
    fn sink(&self) -> &dyn EventSink {
        match self {
            Self::Text(o) => o,
            Self::Json(o) => o,
            Self::Claude(o) => o,
            Self::Ling(o) => o,
            Self::Codex(o) => o,
        }
    }
}

/// Runs `prompt` and writes its output as `options` say.
pub async fn run(mut host: Host, options: PrintOptions, prompt: String) -> RunOutcome {
    let started = Instant::now();
    let verbose = options.verbose;
    let output = match options.format {
        Format::Text => Output::Text(TextOutput::new(verbose)),
        Format::Json => Output::Json(JsonOutput::new(verbose)),
        Format::StreamJson => Output::Claude(ClaudeStream::new(
            host.session_id(),
            &host.paths().project_root,
            host.model(),
            options.partial,
            verbose,
            host.settings().max_retries,
        )),
        Format::LingStreamJson => Output::Ling(StreamJsonOutput::new(verbose)),
        Format::CodexJson => Output::Codex(CodexJsonl::new(
            host.paths().project_root.clone(),
            verbose,
            options.output_schema.is_some(),
        )),
    };
    let usage_before = host.usage();
    for warning in host.warnings() {
        stderr_line(format!("warning: {warning}"));
    }
    if let Some(line) = host.add_dirs_line() {
        stderr_line(format!("ling: {line}"));
    }
    if let Some(notice) = host.trust_notice() {
        stderr_line(format!("ling: {notice}"));
    }
    // From here on Ctrl-C, or the reader of stdout going away, ends the run through the same
    // path as everything else: hooks, transcript and MCP servers all finish.
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(signals::watch(cancel.clone()));
    crate::ui::output::cancel_on_closed_stdout(cancel.clone());

    let ending = drive(&mut host, &output, &options, &prompt, &cancel).await;
    watcher.abort();
    if let Output::Text(text) = &output {
        text.finish();
    }
    // SessionEnd (when the session started); the servers are stopped only after the result
    // line, without waiting for a polite exit (docs/mcp.md, "Shutdown").
    host.end_session(EndReason::Other, output.sink()).await;
    let statuses = host.status().servers;
    let facts = (statuses.as_slice(), started, usage_before);
    let outcome = write_result(&mut host, &output, &options, ending, facts).await;
    // An interrupted run may have just told a server to cancel a call: that server gets the
    // usual grace to read it.
    let how = match outcome {
        RunOutcome::Interrupted(_) => Shutdown::Graceful,
        RunOutcome::Success | RunOutcome::Failed | RunOutcome::CheckFailed => Shutdown::Prompt,
    };
    host.mcp().shutdown_as(how).await;
    outcome
}

/// The end of a run's output: the error on stderr, the `json`/`stream-json` result line.
async fn write_result(
    host: &mut Host,
    output: &Output,
    options: &PrintOptions,
    mut ending: Ending,
    (statuses, started, usage_before): (&[ServerStatus], Instant, crate::llm::Usage),
) -> RunOutcome {
    if crate::ui::output::stdout_closed() {
        // `ling -p ... | head -1`: the reader has what it wanted; end quietly.
        return RunOutcome::Success;
    }
    if ending.is_error() {
        // The answer of a successful run stays byte-exact; an error is Ling's own text.
        ending.text = crate::redact::scrub(&ending.text);
        stderr_line(format!("error: {}", ending.text));
    } else if let Some(file) = &options.last_message
        && let Err(e) = std::fs::write(file, &ending.text)
    {
        stderr_line(format!(
            "error: cannot write the last message to {}: {e}",
            file.display()
        ));
        ending.outcome = RunOutcome::Failed;
    }
    if let (Output::Text(_), Some(goal)) = (output, &ending.goal) {
        stderr_line(format!("ling: {}", super::ending::goal_summary(goal)));
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let status = host.status();
    let session_id = status.session_id.as_str();
    let (api_ms, denials) = match &output {
        Output::Json(json) => json.take_stats(),
        Output::Claude(stream) => stream.take_stats(),
        _ => (0, Vec::new()),
    };
    match &output {
        Output::Text(_) => {}
        Output::Codex(codex) => {
            let result = if ending.is_error() {
                Err(ending.text.as_str())
            } else {
                Ok(ending.text.as_str())
            };
            codex.finish(result, host.usage().since(usage_before));
        }
        Output::Ling(_) => json_line(&Line::Result(RunResult {
            subtype: ending.subtype,
            is_error: ending.is_error(),
            result: &ending.text,
            session_id,
            num_turns: ending.num_turns,
            duration_ms,
            usage: host.usage(),
            cost_usd: host
                .settings()
                .price(&status.model)
                .map(|price| crate::ui::render::cost(host.usage(), price)),
            mcp_servers: &McpServer::list(statuses),
            project_trust: status.trust.as_str(),
            until: ending.goal.as_ref().map(super::ending::goal_json),
        })),
        Output::Json(_) | Output::Claude(_) => {
            let model = status.model.clone();
            let window = host.context_usage().await.window;
            json_line(&claude_result(
                &ending,
                &ResultFacts {
                    session_id,
                    duration_ms,
                    api_ms,
                    usage: host.usage(),
                    price: host.settings().price(&model),
                    model: &model,
                    context_window: window,
                    denials: &denials,
                    mcp_servers: &mcp_servers(statuses),
                    project_trust: status.trust.as_str(),
                },
            ));
        }
    }
    ending.outcome
}

/// Everything between setup and the result: the wait for MCP servers, the `init` line, the
/// prompt (SessionStart first). Returns how it ended.
async fn drive(
    host: &mut Host,
    output: &Output,
    options: &PrintOptions,
    prompt: &str,
    cancel: &CancellationToken,
) -> Ending {
    // A one-shot run waits for its servers (each up to its own startup timeout), so the model
    // sees every tool that could be had.
    if !host.wait_for_servers(cancel).await {
        return Ending::interrupted(0);
    }
    let status = host.status();
    report_failed_servers(&status.servers, output.sink());
    let default_turn_limit = host.settings().max_turns.is_none();
    match output {
        Output::Ling(_) => json_line(&Line::System(System::Init {
            session_id: &status.session_id,
            model: &status.model,
            cwd: status.project_root.to_string_lossy().into_owned(),
            tools: host.tools().names(),
            mcp_servers: &McpServer::list(&status.servers),
            project_trust: status.trust.as_str(),
            sandbox: SandboxLine {
                mode: status.sandbox.mode.as_str(),
                network: status.sandbox.network,
            },
        })),
        Output::Claude(stream) => stream.write(&init_message(host)),
        Output::Codex(codex) => codex.start(&status.session_id),
        Output::Text(_) | Output::Json(_) => {}
    }
    let io = Io::unattended(output.sink(), cancel);
    if let Some(check) = &options.until {
        let _ = host
            .submit(Command::SetGoal(Some(check.clone())), &io)
            .await;
    }
    let mut ending = submit(host, &io, prompt, default_turn_limit).await;
    let Some(schema) = &options.output_schema else {
        return ending;
    };
    // A mismatch goes back to the model, saying what is wrong, a bounded number of times.
    let mut retries = 0;
    // The run's turns are every attempt's, not the last one's.
    let mut turns = ending.num_turns;
    loop {
        match schema.judge(ending, retries) {
            Next::Done(done) => {
                return Ending {
                    num_turns: turns,
                    ..done
                };
            }
            Next::Again(prompt) => {
                retries += 1;
                ending = submit(host, &io, &prompt, default_turn_limit).await;
                turns += ending.num_turns;
            }
        }
    }
}

/// One prompt of the run, and how it ended.
async fn submit(host: &mut Host, io: &Io<'_>, prompt: &str, default_turn_limit: bool) -> Ending {
    let mut reply = host.submit(Command::Prompt(prompt.to_string()), io).await;
    // Background sub-agents still at work: each one's answer is a turn of its own, and the
    // run ends with the last (as Claude Code's `-p` does).
    while let Ok(Reply::Turn {
        result: Ok(run), ..
    }) = &reply
        && run.end == crate::session::RunEnd::Completed
        && host.has_background()
    {
        match host.submit(Command::Background, io).await {
            Ok(Reply::Done) => break,
            next => reply = next,
        }
    }
    match reply {
        Ok(Reply::Stopped(reason)) => {
            Ending::error(format!("stopped by hook: {reason}"), RunOutcome::Failed, 0)
        }
        Ok(Reply::Turn { result, goal, .. }) => Ending::of(
            result,
            default_turn_limit,
            host.total_turns(),
            Ending::interrupted,
        )
        .with_goal(goal),
        Ok(_) => Ending::error("the prompt did not run", RunOutcome::Failed, 0),
        Err(e) => Ending::error(e.to_string(), RunOutcome::Failed, host.total_turns()),
    }
}

/// A server that could not start is reported (the run goes on without its tools).
pub(crate) fn report_failed_servers(statuses: &[ServerStatus], sink: &dyn EventSink) {
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
