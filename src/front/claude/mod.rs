//! `--input-format stream-json`: a program (the Claude Agent SDK, or anything written against
//! `claude -p`) sends JSON lines on stdin and reads Claude Code's messages on stdout. A `user`
//! message is one turn; each turn ends with its `result`, and the next waits on stdin. Control
//! requests are answered at once, also while a turn runs: `initialize` (its `systemPrompt`,
//! `appendSystemPrompt` and `mcpServers` apply to the run), `interrupt`, `set_permission_mode`,
//! `set_model`, `mcp_status`, `mcp_reconnect` and `mcp_toggle`; any other is an error naming
//! it. MCP config files edited during the session are picked up before the next turn. The end
//! of stdin ends the run after the turns already sent.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod control;

use self::control::{Control, StdioApprover, respond};
use crate::config::{Paths, PermissionMode};
use crate::front::print::claude::{ClaudeStream, init_message, mcp_servers};
use crate::front::print::ending::{Ending, ResultFacts, claude_result};
use crate::front::print::run::report_failed_servers;
use crate::session::{
    AgentEvent, Approver, Command, EndReason, EventSink, Host, Io, Live, McpCommand,
    NonInteractive, Reply, Start,
};
use crate::session::{RunOptions, SetupError};
use crate::trust::ProjectConfig;
use crate::ui::RunOutcome;
use crate::ui::output::stderr_line;
use crate::ui::signals;

/// How the stream-json session runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamOptions {
    pub verbose: bool,
    /// `--include-partial-messages`.
    pub partial: bool,
    /// `--permission-prompt-tool stdio`: questions go to the driver as `can_use_tool`.
    pub stdio_prompt: bool,
    /// `--replay-user-messages`: each user message is written back before its turn.
    pub replay_user_messages: bool,
}

/// What the stdin reader hands the turn loop.
enum Inbound {
    Initialize {
        id: String,
        request: Value,
    },
    /// The prompt, and the message it came in.
    Prompt(String, Value),
    End,
}

/// What the reader answers by itself, also during a turn: the session's [`Live`] handle (once
/// the run is set up) and the output stream.
#[derive(Default)]
struct Shared {
    live: OnceLock<Live>,
    stream: OnceLock<Arc<ClaudeStream>>,
}

/// Runs the session: reads the first message (an `initialize` is applied before anything is
/// set up), prepares the run, then runs one turn per `user` message until stdin ends.
pub async fn run(
    mut options: RunOptions,
    paths: Paths,
    project: ProjectConfig,
    stream_options: StreamOptions,
    warn: &dyn Fn(&str),
) -> Result<RunOutcome, SetupError> {
    let control = Arc::new(Control::default());
    let shared = Arc::new(Shared::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_stdin(control.clone(), shared.clone(), tx));

    let mut queued = Vec::new();
    let mut initialize = None;
    match rx.recv().await {
        Some(Inbound::Initialize { id, request }) => {
            apply_initialize(&request, &mut options);
            initialize = Some((id, request));
        }
        Some(other) => queued.push(other),
        None => {}
    }
    let start = Start {
        options,
        paths,
        project,
        interactive: false,
    };
    let host = match Host::start(start, warn).await {
        Ok(host) => host,
        Err(e) => {
            if let Some((id, _)) = &initialize {
                respond(id, Err(e.to_string()));
            }
            reader.abort();
            return Err(e);
        }
    };
    let mut session = Session {
        host,
        control,
        shared,
        options: stream_options,
        outcome: RunOutcome::Success,
    };
    if let Some((id, request)) = initialize {
        session.answer_initialize(&id, &request);
    }
    let outcome = session.serve(queued, &mut rx).await;
    reader.abort();
    Ok(outcome)
}

