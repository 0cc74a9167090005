//! The MCP host against the misbehaving test server: every failure mode leaves the manager
//! running and reports what happened; the protocol features work end to end.

use crate::support::mcp;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use ling::mcp::jsonrpc::ErrorObject;
use ling::mcp::sampling::StopReason;
use ling::mcp::{
    ClientHandler, ElicitAnswer, ElicitRequest, HandlerSupport, McpError, McpManager, Progress,
    SamplingRequest, SamplingResult, ServerState,
};
use mcp::TestEnv;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn state(manager: &McpManager, name: &str) -> ServerState {
    manager
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.state)
        .unwrap_or_else(|| panic!("no server {name}"))
}

fn failure(manager: &McpManager, name: &str) -> String {
    match state(manager, name) {
        ServerState::Failed(why) => why,
        other => panic!("{name} should have failed, is {other:?}"),
    }
}

async fn call(
    manager: &McpManager,
    tool: &str,
    args: Value,
) -> Result<ling::mcp::RenderedResult, McpError> {
    manager
        .call_tool(tool, args, &CancellationToken::new(), None)
        .await
}

#[tokio::test]
async fn startup_failures_are_isolated_and_concurrent() {
    let env = TestEnv::new();
    let mut too_slow = env.server("too_slow", &["--slow-start", "5000"]);
    too_slow.startup_timeout = Duration::from_millis(1500);
    let mut missing = env.server("missing", &[]);
    if let ling::config::mcp::TransportConfig::Stdio { command, .. } = &mut missing.transport {
        *command = "/nonexistent/mcp-server".into();
    }
    let mut disabled = env.server("off", &[]);
    disabled.disabled = true;
    let mut unset = env.server("unset", &[]);
    unset.expand_error = Some("server \"unset\": environment variable NOPE is not set".into());
    let configs = vec![
        env.server("fast", &[]),
        env.server("slow_ok", &["--slow-start", "1500"]),
        too_slow,
        env.server("exits", &["--exit-immediately"]),
        missing,
        disabled,
        unset,
        env.server("old", &["--version-answer", "2024-11-05"]),
        env.server("future", &["--version-answer", "1999-01-01"]),
    ];
    let began = Instant::now();
    let manager = McpManager::start(configs, env.options());
    assert!(
        began.elapsed() < Duration::from_millis(500),
        "start must not block"
    );
    manager.wait_ready().await;
    let took = began.elapsed();
    // Sequential starts would take at least 3 s (1.5 + 1.5).
    assert!(took < Duration::from_millis(2800), "startup took {took:?}");

    assert_eq!(state(&manager, "fast"), ServerState::Connected);
    assert_eq!(state(&manager, "slow_ok"), ServerState::Connected);
    assert_eq!(state(&manager, "off"), ServerState::Disabled);
    assert_eq!(state(&manager, "old"), ServerState::Connected);
    let slow = failure(&manager, "too_slow");
    assert!(slow.contains("did not start within 1.5s"), "{slow}");
    assert!(
        slow.contains("mcp-test-server mcp-test-server starting"),
        "stderr tail: {slow}"
    );
    let exits = failure(&manager, "exits");
    assert!(exits.contains("exit status: 2"), "{exits}");
    assert!(
        exits.contains("fatal: exiting immediately as asked"),
        "{exits}"
    );
    let missing = failure(&manager, "missing");
    assert!(
        missing.contains("cannot start `/nonexistent/mcp-server`"),
        "{missing}"
    );
    assert!(failure(&manager, "unset").contains("NOPE"));
    let future = failure(&manager, "future");
    assert!(
        future.contains("\"1999-01-01\"") && future.contains("does not speak"),
        "{future}"
    );

    let old = manager
        .statuses()
        .into_iter()
        .find(|s| s.name == "old")
        .unwrap();
    assert_eq!(old.server_info.unwrap().protocol_version, "2024-11-05");
    let fast = call(&manager, "mcp__fast__echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(fast.text, "hi");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_every_call_in_flight_at_once() {
    let env = TestEnv::new();
    let manager = env
        .start(vec![
            env.server("c", &["--stderr-lines", "3"]),
            env.server("other", &[]),
        ])
        .await;
    let began = Instant::now();
    let hanging = call(&manager, "mcp__c__hang", json!({}));
    let crashing = async {
        env.wait_received("c", "\"hang\"").await;
        call(&manager, "mcp__c__crash", json!({})).await
    };
    let (hang, crash) = tokio::join!(hanging, crashing);
    assert!(
        began.elapsed() < Duration::from_secs(4),
        "{:?}",
        began.elapsed()
    );
    for result in [hang, crash] {
        let error = result.unwrap_err().to_string();
        assert!(error.contains("exit status: 3"), "{error}");
        assert!(error.contains("crashing in crash as asked"), "{error}");
    }
    let why = failure(&manager, "c");
    assert!(why.contains("chatter line 2"), "{why}");
    assert!(manager.tools().iter().all(|t| t.server != "c"));
    let err = call(&manager, "mcp__c__echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::UnknownTool(_)), "{err}");
    assert_eq!(
        call(&manager, "mcp__other__echo", json!({"text":"ok"}))
            .await
            .unwrap()
            .text,
        "ok"
    );

    manager.reconnect("c").await.unwrap();
    assert_eq!(state(&manager, "c"), ServerState::Connected);
    assert_eq!(
        call(&manager, "mcp__c__echo", json!({"text":"back"}))
            .await
            .unwrap()
            .text,
        "back"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_hung_call_times_out_and_is_cancelled() {
    let env = TestEnv::new();
    let mut config = env.server("h", &[]);
    config.tool_timeout = Duration::from_millis(300);
    let manager = env.start(vec![config]).await;
    let err = call(&manager, "mcp__h__hang", json!({})).await.unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("timed out after 0.3s"), "{err}");
    let cancelled = env.wait_received("h", "notifications/cancelled").await;
    let cancelled: Value = serde_json::from_str(&cancelled).unwrap();
    let call_line = env.wait_received("h", "\"hang\"").await;
    let call_id = serde_json::from_str::<Value>(&call_line).unwrap()["id"].clone();
    assert_eq!(cancelled["params"]["requestId"], call_id);

    // The user interrupting a call cancels it the same way, and the server stays usable.
    let token = CancellationToken::new();
    let stopper = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let err = manager
        .call_tool("mcp__h__slow", json!({"steps": 20, "ms": 50}), &token, None)
        .await;
    assert!(matches!(err, Err(McpError::Cancelled)), "{err:?}");
    env.wait_received("h", "interrupted by the user").await;
    assert_eq!(state(&manager, "h"), ServerState::Connected);
    assert_eq!(
        call(&manager, "mcp__h__echo", json!({"text":"still"}))
            .await
            .unwrap()
            .text,
        "still"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn garbage_half_lines_and_huge_lines_are_skipped() {
    let env = TestEnv::new();
    let manager = env
        .start(vec![
            env.server("g", &["--garbage"]),
            env.server("huge", &["--huge-line"]),
        ])
        .await;
    assert_eq!(state(&manager, "g"), ServerState::Connected);
    assert_eq!(state(&manager, "huge"), ServerState::Connected);
    assert_eq!(
        call(&manager, "mcp__g__echo", json!({"text":"a"}))
            .await
            .unwrap()
            .text,
        "a"
    );
    assert_eq!(
        call(&manager, "mcp__huge__echo", json!({"text":"b"}))
            .await
            .unwrap()
            .text,
        "b"
    );
    let log = std::fs::read_to_string(manager.log_path("huge").unwrap()).unwrap();
    assert!(log.contains("skipped a 52428811-byte stdout line"), "{log}");
    let log = std::fs::read_to_string(manager.log_path("g").unwrap()).unwrap();
    assert!(log.contains("skipped a stdout line (not JSON"), "{log}");
    // notifications/message goes to the log.
    assert!(log.contains("server: [info] test: initialized"), "{log}");
    manager.shutdown().await;
}

#[tokio::test]
async fn tools_are_paginated_filtered_named_and_refreshed() {
    let env = TestEnv::new();
    let mut filtered = env.server("f", &[]);
    filtered.include_tools = Some(vec!["echo".into(), "add".into(), "research".into()]);
    filtered.exclude_tools = vec!["add".into()];
    let long = "a_really_long_tool_name_that_goes_on_and_on_and_on_and_on_and_on_and_on";
    let configs = vec![
        env.server("p", &["--page-size", "3", "--extra-tools", "5"]),
        filtered,
        env.server(
            "n",
            &[
                "--tool-name",
                "weird.name/x",
                "--tool-name",
                "weird_name_x",
                "--tool-name",
                long,
            ],
        ),
        env.server("lc", &["--list-changed-after-call"]),
    ];
    let manager = env.start(configs).await;
    let names = |server: &str| -> Vec<String> {
        manager
            .tools()
            .into_iter()
            .filter(|t| t.server == server)
            .map(|t| t.exposed_name)
            .collect()
    };
    // 11 built-in tools, one of which needs tasks (hidden), plus 5 extra, over 6 pages.
    assert_eq!(names("p").len(), 15);
    assert!(names("p").contains(&"mcp__p__tool_4".to_string()));
    assert!(!names("p").contains(&"mcp__p__research".to_string()));
    assert_eq!(names("f"), vec!["mcp__f__echo"]);
    let n = names("n");
    assert!(n.contains(&"mcp__n__weird_name_x".to_string()));
    assert!(n.contains(&"mcp__n__weird_name_x_2".to_string()));
    let cut = n
        .iter()
        .find(|x| x.starts_with("mcp__n__a_really"))
        .unwrap();
    assert_eq!(cut.len(), 64);
    // The colliding names still reach their own tools.
    let weird = call(&manager, "mcp__n__weird_name_x", json!({}))
        .await
        .unwrap()
        .text;
    let other = call(&manager, "mcp__n__weird_name_x_2", json!({}))
        .await
        .unwrap()
        .text;
    assert_eq!(
        (weird.as_str(), other.as_str()),
        ("called weird.name/x", "called weird_name_x")
    );
    assert_eq!(
        call(&manager, cut, json!({})).await.unwrap().text,
        format!("called {long}")
    );

    let echo = manager
        .tools()
        .into_iter()
        .find(|t| t.exposed_name == "mcp__f__echo")
        .unwrap();
    assert_eq!(echo.description, "[MCP:f] Echoes its text");
    assert!(echo.read_only);
    assert_eq!(
        echo.input_schema,
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})
    );

    assert!(!manager.refresh_if_changed().await);
    assert!(!names("lc").contains(&"mcp__lc__added".to_string()));
    call(&manager, "mcp__lc__echo", json!({"text":"x"}))
        .await
        .unwrap();
    let mut refreshed = false;
    for _ in 0..50 {
        if manager.refresh_if_changed().await {
            refreshed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refreshed);
    assert!(names("lc").contains(&"mcp__lc__added".to_string()));
    assert_eq!(
        manager
            .statuses()
            .iter()
            .find(|s| s.name == "lc")
            .unwrap()
            .tools,
        11
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn results_render_progress_errors_images_and_big_output() {
    let env = TestEnv::new();
    let mut options = env.options();
    options.output_cap = 100;
    let manager = McpManager::start(vec![env.server("r", &[])], options);
    manager.wait_ready().await;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress = Arc::new(move |p: Progress| sink.lock().unwrap().push(p));
    let done = manager
        .call_tool(
            "mcp__r__slow",
            json!({"steps": 3, "ms": 10}),
            &CancellationToken::new(),
            Some(progress),
        )
        .await
        .unwrap();
    assert_eq!(done.text, "done after 3 steps");
    let seen: Vec<(f64, Option<f64>, Option<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into())),
        ]
    );

    let error = call(&manager, "mcp__r__error", json!({})).await.unwrap();
    assert_eq!(
        (error.text.as_str(), error.is_error),
        ("something went wrong", true)
    );
    let image = call(&manager, "mcp__r__image", json!({})).await.unwrap();
    assert_eq!(image.text, "[image: image/png, 300 bytes]");
    let structured = call(&manager, "mcp__r__structured", json!({}))
        .await
        .unwrap();
    assert_eq!(structured.text, "{\n  \"answer\": 42\n}");
    let add = call(&manager, "mcp__r__add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!((add.text.as_str(), add.is_error), ("5", false));

    let big = call(&manager, "mcp__r__big", json!({"chars": 500}))
        .await
        .unwrap();
    let (head, note) = big.text.split_once("\n\n").unwrap();
    assert_eq!(head, "b".repeat(100));
    let path = note
        .strip_prefix("[output truncated: 100 of 500 characters shown; the full output is in ")
        .and_then(|p| p.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{note}"));
    assert!(path.starts_with(&env.paths.home.join("tool-output").display().to_string()));
    assert_eq!(std::fs::read_to_string(path).unwrap(), "b".repeat(500));
    manager.shutdown().await;
}

struct Sampler;

#[async_trait]
impl ClientHandler for Sampler {
    fn support(&self) -> HandlerSupport {
        HandlerSupport {
            sampling: true,
            ..HandlerSupport::default()
        }
    }
    async fn create_message(
        &self,
        server: &str,
        request: &SamplingRequest,
    ) -> Result<SamplingResult, ErrorObject> {
        Ok(SamplingResult {
            text: format!("{server} asked {}", request.messages[0].text),
            model: "m".into(),
            stop_reason: StopReason::EndTurn,
        })
    }
    async fn elicit(
        &self,
        _server: &str,
        _request: &ElicitRequest,
    ) -> Result<ElicitAnswer, ErrorObject> {
        Err(ErrorObject {
            code: -32603,
            message: "not here".into(),
            data: None,
        })
    }
}

#[tokio::test]
async fn server_requests_are_answered_or_refused() {
    let env = TestEnv::new();
    let plain = env.start(vec![env.server("plain", &[])]).await;
    let ask_with = |manager: Arc<McpManager>,
                    tool: &'static str,
                    method: &'static str,
                    params: Value| async move {
        let args = json!({"method": method, "params": params});
        let text = call(&manager, tool, args).await.unwrap().text;
        serde_json::from_str::<Value>(&text).unwrap()
    };
    let ask = |manager: Arc<McpManager>, tool: &'static str, method: &'static str| {
        let why =
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "why"}}]});
        ask_with(manager, tool, method, why)
    };
    let roots = ask(plain.clone(), "mcp__plain__ask_client", "roots/list").await;
    let root = env.paths.project_root.display().to_string();
    assert_eq!(
        roots["result"]["roots"][0]["uri"],
        json!(format!("file://{root}"))
    );
    let ping = ask(plain.clone(), "mcp__plain__ask_client", "ping").await;
    assert_eq!(ping["result"], json!({}));
    for method in [
        "sampling/createMessage",
        "elicitation/create",
        "no/such/method",
    ] {
        let answer = ask(plain.clone(), "mcp__plain__ask_client", method).await;
        assert_eq!(answer["error"]["code"], json!(-32601), "{method}: {answer}");
    }
    let init = env.wait_received("plain", "\"initialize\"").await;
    let init: Value = serde_json::from_str(&init).unwrap();
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["params"]["capabilities"],
        json!({"roots":{"listChanged":true}})
    );
    assert_eq!(init["params"]["clientInfo"]["name"], "ling");
    env.wait_received("plain", "notifications/initialized")
        .await;
    plain.shutdown().await;

    let mut options = env.options();
    options.handler = Some(Arc::new(Sampler));
    let manager = McpManager::start(vec![env.server("s", &[])], options);
    manager.wait_ready().await;
    let answer = ask(
        manager.clone(),
        "mcp__s__ask_client",
        "sampling/createMessage",
    )
    .await;
    assert_eq!(
        answer["result"],
        json!({"role": "assistant", "content": {"type": "text", "text": "s asked why"},
               "model": "m", "stopReason": "endTurn"})
    );
    let bad = ask_with(
        manager.clone(),
        "mcp__s__ask_client",
        "sampling/createMessage",
        json!({"q": "why"}),
    )
    .await;
    assert_eq!(
        bad["error"],
        json!({"code": -32602, "message": "sampling/createMessage needs \"messages\""}),
        "params that do not parse never reach the handler"
    );
    let elicit = ask(manager.clone(), "mcp__s__ask_client", "elicitation/create").await;
    assert_eq!(
        elicit["error"]["code"],
        json!(-32601),
        "elicitation was not declared"
    );
    let init = env.wait_received("s", "\"initialize\"").await;
    let init: Value = serde_json::from_str(&init).unwrap();
    assert_eq!(
        init["params"]["capabilities"],
        json!({"roots":{"listChanged":true},"sampling":{}})
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn status_changes_are_published() {
    let env = TestEnv::new();
    let manager = McpManager::start(
        vec![env.server("w", &["--slow-start", "300"])],
        env.options(),
    );
    let mut rx = manager.subscribe();
    assert_eq!(
        rx.borrow().first().map(|s| s.state.clone()),
        Some(ServerState::Starting)
    );
    rx.wait_for(|all| all.iter().all(|s| s.state == ServerState::Connected))
        .await
        .unwrap();
    assert_eq!(rx.borrow()[0].tools, 10);
    assert_eq!(
        rx.borrow()[0].server_info.as_ref().map(|i| i.name.as_str()),
        Some("mcp-test-server")
    );
    manager.shutdown().await;
}
