//! Drives `ling acp` with the suite's ACP client (`tests/peers/acp_client.mjs`, written against
//! the published `@agentclientprotocol/sdk` and run on Node 22): a scenario of steps in, the log
//! of everything the client saw out (updates, permission questions and their answers, fs and
//! terminal requests, each step's response), with the helpers the tests read it with.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::peers;
use super::project::{Project, ling_bin, run_with};

/// What the client saw in one run.
#[derive(Debug)]
pub struct Transcript {
    pub initialize: Value,
    pub log: Vec<Value>,
    /// The session ids `new` steps opened, in order.
    pub sessions: Vec<String>,
    pub agent_exit: Value,
    pub agent_stderr: String,
}

/// The client's script path.
fn client_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/acp_client.mjs")
}

/// Runs the client against `ling acp ARGS` in `project`, with the model at `base_url`.
/// `scenario` gives `steps`, and optionally `capabilities` and `buffers`.
pub fn run(project: &Project, base_url: &str, args: &[&str], scenario: Value) -> Transcript {
    let (node, sdk) = peers::npm_script(peers::ACP_SDK);
    let root = std::fs::canonicalize(project.path()).unwrap();
    let mut agent = vec![ling_bin().to_string(), "acp".to_string()];
    agent.extend(args.iter().map(|a| a.to_string()));
    let mut full = json!({
        "agent": agent,
        "cwd": root,
        "env": {
            "LING_HOME": project.home.path(),
            "OPENAI_BASE_URL": base_url,
            "LING_RETRY_BASE_MS": "5",
            "NO_COLOR": "1",
        },
    });
    for (key, value) in scenario.as_object().into_iter().flatten() {
        full[key] = value.clone();
    }
    let mut cmd = Command::new(node);
    cmd.arg(client_script())
        .current_dir(&root)
        .env("ACP_SDK", sdk)
        .env("ACP_SCENARIO", full.to_string())
        .env_remove("OPENAI_API_KEY")
        .env_remove("LING_BASE_URL")
        .env_remove("LING_MODEL")
        .env_remove("LING_LOG");
    let out = run_with(cmd, None, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "the ACP client failed: {out:?}");
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the client's output is not JSON ({e}): {}\n{}",
            out.stdout, out.stderr
        )
    });
    let transcript = Transcript {
        initialize: value["initialize"].clone(),
        log: value["log"].as_array().cloned().unwrap_or_default(),
        sessions: value["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        agent_exit: value["agentExit"].clone(),
        agent_stderr: value["agentStderr"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    assert!(
        !transcript
            .log
            .iter()
            .any(|e| e["kind"] == "connection_error"),
        "the connection broke: {transcript:#?}"
    );
    transcript
}

impl Transcript {
    /// Every log entry of this kind.
    pub fn entries(&self, kind: &str) -> Vec<&Value> {
        self.log.iter().filter(|e| e["kind"] == kind).collect()
    }

    /// The `session/update` payloads, in order.
    pub fn updates(&self) -> Vec<&Value> {
        self.entries("update")
            .into_iter()
            .map(|e| &e["update"])
            .collect()
    }

    /// Updates of one `sessionUpdate` kind.
    pub fn updates_of(&self, kind: &str) -> Vec<&Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The agent's answer text: its message chunks, joined.
    pub fn answer(&self) -> String {
        self.updates_of("agent_message_chunk")
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    /// The responses to the steps `op`, in order (`result`, or `error`).
    pub fn responses(&self, op: &str) -> Vec<&Value> {
        self.entries("response")
            .into_iter()
            .filter(|e| e["op"] == op)
            .collect()
    }

    /// The stop reasons of the prompts, in order (`error: MESSAGE` for a failed one).
    pub fn stop_reasons(&self) -> Vec<String> {
        self.responses("prompt")
            .iter()
            .map(|r| match r["result"]["stopReason"].as_str() {
                Some(reason) => reason.to_string(),
                None => format!("error: {}", r["error"]["message"]),
            })
            .collect()
    }

    /// The tool call updates (`tool_call` and `tool_call_update`) of one call id.
    pub fn call(&self, id: &str) -> Vec<&Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["toolCallId"] == id)
            .collect()
    }
}