/// Takes the run's options out of `initialize`: a non-empty `systemPrompt` replaces Ling's
/// (the SDK's default `[""]` keeps it), `appendSystemPrompt` is added, and `mcpServers` are
/// one more MCP config.
fn apply_initialize(request: &Value, options: &mut RunOptions) {
    let prompt = match request.get("systemPrompt") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    };
    if !prompt.trim().is_empty() {
        options.prompt.replace = Some(prompt);
    }
    if let Some(append) = request.get("appendSystemPrompt").and_then(Value::as_str) {
        options.prompt.append = Some(append.to_string());
    }
    if let Some(servers) = request.get("mcpServers").filter(|s| s.is_object()) {
        let inline = json!({ "mcpServers": servers }).to_string();
        options.mcp_config.push(inline.into());
    }
}

/// Initialize fields that would change what the SDK's user expects and that Ling cannot honour:
/// refused, so the `query()` fails with the reason instead of running without them.
fn refused_initialize(request: &Value) -> Option<String> {
    let present = |key: &str| {
        request.get(key).is_some_and(|v| match v {
            Value::Null => false,
            Value::Object(m) => !m.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => true,
        })
    };
    let unsupported = [
        (
            "hooks",
            "hook callbacks (the `hooks` option); use command or http hooks in .ling/hooks.json or .claude/settings.json",
        ),
        (
            "sdkMcpServers",
            "in-process MCP servers (createSdkMcpServer); run the server as a stdio or http MCP server",
        ),
        ("jsonSchema", "structured output (outputFormat json_schema)"),
        ("agents", "custom subagents (the `agents` option)"),
    ];
    unsupported
        .iter()
        .find(|(key, _)| present(key))
        .map(|(_, what)| format!("Ling does not support {what}"))
}

struct Session {
    host: Host,
    control: Arc<Control>,
    shared: Arc<Shared>,
    options: StreamOptions,
    /// How the last turn ended.
    outcome: RunOutcome,
}

impl Session {
    fn answer_initialize(&self, id: &str, request: &Value) {
        if let Some(refusal) = refused_initialize(request) {
            respond(id, Err(refusal));
            return;
        }
        let mut response = json!({
            "commands": [],
            "agents": [],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": self.host.model(), "displayName": self.host.model(), "description": "the model of Ling's OpenAI-compatible endpoint"}],
            "account": {},
            "claude_code_version": env!("CARGO_PKG_VERSION"),
        });
        if request.get("mcpServers").is_some_and(Value::is_object) {
            response["mcp_servers_applied"] = json!(true);
        }
        respond(id, Ok(response));
    }

    async fn serve(
        &mut self,
        queued: Vec<Inbound>,
        rx: &mut mpsc::UnboundedReceiver<Inbound>,
    ) -> RunOutcome {
        let cancel = CancellationToken::new();
        let watcher = tokio::spawn(signals::watch(cancel.clone()));
        crate::ui::output::cancel_on_closed_stdout(cancel.clone());
        let host = &mut self.host;
        let stream = Arc::new(ClaudeStream::new(
            host.session_id(),
            &host.paths().project_root,
            host.model(),
            self.options.partial,
            self.options.verbose,
            host.settings().max_retries,
        ));
        let _ = self.shared.stream.set(stream.clone());
        let _ = self.shared.live.set(host.live());
        for warning in host.warnings() {
            stderr_line(format!("warning: {warning}"));
        }
        if let Some(notice) = host.trust_notice() {
            stderr_line(format!("ling: {notice}"));
        }
        host.wait_for_servers(&cancel).await;
        report_failed_servers(&host.status().servers, stream.as_ref());
        stream.write(&init_message(host));
        let status_watch = tokio::spawn(report_status_changes(host.live(), stream.clone()));
        let io = Io::unattended(stream.as_ref(), &cancel);
        if let Ok(Reply::Stopped(reason)) = host.submit(Command::Start, &io).await {
            let ending = Ending::error(format!("stopped by hook: {reason}"), RunOutcome::Failed, 0);
            self.write_result(&stream, &ending, Instant::now(), Default::default())
                .await;
            status_watch.abort();
            return self.finish(&stream, watcher, ending.outcome).await;
        }
        let mut pending = queued.into_iter();
        loop {
            let next = match pending.next() {
                Some(inbound) => Some(inbound),
                None => tokio::select! {
                    inbound = rx.recv() => inbound,
                    () = cancel.cancelled() => None,
                },
            };
            match next {
                Some(Inbound::Prompt(prompt, message)) => {
                    if self.options.replay_user_messages {
                        let mut echo = message;
                        echo["session_id"] = json!(stream.session_id());
                        if echo.get("uuid").is_none() {
                            echo["uuid"] = json!(crate::front::print::claude::messages::uuid());
                        }
                        stream.write(&echo);
                    }
                    self.turn(&prompt, &stream, &cancel).await;
                    if cancel.is_cancelled() {
                        break;
                    }
                }
                Some(Inbound::Initialize { id, request }) => self.answer_initialize(&id, &request),
                Some(Inbound::End) | None => break,
            }
        }
        status_watch.abort();
        let outcome = if cancel.is_cancelled() && !crate::ui::output::stdout_closed() {
            RunOutcome::Interrupted(signals::received())
        } else {
            self.outcome
        };
        self.finish(&stream, watcher, outcome).await
    }

