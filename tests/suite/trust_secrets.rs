//! The secrets part of `docs/trust.md`, through the real binary: a redirect never carries the API
//! key to another origin (a second mock on another port never sees it), and the secrets of the
//! model base URL, of MCP server URLs and headers, and the API key itself never appear in
//! stderr, the `json` output, `ling mcp` output or anything under `LING_HOME`.

use crate::support::{mcphttp, mock_openai, project};

use std::time::Duration;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run, run_with};
use serde_json::json;

const KEY: &str = "sk-test-KEYMARK-0123456789";

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn port_of(server: &MockServer) -> String {
    let base = server.base_url();
    base.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .to_string()
}

/// Everything Ling showed and wrote: the outputs, and the text of every file under `LING_HOME`
/// but the config files the test wrote there.
fn everything(project: &Project, outputs: &[&Output]) -> String {
    let mut text = String::new();
    for out in outputs {
        text.push_str(&out.stdout);
        text.push_str(&out.stderr);
    }
    let mut dirs = vec![project.home.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let is_config = path.parent() == Some(project.home.path())
                && path.extension().is_some_and(|ext| ext == "json");
            if path.is_dir() {
                dirs.push(path);
            } else if !is_config {
                text.push_str(&String::from_utf8_lossy(
                    &std::fs::read(&path).unwrap_or_default(),
                ));
            }
        }
    }
    text
}

fn assert_absent(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{secret:?} was shown or logged:\n{text}"
        );
    }
}

