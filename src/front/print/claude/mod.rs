//! Claude Code's `stream-json` protocol, so that programs written against `claude -p` and the
//! Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, pointed at `ling` with its
//! `pathToClaudeCodeExecutable` option) drive Ling unchanged: the message shapes of the output
//! (`messages`, written by [`ClaudeStream`]). The control channel and the driver of
//! `--input-format stream-json`, where the prompts come as JSON lines on stdin and several turns
//! run in one process, are the `claude` front end's (`crate::front::claude`).

pub mod messages;
mod stream;

use serde_json::{Value, json};

pub use stream::{ClaudeStream, RunStats, claude_name};

use crate::mcp::{ServerState, ServerStatus};
use crate::session::Host;

/// `mcp_servers` of `init` and `result`: each enabled server's name and status, with `error`
/// when it has one.
pub fn mcp_servers(statuses: &[ServerStatus]) -> Vec<Value> {
    statuses
        .iter()
        .filter(|status| status.state != ServerState::Disabled)
        .map(|status| {
            let (word, error) = status.state.report();
            let mut server = json!({"name": status.name, "status": word});
            if let Some(error) = error {
                server["error"] = json!(error);
            }
            server
        })
        .collect()
}

/// The `system`/`init` message of a prepared run (its MCP servers ready).
pub fn init_message(host: &Host) -> Value {
    let status = host.status();
    let extensions = host.extensions();
    let init = messages::Init {
        kind: "system",
        subtype: "init",
        cwd: status.project_root.to_string_lossy().into_owned(),
        session_id: &status.session_id,
        tools: host
            .tools()
            .names()
            .iter()
            .map(|n| claude_name(n))
            .collect(),
        mcp_servers: mcp_servers(&status.servers),
        model: &status.model,
        permission_mode: status.mode.hook_name(),
        slash_commands: extensions.commands.iter().map(|c| c.name.clone()).collect(),
        api_key_source: if host.settings().api_key.is_some() {
            "user"
        } else {
            "none"
        },
        claude_code_version: env!("CARGO_PKG_VERSION"),
        output_style: "default",
        agents: extensions.agents.iter().map(|a| a.name.clone()).collect(),
        skills: extensions.skills.iter().map(|s| s.name.clone()).collect(),
        plugins: Vec::new(),
        uuid: messages::uuid(),
        project_trust: status.trust.as_str(),
        // What a `bash` command gets now (`read-only` in plan mode): the one sandbox decision.
        sandbox: json!({
            "mode": status.sandbox.mode.as_str(),
            "network": status.sandbox.network,
        }),
    };
    serde_json::to_value(init).unwrap_or_default()
}