    /// One turn: the prompt through the session, then its `result`. MCP config files edited
    /// since the last turn are reloaded first; nobody can be asked, so a changed project file
    /// whose trust lapsed is left out (its servers stop) until `ling trust`.
    async fn turn(&mut self, prompt: &str, stream: &Arc<ClaudeStream>, cancel: &CancellationToken) {
        let started = Instant::now();
        let token = cancel.child_token();
        let approver: Box<dyn Approver> = if self.options.stdio_prompt {
            Box::new(StdioApprover::new(self.control.clone(), token.clone()))
        } else {
            Box::new(NonInteractive)
        };
        let io = Io {
            sink: stream.as_ref(),
            approver: approver.as_ref(),
            cancel: &token,
            trust: None,
        };
        let reply = self
            .host
            .submit(Command::Prompt(prompt.to_string()), &io)
            .await;
        let default_limit = self.host.settings().max_turns.is_none();
        let by_signal = cancel.is_cancelled();
        let total = self.host.total_turns();
        let (mut ending, usage) = match reply {
            Ok(Reply::Turn { result, usage }) => (
                Ending::of(result, default_limit, total, |turns| {
                    if by_signal {
                        Ending::interrupted(turns)
                    } else {
                        // Asked for: the turn ends, the session goes on, and it is no failure.
                        Ending::error("interrupted by the driver", RunOutcome::Success, turns)
                    }
                }),
                usage,
            ),
            Ok(Reply::Stopped(reason)) => (
                Ending::error(
                    format!("stopped by hook: {reason}"),
                    RunOutcome::Failed,
                    total,
                ),
                Default::default(),
            ),
            Ok(_) => (
                Ending::error("the prompt did not run", RunOutcome::Failed, total),
                Default::default(),
            ),
            Err(e) => (
                Ending::error(e.to_string(), RunOutcome::Failed, total),
                Default::default(),
            ),
        };
        if ending.is_error() {
            ending.text = crate::redact::scrub(&ending.text);
        }
        self.write_result(stream, &ending, started, usage).await;
        self.outcome = ending.outcome;
    }

    async fn write_result(
        &mut self,
        stream: &ClaudeStream,
        ending: &Ending,
        started: Instant,
        usage: crate::llm::Usage,
    ) {
        let (api_ms, denials) = stream.take_stats();
        let status = self.host.status();
        let model = status.model.clone();
        let window = self.host.context_usage().await.window;
        let servers = mcp_servers(&status.servers);
        stream.write(&claude_result(
            ending,
            &ResultFacts {
                session_id: stream.session_id(),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                api_ms,
                usage,
                price: self.host.settings().prices.get(&model).copied(),
                model: &model,
                context_window: window,
                denials: &denials,
                mcp_servers: &servers,
                project_trust: status.trust.as_str(),
            },
        ));
    }

    async fn finish(
        &mut self,
        stream: &ClaudeStream,
        watcher: tokio::task::JoinHandle<()>,
        outcome: RunOutcome,
    ) -> RunOutcome {
        watcher.abort();
        self.control.close();
        let cancel = CancellationToken::new();
        let io = Io::unattended(stream, &cancel);
        let _ = self.host.submit(Command::End(EndReason::Other), &io).await;
        outcome
    }
}

