//! `exit_plan_mode` through the real `ling` against the mock model: offered in plan mode only;
//! in the REPL the plan is shown and approving it switches the mode (the prompt and the next
//! calls follow), keeping on planning hands the feedback to the model or ends the turn; `-p`
//! without a driver refuses it with a clear result and stays in plan mode; Shift-Tab into plan
//! mode says what it means. The Agent SDK and ACP sides are in `claude_sdk_session_tools.rs` and
//! `acp_session_tools.rs`.

use crate::support::hooks_e2e::tool_results;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::{Project, run};
use crate::support::repl;

use serde_json::json;

pub const PLAN: &str = "# The plan\n\n1. Write `a.txt`\n2. Check it";

/// The model hands over its plan, then writes `a.txt` and says `done`.
pub fn plan_then_write() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![("p1", "exit_plan_mode", json!({"plan": PLAN}))]),
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text("done"),
    ]
}

fn offered(server: &MockServer, index: usize) -> Vec<String> {
    server.requests()[index].tool_names()
}

#[test]
fn approving_the_plan_in_accept_edits_switches_the_mode_for_the_rest_of_the_session() {
    let server = MockServer::start_blocking(plan_then_write());
    let project = Project::new();
    let mut p = repl::start(&project, &server, &["--permission-mode", "plan"], &[]);
    p.expect("plan > ");
    p.send_line("plan it");
    let shown = p.expect("approve?");
    assert!(shown.contains("The plan"), "{shown}");
    assert!(
        shown.contains("Write a.txt") || shown.contains("Write `a.txt`"),
        "{shown}"
    );
    assert!(shown.contains("2. Yes, and accept edits (a)"), "{shown}");
    p.key("2");
    // The write then runs without a question: accept-edits.
    let after = p.expect("done");
    assert!(!after.contains("allow?"), "the write asked: {after}");
    assert!(after.contains("accept-edits mode"), "{after}");
    p.expect("accept-edits > ");
    p.exit();
    assert_eq!(project.read("a.txt"), "a\n");
    assert!(offered(&server, 0).contains(&"exit_plan_mode".to_string()));
    // Out of plan mode it is no longer offered.
    assert!(!offered(&server, 1).contains(&"exit_plan_mode".to_string()));
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0]
            .starts_with("The user approved your plan. The permission mode is now accept-edits"),
        "{results:?}"
    );
}

#[test]
fn approving_in_default_mode_still_asks_before_the_write() {
    let server = MockServer::start_blocking(plan_then_write());
    let project = Project::new();
    let mut p = repl::start(&project, &server, &["--permission-mode", "plan"], &[]);
    p.expect("plan > ");
    p.send_line("plan it");
    p.expect("approve?");
    p.key("1");
    let said = p.expect("allow?");
    assert!(said.contains("default mode"), "{said}");
    p.key("y");
    p.expect("done");
    p.expect("> ");
    p.exit();
    assert_eq!(project.read("a.txt"), "a\n");
}

#[test]
fn keeping_on_planning_gives_the_model_the_feedback_or_ends_the_turn() {
    // With feedback: the model reads it and goes on (still in plan mode: its write is refused).
    let server = MockServer::start_blocking(plan_then_write());
    let project = Project::new();
    let mut p = repl::start(&project, &server, &["--permission-mode", "plan"], &[]);
    p.expect("plan > ");
    p.send_line("plan it");
    p.expect("approve?");
    p.key("t");
    p.expect("what should change in the plan?");
    p.send_line("add a test first");
    p.expect("done");
    p.expect("plan > ");
    p.exit();
    assert!(!project.file("a.txt").exists(), "a write ran in plan mode");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("still in plan mode. Their feedback: add a test first"),
        "{results:?}"
    );

    // Esc: no feedback, the turn ends and the model waits.
    let server = MockServer::start_blocking(plan_then_write());
    let project = Project::new();
    let mut p = repl::start(&project, &server, &["--permission-mode", "plan"], &[]);
    p.expect("plan > ");
    p.send_line("plan it");
    p.expect("approve?");
    p.key("\x1b");
    p.expect("plan > ");
    assert_eq!(server.requests().len(), 1, "the turn went on after Esc");
    // The model reads it with the user's next message.
    p.send_line("let me think");
    p.expect("done");
    p.expect("plan > ");
    p.exit();
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("Wait for the user's next message"),
        "{results:?}"
    );
    assert!(!project.file("a.txt").exists());
}

#[test]
fn print_mode_without_a_driver_refuses_and_stays_in_plan_mode() {
    let server = MockServer::start_blocking(plan_then_write());
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "plan it", "--permission-mode", "plan"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    let results = tool_results(&requests[1]);
    assert!(
        results[0].starts_with("Error: nobody can approve a plan in this run"),
        "{results:?}"
    );
    // Still planning: the write is refused by the mode, and the tool is still offered.
    let results = tool_results(&requests[2]);
    assert!(results[1].contains("permission denied"), "{results:?}");
    assert!(offered(&server, 2).contains(&"exit_plan_mode".to_string()));
    assert!(!project.file("a.txt").exists());

    // Outside plan mode the tool is not offered at all.
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hello"]);
    assert_eq!(run(cmd).code, Some(0));
    let names = offered(&server, 0);
    assert!(!names.contains(&"exit_plan_mode".to_string()), "{names:?}");
    assert!(names.contains(&"todo_write".to_string()), "{names:?}");
    assert!(names.contains(&"ask_user".to_string()), "{names:?}");
}

#[test]
fn shift_tab_into_plan_mode_says_the_plan_is_approved_first() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.typ("\x1b[Z");
    p.expect("accept-edits > ");
    p.typ("\x1b[Z");
    let said = p.expect("plan > ");
    assert!(
        said.contains("Ling reads and plans, changes nothing, and asks you to approve its plan"),
        "{said}"
    );
    p.send_line("/exit");
    p.eof();
}
