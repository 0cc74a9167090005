//! OpenTelemetry end to end: `ling -p` with `OTEL_EXPORTER_OTLP_ENDPOINT` and
//! `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` against a loopback OTLP/HTTP collector written here,
//! which keeps every request. The spans continue `TRACEPARENT`'s trace; the metrics and log
//! events arrive; the prompt's text is exported only when `OTEL_LOG_USER_PROMPTS` says so; a
//! dead collector is said once and fails nothing. MCP calls and sub-agents have spans of their
//! own, the sub-agent's turn under its `ling.subagent` span.

use crate::support::mcp::test_server;
use crate::support::{hooks_e2e, mock_openai, project};

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use hooks_e2e::{group, hooks, script};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const SECRET_PROMPT: &str = "list the secret plans";

/// What the collector received: (path, body).
type Received = Arc<Mutex<Vec<(String, String)>>>;

/// A loopback OTLP/HTTP collector: answers every request 200 `{}` and keeps it.
fn collector() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut piece = [0u8; 8192];
                let head_end = loop {
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at;
                    }
                    match stream.read(&mut piece) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&piece[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let path = head.split(' ').nth(1).unwrap_or_default().to_string();
                let length = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                let mut body = buf[head_end + 4..].to_vec();
                while body.len() < length {
                    match stream.read(&mut piece) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => body.extend_from_slice(&piece[..n]),
                    }
                }
                kept.lock()
                    .unwrap()
                    .push((path, String::from_utf8_lossy(&body).to_string()));
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                );
            });
        }
    });
    (url, received)
}

fn bodies(received: &Received, path: &str) -> String {
    received
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == path)
        .map(|(_, b)| b.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

fn traced_run(project: &Project, endpoint: &str, extra_env: &[(&str, &str)]) -> project::Output {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "out.txt", "content": "a\nb\n"}),
        )])
        .usage(120, 12),
        Reply::text("wrote it").usage(150, 4),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", SECRET_PROMPT, "--allowed-tools", "write_file"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "fleet-test")
        .env("OTEL_RESOURCE_ATTRIBUTES", "team=fleet")
        .env("TRACEPARENT", format!("00-{TRACE_ID}-00f067aa0ba902b7-01"));
    for (name, value) in extra_env {
        cmd.env(name, value);
    }
    run(cmd)
}

#[test]
fn spans_metrics_and_events_reach_a_collector_and_prompts_stay_private() {
    let project = Project::new();
    let hook = script(&project, "pre.sh", "cat > /dev/null");
    hooks(
        &project,
        json!({ "PreToolUse": group("write_file", &hook) }),
    );
    let (endpoint, received) = collector();
    let out = traced_run(&project, &endpoint, &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "wrote it\n");
    assert!(!out.stderr.contains("telemetry"), "{}", out.stderr);

    let traces = bodies(&received, "/v1/traces");
    for name in [
        "ling.turn",
        "ling.model_request",
        "ling.tool_call",
        "ling.hook",
    ] {
        assert!(
            traces.contains(&format!("\"{name}\"")),
            "no {name} span in {traces}"
        );
    }
    assert!(
        traces.contains(TRACE_ID),
        "the caller's trace is not continued: {traces}"
    );
    for attribute in [
        "gen_ai.usage.input_tokens",
        "ling.tool.decision",
        "fleet-test",
        "team",
    ] {
        assert!(traces.contains(attribute), "no {attribute} in {traces}");
    }
    let metrics = bodies(&received, "/v1/metrics");
    for name in [
        "ling.token.usage",
        "ling.session.count",
        "ling.tool.calls",
        "ling.lines_of_code.count",
    ] {
        assert!(metrics.contains(name), "no {name} metric in {metrics}");
    }
    let logs = bodies(&received, "/v1/logs");
    for name in ["ling.user_prompt", "ling.api_request", "ling.tool_result"] {
        assert!(logs.contains(name), "no {name} event in {logs}");
    }
    // Neither the prompt nor the command left Ling without a setting that allows it.
    let all = format!("{traces}{metrics}{logs}");
    assert!(
        !all.contains(SECRET_PROMPT) && !all.contains("out.txt"),
        "{all}"
    );

    // With OTEL_LOG_USER_PROMPTS and OTEL_LOG_TOOL_DETAILS they are exported.
    let (endpoint, received) = collector();
    let out = traced_run(
        &Project::new(),
        &endpoint,
        &[
            ("OTEL_LOG_USER_PROMPTS", "1"),
            ("OTEL_LOG_TOOL_DETAILS", "1"),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(bodies(&received, "/v1/logs").contains(SECRET_PROMPT));
    assert!(bodies(&received, "/v1/traces").contains("out.txt"));
}

#[test]
fn a_dead_collector_is_said_once_and_the_run_succeeds() {
    // A port nothing listens on.
    let dead = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let out = traced_run(&Project::new(), &dead, &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "wrote it\n");
    assert_eq!(
        out.stderr.matches("telemetry: could not export").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn mcp_calls_and_sub_agents_have_spans_of_their_own() {
    let project = Project::new();
    let config = json!({"mcpServers": {"test": {"command": test_server(), "args": []}}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("m1", "mcp__test__add", json!({"a": 2, "b": 3}))]),
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({"description": "look it up", "prompt": "SPAN-CHILD: look"}),
        )]),
        Reply::text("all done"),
    ]);
    server.script_for("SPAN-CHILD", vec![Reply::text("child answer")]);
    let (endpoint, received) = collector();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--allowed-tools", "mcp__test__*,task"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "all done\n");
    let second = serde_json::to_string(&server.requests()[1].messages()).unwrap();
    assert!(
        second.contains("\"5\""),
        "the MCP call failed: {}",
        out.stderr
    );
    let traces = bodies(&received, "/v1/traces");
    let spans: Vec<serde_json::Value> = received
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path == "/v1/traces")
        .filter_map(|(_, body)| serde_json::from_str::<serde_json::Value>(body).ok())
        .flat_map(|body| {
            let mut spans = Vec::new();
            for resource in body["resourceSpans"].as_array().into_iter().flatten() {
                for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                    spans.extend(scope["spans"].as_array().into_iter().flatten().cloned());
                }
            }
            spans
        })
        .collect();
    let named = |name: &str| -> Vec<&serde_json::Value> {
        spans.iter().filter(|s| s["name"] == name).collect()
    };
    let mcp = named("ling.mcp_call");
    assert_eq!(mcp.len(), 1, "{traces}");
    let mcp_text = mcp[0].to_string();
    assert!(
        mcp_text.contains("ling.mcp.server") && mcp_text.contains("\"test\""),
        "{mcp_text}"
    );
    assert!(mcp_text.contains("\"add\""), "{mcp_text}");
    let call = named("ling.tool_call")
        .into_iter()
        .find(|s| s.to_string().contains("mcp__test__add"))
        .expect("the MCP tool's call span");
    assert_eq!(mcp[0]["parentSpanId"], call["spanId"], "{traces}");
    let subagent = named("ling.subagent");
    assert_eq!(subagent.len(), 1, "{traces}");
    assert!(
        subagent[0].to_string().contains("general-purpose"),
        "{}",
        subagent[0]
    );
    // The child's own turn hangs under the sub-agent's span.
    let id = subagent[0]["spanId"].as_str().unwrap();
    let turns = named("ling.turn");
    assert!(
        turns.iter().any(|t| t["parentSpanId"] == id),
        "no turn under the sub-agent's span: {traces}"
    );
}
