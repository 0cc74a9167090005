//! MCP in the REPL through a pseudo-terminal, against server-everything over stdio (installed
//! into `.cache/npm`, or `LING_TEST_NPM_DIR`, by `scripts/install-peers.sh`; without it the test
//! fails): its prompts listed in `/help` and run as
//! `/mcp__everything__<prompt>` commands, and a sampling request approved by the user.

use crate::support::peers::{self, EVERYTHING};
use crate::support::{mock_openai, project};

use crate::support::repl;
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::Project;
use serde_json::json;

#[test]
fn prompts_are_commands_and_sampling_asks_the_user() {
    let (node, script) = peers::npm_script(EVERYTHING);
    let server = MockServer::start_blocking(vec![
        Reply::text("Sunny."),
        Reply::tool_calls(vec![(
            "s1",
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": "a haiku", "maxTokens": 40}),
        )]),
        Reply::text("old pond, a frog"),
        Reply::text("The server got its haiku."),
    ]);
    let project = Project::new();
    let config = json!({"mcpServers": {"everything": {
        "command": node, "args": [script, "stdio"], "startupTimeoutMs": 30000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut p = repl::start(&project, &server, &["--allowed-tools", "mcp__*"], &[]);
    p.wait_mcp_connected("everything");

    p.send_line("/help");
    p.raw("MCP prompts");
    p.raw("/mcp__everything__args-prompt city [state]");
    p.raw("> ");
    p.send_line("/mcp__everything__args-prompt state=TX");
    p.raw("needs city");
    p.raw("> ");
    p.send_line("/mcp__everything__args-prompt Paris");
    p.raw("Sunny.");
    p.raw("> ");

    p.send_line("write a haiku through the server");
    p.raw("MCP server everything asks to use the model (at most 40 tokens)");
    p.raw("You are a helpful test server.");
    p.raw("send it to the model? [y] yes  [n] no  [d] decline all from this server > ");
    p.send_line("y");
    p.raw("The server got its haiku.");
    p.raw("> ");
    p.send_line("/exit");
    p.eof();

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let user = |i: usize| -> Vec<String> {
        requests[i]
            .messages()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(user(0), vec!["What's weather in Paris?".to_string()]);
    assert_eq!(
        user(2),
        vec!["Resource trigger-sampling-request context: a haiku".to_string()]
    );
    let results: Vec<String> = requests[3]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(results[0].contains("old pond, a frog"), "{results:?}");
}
