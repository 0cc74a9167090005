//! `--input-format stream-json`: a program (the Claude Agent SDK, or anything written against
//! `claude -p`) sends JSON lines on stdin and reads Claude Code's messages on stdout. A `user`
//! message is one turn; each turn ends with its `result`, and the next waits on stdin. A
//! message's `image` blocks (base64) go with its prompt as images. Control requests are
//! answered at once, also while a turn runs: `initialize` (its `systemPrompt`,
//! `appendSystemPrompt`, `mcpServers` and `jsonSchema` apply to the run), `interrupt`, `set_permission_mode`,
//! `set_model`, `mcp_status`, `mcp_reconnect` and `mcp_toggle`; any other is an error naming
//! it. MCP config files edited during the session are picked up before the next turn. The end
//! of stdin ends the run after the turns already sent.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod control;
mod inbound;
mod turn;
mod wire;

use self::control::{Control, answer, respond};
use self::inbound::{Inbound, Shared, read_stdin};
use self::wire::{Initialize, InitializeAnswer, ModelInfo, RewindFilesAnswer};
use crate::config::Paths;
use crate::front::print::claude::{ClaudeStream, init_message, mcp_servers};
use crate::front::print::ending::{Ending, ResultFacts, claude_result};
use crate::front::print::run::report_failed_servers;
use crate::front::print::schema::OutputSchema;
use crate::session::{
    AgentEvent, Command, EndReason, EventSink, Host, Io, Live, Reply, RewindRequest, RewindScope,
    Start,
};
use crate::session::{RunOptions, SetupError};
use crate::trust::ProjectConfig;
use crate::ui::RunOutcome;
use crate::ui::output::stderr_line;
use crate::ui::signals;

/// How the stream-json session runs.
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    pub verbose: bool,
    /// `--include-partial-messages`.
    pub partial: bool,
    /// `--permission-prompt-tool stdio`: questions go to the driver as `can_use_tool`.
    pub stdio_prompt: bool,
    /// `--replay-user-messages`: each user message is written back before its turn.
    pub replay_user_messages: bool,
    /// `--json-schema` (or `initialize`'s `jsonSchema`, which wins): each turn's answer must
    /// match it.
    pub output_schema: Option<OutputSchema>,
}

/// Runs the session: reads the first message (an `initialize` is applied before anything is
/// set up), prepares the run, then runs one turn per `user` message until stdin ends.
pub async fn run(
    mut options: RunOptions,
    paths: Paths,
    project: ProjectConfig,
    mut stream_options: StreamOptions,
    warn: &dyn Fn(&str),
) -> Result<RunOutcome, SetupError> {
    let control = Arc::new(Control::default());
    let shared = Arc::new(Shared::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_stdin(control.clone(), shared.clone(), tx));

    let mut queued = Vec::new();
    let mut initialize = None;
    match rx.recv().await {
        Some(Inbound::Initialize { id, init }) => {
            // What Ling cannot honour ends the session: a program's guard or option must
            // never be dropped while its prompt runs anyway.
            if let Some(refusal) = init.refusal() {
                respond(&id, Err(refusal.clone()));
                setup_failed(&refusal);
                reader.abort();
                return Err(SetupError::Program(refusal));
            }
            apply_initialize(&init, &mut options, &control);
            if let Ok(Some(schema)) = init.output_schema() {
                stream_options.output_schema = Some(schema);
            }
            initialize = Some((id, init));
        }
        Some(other) => queued.push(other),
        None => {}
    }
    // After initialize's system prompt texts, which replace those of the command line.
    if let Some(schema) = &stream_options.output_schema {
        let append = options.prompt.append.take().unwrap_or_default();
        options.prompt.append = Some(format!("{append}\n\n{}", schema.instruction()));
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
            setup_failed(&e.to_string());
            reader.abort();
            return Err(e);
        }
    };
    let mut session = Session {
        host,
        messages: Vec::new(),
        control,
        shared,
        options: stream_options,
        outcome: RunOutcome::Success,
    };
    if let Some((id, init)) = initialize {
        session.answer_initialize(&id, &init);
    }
    let outcome = session.serve(queued, &mut rx).await;
    reader.abort();
    Ok(outcome)
}

