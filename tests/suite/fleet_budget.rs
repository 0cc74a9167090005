//! `--max-budget-usd` and settings `maxBudgetUsd`: a run stops before the request that would
//! pass the cap, with Claude Code's `error_max_budget_usd`, counting its sub-agents' requests
//! on the same purse; a model with no price cannot run under a cap; the REPL asks to raise a
//! spent cap and goes on under the new one.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

/// $10,000 per million tokens: a request of 100 in and 10 out costs $1.10.
const PRICES: &str = r#"{"prices": {"priced": {"inputPerMTok": 10000, "outputPerMTok": 10000}}}"#;

fn priced_project() -> Project {
    let project = Project::new();
    std::fs::write(project.home.path().join("settings.json"), PRICES).unwrap();
    project
}

fn bash(command: &str) -> Reply {
    Reply::tool_calls(vec![("c1", "bash", json!({"command": command}))]).usage(100, 10)
}

fn budget_run(project: &Project, server: &MockServer, budget: &str) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "go",
        "--model",
        "priced",
        "--allowedTools",
        "bash",
        "--output-format",
        "json",
        "--max-budget-usd",
        budget,
    ]);
    run(cmd)
}

#[test]
fn the_run_stops_before_the_request_that_would_pass_the_cap() {
    // Spent $1.10; the next request's prompt alone is at least 110 tokens ($1.10): $2.20 > $1.50.
    let server = MockServer::start_blocking(vec![bash("true"), Reply::text("done").usage(1, 1)]);
    server.allow_unasked(1);
    let out = budget_run(&priced_project(), &server, "1.5");
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["is_error"], true);
    assert!(
        result["result"]
            .as_str()
            .is_some_and(|r| r.contains("budget of $1.50") && r.contains("--max-budget-usd")),
        "{result}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!((result["total_cost_usd"].as_f64().unwrap_or(0.0) - 1.1).abs() < 1e-9);

    // The same run under a cap it keeps to finishes.
    let server = MockServer::start_blocking(vec![bash("true"), Reply::text("done").usage(1, 1)]);
    let out = budget_run(&priced_project(), &server, "3");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()["subtype"], "success");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn sub_agents_spend_from_the_run_s_budget_and_settings_set_it() {
    // Parent: a task ($1.10); the child: its answer ($1.10); spent $2.20, and the parent's next
    // request at least $1.10 more: past $3. Counted apart, the parent would have spent $1.10.
    let replies = || {
        vec![
            Reply::tool_calls(vec![(
                "t1",
                "task",
                json!({"description": "look", "prompt": "look around"}),
            )])
            .usage(100, 10),
            Reply::text("child done").usage(100, 10),
            Reply::text("parent done").usage(1, 1),
        ]
    };
    let project = priced_project();
    std::fs::write(
        project.home.path().join("settings.json"),
        PRICES.replace("{\"prices\"", "{\"maxBudgetUsd\": 3, \"prices\""),
    )
    .unwrap();
    let server = MockServer::start_blocking(replies());
    server.allow_unasked(1);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--model", "priced", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(out.json()["subtype"], "error_max_budget_usd");
    assert_eq!(server.requests().len(), 2);

    // The flag comes before the setting.
    let server = MockServer::start_blocking(replies());
    let out = budget_run(&project, &server, "10");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_cap_on_a_model_without_a_price_is_refused_before_any_request() {
    let server = MockServer::start_blocking(vec![Reply::text("never")]);
    server.allow_unasked(1);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        "go",
        "--model",
        "unknown-model",
        "--max-budget-usd",
        "1",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("no price for the model unknown-model"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 0);

    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "go", "--max-budget-usd", "-1"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
}

#[test]
fn the_repl_asks_to_raise_a_spent_budget_and_goes_on_under_the_new_cap() {
    use crate::support::repl;
    let project = Project::new();
    std::fs::write(
        project.home.path().join("settings.json"),
        PRICES.replace("{\"prices\"", "{\"maxBudgetUsd\": 1.5, \"prices\""),
    )
    .unwrap();
    let server =
        MockServer::start_blocking(vec![bash("true"), Reply::text("BUDGET-DONE").usage(1, 1)]);
    let mut p = repl::start(
        &project,
        &server,
        &["--model", "priced", "--allowedTools", "bash"],
        &[],
    );
    p.expect("> ");
    p.send_line("go");
    // $1.10 spent; the next request would pass $1.50: the turn stops and the REPL asks.
    let said = p.expect("raise the budget to $3.00?");
    assert!(said.contains("budget reached:"), "{said}");
    assert_eq!(server.requests().len(), 1);
    p.send_line("n");
    p.expect("the budget stays $1.50");
    p.send_line("go on");
    p.expect("raise the budget to $3.00?");
    assert_eq!(
        server.requests().len(),
        1,
        "a request past the cap was sent"
    );
    p.send_line("y");
    p.expect("budget raised to $3.00");
    p.send_line("go on");
    p.expect("BUDGET-DONE");
    assert_eq!(server.requests().len(), 2);
    p.exit();
}
