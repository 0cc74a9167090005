//! Claude Code's structured output (`--json-schema SCHEMA`, the Agent SDK's `outputFormat`):
//! the schema is told to the model, a matching answer comes back as the result's
//! `structured_output`, a mismatch is explained to the model and asked again, an answer that
//! never matches ends with `error_max_structured_output_retries` (exit 1), and a schema that is
//! no JSON object is a usage error (exit 2). Driven through `-p` (json, stream-json, text),
//! stream-json input whose `initialize` carries `jsonSchema`, and the published Agent SDK.

use super::claude_sdk::{messages, of_type, sdk};
use crate::support::{mock_openai, project};

use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run, run_with};
use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    })
}

fn print(project: &Project, server: &MockServer, format: &str, schema: &str) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "the answer?", "--model", "test-model"])
        .args(["--output-format", format, "--json-schema", schema]);
    if format == "stream-json" {
        cmd.arg("--verbose");
    }
    run(cmd)
}

/// The last line of a `stream-json` output (its `result`).
fn last_line(out: &project::Output) -> Value {
    out.json_lines().pop().unwrap_or_default()
}

#[test]
fn a_matching_answer_is_the_result_s_structured_output() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("{\"answer\": 42}")]);
    let out = print(&project, &server, "json", &schema().to_string());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = out.json();
    assert_eq!(result["subtype"], json!("success"));
    assert_eq!(result["is_error"], json!(false));
    assert_eq!(result["structured_output"], json!({"answer": 42}));
    assert_eq!(result["result"], json!("{\"answer\": 42}"));
    // The schema was told to the model.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let system = requests[0].messages()[0]["content"].to_string();
    assert!(
        system.contains("\\\"required\\\":[\\\"answer\\\"]"),
        "{system}"
    );

    // stream-json: the same on its last line; text: the answer itself.
    let server = MockServer::start_blocking(vec![Reply::text("```json\n{\"answer\": 7}\n```")]);
    let out = print(&project, &server, "stream-json", &schema().to_string());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = last_line(&out);
    assert_eq!(result["type"], json!("result"));
    assert_eq!(result["structured_output"], json!({"answer": 7}));
    let server = MockServer::start_blocking(vec![Reply::text("{\"answer\": 1}")]);
    let out = print(&project, &server, "text", &schema().to_string());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "{\"answer\": 1}\n");
}

#[test]
fn a_wrong_answer_is_explained_and_asked_again() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("The answer is 42."),
        Reply::text("{\"answer\": 42}"),
    ]);
    let out = print(&project, &server, "json", &schema().to_string());
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = out.json();
    assert_eq!(result["subtype"], json!("success"));
    assert_eq!(result["structured_output"], json!({"answer": 42}));
    // Both attempts are the run's turns.
    assert_eq!(result["num_turns"], json!(2), "{result}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let retry = requests[1]
        .messages()
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        retry.contains("does not match the required JSON Schema")
            && retry.contains("the answer is not JSON"),
        "{retry}"
    );
}

#[test]
fn an_answer_that_never_matches_ends_with_error_max_structured_output_retries() {
    let project = Project::new();
    for format in ["json", "stream-json"] {
        let server = MockServer::start_blocking(vec![
            Reply::text("{\"answer\": \"many\"}"),
            Reply::text("{\"answer\": 4, \"why\": \"x\"}"),
        ]);
        let out = print(&project, &server, format, &schema().to_string());
        assert_eq!(out.code, Some(1), "{format}: {}", out.stderr);
        let result = match format {
            "json" => out.json(),
            _ => last_line(&out),
        };
        assert_eq!(
            result["subtype"],
            json!("error_max_structured_output_retries")
        );
        assert_eq!(result["is_error"], json!(true));
        assert_eq!(result.get("structured_output"), None);
        let text = result["result"].as_str().unwrap_or_default();
        assert!(
            text.contains("does not match --json-schema")
                && text.contains("property `why` the schema does not allow"),
            "{text}"
        );
        // The first mismatch was sent back, with what was wrong.
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{format}");
        let retry = requests[1].messages().last().cloned().unwrap_or_default();
        assert!(
            retry["content"]
                .to_string()
                .contains("$.answer is not of type integer"),
            "{retry}"
        );
    }
}

#[test]
fn a_schema_that_is_no_json_object_is_a_usage_error() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    for (schema, says) in [
        ("{type: object}", "not JSON"),
        ("[\"object\"]", "a JSON Schema is an object"),
    ] {
        let out = print(&project, &server, "json", schema);
        assert_eq!(out.code, Some(2), "{schema}: {}", out.stderr);
        assert!(
            out.stderr.contains("--json-schema") && out.stderr.contains(says),
            "{schema}: {}",
            out.stderr
        );
    }
    assert!(server.requests().is_empty());
}

#[test]
fn initialize_s_json_schema_applies_to_each_turn() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("forty-two"),
        Reply::text("{\"answer\": 42}"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "--model", "test-model", "--verbose"])
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ]);
    let stdin = [
        json!({"type": "control_request", "request_id": "init-1",
               "request": {"subtype": "initialize", "jsonSchema": schema()}}),
        json!({"type": "user", "message": {"role": "user", "content": "the answer?"}}),
    ]
    .map(|line| line.to_string())
    .join("\n")
        + "\n";
    let out = run_with(cmd, Some(&stdin), Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines = out.json_lines();
    let answer = lines
        .iter()
        .find(|l| l["type"] == "control_response")
        .cloned()
        .unwrap_or_default();
    assert_eq!(answer["response"]["subtype"], json!("success"), "{answer}");
    let result = lines.last().cloned().unwrap_or_default();
    assert_eq!(result["subtype"], json!("success"), "{result}");
    assert_eq!(result["structured_output"], json!({"answer": 42}));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_agent_sdk_s_output_format_comes_back_as_structured_output() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::text("Sure: forty-two."),
        Reply::text("{\"answer\": 42}"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["the answer?"],
               "options": {"outputFormat": {"type": "json_schema", "schema": schema()}}}),
    );
    let messages = messages(&lines);
    let results = of_type(&messages, "result");
    assert_eq!(results.len(), 1, "{messages:#?}");
    assert_eq!(results[0]["subtype"], json!("success"));
    assert_eq!(results[0]["structured_output"], json!({"answer": 42}));
    assert_eq!(server.requests().len(), 2);
}
