//! Overflow recovery through the real binary: a server that answers "context too long" (as
//! OpenAI, llama.cpp, vLLM and a proxy's 413 say it) makes Ling compact and retry once, and the
//! retried request holds the summary and the latest prompt verbatim; when nothing helps, the run
//! fails with an error naming `/compact` and `/clear`, after one retry, not a loop.

use crate::support::{mock_openai, project};

use super::context_compaction::{is_summary_request, prompt, run_turn};
use mock_openai::{MockServer, Overflow, Recorded, Reply};
use pretty_assertions::assert_eq;
use project::Project;
use serde_json::json;

#[test]
fn each_server_s_overflow_answer_compacts_and_retries_once() {
    for style in [
        Overflow::OpenAi,
        Overflow::LlamaCpp,
        Overflow::Vllm,
        Overflow::TooLarge,
    ] {
        let replies = (1..=3)
            .map(|n| Reply::text(&format!("answer {n}")))
            .collect();
        let server = MockServer::start_blocking(replies);
        server.answer_summaries("SUMMARY");
        server.context_limit(30_000, style);
        let project = Project::new();
        for n in 1..=3 {
            let out = run_turn(&project, &server, &prompt(n, 12_000), n > 1);
            assert_eq!(out.code, Some(0), "{style:?} run {n}: {}", out.stderr);
            if n == 3 {
                assert!(
                    out.stderr.contains("did not fit the model's context"),
                    "{style:?}: {}",
                    out.stderr
                );
                let result = out.json_lines().pop().unwrap();
                assert_eq!(result["result"], "answer 3", "{style:?}");
                // The run's usage totals its requests, the summary requests' included (the
                // main answers report none).
                let summaries = server
                    .requests()
                    .iter()
                    .filter(|r| is_summary_request(r))
                    .count();
                assert_eq!(
                    result["usage"],
                    json!({"prompt_tokens": 100 * summaries, "completion_tokens": 10 * summaries})
                );
            }
        }
        let requests = server.requests();
        let kinds: Vec<&str> = requests
            .iter()
            .map(|r| {
                if is_summary_request(r) {
                    "summary"
                } else {
                    "main"
                }
            })
            .collect();
        // Three runs, the third refused once: then the summary (in parts, as the window the
        // server stated allows) and the one retry.
        let last = kinds.len() - 1;
        assert!(last >= 4, "{style:?}: {kinds:?}");
        assert_eq!(kinds[..3], ["main"; 3], "{style:?}");
        assert!(
            kinds[3..last].iter().all(|k| *k == "summary"),
            "{style:?}: {kinds:?}"
        );
        assert_eq!(kinds[last], "main");
        let size = |r: &Recorded| r.body["messages"].to_string().len();
        assert!(size(&requests[2]) > 30_000 && size(&requests[last]) <= 30_000);
        let retried = requests[last].messages();
        // The summary, then the prompt; the last answer too when the window the refusal
        // implies leaves room for it (it grows with the fixed part of the request).
        let kept_answer =
            retried.len() == 4 && retried[2] == json!({"role": "assistant", "content": "answer 2"});
        assert!(retried.len() == 3 || kept_answer, "{style:?}: {retried:?}");
        assert!(
            retried[1]["content"]
                .as_str()
                .unwrap()
                .contains("SUMMARY #1")
        );
        assert_eq!(
            retried[retried.len() - 1],
            json!({"role": "user", "content": prompt(3, 12_000)})
        );
    }
}

#[test]
fn when_nothing_fits_the_run_fails_naming_compact_and_clear() {
    let server = MockServer::start_blocking(vec![Reply::text("never")]);
    server.expect_unasked(1);
    server.answer_summaries("SUMMARY");
    server.context_limit(4_000, Overflow::LlamaCpp);
    let project = Project::new();
    let out = run_turn(&project, &server, &prompt(1, 8_000), false);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let result = out.json_lines().pop().unwrap();
    assert_eq!(result["subtype"], "error_during_execution");
    let message = result["result"].as_str().unwrap();
    assert!(
        message.contains("/compact")
            && message.contains("/clear")
            && message.contains("1000 tokens"),
        "{message}"
    );
    // One request: nothing to compact or elide, so no retry of the same request.
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining(), 1);
}

#[test]
fn the_window_is_asked_of_the_server_at_its_root_not_under_v1() {
    // llama.cpp says 4096: two 8k-character prompts with the tools are over 85% of it, so
    // Ling compacts before sending the second one (there is nothing to compact in the first).
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    server.answer_summaries("SUMMARY");
    server.route(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 4096}}),
    );
    let project = Project::new();
    let out = run_turn(&project, &server, &prompt(1, 8_000), false);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = run_turn(&project, &server, &prompt(2, 8_000), true);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let compact: Vec<_> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["subtype"] == "compact")
        .collect();
    assert_eq!(compact.len(), 1, "{}", out.stdout);
    let paths: Vec<String> = server
        .all_requests()
        .iter()
        .filter(|r| !r.path.ends_with("/chat/completions"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(paths.contains(&"GET /props".to_string()), "{paths:?}");
    assert!(paths.contains(&"GET /v1/models".to_string()), "{paths:?}");
    assert!(paths.contains(&"POST /api/show".to_string()), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("/v1/props")), "{paths:?}");
}

/// The probe, in-process: each server kind's answer gives the window; none gives `None`.
#[tokio::test]
async fn the_probe_reads_vllm_llama_cpp_and_ollama() {
    use ling::llm::{LlmClient, LlmConfig};
    let window = |server: &MockServer, model: &str| {
        let client = LlmClient::new(LlmConfig::new(server.base_url(), model)).unwrap();
        async move { client.probe_context_window().await }
    };
    let vllm = MockServer::start(Vec::new()).await;
    vllm.route(
        "GET /v1/models",
        json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 999},
            {"id": "Qwen/Qwen2.5-Coder-7B", "max_model_len": 32768}]}),
    );
    assert_eq!(window(&vllm, "Qwen/Qwen2.5-Coder-7B").await, Some(32768));
    let llama = MockServer::start(Vec::new()).await;
    llama.route(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 8192}}),
    );
    assert_eq!(window(&llama, "local").await, Some(8192));
    let ollama = MockServer::start(Vec::new()).await;
    ollama.route(
        "POST /api/show",
        json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 131072}}),
    );
    assert_eq!(window(&ollama, "qwen2.5-coder:7b").await, Some(131072));
    let show = ollama.all_requests();
    let show = show.iter().find(|r| r.path == "/api/show").unwrap();
    assert_eq!(show.body, json!({"model": "qwen2.5-coder:7b"}));
    let none = MockServer::start(Vec::new()).await;
    assert_eq!(window(&none, "local").await, None);
}
