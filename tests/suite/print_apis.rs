//! `ling -p` speaking Anthropic Messages and OpenAI Responses, end to end: chosen by `--api`,
//! settings `api` or Anthropic's own variables; a text answer, tool calls run and answered,
//! thinking carried to the next request, an error mid-stream, an overflow recovered by
//! compaction, and the usage with its cache figures in the `json` and `stream-json` results.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Overflow, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::{Value, json};

fn ling(project: &Project, server: &MockServer, api: &str, args: &[&str]) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    // `--base-url`: with `--api anthropic` the OpenAI variable is not read.
    cmd.args(["--api", api, "--model", "test-model", "--base-url"])
        .arg(server.base_url())
        .args(args);
    run(cmd)
}

#[test]
fn a_text_answer_in_each_api_prints_as_in_chat() {
    for api in ["chat", "anthropic", "responses"] {
        let server = MockServer::start_blocking(vec![Reply::text("Hello from the model.")]);
        let project = Project::new();
        let out = ling(&project, &server, api, &["-p", "say hello"]);
        assert_eq!(out.code, Some(0), "{api}: {}", out.stderr);
        assert_eq!(out.stdout, "Hello from the model.\n", "{api}");
        let path = server.requests()[0].path.clone();
        let expected = match api {
            "chat" => "/v1/chat/completions",
            "anthropic" => "/v1/messages",
            _ => "/v1/responses",
        };
        assert_eq!(path, expected);
    }
}

#[test]
fn tool_calls_run_and_their_results_go_back_in_the_api_s_shape() {
    for api in ["anthropic", "responses"] {
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls_with_text(
                "Reading.",
                vec![
                    ("call_1", "read_file", json!({"path": "a.txt"})),
                    ("call_2", "read_file", json!({"path": "b.txt"})),
                ],
            ),
            Reply::text("Both read."),
        ]);
        let project = Project::new();
        project.write("a.txt", "alpha\n");
        project.write("b.txt", "beta\n");
        let out = ling(&project, &server, api, &["-p", "read both"]);
        assert_eq!(out.code, Some(0), "{api}: {}", out.stderr);
        assert!(
            out.stdout.ends_with("Both read.\n"),
            "{api}: {}",
            out.stdout
        );
        let second = &server.requests()[1].body;
        let results: Vec<(String, String)> = if api == "anthropic" {
            let last = &second["messages"].as_array().unwrap().last().unwrap()["content"];
            last.as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| {
                    (
                        b["tool_use_id"].as_str().unwrap().into(),
                        b["content"].as_str().unwrap().into(),
                    )
                })
                .collect()
        } else {
            second["input"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .map(|i| {
                    (
                        i["call_id"].as_str().unwrap().into(),
                        i["output"].as_str().unwrap().into(),
                    )
                })
                .collect()
        };
        assert_eq!(results.len(), 2, "{api}: {second}");
        assert_eq!(results[0].0, "call_1");
        assert!(
            results[0].1.contains("alpha") && results[1].1.contains("beta"),
            "{results:?}"
        );
    }
}

#[test]
fn thinking_is_not_printed_but_goes_back_with_its_signature() {
    let server = MockServer::start_blocking(vec![
        Reply::reasoning_then_text("secret plan", "first"),
        Reply::text("second"),
    ]);
    let project = Project::new();
    let out = ling(&project, &server, "anthropic", &["-p", "one"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "first\n");
    assert!(!out.stderr.contains("secret plan"), "{}", out.stderr);
    // The thinking is in the session, so a continued run sends it back (and the mock checks its
    // signature).
    let out = ling(&project, &server, "anthropic", &["-p", "two", "--continue"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "second\n");
    let sent = &server.requests()[1].body["messages"];
    assert_eq!(sent[1]["content"][0]["type"], "thinking", "{sent}");
    assert_eq!(sent[1]["content"][0]["thinking"], "secret plan");
}

#[test]
fn anthropic_is_chosen_by_settings_and_reads_the_anthropic_variables() {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let project = Project::new();
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"api": "anthropic"}"#,
    )
    .unwrap();
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    // The OpenAI variable is not Anthropic's: ANTHROPIC_BASE_URL says where it is.
    cmd.env(
        "ANTHROPIC_BASE_URL",
        server.base_url().trim_end_matches("/v1"),
    )
    .env("ANTHROPIC_API_KEY", "sk-ant-test")
    .env("OPENAI_API_KEY", "sk-openai")
    .args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.body["model"], "claude-sonnet-4-6");
}

