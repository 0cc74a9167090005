//! The rest of the Agent SDK's `query()` options as programs use them, through the published
//! SDK and the real `ling`: `effort` reaches the model as its reasoning effort,
//! `disallowedTools` takes the tool away, `tools: []` leaves none, each assistant message
//! carries its response's `usage`, a slash command sent as the prompt runs expanded (with
//! `${CLAUDE_SESSION_ID}` and `${CLAUDE_PROJECT_DIR}` substituted), and the
//! `init` message and `supportedCommands()` list the commands, agents and skills.

use super::claude_sdk::{messages, of_type, sdk};
use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::{Value, json};

#[test]
fn effort_disallowed_tools_and_usage_reach_where_they_belong() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("Hi.").usage(21, 4)]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["hello"],
               "options": {"effort": "high", "disallowedTools": ["Bash", "Write"]}}),
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.body["reasoning_effort"], json!("high"));
    let names = sent.tool_names();
    // Taken away, and only those.
    assert!(!names.contains(&"bash".to_string()), "{names:?}");
    assert!(!names.contains(&"write_file".to_string()), "{names:?}");
    assert!(names.contains(&"read_file".to_string()), "{names:?}");
    let messages = messages(&lines);
    let assistant = of_type(&messages, "assistant");
    assert_eq!(assistant.len(), 1, "{messages:#?}");
    assert_eq!(assistant[0]["message"]["usage"]["input_tokens"], json!(21));
    assert_eq!(assistant[0]["message"]["usage"]["output_tokens"], json!(4));
}

#[test]
fn an_empty_tools_list_leaves_the_model_no_builtin_tool() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("Hi.")]);
    sdk(
        &project,
        &server,
        json!({"prompts": ["hello"], "options": {"tools": []}}),
    );
    let names = server.requests()[0].tool_names();
    for builtin in [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "grep",
        "glob",
    ] {
        assert!(!names.contains(&builtin.to_string()), "{names:?}");
    }
}

#[test]
fn a_slash_command_runs_expanded_and_is_listed() {
    let project = Project::new();
    std::fs::create_dir_all(project.home.path().join("commands")).unwrap();
    std::fs::write(
        project.home.path().join("commands/greet.md"),
        "---\ndescription: Greets someone\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS warmly.\nSession ${CLAUDE_SESSION_ID} in ${CLAUDE_PROJECT_DIR}.\n",
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("Hello Bob!"), Reply::text("ok")]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["/greet Bob", "plain"], "afterFirstTurn": ["supportedCommands"],
               "options": {}}),
    );
    let sent = server.requests();
    let user = sent[0].messages().last().cloned().unwrap_or_default();
    assert!(
        user["content"]
            .to_string()
            .contains("Say hello to Bob warmly."),
        "{user}"
    );
    let init = &messages(&lines)[0];
    assert_eq!(init["slash_commands"], json!(["greet"]), "{init}");
    // The session's id and the project's folder, substituted.
    let session = init["session_id"].as_str().unwrap_or_default();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let expected = format!("Session {session} in {}.", root.display());
    assert!(
        user["content"].to_string().contains(&expected),
        "{user}\n{expected}"
    );
    let commands: Vec<&Value> = lines.iter().filter_map(|l| l.get("control")).collect();
    assert_eq!(
        commands,
        [&json!([{"name": "greet", "description": "Greets someone", "argumentHint": "NAME"}])]
    );
}
