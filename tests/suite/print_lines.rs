//! The exact lines of `ling -p --output-format stream-json` and `json`: every field, in order,
//! as text, for a run with a failed MCP server, hooks, two tool calls and a final answer, and
//! for the result of each way a run ends. Only what changes from run to run (the session id,
//! the project root, the duration) is replaced before comparing.

use crate::support::{mock_openai, project};

use std::os::unix::fs::PermissionsExt;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::json;

/// stdout's lines with the session id, the project root and `duration_ms` made constant.
fn normalised(project: &Project, out: &Output) -> Vec<String> {
    let root = std::fs::canonicalize(project.path())
        .unwrap_or_else(|e| panic!("canonicalize: {e}"))
        .display()
        .to_string();
    let session = out
        .json_lines()
        .iter()
        .find_map(|line| line["session_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no session_id in:\n{}", out.stdout));
    out.stdout
        .lines()
        .map(|line| {
            let line = line.replace(&session, "SESSION").replace(&root, "ROOT");
            match line.find("\"duration_ms\":") {
                Some(at) => {
                    let start = at + "\"duration_ms\":".len();
                    let digits = line[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(line.len() - start);
                    format!("{}0{}", &line[..start], &line[start + digits..])
                }
                None => line,
            }
        })
        .collect()
}

fn executable(project: &Project, name: &str, body: &str) {
    project.write(name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(project.file(name), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {name}: {e}"));
}

#[test]
fn a_stream_json_run_writes_these_lines() {
    let project = Project::new();
    executable(
        &project,
        "say.sh",
        "cat > /dev/null\necho '{\"systemMessage\": \"checked\"}'",
    );
    executable(
        &project,
        "no.sh",
        "cat > /dev/null\necho 'no writes' >&2\nexit 2",
    );
    project.write(
        ".ling/hooks.json",
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "bash", "hooks": [{"type": "command", "command": "./say.sh"}]},
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "./no.sh"}]}
        ]}})
        .to_string(),
    );
    project.trust();
    project.write(
        "servers.json",
        &json!({"mcpServers": {
            "broken": {"command": "/nonexistent/ling-no-such-server"},
            "off": {"command": "/nonexistent/other", "disabled": true}
        }})
        .to_string(),
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls_with_text(
            "Looking.",
            vec![
                ("c1", "bash", json!({"command": "echo hi"})),
                ("c2", "write_file", json!({"path": "x.txt", "content": "x"})),
            ],
        )
        .usage(10, 2),
        Reply::text("Done.").usage(20, 3),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "go",
        "--permission-mode",
        "bypass",
        "--output-format",
        "stream-json",
        "--model",
        "m1",
        "--mcp-config",
        "servers.json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let failed = "cannot start `/nonexistent/ling-no-such-server` in ROOT: No such file or directory (os error 2)";
    let expected = vec![
        format!(
            r#"{{"type":"system","subtype":"mcp_status","name":"broken","status":"failed","error":"{failed}"}}"#
        ),
        format!(
            concat!(
                r#"{{"type":"system","subtype":"init","session_id":"SESSION","model":"m1","cwd":"ROOT","#,
                r#""tools":["read_file","write_file","edit_file","bash","grep","glob","task","list_mcp_resources","read_mcp_resource"],"#,
                r#""mcp_servers":[{{"name":"broken","status":"failed","error":"{failed}"}}],"project_trust":"trusted","#,
                r#""sandbox":{{"mode":"workspace-write","network":false}}}}"#
            ),
            failed = failed
        ),
        r#"{"type":"assistant","text":"Looking."}"#.to_string(),
        r#"{"type":"hook","event":"PreToolUse","decision":"message","message":"checked","tool":"bash"}"#.to_string(),
        r#"{"type":"tool_use","id":"c1","name":"bash","input":{"command":"echo hi"}}"#.to_string(),
        r#"{"type":"tool_result","tool_use_id":"c1","content":"hi\nExit code: 0","is_error":false}"#.to_string(),
        r#"{"type":"hook","event":"PreToolUse","decision":"block","message":"command `./no.sh`: blocked: no writes","tool":"write_file"}"#.to_string(),
        r#"{"type":"tool_use","id":"c2","name":"write_file","input":{"path":"x.txt","content":"x"}}"#.to_string(),
        r#"{"type":"tool_result","tool_use_id":"c2","content":"blocked by hook: no writes","is_error":true}"#.to_string(),
        r#"{"type":"assistant","text":"Done."}"#.to_string(),
        format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"SESSION","#,
                r#""num_turns":2,"duration_ms":0,"usage":{{"prompt_tokens":30,"completion_tokens":5}},"#,
                r#""mcp_servers":[{{"name":"broken","status":"failed","error":"{failed}"}}],"project_trust":"trusted"}}"#
            ),
            failed = failed
        ),
    ];
    assert_eq!(normalised(&project, &out), expected);
    assert!(!project.file("x.txt").exists(), "the blocked write ran");
}

#[test]
fn the_result_line_says_how_a_run_ended() {
    // The turn limit: a run that still wants tools after --max-turns requests.
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "c1",
        "glob",
        json!({"pattern": "*"}),
    )])]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "json", "--max-turns", "1"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert_eq!(
        normalised(&project, &out),
        [concat!(
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"#,
            r#""result":"stopped after 1 model requests (the limit set by --max-turns or settings `maxTurns`) before the model finished; raise it with --max-turns N or settings `maxTurns`","#,
            r#""session_id":"SESSION","num_turns":1,"duration_ms":0,"usage":{"prompt_tokens":0,"completion_tokens":0},"#,
            r#""mcp_servers":[],"project_trust":"none"}"#
        )]
    );

    // A model error: the run fails during execution.
    let project = Project::new();
    let server =
        MockServer::start_blocking(vec![Reply::status(400).message("the model is not here")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "stream-json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    let lines = normalised(&project, &out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let result: serde_json::Value = serde_json::from_str(&lines[1]).unwrap_or_default();
    let message = result["result"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("the model is not here"), "{message}");
    assert_eq!(
        lines[1],
        format!(
            concat!(
                r#"{{"type":"result","subtype":"error_during_execution","is_error":true,"result":{},"#,
                r#""session_id":"SESSION","num_turns":1,"duration_ms":0,"usage":{{"prompt_tokens":0,"completion_tokens":0}},"#,
                r#""mcp_servers":[],"project_trust":"none"}}"#
            ),
            serde_json::Value::String(message)
        )
    );
}
