//! `ling -p`: one run of the agent loop, its output in the chosen format, and the exit code.

use std::io::{IsTerminal, Read};
use std::time::Instant;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{CliError, Exit, OutputFormat, RunArgs, Setup};
use crate::agent::{AgentEvent, EventSink, NonInteractive, RunEnd};
use crate::mcp::{ServerState, ServerStatus};
use crate::ui::print::{JsonOutput, StreamJsonOutput, TextOutput, json_line};

/// The prompt of a one-shot run: the argument, with piped stdin appended as context; or stdin
/// alone when there is no argument.
pub fn read_prompt(arg: Option<&str>) -> Result<String, CliError> {
    let piped = if std::io::stdin().is_terminal() {
        String::new()
    } else {
        let mut bytes = Vec::new();
        std::io::stdin()
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
}

pub async fn run(mut setup: Setup, args: &RunArgs, prompt: String) -> Result<Exit, CliError> {
    let started = Instant::now();
    let output = match args.output_format {
        OutputFormat::Text => Output::Text(TextOutput::new(args.verbose)),
        OutputFormat::Json => Output::Json(JsonOutput::new(args.verbose)),
        OutputFormat::StreamJson => Output::StreamJson(StreamJsonOutput::new(args.verbose)),
    };
    for warning in &setup.warnings {
        crate::ui::output::stderr_line(&format!("warning: {warning}"));
    }
    // A one-shot run waits for its servers (each up to its own startup timeout), so the model
    // sees every tool that could be had.
    // Ctrl-C from here on interrupts the run (and the wait for the servers) instead of killing
    // the process with its servers still running.
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    tokio::select! {
        () = setup.mcp.wait_ready() => {}
        () = cancel.cancelled() => {
            setup.mcp.shutdown().await;
            crate::ui::output::stderr_line("error: interrupted");
            return Ok(Exit::Interrupted);
        }
    }
    let servers = mcp_servers_json(&setup.mcp.statuses());
    report_failed_servers(&setup.mcp.statuses(), output.sink());
    setup.agent.sync_tools().await;
    let source = if setup.resumed { "resume" } else { "startup" };
    let agent = &mut setup.agent;
    if let Output::StreamJson(_) = output {
        json_line(&json!({
            "type": "system",
            "subtype": "init",
            "session_id": agent.session().id,
            "model": agent.model(),
            "cwd": agent.root(),
            "tools": agent.tools().names(),
            "mcp_servers": servers,
        }));
    }

    if let Some(reason) = agent.fire_session_start(source, output.sink()).await {
        crate::ui::output::stderr_line(&format!("stopped by hook: {reason}"));
        agent.end_session("other", output.sink()).await;
        setup.mcp.shutdown().await;
        return Ok(Exit::Failure);
    }
    let result = agent
        .run(&prompt, output.sink(), &NonInteractive, &cancel)
        .await;
    watcher.abort();
    if let Output::Text(text) = &output {
        text.finish();
    }
    agent.end_session("other", output.sink()).await;
    let servers = mcp_servers_json(&setup.mcp.statuses());
    setup.mcp.shutdown().await;

    let (subtype, is_error, text, exit) = match &result {
        Ok(run) => match &run.end {
            RunEnd::Completed => ("success", false, run.text.clone(), Exit::Success),
            RunEnd::MaxTurns => {
                let message = format!(
                    "stopped after {} model requests (--max-turns) before the model finished",
                    run.num_turns
                );
                ("error_max_turns", true, message, Exit::Failure)
            }
            RunEnd::Interrupted => (
                "error_during_execution",
                true,
                "interrupted".to_string(),
                Exit::Interrupted,
            ),
            RunEnd::Stopped(reason) | RunEnd::PromptBlocked(reason) => (
                "error_during_execution",
                true,
                reason.clone(),
                Exit::Failure,
            ),
        },
        Err(e) => ("error_during_execution", true, e.to_string(), Exit::Failure),
    };
    if is_error {
        crate::ui::output::stderr_line(&format!("error: {text}"));
    }
    if let Output::Json(_) | Output::StreamJson(_) = output {
        let usage = agent.usage();
        json_line(&json!({
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "result": text,
            "session_id": agent.session().id,
            "num_turns": result.as_ref().map_or(agent.total_turns(), |r| r.num_turns),
            "duration_ms": started.elapsed().as_millis() as u64,
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "mcp_servers": servers,
        }));
    }
    Ok(exit)
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