#[test]
fn a_redirect_to_another_origin_never_carries_the_key() {
    let elsewhere = MockServer::start_blocking(vec![Reply::text("stolen")]);
    elsewhere.expect_unasked(1);
    let target = format!("{}/chat/completions", elsewhere.base_url());
    let server = MockServer::start_blocking(vec![Reply::status(302).header("Location", &target)]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("OPENAI_API_KEY", KEY)
        .args(["-p", "hi", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin was asked"
    );
    // Refused at once, never retried.
    assert_eq!(server.requests().len(), 1);
    let expected = format!(
        "redirected to {target}, which is another origin (http://127.0.0.1:{} instead of \
         http://127.0.0.1:{}); Ling does not follow a redirect to another origin, so the API key \
         and the configured headers never go there. If that is the right server, set the base URL \
         to the address it redirects to (--base-url, OPENAI_BASE_URL or settings `baseUrl`)",
        port_of(&elsewhere),
        port_of(&server)
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    let result = out.json();
    assert_eq!(result["is_error"], json!(true));
    let text = result["result"].as_str().unwrap_or_default();
    assert!(text.contains(&expected), "{text}");
}

#[test]
fn a_same_origin_redirect_is_followed_with_the_key() {
    let server = MockServer::start_blocking(vec![
        Reply::status(307).header("Location", "/v2/chat/completions"),
        Reply::text("moved fine"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("OPENAI_API_KEY", KEY).args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "moved fine\n");
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v2/chat/completions"]);
    let bearer = format!("Bearer {KEY}");
    assert_eq!(requests[1].header("authorization"), Some(bearer.as_str()));
    assert_eq!(
        requests[1].method, "POST",
        "a 307 keeps the method and body"
    );
}

#[test]
fn endless_same_origin_redirects_stop_with_an_error() {
    let loops = (0..8)
        .map(|_| Reply::status(307).header("Location", "/v1/chat/completions"))
        .collect();
    let server = MockServer::start_blocking(loops);
    // The sixth redirect is refused: two of the eight are never asked for.
    server.expect_unasked(2);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    let expected = format!(
        "{}/chat/completions redirected more than 5 times",
        server.base_url()
    );
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    assert_eq!(
        server.requests().len(),
        6,
        "the first request and 5 redirects"
    );
}

#[test]
fn base_url_secrets_and_the_key_are_never_printed_or_logged() {
    let project = Project::new();
    let ling = |base: &str, args: &[&str]| {
        let mut cmd = project.command(base);
        cmd.env("OPENAI_API_KEY", KEY)
            .env("LING_LOG", "debug")
            .arg("-p")
            .arg("hi")
            .args(args);
        run(cmd)
    };
    // The mock has no route for a path with a query: its 404 quotes the path, query and all.
    let routeless = MockServer::start_blocking(vec![]);
    let port = port_of(&routeless);
    let base = format!("http://user:PWMARK@127.0.0.1:{port}/v1?key=QUERYMARK42");
    let text = ling(&base, &[]);
    let json_out = ling(&base, &["--output-format", "json"]);
    let sent = routeless.requests();
    assert_eq!(sent[0].path, "/v1/chat/completions?key=QUERYMARK42");
    // A server that echoes the key in its errors: 401, then 500s until the retries run out.
    let echo = format!("Incorrect API key provided: {KEY}");
    let mut replies = vec![Reply::status(401).message(&echo)];
    replies.extend((0..5).map(|_| Reply::status(500).message(&echo)));
    let echoing = MockServer::start_blocking(replies);
    let echo_base = format!("http://user:PWMARK@127.0.0.1:{}/v1", port_of(&echoing));
    let auth = ling(&echo_base, &[]);
    let status = ling(&echo_base, &["--output-format", "json"]);
    let closed = format!(
        "http://user:PWMARK@127.0.0.1:{}/v1?key=QUERYMARK42",
        closed_port()
    );
    let unreachable = ling(&closed, &["--output-format", "json"]);

    for out in [&text, &json_out, &auth, &status, &unreachable] {
        assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    }
    let shown = format!("http://***@127.0.0.1:{port}/v1/chat/completions?key=***");
    assert!(
        text.stderr.contains(&format!("HTTP 404 from {shown}")),
        "{}",
        text.stderr
    );
    let result = json_out.json()["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(result.contains(&shown), "{result}");
    assert!(
        auth.stderr.contains("the server rejected the API key"),
        "{}",
        auth.stderr
    );
    assert!(
        auth.stderr.contains("Incorrect API key provided: ***"),
        "{}",
        auth.stderr
    );
    let result = status.json()["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(result.contains("after 5 attempts"), "{result}");
    assert!(
        status.stderr.contains("retrying model request"),
        "{}",
        status.stderr
    );
    let result = unreachable.json()["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        result.contains("could not reach http://***@127.0.0.1:"),
        "{result}"
    );
    let log = std::fs::read_to_string(project.home.path().join("logs/ling.log")).expect("no log");
    assert!(log.contains(&format!("llm: POST {shown}")), "{log}");

    let all = everything(&project, &[&text, &json_out, &auth, &status, &unreachable]);
    assert_absent(&all, &["PWMARK", "QUERYMARK42", KEY]);
}

/// An HTTP MCP server in `~/.ling/mcp.json` whose URL has a token in its path (from a
/// variable) and its query, and a token header; the server fails and quotes them back.
fn failing_remote(project: &Project) -> (tokio::runtime::Runtime, mcphttp::TestServer) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcphttp::TestServer::start(|request| {
        let text = format!(
            "denied {} (authorization {:?})",
            request.path,
            request.header("authorization")
        );
        mcphttp::Reply::error(500, &text)
    }));
    let config = json!({"mcpServers": {"remote": {
        "type": "http",
        "url": format!("{}/${{MCP_PATH_VAR}}/mcp?token=MCPQUERYMARK", server.base),
        "headers": {"Authorization": "Bearer MCPHEADERMARK"},
        "startupTimeoutMs": 5000,
    }}});
    std::fs::write(project.home.path().join("mcp.json"), config.to_string()).unwrap();
    (runtime, server)
}

#[test]
fn mcp_url_and_header_secrets_are_masked_everywhere() {
    let project = Project::new();
    let (_runtime, server) = failing_remote(&project);
    let model = MockServer::start_blocking(vec![Reply::text("ok"), Reply::text("ok")]);
    let ling = |args: &[&str]| {
        let mut cmd = project.command(&model.base_url());
        cmd.env("MCP_PATH_VAR", "MCPPATHMARK")
            .env("LING_LOG", "debug")
            .args(args);
        run_with(cmd, None, Duration::from_secs(30))
    };
    let text = ling(&["-p", "hi"]);
    let json_out = ling(&["-p", "hi", "--output-format", "json"]);
    let call = ling(&["mcp", "call", "remote", "echo", "{}"]);
    let list = ling(&["mcp", "list"]);
    assert!(!server.requests().is_empty(), "the server was never asked");

    assert_eq!(text.code, Some(0), "stderr: {}", text.stderr);
    let shown = format!("{}/${{MCP_PATH_VAR}}/mcp?token=***", server.base);
    assert!(
        text.stderr.contains("mcp remote: failed"),
        "{}",
        text.stderr
    );
    assert!(text.stderr.contains(&shown), "{}", text.stderr);
    let error = json_out.json()["mcp_servers"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains(&shown) && error.contains("HTTP 500"),
        "{error}"
    );
    assert_eq!(call.code, Some(1), "stderr: {}", call.stderr);
    assert!(call.stderr.contains(&shown), "{}", call.stderr);
    assert!(list.stdout.contains(&shown), "{}", list.stdout);
    let log = std::fs::read_to_string(project.home.path().join("logs/mcp-remote.log"))
        .expect("no server log");
    assert!(log.contains(&format!("{shown} answered HTTP 500")), "{log}");

    let all = everything(&project, &[&text, &json_out, &call, &list]);
    assert_absent(&all, &["MCPQUERYMARK", "MCPHEADERMARK", "MCPPATHMARK"]);
}

#[test]
fn an_http_hook_redirected_elsewhere_is_refused() {
    let elsewhere = MockServer::start_blocking(vec![]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let target = format!("{}/steal", elsewhere.base_url());
    let location = target.clone();
    let hook = runtime.block_on(mcphttp::TestServer::start(move |_| mcphttp::Reply::Json {
        status: 302,
        headers: mcphttp::pairs(&[("Location", &location)]),
        body: String::new(),
    }));
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{
        "type": "http", "url": format!("{}/hook?token=HOOKQUERYMARK", hook.base),
        "headers": {"X-Api-Key": "HOOKHEADERMARK"}
    }]}]}});
    let project = Project::new();
    std::fs::write(project.home.path().join("hooks.json"), hooks.to_string()).unwrap();
    let model = MockServer::start_blocking(vec![Reply::text("answered")]);
    let mut cmd = project.command(&model.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(hook.requests().len(), 1);
    assert!(
        elsewhere.requests().is_empty(),
        "the hook's headers went elsewhere"
    );
    assert!(
        out.stderr
            .contains(&format!("redirected to {target}, which is another origin")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("set the hook's \"url\""),
        "{}",
        out.stderr
    );
    assert_absent(
        &everything(&project, &[&out]),
        &["HOOKQUERYMARK", "HOOKHEADERMARK"],
    );
}

/// A Streamable HTTP server that connects, lists one tool, and answers every call with a
/// JSON-RPC error quoting the path and the authorization header it was sent.
fn quoting_server(request: &mcphttp::Recorded) -> mcphttp::Reply {
    let body = request.json();
    let id = body["id"].clone();
    match (request.method.as_str(), request.rpc_method().as_str()) {
        ("GET", _) => mcphttp::Reply::Status(405),
        ("DELETE", _) => mcphttp::Reply::Status(200),
        (_, "notifications/initialized") | (_, "response") => mcphttp::Reply::Status(202),
        (_, "initialize") => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "quoting", "version": "1"}}})),
        (_, "tools/list") => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": {
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})),
        _ => mcphttp::Reply::json(json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32001,
            "message": format!("denied {} for {:?}", request.path, request.header("authorization")),
        }})),
    }
}

