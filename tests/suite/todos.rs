//! `todo_write`, the session's to-do list, through the real `ling` against the mock model: shown
//! under its call in the REPL and by `/todos`, brought back by `--continue` (and not in a new
//! session), carried into a compaction's summary request and summary, refused with a clear
//! result for an item without content, sent by `-p --output-format stream-json` as a tool_use
//! of `TodoWrite`, and seen by hooks under that name. The Agent SDK and ACP sides are in
//! `claude_sdk_session_tools.rs` and `acp_session_tools.rs`.

use crate::support::hooks_e2e::{group, hooks, pre_output, script, tool_results};
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::{Project, run};
use crate::support::repl;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

pub fn list() -> Value {
    json!({"todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"}
    ]})
}

/// The `todos` lines of the project's only transcript.
fn transcript_lists(project: &Project) -> Vec<Value> {
    let dir = project.home.path().join("sessions");
    let mut lists = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let value: Value = serde_json::from_str(line).unwrap_or_default();
            if value["type"] == "todos" {
                lists.push(value["todos"].clone());
            }
        }
    }
    lists
}

#[test]
fn the_list_is_shown_listed_by_slash_todos_and_kept_for_continue() {
    // The answer after the list comes late, so the row under the spinner is drawn meanwhile.
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("listed").delay(std::time::Duration::from_millis(1500)),
    ]);
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("plan the work");
    // Under its call, each item by status (the one under way in its active form).
    let shown = p.expect("☐ Ship it");
    assert!(
        shown.contains("☑ Read the code") && shown.contains("▸ Running the tests"),
        "{shown}"
    );
    // Under the spinner while the turn goes on: the item under way and the count.
    p.expect("▸ Running the tests (1/3 done)");
    p.expect("listed");
    p.expect("> ");
    p.send_line("/todos");
    let listed = p.expect("☐ Ship it");
    assert!(listed.contains("▸ Running the tests"), "{listed}");
    p.expect("> ");
    p.exit();
    // The model read that the list was written.
    assert_eq!(
        tool_results(&server.requests()[1]),
        [
            "The to-do list is updated (3 items, 2 not done). Keep it current: mark each item \
          in_progress when you start it and completed as soon as it is done."
        ]
    );
    assert_eq!(transcript_lists(&project), [list()["todos"].clone()]);

    // The session continued: the same list.
    let mut p = repl::start(&project, &server, &["--continue"], &[]);
    p.expect("> ");
    p.send_line("/todos");
    let listed = p.expect("☐ Ship it");
    assert!(listed.contains("☑ Read the code"), "{listed}");
    p.expect("> ");
    p.exit();
    // A new session has none.
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("/todos");
    p.expect("no to-do list in this session");
    p.expect("> ");
    p.exit();
}

#[test]
fn a_compaction_keeps_the_list_in_its_summary() {
    let first = format!("first answer {}", "with many words of detail ".repeat(40));
    let server = MockServer::start_blocking(vec![
        Reply::text(&first),
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("second answer"),
        Reply::text("third answer"),
    ]);
    server.answer_summaries("SUMMARY");
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("first question");
    p.expect("first answer");
    p.expect("> ");
    p.send_line("second question");
    p.expect("second answer");
    p.expect("> ");
    p.send_line("/compact");
    p.expect("conversation compacted (manual)");
    p.expect("> ");
    p.send_line("third question");
    p.expect("third answer");
    p.expect("> ");
    p.exit();
    let requests = server.requests();
    let summary = requests
        .iter()
        .find(|r| r.body.get("tools").is_none())
        .expect("a summary request");
    let asked = summary.messages()[1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        asked.contains("The current to-do list") && asked.contains("▸ Running the tests"),
        "{asked}"
    );
    // The request after it carries the summary with the list.
    let last = requests.last().map(|r| r.messages()).unwrap_or_default();
    let summarised = last[1]["content"].as_str().unwrap_or_default();
    assert!(summarised.contains("SUMMARY"), "{summarised}");
    assert!(
        summarised.contains("The current to-do list (todo_write keeps it):\n☑ Read the code"),
        "{summarised}"
    );
}

#[test]
fn an_item_without_content_is_refused_and_nothing_is_kept() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "todo_write",
            json!({"todos": [{"content": "ok", "status": "pending", "activeForm": "x"},
                             {"content": "  ", "status": "pending", "activeForm": "y"}]}),
        )]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "plan"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: item(s) 2 have no content"),
        "{results:?}"
    );
    assert!(transcript_lists(&project).is_empty());
}

#[test]
fn stream_json_carries_the_list_as_a_todo_write_tool_use() {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "plan", "--output-format", "stream-json", "--verbose"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let uses: Vec<Value> = out
        .json_lines()
        .into_iter()
        .filter(|l| l["type"] == "assistant")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1, "{}", out.stdout);
    assert_eq!(uses[0]["name"], "TodoWrite");
    assert_eq!(uses[0]["input"], list());
}

#[test]
fn hooks_see_todo_write_by_claude_s_name() {
    let project = Project::new();
    let deny = script(
        &project,
        "deny.sh",
        &pre_output(json!({"permissionDecision": "deny", "permissionDecisionReason": "no lists"})),
    );
    hooks(&project, json!({ "PreToolUse": group("TodoWrite", &deny) }));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "plan"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("no lists"), "{results:?}");
    assert!(
        transcript_lists(&project).is_empty(),
        "a denied list was kept"
    );
}

#[test]
fn a_rewound_conversation_takes_its_to_do_list_back_too() {
    let first = json!({"todos": [
        {"content": "First plan", "status": "pending", "activeForm": "Planning first"}
    ]});
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", first.clone())]),
        Reply::text("planned"),
        Reply::tool_calls(vec![("t2", "todo_write", list())]),
        Reply::text("replanned"),
    ]);
    let project = Project::new();
    let turn = |args: &[&str]| {
        let mut cmd = project.command(&server.base_url());
        cmd.args(["--output-format", "json"]).args(args);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out.json()
    };
    let id = turn(&["-p", "plan"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    turn(&["-p", "plan again", "--resume", &id]);
    assert_eq!(
        transcript_lists(&project).last(),
        Some(&list()["todos"]),
        "the second list was not written"
    );
    // Back to before the second message: the list written before it is the list again.
    turn(&["-p", "/rewind 2 conversation", "--resume", &id]);
    assert_eq!(transcript_lists(&project).last(), Some(&first["todos"]));
    let mut p = repl::start(&project, &server, &["--resume", &id], &[]);
    p.expect("> ");
    p.send_line("/todos");
    let listed = p.expect("First plan");
    assert!(!listed.contains("Ship it"), "{listed}");
    p.expect("> ");
    p.exit();
}
