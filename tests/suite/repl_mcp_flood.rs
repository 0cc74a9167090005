//! A server flooding the REPL with questions (sampling and elicitation requests, many at once)
//! through a pseudo-terminal: they are asked one at a time, "decline all from this server"
//! answers the rest without asking, Ctrl-C at a question interrupts the turn and declines what is
//! queued, and Ctrl-D and `/exit` at the prompt still leave, each within a bound.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, project};

use std::time::{Duration, Instant};

use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::{Value, json};

/// Each step of the REPL must happen within this (a flood that traps the user fails it).
const STEP: u64 = 15_000;

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

fn repl(project: &Project, server: &MockServer) -> Repl {
    let config = json!({"mcpServers": {"flood": {
        "command": test_server(), "args": ["--tool-name", "flood"]}}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut p = repl::start(project, server, &["--allowed-tools", "mcp__*"], &[]);
    p.wait_mcp_connected("flood");
    p
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
    p.send_line("ask me things");
    p.raw("MCP server flood asks: Your name?");
    p.raw("[d] decline all from this server > ");
    p.send_line("d");
    p.raw("the flood is over");
    p.raw("> ");
    assert_eq!(
        tool_result(&server, 1),
        format!("answers: {}", ["decline"; 30].join(","))
    );
    // The server stays declined for the session: its sampling requests too, without a question.
    p.send_line("more");
    p.raw("still declined");
    p.raw("(declined 5 more MCP server question(s) without asking)");
    p.raw("> ");
    let refused = ["error -1"; 5].join(",");
    assert_eq!(tool_result(&server, 3), format!("answers: {refused}"));
    let started = Instant::now();
    p.control('d');
    p.eof();
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
    p.send_line("ask me things");
    p.raw("MCP server flood asks: Your name?");
    p.raw("[d] decline all from this server > ");
    let started = Instant::now();
    p.control('c');
    let before = p.raw("(interrupted: the MCP servers' other questions in this turn are declined)");
    let after = p.raw("> ");
    // One question was shown, not fifty, and the turn stopped: the model was not asked again.
    for text in [&before, &after] {
        assert!(!text.contains("asks: Your name?"), "{text}");
    }
    assert_eq!(server.requests().len(), 1);
    p.send_line("/exit");
    p.eof();
    assert!(started.elapsed() < Duration::from_millis(STEP));
}
