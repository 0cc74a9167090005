//! Work the REPL shows through a pseudo-terminal: a spinner naming the running tool with its
//! seconds and the command's last line, the footer after each turn, `/status` and `/cost`.

use crate::support::{mock_openai, project};

use super::repl_render::{utf8, without_escapes};
use mock_openai::{MockServer, Reply};
use project::Project;
use rexpect::session::{PtySession, spawn_command};
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> PtySession {
    let mut cmd = project.command(&server.base_url());
    cmd.args(args).env("TERM", "xterm");
    spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

fn expect(p: &mut PtySession, text: &str) -> String {
    let seen = p
        .exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"));
    utf8(&seen)
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
    expect(&mut p, "> ");
    p.send_line("run it").unwrap();
    let spun = expect(&mut p, "finished");
    assert!(
        spun.contains("bash(echo step-one; sleep 1.5; echo done) 1s · step-one"),
        "{spun:?}"
    );
    let text = without_escapes(&spun);
    assert!(
        text.contains("● bash(echo step-one; sleep 1.5; echo done)  ✓ 2 lines"),
        "{text}"
    );
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
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
    expect(&mut p, "> ");
    p.send_line("one").unwrap();
    let shown = without_escapes(&expect(&mut p, "of 32.8k\r\n"));
    // 1.2k of the default window of 32768 tokens (the mock tells no window).
    assert!(shown.contains("1.2k in · 30 out · context 3% "), "{shown}");
    expect(&mut p, "> ");
    p.send_line("two").unwrap();
    let shown = without_escapes(&expect(&mut p, "of 32.8k\r\n"));
    assert!(shown.contains("2.0k in · 500 out · context 6% "), "{shown}");
    expect(&mut p, "> ");
    p.send_line("/cost").unwrap();
    let cost = without_escapes(&expect(&mut p, "(priced-model)"));
    assert!(
        cost.contains("tokens this session: 3200 in, 530 out (2 model requests)"),
        "{cost}"
    );
    // 3200 × 2.5 / 1e6 + 530 × 10 / 1e6
    assert!(cost.contains("cost: $0.0133"), "{cost}");
    expect(&mut p, "> ");
    p.send_line("/status").unwrap();
    let status = without_escapes(&expect(&mut p, "log"));
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
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}
