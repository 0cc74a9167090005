//! Work the REPL shows through a pseudo-terminal: a spinner naming the running tool with its
//! seconds and the command's last line, the footer after each turn, `/status` and `/cost`.

use crate::support::{mock_openai, project};

use crate::support::repl::without_escapes;
use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> Repl {
    repl::start(project, server, args, &[])
}

#[test]
fn a_running_command_spins_with_its_name_seconds_and_last_line() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo step-one; sleep 1.5; echo done"}),
        )]),
        Reply::text("finished"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &["--allowed-tools", "bash"]);
    p.raw("> ");
    p.send_line("run it");
    let spun = p.raw("finished");
    assert!(
        spun.contains("bash(echo step-one; sleep 1.5; echo done) 1s · esc to interrupt · step-one"),
        "{spun:?}"
    );
    let text = without_escapes(&spun);
    assert!(
        text.contains("● bash(echo step-one; sleep 1.5; echo done)  ✓ 2 lines"),
        "{text}"
    );
    p.send_line("/exit");
    p.eof();
}

#[test]
fn a_turn_ends_with_a_footer_and_status_and_cost_report_the_session() {
    let server = MockServer::start_blocking(vec![
        Reply::text("first").usage(1200, 30),
        Reply::text("second").usage(2000, 500),
    ]);
    let project = Project::new();
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"prices": {"priced-model": {"inputPerMTok": 2.5, "outputPerMTok": 10}}}"#,
    )
    .unwrap();
    let mut p = start(&project, &server, &["--model", "priced-model"]);
    p.raw("> ");
    p.send_line("one");
    let shown = without_escapes(&p.raw("of 32.8k\r\n"));
    // 1.2k of the default window of 32768 tokens (the mock tells no window).
    assert!(shown.contains("1.2k in · 30 out · context 3% "), "{shown}");
    p.raw("> ");
    p.send_line("two");
    let shown = without_escapes(&p.raw("of 32.8k\r\n"));
    assert!(shown.contains("2.0k in · 500 out · context 6% "), "{shown}");
    p.raw("> ");
    p.send_line("/cost");
    let cost = without_escapes(&p.raw("(priced-model)"));
    assert!(
        cost.contains("tokens this session: 3200 in, 530 out (2 model requests)"),
        "{cost}"
    );
    // 3200 × 2.5 / 1e6 + 530 × 10 / 1e6
    assert!(cost.contains("cost: $0.0133"), "{cost}");
    p.raw("> ");
    p.send_line("/status");
    let status = without_escapes(&p.raw("log"));
    for part in [
        "model        priced-model",
        &format!("base URL     {}", server.base_url()),
        "mode         default",
        "sandbox      workspace-write (network off; bash runs without asking)",
        "context      2.0k of 32.8k tokens (6%)",
        "MCP servers  none",
        "session      ",
    ] {
        assert!(status.contains(part), "{part:?} not in {status}");
    }
    p.send_line("/exit");
    p.eof();
}
