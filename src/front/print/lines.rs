//! The JSON lines of `-p`'s json outputs as types, in the field order of `docs/cli.md`: the
//! `system` lines (`init`, `mcp_status`), one line per step (`assistant`, `tool_use`,
//! `tool_result`, `hook`), and the `result` object that ends both `json` and `stream-json`.

use serde::Serialize;
use serde_json::Value;

use crate::llm::Usage;
use crate::mcp::ServerStatus;
use crate::session::NoticeDecision;

/// `sandbox` of the `init` line: the mode `bash` commands run in and whether they reach the
/// network (always, when off).
#[derive(Debug, Serialize)]
pub struct SandboxLine {
    pub mode: &'static str,
    pub network: bool,
}

/// One line of stdout.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line<'a> {
    System(System<'a>),
    Assistant {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
    Hook {
        event: &'a str,
        decision: NoticeDecision,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<&'a str>,
    },
    Result(RunResult<'a>),
}

/// `{"type":"system", "subtype": ...}`.
#[derive(Debug, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum System<'a> {
    /// The first line of a stream-json run, once the MCP servers are ready.
    Init {
        session_id: &'a str,
        model: &'a str,
        cwd: String,
        tools: Vec<String>,
        mcp_servers: &'a [McpServer<'a>],
        project_trust: &'static str,
        /// The shell sandbox of the `bash` tool.
        sandbox: SandboxLine,
    },
    /// The conversation was compacted.
    Compact {
        trigger: &'a str,
        pre_tokens: u64,
        post_tokens: u64,
    },
    /// A server's state changed (one that could not start, with why).
    McpStatus {
        name: &'a str,
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subtype {
    Success,
    ErrorMaxTurns,
    ErrorMaxBudgetUsd,
    ErrorDuringExecution,
    /// The answer did not match the schema of `--json-schema`/`--output-schema`, also when
    /// asked again.
    ErrorMaxStructuredOutputRetries,
}

/// The `result` object.
#[derive(Debug, Serialize)]
pub struct RunResult<'a> {
    pub subtype: Subtype,
    pub is_error: bool,
    pub result: &'a str,
    pub session_id: &'a str,
    pub num_turns: u32,
    pub duration_ms: u64,
    pub usage: Usage,
    /// What the run cost in US dollars, when settings `prices` has the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub mcp_servers: &'a [McpServer<'a>],
    pub project_trust: &'static str,
    /// How `--until`'s check went: `{"command", "rounds", "passed"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<serde_json::Value>,
}

/// One entry of `mcp_servers`: each enabled server, its status and its error.
#[derive(Debug, Serialize)]
pub struct McpServer<'a> {
    pub name: &'a str,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
}

impl<'a> McpServer<'a> {
    /// The enabled servers of `statuses`.
    pub fn list(statuses: &'a [ServerStatus]) -> Vec<Self> {
        statuses
            .iter()
            .filter(|status| status.state != crate::mcp::ServerState::Disabled)
            .map(|status| {
                let (status_word, error) = status.state.report();
                Self {
                    name: &status.name,
                    status: status_word,
                    error,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn text(line: &Line<'_>) -> String {
        serde_json::to_string(line).unwrap_or_default()
    }

    #[test]
    fn lines_keep_the_field_order_of_the_contract() {
        assert_eq!(
            text(&Line::Assistant { text: "hi" }),
            r#"{"type":"assistant","text":"hi"}"#
        );
        let input = json!({"command": "ls"});
        assert_eq!(
            text(&Line::ToolUse {
                id: "c1",
                name: "bash",
                input: &input
            }),
            r#"{"type":"tool_use","id":"c1","name":"bash","input":{"command":"ls"}}"#
        );
        assert_eq!(
            text(&Line::Hook {
                event: "Stop",
                decision: NoticeDecision::Message,
                message: "m",
                tool: None
            }),
            r#"{"type":"hook","event":"Stop","decision":"message","message":"m"}"#
        );
        let servers = [McpServer {
            name: "s",
            status: "connected",
            error: None,
        }];
        assert_eq!(
            text(&Line::System(System::Init {
                session_id: "id",
                model: "m",
                cwd: "/p".into(),
                tools: vec!["bash".into()],
                mcp_servers: &servers,
                project_trust: "none",
                sandbox: SandboxLine {
                    mode: "workspace-write",
                    network: false,
                },
            })),
            r#"{"type":"system","subtype":"init","session_id":"id","model":"m","cwd":"/p","tools":["bash"],"mcp_servers":[{"name":"s","status":"connected"}],"project_trust":"none","sandbox":{"mode":"workspace-write","network":false}}"#
        );
        assert_eq!(
            text(&Line::Result(RunResult {
                subtype: Subtype::ErrorMaxTurns,
                is_error: true,
                result: "r",
                session_id: "id",
                num_turns: 3,
                duration_ms: 7,
                usage: Usage::new(1, 2),
                cost_usd: None,
                mcp_servers: &[],
                project_trust: "trusted",
                until: None,
            })),
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"result":"r","session_id":"id","num_turns":3,"duration_ms":7,"usage":{"prompt_tokens":1,"completion_tokens":2},"mcp_servers":[],"project_trust":"trusted"}"#
        );
    }
}
