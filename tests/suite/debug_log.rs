//! `LING_LOG=debug` writes `LING_HOME/logs/ling.log` with the model requests; without it there is
//! no log file, and a level Ling does not know is a warning, not a failure.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};

#[test]
fn ling_log_debug_records_the_model_request() {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_LOG", "debug")
        .args(["-p", "hello", "--model", "log-model"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "hi\n", "the log must not reach stdout");
    assert_eq!(out.stderr, "", "the log must not reach stderr");

    let log =
        std::fs::read_to_string(project.home.path().join("logs/ling.log")).expect("no log file");
    let request = format!(
        "DEBUG llm: POST {}/chat/completions model=log-model messages=2 tools=12",
        server.base_url()
    );
    assert!(log.contains(&request), "{request:?} not in:\n{log}");
    assert!(log.contains("DEBUG llm: HTTP 200"), "{log}");
    assert!(log.contains("DEBUG agent: model answered"), "{log}");
    let first = log.lines().next().unwrap_or_default();
    let timestamp = first.split(' ').next().unwrap_or_default();
    assert!(
        chrono::DateTime::parse_from_rfc3339(timestamp).is_ok(),
        "no timestamp at the start of {first:?}"
    );
}

#[test]
fn without_ling_log_there_is_no_log_file() {
    let server = MockServer::start_blocking(vec![Reply::text("hi"), Reply::text("hi")]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hello"]);
    assert_eq!(run(cmd).code, Some(0));
    assert!(!project.home.path().join("logs").exists());

    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_LOG", "loud").args(["-p", "hello"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains("LING_LOG=\"loud\" is not a log level"),
        "{}",
        out.stderr
    );
    assert!(!project.home.path().join("logs").exists());
}
