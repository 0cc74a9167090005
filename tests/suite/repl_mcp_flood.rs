//! A server flooding the REPL with questions (sampling and elicitation requests, many at once)
//! through a pseudo-terminal: they are asked one at a time, "decline all from this server"
//! answers the rest without asking, Ctrl-C at a question interrupts the turn and declines what is
//! queued, and Ctrl-D and `/exit` at the prompt still leave, each within a bound.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, project};

use std::time::{Duration, Instant};

use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::{Value, json};

/// Each step of the REPL must happen within this (a flood that traps the user fails it).
const STEP: u64 = 15_000;

fn expect(p: &mut PtySession, text: &str) -> String {
    p.exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"))
}

fn form(count: u64) -> Value {
    json!({"count": count, "method": "elicitation/create", "params": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
}

fn sampling(count: u64) -> Value {
    json!({"count": count, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "flood"}}],
        "maxTokens": 5}})
}

fn repl(project: &Project, server: &MockServer) -> PtySession {
    let config = json!({"mcpServers": {"flood": {
        "command": test_server(), "args": ["--tool-name", "flood"]}}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["--allowed-tools", "mcp__*"]).env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(STEP)).unwrap();
    expect(&mut p, "> ");
    // Wait until the server is connected (it starts in the background).
    for _ in 0..50 {
        p.send_line("/mcp").unwrap();
        let (_, state) = p.exp_regex("(starting|connected|failed)").unwrap();
        expect(&mut p, "> ");
        if state == "connected" {
            return p;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the flooding server never connected");
}

fn tool_result(server: &MockServer, request: usize) -> String {
    let requests = server.requests();
    let last = requests[request]
        .messages()
        .last()
        .cloned()
        .unwrap_or_default();
    last["content"].as_str().unwrap_or_default().to_string()
}

#[test]
fn decline_all_from_this_server_answers_the_rest_of_a_flood_without_asking() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("f1", "mcp__flood__flood", form(30))]),
        Reply::text("the flood is over"),
        Reply::tool_calls(vec![("f2", "mcp__flood__flood", sampling(5))]),
        Reply::text("still declined"),
    ]);
    let project = Project::new();
    let mut p = repl(&project, &server);
    p.send_line("ask me things").unwrap();
    expect(&mut p, "MCP server flood asks: Your name?");
    expect(&mut p, "[d] decline all from this server > ");
    p.send_line("d").unwrap();
    expect(&mut p, "the flood is over");
    expect(&mut p, "> ");
    assert_eq!(
        tool_result(&server, 1),
        format!("answers: {}", ["decline"; 30].join(","))
    );
    // The server stays declined for the session: its sampling requests too, without a question.
    p.send_line("more").unwrap();
    expect(&mut p, "still declined");
    expect(
        &mut p,
        "(declined 5 more MCP server question(s) without asking)",
    );
    expect(&mut p, "> ");
    let refused = ["error -1"; 5].join(",");
    assert_eq!(tool_result(&server, 3), format!("answers: {refused}"));
    let started = Instant::now();
    p.send_control('d').unwrap();
    p.exp_eof().expect("Ctrl-D did not leave the REPL");
    assert!(started.elapsed() < Duration::from_millis(STEP));
}

#[test]
fn ctrl_c_at_a_question_interrupts_the_turn_and_exit_still_works() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("f1", "mcp__flood__flood", form(50))]),
        Reply::text("never reached"),
    ]);
    server.expect_unasked(1);
    let project = Project::new();
    let mut p = repl(&project, &server);
    p.send_line("ask me things").unwrap();
    expect(&mut p, "MCP server flood asks: Your name?");
    expect(&mut p, "[d] decline all from this server > ");
    let started = Instant::now();
    p.send_control('c').unwrap();
    let before = expect(
        &mut p,
        "(interrupted: the MCP servers' other questions in this turn are declined)",
    );
    let after = expect(&mut p, "> ");
    // One question was shown, not fifty, and the turn stopped: the model was not asked again.
    for text in [&before, &after] {
        assert!(!text.contains("asks: Your name?"), "{text}");
    }
    assert_eq!(server.requests().len(), 1);
    p.send_line("/exit").unwrap();
    p.exp_eof().expect("/exit did not leave the REPL");
    assert!(started.elapsed() < Duration::from_millis(STEP));
}
