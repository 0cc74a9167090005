//! Tool search through the real binary: with 100 MCP tools whose definitions pass 10% of the
//! context, the model gets their names in `search_tools` (the request shrinks), a search loads
//! the matching tool's full definition from the next request, a deferred tool stays callable,
//! and `toolSearch.mode` `off` / a small tool set send every definition as before.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::{Project, run};
use serde_json::{Value, json};

/// 100 tools: the test server's 10, 89 of ~700 characters each and one to find (over 60 KB of
/// definitions: more than 10% of a 128k-token window).
fn configure(project: &Project, tool_search: Option<Value>) {
    let mut args: Vec<String> = Vec::new();
    for i in 0..89 {
        args.extend(["--tool-name".into(), format!("op_{i}")]);
    }
    args.extend(["--tool-name".into(), "frobnicate_widgets".into()]);
    args.extend([
        "--tool-description".into(),
        "A tool of the test server. ".repeat(25),
    ]);
    let config = json!({"mcpServers": {"big": {"command": test_server(), "args": args}}});
    project.write(".ling/mcp.json", &config.to_string());
    if let Some(tool_search) = tool_search {
        project.write(
            ".ling/settings.json",
            &json!({"toolSearch": tool_search}).to_string(),
        );
    }
    project.trust();
}

fn mcp_tools(request: &mock_openai::Recorded) -> Vec<String> {
    request
        .tool_names()
        .into_iter()
        .filter(|n| n.starts_with("mcp__big__"))
        .collect()
}

fn tools_bytes(request: &mock_openai::Recorded) -> usize {
    request.body["tools"].to_string().len()
}

fn run_task(project: &Project, server: &MockServer) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "frobnicate", "--allowed-tools", "mcp__big__*"]);
    run(cmd)
}

#[test]
fn many_mcp_tools_go_by_name_behind_search_tools_until_the_model_picks_one() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "s1",
            "search_tools",
            json!({"query": "frobnicate widgets"}),
        )]),
        Reply::tool_calls(vec![("c1", "mcp__big__frobnicate_widgets", json!({}))]),
        // Called without searching first: deferred tools stay callable.
        Reply::tool_calls(vec![("c2", "mcp__big__op_3", json!({}))]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    configure(&project, None);
    let out = run_task(&project, &server);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout.trim(), "done");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);

    let first = &requests[0];
    assert!(mcp_tools(first).is_empty(), "{:?}", mcp_tools(first));
    let tools = first.body["tools"].as_array().unwrap();
    let search = tools
        .iter()
        .find(|t| t["function"]["name"] == "search_tools")
        .expect("search_tools is offered");
    let description = search["function"]["description"].as_str().unwrap();
    assert!(
        description.contains("mcp__big__op_42")
            && description.contains("mcp__big__frobnicate_widgets")
    );
    assert!(
        first.tool_names().contains(&"read_file".to_string()),
        "builtins stay"
    );

    let second = &requests[1];
    let result = second.messages().last().cloned().unwrap();
    let text = result["content"].as_str().unwrap();
    assert!(text.starts_with("1 tool(s) found and loaded"), "{text}");
    assert!(
        text.contains("- mcp__big__frobnicate_widgets: [MCP:big]"),
        "{text}"
    );
    assert_eq!(mcp_tools(second), ["mcp__big__frobnicate_widgets"]);

    let third = &requests[2];
    let result = third.messages().last().cloned().unwrap();
    assert_eq!(result["content"], "called frobnicate_widgets");
    let fourth = &requests[3];
    assert_eq!(fourth.messages().last().unwrap()["content"], "called op_3");
    let mut loaded = mcp_tools(fourth);
    loaded.sort();
    assert_eq!(loaded, ["mcp__big__frobnicate_widgets", "mcp__big__op_3"]);

    // The figure: the tool definitions of the first request, with and without tool search.
    let off = MockServer::start_blocking(vec![Reply::text("done")]);
    let plain = Project::new();
    configure(&plain, Some(json!({"mode": "off"})));
    let out = run_task(&plain, &off);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let all = &off.requests()[0];
    assert_eq!(mcp_tools(all).len(), 100);
    let (with, without) = (tools_bytes(first), tools_bytes(all));
    let (body_with, body_without) = (first.body.to_string().len(), all.body.to_string().len());
    eprintln!(
        "first request with 100 MCP tools: tools {with} bytes (whole body {body_with}) with tool \
         search, {without} ({body_without}) without"
    );
    assert!(with * 4 < without, "{with} vs {without}");
}

#[test]
fn a_few_tools_are_sent_in_full_and_mode_on_defers_even_those() {
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let project = Project::new();
    let config = json!({"mcpServers": {"small": {"command": test_server()}}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    assert_eq!(run(cmd).code, Some(0));
    let names = server.requests()[0].tool_names();
    assert!(names.contains(&"mcp__small__echo".to_string()), "{names:?}");
    assert!(!names.contains(&"search_tools".to_string()), "{names:?}");

    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    project.write(
        ".ling/settings.json",
        &json!({"toolSearch": {"mode": "on"}}).to_string(),
    );
    project.trust();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    assert_eq!(run(cmd).code, Some(0));
    let names = server.requests()[0].tool_names();
    assert!(
        !names.contains(&"mcp__small__echo".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
}

#[test]
fn a_bad_tool_search_setting_is_a_configuration_error_saying_what_to_change() {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        &json!({"toolSearch": {"mode": "sometimes"}}).to_string(),
    );
    project.trust();
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("toolSearch.mode \"sometimes\" is not one of auto, on, off"),
        "{}",
        out.stderr
    );
}
