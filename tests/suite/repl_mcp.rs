//! MCP in the REPL through a pseudo-terminal, against server-everything over stdio (installed
//! into `.cache/npm`, or `LING_TEST_NPM_DIR`, by `scripts/install-peers.sh`; without it the test
//! fails): its prompts listed in `/help` and run as
//! `/mcp__everything__<prompt>` commands, and a sampling request approved by the user.

use crate::support::peers::{self, EVERYTHING};
use crate::support::{mock_openai, project};

use std::time::{Duration, Instant};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::json;

fn expect(p: &mut PtySession, text: &str) -> String {
    p.exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"))
}

fn send(p: &mut PtySession, line: &str) {
    p.send_line(line).unwrap();
}

/// Asks `/mcp` until the server is connected (it starts in the background).
fn wait_connected(p: &mut PtySession) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        send(p, "/mcp");
        let (_, state) = p
            .exp_regex("(starting|connected|failed)")
            .expect("no /mcp status");
        expect(p, "> ");
        match state.as_str() {
            "connected" => return,
            "starting" if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200))
            }
            other => panic!("server-everything is {other}"),
        }
    }
}

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
    let mut cmd = project.command(&server.base_url());
    cmd.args(["--allowed-tools", "mcp__*"]).env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(30_000)).unwrap();
    expect(&mut p, "> ");
    wait_connected(&mut p);

    send(&mut p, "/help");
    expect(&mut p, "MCP prompts");
    expect(&mut p, "/mcp__everything__args-prompt city [state]");
    expect(&mut p, "> ");
    send(&mut p, "/mcp__everything__args-prompt state=TX");
    expect(&mut p, "needs city");
    expect(&mut p, "> ");
    send(&mut p, "/mcp__everything__args-prompt Paris");
    expect(&mut p, "Sunny.");
    expect(&mut p, "> ");

    send(&mut p, "write a haiku through the server");
    expect(
        &mut p,
        "MCP server everything asks to use the model (at most 40 tokens)",
    );
    expect(&mut p, "You are a helpful test server.");
    expect(
        &mut p,
        "send it to the model? [y] yes  [n] no  [d] decline all from this server > ",
    );
    send(&mut p, "y");
    expect(&mut p, "The server got its haiku.");
    expect(&mut p, "> ");
    send(&mut p, "/exit");
    p.exp_eof().expect("the REPL did not exit");

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
