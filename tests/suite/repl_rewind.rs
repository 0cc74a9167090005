//! `/rewind` and `/fork` in the REPL through a pseudo-terminal: the picker lists the user
//! messages with what each turn changed, puts back code and conversation, and brings the
//! message back into the input line; Esc Esc at an empty prompt opens it; a file changed
//! outside Ling since is shown and kept unless the user says yes; `/fork` goes on in a new
//! session and leaves the old one as it was.

use crate::support::{mock_openai, project};

use crate::support::repl;
use mock_openai::{MockServer, Reply};
use project::Project;
use serde_json::json;

fn server(more: Vec<Reply>) -> MockServer {
    let mut replies = vec![
        Reply::tool_calls(vec![(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "from the model\n"}),
        )]),
        Reply::text("written"),
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo more >> notes.txt && rm keep.txt"}),
        )]),
        Reply::text("changed"),
    ];
    replies.extend(more);
    MockServer::start_blocking(replies)
}

#[test]
fn the_picker_puts_back_code_and_conversation_and_the_message_comes_back() {
    let project = Project::new();
    std::fs::write(project.file("keep.txt"), "kept\n").unwrap();
    let server = server(vec![Reply::text("again")]);
    let mut p = repl::start(
        &project,
        &server,
        &["--permission-mode", "accept-edits"],
        &[],
    );
    p.expect("> ");
    p.send_line("write the notes");
    p.expect("written");
    p.expect("> ");
    p.send_line("change them");
    p.expect("changed");
    p.expect("> ");
    assert!(!project.file("keep.txt").exists());
    // Esc Esc at an empty prompt: the picker, each message with what its turn changed.
    p.key("\x1b\x1b");
    let listed = p.expect("rewind to just before which message?");
    assert!(listed.contains("[1] write the notes"), "{listed}");
    assert!(listed.contains("+1 file"), "{listed}");
    assert!(listed.contains("[2] change them"), "{listed}");
    assert!(listed.contains("1 command"), "{listed}");
    p.send_line("2");
    p.expect("put back:");
    p.send_line("1");
    let done = p.expect("> ");
    assert!(done.contains("Rewound to just before message 2"), "{done}");
    assert_eq!(project.read("keep.txt"), "kept\n");
    assert_eq!(project.read("notes.txt"), "from the model\n");
    // The message is back at the prompt: Enter sends it again, and the request no longer
    // holds the rewound turn.
    p.expect("change them");
    p.send_line("");
    p.expect("> ");
    let last = server.requests().last().unwrap().messages();
    let said: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(
        said.iter().filter(|m| m.contains("change them")).count(),
        1,
        "{said:?}"
    );
    p.send_line("/exit");
    p.eof();
}

#[test]
fn a_file_changed_outside_since_is_kept_without_a_yes_and_fork_leaves_the_old_session() {
    let project = Project::new();
    std::fs::write(project.file("keep.txt"), "kept\n").unwrap();
    let server = server(Vec::new());
    server.expect_unasked(2);
    let mut p = repl::start(
        &project,
        &server,
        &["--permission-mode", "accept-edits"],
        &[],
    );
    p.expect("> ");
    p.send_line("write the notes");
    p.expect("written");
    p.expect("> ");
    // Someone else edits the file the model wrote.
    std::fs::write(project.file("notes.txt"), "mine now\n").unwrap();
    p.send_line("/rewind 1 code");
    let asked = p.expect("overwrite them too? [y/N]");
    assert!(asked.contains("notes.txt"), "{asked}");
    p.send_line("n");
    let done = p.expect("> ");
    assert!(done.contains("changed outside Ling since"), "{done}");
    assert_eq!(project.read("notes.txt"), "mine now\n");
    // The negative: with a yes it is put back (here: removed, as before message 1).
    p.send_line("/rewind 1 code");
    p.expect("overwrite them too? [y/N]");
    p.send_line("y");
    p.expect("> ");
    assert!(!project.file("notes.txt").exists());
    p.send_line("/fork");
    let forked = p.expect("is left as it was");
    assert!(
        forked.contains("forked: this conversation goes on as session"),
        "{forked}"
    );
    p.send_line("/exit");
    p.eof();
    let sessions = std::fs::read_dir(project.home.path().join("sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 2);
}