#[test]
fn the_error_text_of_ling_mcp_call_is_scrubbed() {
    let project = Project::new();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mcphttp::TestServer::start(quoting_server));
    let config = json!({"mcpServers": {"quoting": {
        "type": "http",
        "url": format!("{}/${{CALL_PATH_VAR}}/mcp?token=CALLQUERYMARK", server.base),
        "headers": {"Authorization": "Bearer CALLHEADERMARK"},
    }}});
    std::fs::write(project.home.path().join("mcp.json"), config.to_string()).unwrap();
    let call = |args: &[&str]| {
        let mut cmd = project.command("http://127.0.0.1:9/v1");
        cmd.env("CALL_PATH_VAR", "CALLPATHMARK").args(args);
        run_with(cmd, None, Duration::from_secs(30))
    };
    let named = call(&["mcp", "call", "quoting", "echo", "{}"]);
    let url = format!("{}/mcp?token=ADHOCQUERYMARK", server.base);
    let adhoc = call(&[
        "mcp",
        "call",
        "--url",
        &url,
        "-H",
        "X-Api-Key: ADHOCHEADERMARK",
        "echo",
    ]);
    for out in [&named, &adhoc] {
        assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
        assert!(out.stderr.contains("denied /"), "{}", out.stderr);
    }
    assert!(
        named
            .stderr
            .contains("denied /${CALL_PATH_VAR}/mcp?token=*** for Some(\"***\")"),
        "{}",
        named.stderr
    );
    let all = everything(&project, &[&named, &adhoc]);
    let marks = [
        "CALLPATHMARK",
        "CALLQUERYMARK",
        "CALLHEADERMARK",
        "ADHOCQUERYMARK",
        "ADHOCHEADERMARK",
    ];
    assert_absent(&all, &marks);
}
