//! The REPL through a pseudo-terminal: type a prompt, see the streamed answer, run slash
//! commands, interrupt with Ctrl-C, exit.

use crate::support::{mock_openai, project};

use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> Repl {
    repl::start(project, server, args, &[])
}

#[test]
fn prompt_answer_tools_and_exit() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "read_file", json!({"path": "hello.txt"}))]),
        Reply::text("The file greets the world."),
    ]);
    let project = Project::new();
    project.write("hello.txt", "hello world\n");
    let mut p = start(&project, &server, &["--model", "pty-model"]);
    p.raw("pty-model");
    p.raw("> ");
    p.send_line("what does hello.txt say?");
    p.raw("read_file(hello.txt)");
    p.raw("The file greets the world.");
    p.raw("> ");
    p.send_line("/tools");
    for tool in [
        "read_file",
        "write_file",
        "edit_file",
        "bash",
        "grep",
        "glob",
    ] {
        p.raw(tool);
    }
    p.raw("> ");
    p.send_line("/exit");
    p.eof();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let history = std::fs::read_to_string(project.home.path().join("history")).unwrap_or_default();
    assert!(
        history.contains("what does hello.txt say?"),
        "history: {history}"
    );
}

#[test]
fn ctrl_c_twice_at_an_empty_prompt_exits_and_ctrl_d_too() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.control('c');
    p.raw("Ctrl-C again");
    p.control('c');
    p.eof();

    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.control('d');
    p.eof();
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_returns_to_the_prompt() {
    let server = MockServer::start_blocking(vec![
        Reply::text("never shown").delay(std::time::Duration::from_secs(30)),
        Reply::text("second answer"),
    ]);
    let project = Project::new();
    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.send_line("slow question");
    p.raw("thinking");
    // Interrupted once the request is with the model (not before it is sent).
    server.wait_until_remaining(1);
    p.control('c');
    p.raw("interrupted");
    p.raw("> ");
    p.send_line("next question");
    p.raw("second answer");
    p.send_line("/exit");
    p.eof();
}

#[test]
fn the_repl_asks_before_running_a_command() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "touch approved.txt"}),
        )]),
        Reply::text("made it"),
        Reply::tool_calls(vec![("b2", "bash", json!({"command": "touch denied.txt"}))]),
        Reply::text("ok, not made"),
    ]);
    let project = Project::new();
    // Without the shell sandbox, so that bash asks.
    let mut p = start(&project, &server, &["--sandbox", "off"]);
    p.raw("> ");
    p.send_line("make a file");
    p.raw("allow?");
    p.send_line("y");
    p.raw("made it");
    p.raw("> ");
    p.send_line("make another");
    p.raw("allow?");
    p.send_line("n");
    // No: the turn ends at once; the model reads the denial with the next prompt.
    p.raw("declined");
    p.raw("> ");
    assert_eq!(server.requests().len(), 3);
    p.send_line("fine");
    p.raw("ok, not made");
    p.send_line("/exit");
    p.eof();
    assert!(project.file("approved.txt").exists());
    assert!(!project.file("denied.txt").exists());
    let denied = &server.requests()[3];
    let tool = denied
        .messages()
        .into_iter()
        .rfind(|m| m["role"] == "tool")
        .unwrap_or_default();
    assert!(
        tool["content"]
            .as_str()
            .unwrap_or_default()
            .contains("denied"),
        "{tool}"
    );
}

#[test]
fn the_question_before_an_edit_shows_its_diff() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("r1", "read_file", json!({"path": "a.txt"}))]),
        Reply::tool_calls(vec![(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_string": "hello", "new_string": "goodbye"}),
        )]),
        Reply::text("edited"),
    ]);
    let project = Project::new();
    project.write("a.txt", "hello\nworld\n");
    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.send_line("change it");
    let before = p.raw("allow?");
    assert!(
        before.contains("-hello") && before.contains("+goodbye"),
        "{before}"
    );
    assert_eq!(
        project.read("a.txt"),
        "hello\nworld\n",
        "edited before approval"
    );
    p.send_line("y");
    p.raw("edited");
    p.send_line("/exit");
    p.eof();
    assert_eq!(project.read("a.txt"), "goodbye\nworld\n");
}
