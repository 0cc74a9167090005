//! The exact lines of `ling -p --output-format ling-stream-json` (Ling's own lines),
//! `stream-json` (Claude Code's messages) and `json`: every field, in order, as text, for a run
//! with a failed MCP server, hooks, two tool calls and a final answer, and for the result of
//! each way a run ends. Only what changes from run to run (the session id, the project root,
//! the durations, Claude's message ids) is replaced before comparing.

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
            let mut line = line.replace(&session, "SESSION").replace(&root, "ROOT");
            for key in ["\"duration_ms\":", "\"duration_api_ms\":"] {
                if let Some(at) = line.find(key) {
                    let start = at + key.len();
                    let digits = line[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(line.len() - start);
                    line = format!("{}0{}", &line[..start], &line[start + digits..]);
                }
            }
            // Claude Code's messages: fresh ids in every run.
            for key in ["\"uuid\":\"", "\"hook_id\":\"", "\"id\":\"msg_"] {
                let mut from = 0;
                while let Some(at) = line[from..].find(key) {
                    let start = from + at + key.len();
                    let end = line[start..].find('"').map_or(line.len(), |e| start + e);
                    line.replace_range(start..end, "ID");
                    from = start;
                }
            }
            line
        })
        .collect()
}

fn executable(project: &Project, name: &str, body: &str) {
    project.write(name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(project.file(name), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {name}: {e}"));
}

/// A run with a failed MCP server, two hooks (a message, a block), two tool calls and a final
/// answer, in `format`.
fn eventful_run(format: &str) -> (Project, Output) {
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
        format,
        "--model",
        "m1",
        "--mcp-config",
        "servers.json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(!project.file("x.txt").exists(), "the blocked write ran");
    (project, out)
}

const FAILED: &str = "cannot start `/nonexistent/ling-no-such-server` in ROOT: No such file or directory (os error 2)";

#[test]
fn a_ling_stream_json_run_writes_these_lines() {
    let (project, out) = eventful_run("ling-stream-json");
    let failed = FAILED;
    let expected = vec![
        format!(
            r#"{{"type":"system","subtype":"mcp_status","name":"broken","status":"failed","error":"{failed}"}}"#
        ),
        format!(
            concat!(
                r#"{{"type":"system","subtype":"init","session_id":"SESSION","model":"m1","cwd":"ROOT","#,
                r#""tools":["read_file","write_file","edit_file","bash","grep","glob","bash_output","kill_shell","todo_write","exit_plan_mode","ask_user","web_fetch","task","list_mcp_resources","read_mcp_resource"],"#,
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
}

#[test]
fn a_stream_json_run_writes_claude_codes_messages() {
    let (project, out) = eventful_run("stream-json");
    let failed = FAILED;
    // Each block message carries its response's usage: the first 10 in, 2 out; the second 20, 3.
    let tool_use = |id: &str, name: &str, input: &str, (i, o): (u32, u32)| {
        format!(
            concat!(
                r#"{{"type":"assistant","message":{{"id":"msg_ID","type":"message","role":"assistant","model":"m1","#,
                r#""content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}],"stop_reason":null,"stop_sequence":null,"#,
                r#""usage":{{"input_tokens":{i},"output_tokens":{o},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"prompt_tokens":{i},"completion_tokens":{o}}}}},"#,
                r#""parent_tool_use_id":null,"session_id":"SESSION","uuid":"ID"}}"#
            ),
            id = id,
            name = name,
            input = input,
            i = i,
            o = o
        )
    };
    let text = |text: &str, (i, o): (u32, u32)| {
        format!(
            concat!(
                r#"{{"type":"assistant","message":{{"id":"msg_ID","type":"message","role":"assistant","model":"m1","#,
                r#""content":[{{"type":"text","text":"{text}"}}],"stop_reason":null,"stop_sequence":null,"#,
                r#""usage":{{"input_tokens":{i},"output_tokens":{o},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"prompt_tokens":{i},"completion_tokens":{o}}}}},"#,
                r#""parent_tool_use_id":null,"session_id":"SESSION","uuid":"ID"}}"#
            ),
            text = text,
            i = i,
            o = o
        )
    };
    let expected = vec![
        format!(
            r#"{{"type":"system","subtype":"mcp_status","name":"broken","status":"failed","error":"{failed}","uuid":"ID","session_id":"SESSION"}}"#
        ),
        format!(
            concat!(
                r#"{{"type":"system","subtype":"init","cwd":"ROOT","session_id":"SESSION","#,
                r#""tools":["Read","Write","Edit","Bash","Grep","Glob","BashOutput","KillShell","TodoWrite","ExitPlanMode","AskUserQuestion","WebFetch","Task","list_mcp_resources","read_mcp_resource"],"#,
                r#""mcp_servers":[{{"name":"broken","status":"failed","error":"{failed}"}}],"model":"m1","permissionMode":"bypassPermissions","#,
                r#""slash_commands":[],"apiKeySource":"none","claude_code_version":"{version}","output_style":"default","agents":[],"skills":[],"plugins":[],"#,
                r#""uuid":"ID","project_trust":"trusted","sandbox":{{"mode":"workspace-write","network":false}}}}"#
            ),
            failed = failed,
            version = env!("CARGO_PKG_VERSION")
        ),
        text("Looking.", (10, 2)),
        concat!(
            r#"{"type":"system","subtype":"hook_response","hook_id":"ID","hook_name":"PreToolUse:Bash","hook_event":"PreToolUse","#,
            r#""output":"checked","stdout":"","stderr":"","outcome":"success","decision":"message","message":"checked","tool":"bash","uuid":"ID","session_id":"SESSION"}"#
        )
        .to_string(),
        tool_use("c1", "Bash", r#"{"command":"echo hi"}"#, (10, 2)),
        concat!(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"hi\nExit code: 0","is_error":false}]},"#,
            r#""parent_tool_use_id":null,"session_id":"SESSION","uuid":"ID","#,
            r#""tool_use_result":{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"exitCode":0,"text":"hi\nExit code: 0"}}"#
        )
        .to_string(),
        concat!(
            r#"{"type":"system","subtype":"hook_response","hook_id":"ID","hook_name":"PreToolUse:Write","hook_event":"PreToolUse","#,
            r#""output":"command `./no.sh`: blocked: no writes","stdout":"","stderr":"","outcome":"success","decision":"block","#,
            r#""message":"command `./no.sh`: blocked: no writes","tool":"write_file","uuid":"ID","session_id":"SESSION"}"#
        )
        .to_string(),
        tool_use(
            "c2",
            "Write",
            r#"{"path":"x.txt","content":"x","file_path":"x.txt"}"#,
            (10, 2),
        ),
        concat!(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c2","content":"blocked by hook: no writes","is_error":true}]},"#,
            r#""parent_tool_use_id":null,"session_id":"SESSION","uuid":"ID","tool_use_result":"blocked by hook: no writes"}"#
        )
        .to_string(),
        text("Done.", (20, 3)),
        format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":0,"duration_api_ms":0,"num_turns":2,"result":"Done.","#,
                r#""stop_reason":"end_turn","session_id":"SESSION","total_cost_usd":0.0,"#,
                r#""usage":{{"input_tokens":30,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"prompt_tokens":30,"completion_tokens":5}},"#,
                r#""modelUsage":{{"m1":{{"inputTokens":30,"outputTokens":5,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.0,"contextWindow":32768,"maxOutputTokens":0}}}},"#,
                r#""permission_denials":[],"uuid":"ID","mcp_servers":[{{"name":"broken","status":"failed","error":"{failed}"}}],"project_trust":"trusted"}}"#
            ),
            failed = failed
        ),
    ];
    assert_eq!(normalised(&project, &out), expected);
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
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":0,"duration_api_ms":0,"num_turns":1,"#,
            r#""result":"stopped after 1 model requests (the limit set by --max-turns or settings `maxTurns`) before the model finished; raise it with --max-turns N or settings `maxTurns`","#,
            r#""stop_reason":"tool_use","session_id":"SESSION","total_cost_usd":0.0,"#,
            r#""usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"prompt_tokens":0,"completion_tokens":0},"#,
            r#""modelUsage":{"gpt-4o-mini":{"inputTokens":0,"outputTokens":0,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.0,"contextWindow":128000,"maxOutputTokens":0}},"#,
            r#""permission_denials":[],"#,
            r#""errors":["stopped after 1 model requests (the limit set by --max-turns or settings `maxTurns`) before the model finished; raise it with --max-turns N or settings `maxTurns`"],"#,
            r#""uuid":"ID","mcp_servers":[],"project_trust":"none","cost_usd":0.0}"#
        )]
    );

    // A model error: the run fails during execution.
    let project = Project::new();
    let server =
        MockServer::start_blocking(vec![Reply::status(400).message("the model is not here")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "ling-stream-json"]);
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
                r#""cost_usd":0.0,"mcp_servers":[],"project_trust":"none"}}"#
            ),
            serde_json::Value::String(message)
        )
    );
}

/// A command that exits non-zero is an error result in Claude Code's stream-json (programs such
/// as claude-code-action count failures by `is_error`); one that exits 0 is not; its structured
/// `tool_use_result` keeps the exit code either way.
#[test]
fn a_failed_command_is_an_error_result_in_stream_json() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("ok", "bash", json!({"command": "true"})),
            ("bad", "bash", json!({"command": "echo oops; exit 3"})),
        ]),
        Reply::text("Done."),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "stream-json", "--verbose"]);
    cmd.args(["--permission-mode", "bypassPermissions"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results: Vec<serde_json::Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "user")
        .collect();
    let of = |id: &str| {
        results
            .iter()
            .find(|l| l["message"]["content"][0]["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}: {results:?}"))
            .clone()
    };
    assert_eq!(of("ok")["message"]["content"][0]["is_error"], false);
    assert_eq!(of("bad")["message"]["content"][0]["is_error"], true);
    assert_eq!(of("bad")["tool_use_result"]["exitCode"], 3);
}
