//! What the driver sends on stdin, read as it comes, also while a turn runs: prompts and
//! `initialize` are handed to the turn loop ([`Inbound`]), answers to Ling's own requests to
//! the control channel, and the other control requests answered at once through the
//! session's [`Live`] handle.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use super::control::{Control, answer, respond};
use super::wire::{
    Empty, Initialize, McpServerStatus, McpStatusAnswer, ModeAnswer, Request, ServerInfo,
    UserInput, prompt_of,
};
use crate::config::PermissionMode;
use crate::front::print::claude::ClaudeStream;
use crate::session::{Live, McpCommand};
use crate::ui::output::stderr_line;

/// What the stdin reader hands the turn loop.
pub(super) enum Inbound {
    Initialize {
        id: String,
        init: Box<Initialize>,
    },
    /// `rewind_files`: between turns, as it changes the files.
    RewindFiles {
        id: String,
        user_message_id: String,
        dry_run: bool,
    },
    /// The prompt (its text and images), and the message it came in.
    Prompt(UserInput, Value),
    End,
}

/// What the reader answers by itself, also during a turn: the session's [`Live`] handle (once
/// the run is set up) and the output stream.
#[derive(Default)]
pub(super) struct Shared {
    pub live: OnceLock<Live>,
    pub stream: OnceLock<Arc<ClaudeStream>>,
}

/// Reads stdin line by line: answers go to `control`, control requests are answered (or, for
/// `initialize`, handed on), prompts handed on; the end of stdin is [`Inbound::End`].
pub(super) async fn read_stdin(
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
                match Request::parse(&request) {
                    Ok(Request::Initialize(init)) => {
                        let _ = tx.send(Inbound::Initialize { id, init });
                    }
                    Ok(Request::RewindFiles {
                        user_message_id: Some(user_message_id),
                        dry_run,
                    }) => {
                        let dry_run = dry_run.unwrap_or(false);
                        let _ = tx.send(Inbound::RewindFiles {
                            id,
                            user_message_id,
                            dry_run,
                        });
                    }
                    Ok(request) => handle_control(&shared, &id, request),
                    Err(why) => respond(&id, Err(why)),
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

/// A control request other than `initialize`, answered at once (a reconnect or a model
/// switch when it is done).
fn handle_control(shared: &Arc<Shared>, id: &str, request: Request) {
    let Some(live) = shared.live.get().cloned() else {
        respond(
            id,
            Err("the run is not set up yet; send control requests after initialize".into()),
        );
        return;
    };
    let id = id.to_string();
    match request {
        Request::Initialize(_) => {}
        Request::RewindFiles { .. } => {
            respond(&id, Err("rewind_files needs a `user_message_id`".into()));
        }
        // Ling reads the tools of an in-process server when it connects; a notification
        // (`tools/list_changed`, a log line) is taken and let go, a request of the server's
        // own (sampling, elicitation) refused.
        Request::McpMessage { message, .. } => {
            let is_request = message.as_ref().is_some_and(|m| {
                m.get("method").is_some() && m.get("id").is_some_and(|id| !id.is_null())
            });
            if is_request {
                respond(
                    &id,
                    Err("Ling does not answer requests of in-process MCP servers".into()),
                );
            } else {
                respond(
                    &id,
                    Ok(
                        serde_json::json!({"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}}),
                    ),
                );
            }
        }
        Request::Interrupt => {
            live.interrupt();
            answer(&id, Ok(Empty {}));
        }
        Request::SetPermissionMode { mode } => answer(&id, set_mode(&live, mode.as_deref())),
        Request::SetModel { model: None } => respond(&id, Err("set_model needs a `model`".into())),
        Request::SetModel { model: Some(model) } => {
            let stream = shared.stream.get().cloned();
            tokio::spawn(async move {
                let done = live.set_model(&model).await.map_err(|e| e.to_string());
                if done.is_ok()
                    && let Some(stream) = stream
                {
                    stream.set_model(&model);
                }
                answer(&id, done.map(|()| Empty {}));
            });
        }
        Request::McpStatus => answer(
            &id,
            Ok(McpStatusAnswer {
                mcp_servers: statuses(&live),
            }),
        ),
        Request::McpReconnect { server_name: None }
        | Request::McpToggle {
            server_name: None, ..
        } => {
            respond(
                &id,
                Err("this request needs a `serverName` of a configured server".into()),
            );
        }
        Request::McpToggle { enabled: None, .. } => {
            respond(&id, Err("mcp_toggle needs `enabled`: true or false".into()));
        }
        Request::McpReconnect {
            server_name: Some(name),
        } => mcp(live, id, McpCommand::Reconnect(name)),
        Request::McpToggle {
            server_name: Some(name),
            enabled: Some(on),
        } => mcp(
            live,
            id,
            if on {
                McpCommand::Enable(name)
            } else {
                McpCommand::Disable(name)
            },
        ),
    }
}

/// An MCP server reconnected or switched; the answer comes when it is done.
fn mcp(live: Live, id: String, command: McpCommand) {
    tokio::spawn(async move {
        let done = live.mcp(&command).await.map_err(|e| e.to_string());
        answer(&id, done.map(|()| Empty {}));
    });
}

fn set_mode(live: &Live, mode: Option<&str>) -> Result<ModeAnswer, String> {
    let name = mode.ok_or("set_permission_mode needs a `mode`")?;
    let mode: PermissionMode = name.parse()?;
    live.set_mode(mode);
    Ok(ModeAnswer {
        mode: mode.hook_name(),
    })
}

/// `mcp_status`'s servers, in the SDK's `McpServerStatus` shape.
fn statuses(live: &Live) -> Vec<McpServerStatus> {
    live.status()
        .servers
        .into_iter()
        .map(|status| {
            let (word, error) = status.state.report();
            McpServerStatus {
                name: status.name,
                status: word,
                tools: status.tools,
                error: error.map(str::to_string),
                server_info: status.server_info.map(|info| ServerInfo {
                    name: info.name,
                    version: info.version,
                }),
            }
        })
        .collect()
}