#[test]
fn the_json_result_has_the_cache_figures_and_stream_json_too() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "read_file", json!({"path": "a.txt"}))]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    project.write("a.txt", "alpha\n");
    // A system prompt long enough to be cached (the API's least is 1024 tokens).
    let long = "Follow the house style in every file you touch. ".repeat(200);
    let out = ling(
        &project,
        &server,
        "anthropic",
        &[
            "-p",
            "read it",
            "--append-system-prompt",
            &long,
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = out.json();
    let reported = server.reported();
    let total = |i: usize| reported[i].input.total();
    let usage = &result["usage"];
    assert_eq!(usage["prompt_tokens"], total(0) + total(1), "{result}");
    assert_eq!(usage["cache_read_tokens"], reported[1].input.cache_read);
    assert!(
        usage["cache_read_tokens"].as_u64().unwrap_or(0) > 2000,
        "{usage}"
    );
    assert_eq!(
        usage["cache_write_tokens"],
        reported[0].input.cache_write + reported[1].input.cache_write
    );
    // No price in settings: no cost.
    assert_eq!(result.get("cost_usd"), None);

    let server = MockServer::start_blocking(vec![Reply::text("once")]);
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"prices": {"test-model": {"inputPerMTok": 3, "outputPerMTok": 15, "cacheReadPerMTok": 0.3}}}"#,
    )
    .unwrap();
    let out = ling(
        &project,
        &server,
        "responses",
        &[
            "-p",
            "hi",
            "--append-system-prompt",
            &long,
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines = out.json_lines();
    let result: &Value = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert!(
        result["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 2000,
        "{result}"
    );
    assert!(
        result["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{result}"
    );
}

#[test]
fn an_error_mid_stream_fails_the_run_with_the_server_s_words() {
    for api in ["anthropic", "responses"] {
        let server = MockServer::start_blocking(vec![Reply::error_after_text(
            "partial",
            "overloaded_error",
            "Overloaded",
        )]);
        let project = Project::new();
        let out = ling(&project, &server, api, &["-p", "hi"]);
        assert_eq!(out.code, Some(1), "{api}: {}", out.stderr);
        assert!(out.stderr.contains("Overloaded"), "{api}: {}", out.stderr);
        assert_eq!(server.requests().len(), 1, "shown text is not retried");
    }
}

#[test]
fn an_overflow_is_compacted_and_retried_in_each_api() {
    use super::context_compaction::{is_summary_request, prompt};
    for (api, style) in [
        ("anthropic", Overflow::Anthropic),
        ("responses", Overflow::Responses),
    ] {
        let replies = (1..=3)
            .map(|n| Reply::text(&format!("answer {n}")))
            .collect();
        let server = MockServer::start_blocking(replies);
        server.answer_summaries("SUMMARY");
        server.context_limit(30_000, style);
        let project = Project::new();
        for n in 1..=3 {
            let mut args = vec![
                "-p".to_string(),
                prompt(n, 12_000),
                "--output-format".into(),
                "stream-json".into(),
            ];
            if n > 1 {
                args.push("--continue".into());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = ling(&project, &server, api, &args);
            assert_eq!(out.code, Some(0), "{api} run {n}: {}", out.stderr);
            if n == 3 {
                assert!(
                    out.stderr.contains("did not fit the model's context"),
                    "{api}: {}",
                    out.stderr
                );
                assert_eq!(out.json_lines().pop().unwrap()["result"], "answer 3");
            }
        }
        let requests = server.requests();
        assert!(requests.iter().any(is_summary_request), "{api}");
        let last = requests.last().unwrap();
        assert!(last.conversation_size() <= 30_000, "{api}");
    }
}

#[test]
fn the_window_probe_is_asked_once_and_then_read_from_the_cache() {
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    server.route(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 4096}}),
    );
    let project = Project::new();
    let probes = |server: &MockServer| {
        server
            .all_requests()
            .iter()
            .filter(|r| r.api.is_none())
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
    };
    let out = ling(&project, &server, "chat", &["-p", "one"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let first = probes(&server);
    assert_eq!(first.len(), 3, "{first:?}");
    let out = ling(&project, &server, "chat", &["-p", "two"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(probes(&server), first, "the second run sends no probe");
    let cache = std::fs::read_to_string(project.home.path().join("cache/context-windows.json"))
        .unwrap_or_default();
    assert!(cache.contains("4096"), "{cache}");
}

#[test]
fn server_kind_says_which_probe_or_none() {
    for (kind, expected) in [
        ("llama.cpp", vec!["GET /props"]),
        ("ollama", vec!["POST /api/show"]),
        ("other", vec![]),
    ] {
        let server = MockServer::start_blocking(vec![Reply::text("one")]);
        let project = Project::new();
        std::fs::write(
            project.home.path().join("settings.json"),
            json!({"serverKind": kind}).to_string(),
        )
        .unwrap();
        let out = ling(&project, &server, "chat", &["-p", "one"]);
        assert_eq!(out.code, Some(0), "{kind}: {}", out.stderr);
        let probes: Vec<String> = server
            .all_requests()
            .iter()
            .filter(|r| r.api.is_none())
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        assert_eq!(probes, expected, "{kind}");
    }
}

#[test]
fn chat_arguments_sent_as_an_object_in_one_index_less_chunk_are_run() {
    use mock_openai::chunk;
    let server = MockServer::start_blocking(vec![
        Reply::chunks(vec![
            chunk(
                json!({"tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.txt"}}}]}),
                None,
            ),
            chunk(json!({}), Some("stop")),
        ]),
        Reply::text("It says alpha."),
    ]);
    let project = Project::new();
    project.write("a.txt", "alpha\n");
    let out = ling(&project, &server, "chat", &["-p", "read a.txt"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "It says alpha.\n");
    let messages = server.requests()[1].messages();
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(call["id"], "call_0");
    assert_eq!(call["function"]["arguments"], r#"{"path":"a.txt"}"#);
    assert_eq!(messages[3]["role"], "tool");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("alpha")
    );
}