/// The session could not start: a `result` saying why, so that the program's `query()` ends
/// with the reason rather than with a closed pipe.
fn setup_failed(why: &str) {
    crate::front::print::json_line(&json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": why,
        "errors": [why],
        "session_id": "",
        "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }));
}

/// Takes the run's options out of `initialize`: a non-empty `systemPrompt` replaces Ling's
/// (the SDK's default `[""]` keeps it), `appendSystemPrompt` is added, `mcpServers` are one
/// more MCP config, and the program's hook callbacks, in-process MCP servers and agents are
/// reached through `control`.
fn apply_initialize(init: &Initialize, options: &mut RunOptions, control: &Arc<Control>) {
    let prompt = init
        .system_prompt
        .as_ref()
        .map(wire::SystemPrompt::text)
        .unwrap_or_default();
    if !prompt.trim().is_empty() {
        options.prompt.replace = Some(prompt);
    }
    if let Some(append) = &init.append_system_prompt {
        options.prompt.append = Some(append.clone());
    }
    if let Some(servers) = &init.mcp_servers {
        let inline = json!({ "mcpServers": servers }).to_string();
        options.mcp_config.push(inline.into());
    }
    if let Some(tools) = &init.disallowed_tools {
        options
            .overrides
            .disallowed_tools
            .extend(tools.iter().cloned());
    }
    let program = &mut options.program;
    program.channel = Some(control.clone());
    program.hooks = init
        .hooks
        .as_ref()
        .and_then(serde_json::Value::as_object)
        .filter(|h| !h.is_empty())
        .cloned();
    program.mcp_servers = init.sdk_mcp_servers.clone().unwrap_or_default();
    // Those of `--agents` too; initialize's win a name both give.
    if let Some(agents) = init.agents.as_ref().and_then(serde_json::Value::as_object) {
        let all = program.agents.get_or_insert_with(Default::default);
        for (name, definition) in agents {
            all.insert(name.clone(), definition.clone());
        }
    }
}

struct Session {
    host: Host,
    /// The uuid of each user message this run sent, with its number in the session.
    messages: Vec<(String, usize)>,
    control: Arc<Control>,
    shared: Arc<Shared>,
    options: StreamOptions,
    /// How the last turn ended.
    outcome: RunOutcome,
}

impl Session {
    fn answer_initialize(&self, id: &str, init: &Initialize) {
        if let Some(refusal) = init.refusal() {
            respond(id, Err(refusal));
            return;
        }
        let model = self.host.model().to_string();
        let extensions = self.host.extensions();
        // `supportedCommands()` and `supportedAgents()` read these.
        let commands = extensions
            .commands
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "description": c.description,
                    "argumentHint": c.argument_hint.clone().unwrap_or_default(),
                })
            })
            .collect();
        let agents = extensions
            .agents
            .iter()
            .map(|a| {
                let mut info = json!({"name": a.name, "description": a.description});
                if let Some(model) = &a.model {
                    info["model"] = json!(model);
                }
                info
            })
            .collect();
        answer(
            id,
            Ok(InitializeAnswer {
                commands,
                agents,
                output_style: "default",
                available_output_styles: ["default"],
                models: vec![ModelInfo {
                    value: model.clone(),
                    display_name: model,
                    description: "the model of Ling's OpenAI-compatible endpoint",
                }],
                account: Default::default(),
                claude_code_version: env!("CARGO_PKG_VERSION"),
                mcp_servers_applied: init.mcp_servers.as_ref().map(|_| true),
            }),
        );
    }

    /// `rewindFiles(userMessageId, {dryRun})`: the files back as they were before that
    /// message (the conversation stays), answered in the SDK's `RewindFilesResult` shape.
    async fn rewind_files(&mut self, id: &str, uuid: &str, dry_run: bool, stream: &ClaudeStream) {
        let Some(&(_, to)) = self.messages.iter().find(|(known, _)| known == uuid) else {
            answer(
                id,
                Ok(RewindFilesAnswer::refused(format!(
                    "no user message {uuid} was sent in this run (its uuid comes back with \
                     --replay-user-messages)"
                ))),
            );
            return;
        };
        let request = RewindRequest {
            to,
            scope: RewindScope::Code,
            force: false,
            dry_run,
        };
        let cancel = CancellationToken::new();
        let io = Io::unattended(stream, &cancel);
        let reply = match self.host.submit(Command::Rewind(request), &io).await {
            Ok(Reply::Rewound(report)) => {
                RewindFilesAnswer::of(&report, &self.host.paths().project_root)
            }
            Ok(_) => RewindFilesAnswer::refused("the rewind did not run".into()),
            Err(e) => RewindFilesAnswer::refused(e.to_string()),
        };
        answer(id, Ok(reply));
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
                    let uuid = message
                        .get("uuid")
                        .and_then(serde_json::Value::as_str)
                        .map_or_else(crate::front::print::claude::messages::uuid, str::to_string);
                    if self.options.replay_user_messages {
                        let mut echo = message;
                        echo["session_id"] = json!(stream.session_id());
                        echo["uuid"] = json!(uuid);
                        stream.write(&echo);
                    }
                    let before = self.host.prompt_count();
                    self.turn(&prompt, &stream, &cancel).await;
                    // The message's number, for `rewindFiles(uuid)`.
                    if self.host.prompt_count() > before {
                        self.messages.push((uuid, before + 1));
                    }
                    if cancel.is_cancelled() {
                        break;
                    }
                }
                Some(Inbound::Initialize { id, init }) => self.answer_initialize(&id, &init),
                Some(Inbound::RewindFiles {
                    id,
                    user_message_id,
                    dry_run,
                }) => {
                    self.rewind_files(&id, &user_message_id, dry_run, &stream)
                        .await
                }
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

    /// Attaches a message's images to its prompt; none when one cannot go.
    fn attach_images(
        &mut self,
        images: &[Result<(Vec<u8>, String), String>],
    ) -> Result<(), String> {
        for image in images {
            let attached = image
                .as_ref()
                .map_err(String::clone)
                .and_then(|(bytes, name)| {
                    self.host
                        .attach_image_bytes(bytes, name)
                        .map(drop)
                        .map_err(|e| e.to_string())
                });
            if let Err(why) = attached {
                self.host.drop_attached_images();
                return Err(why);
            }
        }
        Ok(())
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
                price: self.host.settings().price(&model),
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