/// Reads stdin line by line: answers go to `control`, control requests are answered (or, for
/// `initialize`, handed on), prompts handed on; the end of stdin is [`Inbound::End`].
async fn read_stdin(
    control: Arc<Control>,
    shared: Arc<Shared>,
    tx: mpsc::UnboundedSender<Inbound>,
) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut number = 0usize;
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                stderr_line(format!("error: reading stdin: {e}"));
                break;
            }
        };
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(e) => {
                stderr_line(format!(
                    "warning: stdin line {number} is not JSON ({e}); ignored. With \
                     --input-format stream-json each line is one message, e.g. \
                     {{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"...\"}}}}"
                ));
                continue;
            }
        };
        match message.get("type").and_then(Value::as_str) {
            Some("user") => match prompt_of(&message) {
                Ok(prompt) => {
                    let _ = tx.send(Inbound::Prompt(prompt, message));
                }
                Err(why) => stderr_line(format!("warning: stdin line {number}: {why}; ignored")),
            },
            Some("control_response") => {
                if let Some(response) = message.get("response") {
                    control.deliver(response);
                }
            }
            Some("control_request") => {
                let id = message
                    .get("request_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let request = message.get("request").cloned().unwrap_or(Value::Null);
                if request.get("subtype").and_then(Value::as_str) == Some("initialize") {
                    let _ = tx.send(Inbound::Initialize { id, request });
                } else {
                    handle_control(&shared, &id, &request);
                }
            }
            // Nothing to do: no request of the driver's runs long enough to be cancelled.
            Some("control_cancel_request" | "keep_alive") => {}
            other => stderr_line(format!(
                "warning: stdin line {number}: a message of type {} is not one Ling reads \
                 (user, control_request, control_response); ignored",
                other.map_or_else(|| "(none)".to_string(), |t| format!("`{t}`"))
            )),
        }
    }
    control.close();
    let _ = tx.send(Inbound::End);
}

/// After `init`: every change of a server's state (connected, failed, disabled, needs-auth) as
/// a `system`/`mcp_status` message, so a program sees servers come and go during the session.
async fn report_status_changes(live: Live, stream: Arc<ClaudeStream>) {
    let manager = live.mcp_manager();
    let mut rx = manager.subscribe();
    let mut seen: Vec<(String, crate::mcp::ServerState)> = manager
        .statuses()
        .into_iter()
        .map(|s| (s.name, s.state))
        .collect();
    while rx.changed().await.is_ok() {
        let now: Vec<(String, crate::mcp::ServerState)> = rx
            .borrow_and_update()
            .iter()
            .map(|s| (s.name.clone(), s.state.clone()))
            .collect();
        for (name, state) in &now {
            let changed = !seen.iter().any(|(n, s)| n == name && s == state);
            if changed && *state != crate::mcp::ServerState::Starting {
                stream.emit(AgentEvent::McpStatus {
                    server: name.clone(),
                    state: state.clone(),
                });
            }
        }
        seen = now;
    }
}

/// The prompt of a `user` message: its content as text (a string, or its `text` blocks).
fn prompt_of(message: &Value) -> Result<String, String> {
    let content = message
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or("a user message needs `message.content`")?;
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(
                        block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    ),
                    other => stderr_line(format!(
                        "warning: a `{}` content block is not one Ling sends to the model (only \
                         text); it was left out",
                        other.unwrap_or("(untyped)")
                    )),
                }
            }
            if texts.is_empty() {
                return Err("the user message has no text".into());
            }
            Ok(texts.join("\n\n"))
        }
        _ => Err("`message.content` must be a string or a list of content blocks".into()),
    }
}

