//! MCP resources, sampling, elicitation and roots through the real `ling -p` and the mock model:
//! against server-everything over stdio (installed into `.cache/npm`, or `LING_TEST_NPM_DIR`, by
//! `scripts/install-peers.sh`; without it these tests fail), and against the test server's `ask_client` tool, which sends any request to Ling
//! and returns the answer.

use crate::support::mcp::test_server;
use crate::support::peers::{self, EVERYTHING};
use crate::support::{mock_openai, project};

use std::path::PathBuf;

use mock_openai::{MockServer, Recorded, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

fn configure_everything(project: &Project, node: &PathBuf, server: &PathBuf) {
    let config = json!({"mcpServers": {"everything": {
        "command": node, "args": [server, "stdio"], "startupTimeoutMs": 30000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
}

/// The results of the tool calls of the model's last answer (the last `n` tool messages).
fn tool_results(request: &Recorded, n: usize) -> Vec<String> {
    let all: Vec<String> = request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    all[all.len().saturating_sub(n)..].to_vec()
}

fn user_message(request: &Recorded) -> String {
    request
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default()
}

fn ling_p(project: &Project, server: &MockServer, prompt: &str, extra: &[&str]) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt, "--allowed-tools", "mcp__*"])
        .args(extra);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    out
}

#[test]
fn resources_are_listed_read_mentioned_and_rendered_from_tool_results() {
    let (node, script) = peers::npm_script(EVERYTHING);
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "list_mcp_resources",
            json!({"server": "everything"}),
        )]),
        Reply::tool_calls(vec![
            (
                "c2",
                "read_mcp_resource",
                json!({"server": "everything", "uri": "demo://resource/dynamic/text/7"}),
            ),
            (
                "c3",
                "read_mcp_resource",
                json!({"server": "everything", "uri": "demo://resource/dynamic/blob/2"}),
            ),
        ]),
        Reply::tool_calls(vec![
            (
                "c4",
                "mcp__everything__get-resource-reference",
                json!({"resourceType": "Text", "resourceId": 3}),
            ),
            (
                "c5",
                "mcp__everything__get-resource-links",
                json!({"count": 2}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    configure_everything(&project, &node, &script);
    let prompt = "explain @everything:demo://resource/static/document/instructions.md \
                  and @nosuch:x://y.";
    let out = ling_p(&project, &server, prompt, &[]);
    assert!(
        out.stderr.contains("there is no MCP server \"nosuch\""),
        "{}",
        out.stderr
    );

    let requests = server.requests();
    let first = &requests[0];
    let names = first.tool_names();
    for tool in ["list_mcp_resources", "read_mcp_resource"] {
        assert!(names.contains(&tool.to_string()), "{names:?}");
    }
    let user = user_message(first);
    assert!(user.starts_with(prompt), "{user}");
    assert!(
        user.contains(
            "<resource server=\"everything\" uri=\"demo://resource/static/document/instructions.md\">"
        ),
        "{user}"
    );
    assert!(!user.contains("uri=\"x://y\""), "{user}");

    let listing = &tool_results(&requests[1], 1)[0];
    assert!(
        listing.starts_with("## everything\nresources:\n"),
        "{listing}"
    );
    assert!(
        listing.contains(
            "- demo://resource/static/document/instructions.md  instructions.md (text/markdown)"
        ),
        "{listing}"
    );
    assert!(
        listing.contains(
            "- demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource (text/plain)"
        ),
        "{listing}"
    );

    let read = tool_results(&requests[2], 2);
    assert!(
        read[0].starts_with("Resource 7: This is a plaintext resource"),
        "{read:?}"
    );
    assert!(
        read[1].starts_with("[binary resource demo://resource/dynamic/blob/2: text/plain, "),
        "{read:?}"
    );

    let rendered = tool_results(&requests[3], 2);
    assert!(
        rendered[0].contains("[resource: demo://resource/dynamic/text/3]\nResource 3: "),
        "{rendered:?}"
    );
    assert!(
        rendered[1].contains("[resource link: demo://"),
        "{rendered:?}"
    );
}

/// The sampling request the mock model received: no tools, the server's system prompt,
/// message and token limit.
fn assert_sampling_request(request: &Recorded) {
    assert!(request.tool_names().is_empty(), "{:?}", request.body);
    assert_eq!(
        request.messages(),
        vec![
            json!({"role": "system", "content": "You are a helpful test server."}),
            json!({"role": "user", "content": "Resource trigger-sampling-request context: a haiku"}),
        ]
    );
    assert_eq!(request.body["max_tokens"], json!(40));
}

#[test]
fn sampling_is_not_offered_in_print_mode_and_answered_by_the_model_with_allow_sampling() {
    let (node, script) = peers::npm_script(EVERYTHING);
    let call = || {
        Reply::tool_calls(vec![(
            "s1",
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": "a haiku", "maxTokens": 40}),
        )])
    };
    let project = Project::new();
    configure_everything(&project, &node, &script);

    // Nobody can approve sampling in -p, so it is not declared, and server-everything does not
    // offer its sampling tool at all.
    let server = MockServer::start_blocking(vec![Reply::text("no sampling here")]);
    ling_p(&project, &server, "sample", &[]);
    let names = server.requests()[0].tool_names();
    assert!(
        names.iter().any(|n| n.starts_with("mcp__everything__")),
        "{names:?}"
    );
    assert!(
        !names.contains(&"mcp__everything__trigger-sampling-request".to_string()),
        "{names:?}"
    );

    let server = MockServer::start_blocking(vec![
        call(),
        Reply::text("old pond, a frog"),
        Reply::text("sampled"),
    ]);
    ling_p(&project, &server, "sample", &["--allow-sampling"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_sampling_request(&requests[1]);
    let result = &tool_results(&requests[2], 1)[0];
    assert!(
        result.contains("\"text\": \"old pond, a frog\""),
        "{result}"
    );
    assert!(result.contains("\"stopReason\": \"endTurn\""), "{result}");
}

#[test]
fn elicitation_is_declined_in_print_mode_even_with_accept_defaults_when_a_required_field_has_none()
{
    let (node, script) = peers::npm_script(EVERYTHING);
    let project = Project::new();
    configure_everything(&project, &node, &script);
    for settings in [None, Some(json!({"elicitation": "accept-defaults"}))] {
        if let Some(settings) = settings {
            project.write(".ling/settings.json", &settings.to_string());
            project.trust();
        }
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![(
                "e1",
                "mcp__everything__trigger-elicitation-request",
                json!({}),
            )]),
            Reply::text("ok"),
        ]);
        ling_p(&project, &server, "elicit", &[]);
        let result = &tool_results(&server.requests()[1], 1)[0];
        // Its form requires "name", which has no default.
        assert!(
            result.contains("User declined to provide the requested information"),
            "{result}"
        );
    }
}

fn configure_test_server(project: &Project) {
    let config = json!({"mcpServers": {"test": {
        "command": test_server(), "startupTimeoutMs": 5000
    }}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
}

/// The test server's `ask_client`: it answers with Ling's whole JSON-RPC reply.
fn ask_client(method: &str, params: Value) -> Reply {
    Reply::tool_calls(vec![(
        "a1",
        "mcp__test__ask_client",
        json!({"method": method, "params": params}),
    )])
}

#[test]
fn accept_defaults_fills_every_default_and_roots_are_the_project_root() {
    let form = json!({"message": "defaults please", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string", "default": "John Doe"},
                       "age": {"type": "integer", "default": 30},
                       "status": {"type": "string", "enum": ["active", "inactive"],
                                  "default": "active"},
                       "nickname": {"type": "string"}},
        "required": ["name"]}});
    let project = Project::new();
    configure_test_server(&project);
    let server = MockServer::start_blocking(vec![
        ask_client("elicitation/create", form.clone()),
        Reply::text("declined"),
    ]);
    ling_p(&project, &server, "elicit", &[]);
    let text = &tool_results(&server.requests()[1], 1)[0];
    let answer: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(answer["result"], json!({"action": "decline"}));

    project.write(
        ".ling/settings.json",
        &json!({"elicitation": "accept-defaults"}).to_string(),
    );
    project.trust();
    let url = json!({"mode": "url", "message": "log in", "url": "https://example.com/login",
                     "elicitationId": "e1"});
    let server = MockServer::start_blocking(vec![
        ask_client("elicitation/create", form),
        ask_client("elicitation/create", url),
        ask_client("roots/list", json!({})),
        Reply::text("accepted"),
    ]);
    ling_p(&project, &server, "elicit", &[]);
    let requests = server.requests();
    let answer = |i: usize| -> Value {
        let text = &tool_results(&requests[i], 1)[0];
        let reply: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
        reply["result"].clone()
    };
    assert_eq!(
        answer(1),
        json!({"action": "accept", "content": {"name": "John Doe", "age": 30, "status": "active"}})
    );
    assert_eq!(answer(2), json!({"action": "decline"}));
    let root = std::fs::canonicalize(project.path()).unwrap();
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        answer(3),
        json!({"roots": [{"uri": format!("file://{}", root.display()), "name": name}]})
    );
}
