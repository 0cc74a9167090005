//! `--agents JSON` and `--agent NAME` as Claude Code reads them, through the binary: the
//! session runs as the agent (its prompt replaces the system prompt, its tools are the only
//! ones offered), and an agent nobody defined stops the run naming those that are.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::{Project, run};

const AGENTS: &str = r#"{"reviewer": {"description": "Reviews code", "prompt": "You are REVIEWER-9.", "tools": ["Read", "Grep"]}}"#;

#[test]
fn the_session_runs_as_the_agent_given() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("looks fine")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "review", "--agents", AGENTS, "--agent", "reviewer"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = &server.requests()[0];
    let system = sent.messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(system.contains("REVIEWER-9"), "{system}");
    let mut names = sent.tool_names();
    names.sort();
    assert_eq!(names, ["grep", "read_file"]);
}

#[test]
fn without_agent_the_definitions_are_only_offered() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi", "--agents", AGENTS]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = &server.requests()[0];
    let system = sent.messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!system.contains("REVIEWER-9"), "{system}");
    assert!(sent.tool_names().contains(&"bash".to_string()));
    assert!(sent.body.to_string().contains("Reviews code"));
}

#[test]
fn an_agent_nobody_defined_stops_the_run() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi", "--agents", AGENTS, "--agent", "planner"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--agent planner"), "{}", out.stderr);
    assert!(out.stderr.contains("reviewer"), "{}", out.stderr);
}
