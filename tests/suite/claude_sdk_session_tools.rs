//! The session's own tools as the published Claude Agent SDK sees them (tests/peers/
//! claude_sdk.mjs drives the real `ling` against the mock model): `TodoWrite` as a tool_use of
//! an assistant message; `ExitPlanMode` as a `can_use_tool` request whose allow approves the
//! plan (in the mode an `updatedPermissions` `setMode` names, else default) and whose deny keeps
//! planning with its message; `AskUserQuestion` as a `can_use_tool` request answered in
//! `updatedInput.answers`.

use crate::support::hooks_e2e::tool_results;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::Project;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::ask_user::questions;
use super::claude_sdk::{messages, sdk};
use super::plan_mode::{PLAN, plan_then_write};
use super::todos::list;

fn asked(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| l.get("canUseTool").cloned())
        .collect()
}

fn in_plan_mode(answer: Value) -> (Project, MockServer, Vec<Value>) {
    let project = Project::new();
    let server = MockServer::start_blocking(plan_then_write());
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["plan it"], "options": {"permissionMode": "plan"}, "canUseTool": answer}),
    );
    (project, server, lines)
}

#[test]
fn todo_write_is_a_tool_use_the_sdk_sees() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("listed"),
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["plan"], "options": {}}),
    );
    let uses: Vec<Value> = messages(&lines)
        .iter()
        .filter(|m| m["type"] == "assistant")
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1, "{lines:#?}");
    assert_eq!(uses[0]["name"], "TodoWrite");
    assert_eq!(uses[0]["input"], list());
    // No question for a list.
    assert!(asked(&lines).is_empty(), "{lines:#?}");
}

#[test]
fn exit_plan_mode_is_a_can_use_tool_request_and_set_mode_chooses_the_mode() {
    let (project, server, lines) = in_plan_mode(json!({"behavior": "allow",
        "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]}));
    let asks = asked(&lines);
    // Only the plan was asked about: the write ran in accept-edits without a question.
    assert_eq!(asks.len(), 1, "{asks:#?}");
    assert_eq!(asks[0]["toolName"], "ExitPlanMode");
    assert_eq!(asks[0]["input"], json!({"plan": PLAN}));
    assert_eq!(asks[0]["toolUseID"], "p1");
    assert_eq!(project.read("a.txt"), "a\n");
    assert!(
        tool_results(&server.requests()[1])[0].contains("now accept-edits"),
        "{:?}",
        tool_results(&server.requests()[1])
    );

    // Allowed without a mode: default, where the write asks too.
    let (project, _, lines) = in_plan_mode(json!({"behavior": "allow"}));
    let asks = asked(&lines);
    let names: Vec<&Value> = asks.iter().map(|a| &a["toolName"]).collect();
    assert_eq!(names, [&json!("ExitPlanMode"), &json!("Write")]);
    assert_eq!(project.read("a.txt"), "a\n");
}

#[test]
fn a_denied_plan_keeps_planning_with_the_message() {
    let (project, server, _) =
        in_plan_mode(json!({"behavior": "deny", "message": "split step 1 in two"}));
    assert!(!project.file("a.txt").exists(), "a write ran in plan mode");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("still in plan mode. Their feedback: split step 1 in two"),
        "{results:?}"
    );
}

#[test]
fn ask_user_question_is_answered_in_updated_input_answers() {
    let project = Project::new();
    let reply = || {
        vec![
            Reply::tool_calls(vec![("q1", "ask_user", questions())]),
            Reply::text("thanks"),
        ]
    };
    let server = MockServer::start_blocking(reply());
    let mut answered = questions();
    answered["answers"] = json!({"Which library?": "time", "Which features?": "serde, std"});
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["choose"], "options": {},
               "canUseTool": {"behavior": "allow", "updatedInput": answered}}),
    );
    let asks = asked(&lines);
    assert_eq!(asks.len(), 1, "{asks:#?}");
    assert_eq!(asks[0]["toolName"], "AskUserQuestion");
    assert_eq!(asks[0]["input"], questions());
    assert_eq!(
        tool_results(&server.requests()[1]),
        [
            "User has answered your questions: \"Which library?\"=\"time\", \
          \"Which features?\"=\"serde, std\". You can now continue with the user's answers in \
          mind."
        ]
    );

    // A deny is no answer: the model is told the user declined.
    let server = MockServer::start_blocking(reply());
    sdk(
        &project,
        &server,
        json!({"prompts": ["choose"], "options": {},
               "canUseTool": {"behavior": "deny", "message": "not now"}}),
    );
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].starts_with("The user declined"), "{results:?}");
}