/// A control request other than `initialize`, answered at once (a reconnect when it is done).
fn handle_control(shared: &Arc<Shared>, id: &str, request: &Value) {
    let subtype = request
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(live) = shared.live.get().cloned() else {
        respond(
            id,
            Err(format!(
                "the run is not set up yet; send {subtype} after initialize"
            )),
        );
        return;
    };
    let answer = match subtype {
        "interrupt" => {
            live.interrupt();
            Ok(json!({}))
        }
        "set_permission_mode" => set_mode(&live, request),
        "set_model" => match request.get("model").and_then(Value::as_str) {
            Some(model) => {
                let (id, model, stream) = (
                    id.to_string(),
                    model.to_string(),
                    shared.stream.get().cloned(),
                );
                tokio::spawn(async move {
                    let answer = live.set_model(&model).await.map_err(|e| e.to_string());
                    if answer.is_ok()
                        && let Some(stream) = stream
                    {
                        stream.set_model(&model);
                    }
                    respond(&id, answer.map(|()| json!({})));
                });
                return;
            }
            None => Err("set_model needs a `model`".to_string()),
        },
        "mcp_status" => Ok(json!({"mcpServers": statuses(&live)})),
        "mcp_reconnect" | "mcp_toggle" => {
            let Some(name) = request.get("serverName").and_then(Value::as_str) else {
                respond(
                    id,
                    Err(format!(
                        "{subtype} needs a `serverName` of a configured server"
                    )),
                );
                return;
            };
            let name = name.to_string();
            let command = match (subtype, request.get("enabled").and_then(Value::as_bool)) {
                ("mcp_toggle", None) => {
                    respond(id, Err("mcp_toggle needs `enabled`: true or false".into()));
                    return;
                }
                (_, Some(true)) => McpCommand::Enable(name),
                (_, Some(false)) => McpCommand::Disable(name),
                (_, None) => McpCommand::Reconnect(name),
            };
            let id = id.to_string();
            tokio::spawn(async move {
                let answer = live.mcp(&command).await.map_err(|e| e.to_string());
                respond(&id, answer.map(|()| json!({})));
            });
            return;
        }
        other => Err(format!("Unsupported control request subtype: {other}")),
    };
    respond(id, answer);
}

fn set_mode(live: &Live, request: &Value) -> Result<Value, String> {
    let name = request
        .get("mode")
        .and_then(Value::as_str)
        .ok_or("set_permission_mode needs a `mode`")?;
    let mode: PermissionMode = name.parse()?;
    live.set_mode(mode);
    Ok(json!({"mode": mode.hook_name()}))
}

/// `mcp_status`'s servers, in the SDK's `McpServerStatus` shape.
fn statuses(live: &Live) -> Vec<Value> {
    live.status()
        .servers
        .iter()
        .map(|status| {
            let (word, error) = status.state.report();
            let mut server = json!({"name": status.name, "status": word, "tools": status.tools});
            if let Some(error) = error {
                server["error"] = json!(error);
            }
            if let Some(info) = &status.server_info {
                server["serverInfo"] = json!({"name": info.name, "version": info.version});
            }
            server
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn prompts_are_the_text_of_user_messages() {
        let text = json!({"type": "user", "message": {"role": "user", "content": "hi"}});
        assert_eq!(prompt_of(&text), Ok("hi".into()));
        let blocks = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}});
        assert_eq!(prompt_of(&blocks), Ok("a\n\nb".into()));
        assert!(prompt_of(&json!({"type": "user"})).is_err());
    }

    #[test]
    fn initialize_sets_the_prompt_and_servers_and_refuses_what_ling_lacks() {
        let mut options = RunOptions::default();
        apply_initialize(&json!({"systemPrompt": [""]}), &mut options);
        assert_eq!(options.prompt.replace, None);
        apply_initialize(
            &json!({"systemPrompt": ["Be brief."], "appendSystemPrompt": "More.",
                    "mcpServers": {"db": {"command": "x"}}}),
            &mut options,
        );
        assert_eq!(options.prompt.replace.as_deref(), Some("Be brief."));
        assert_eq!(options.prompt.append.as_deref(), Some("More."));
        assert_eq!(options.mcp_config.len(), 1);
        assert_eq!(
            refused_initialize(&json!({"systemPrompt": [""], "hooks": {}})),
            None
        );
        assert!(
            refused_initialize(&json!({"hooks": {"Stop": []}}))
                .is_some_and(|why| why.contains("hook callbacks"))
        );
    }
}
