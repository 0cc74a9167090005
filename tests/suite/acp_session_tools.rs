//! The session's own tools through `ling acp`, driven by the client built on the published
//! `@agentclientprotocol/sdk` (tests/peers/acp_client.mjs) against the mock model: the to-do
//! list as `plan` updates (and again when the session is loaded), a plan to approve as a
//! `session/request_permission` whose approval sends a `current_mode_update`, and `ask_user`'s
//! questions as one permission request each, an option per choice.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::acp::{Transcript, run};
use crate::support::hooks_e2e::tool_results;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::Project;

use super::ask_user::questions;
use super::plan_mode::{PLAN, plan_then_write};
use super::todos::list;

fn prompt(project: &Project, server: &MockServer, args: &[&str], answers: Value) -> Transcript {
    run(
        project,
        &server.base_url(),
        args,
        json!({"steps": [{"op": "new"}, {"op": "prompt", "text": "go", "answers": answers}]}),
    )
}

fn option_ids(asked: &Value) -> Vec<String> {
    asked["params"]["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["optionId"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_to_do_list_is_the_editors_plan_and_comes_back_on_load() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t1", "todo_write", list())]),
        Reply::text("listed"),
    ]);
    let t = prompt(&project, &server, &[], json!([]));
    let plans = t.updates_of("plan");
    assert_eq!(plans.len(), 1, "{:#?}", t.log);
    assert_eq!(
        plans[0]["entries"],
        json!([
            {"content": "Read the code", "priority": "medium", "status": "completed"},
            {"content": "Run the tests", "priority": "medium", "status": "in_progress"},
            {"content": "Ship it", "priority": "medium", "status": "pending"}
        ])
    );
    assert!(
        t.entries("permission").is_empty(),
        "a list asked: {:#?}",
        t.log
    );
    let id = t.sessions[0].clone();
    let loaded = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [{"op": "load", "sessionId": id}]}),
    );
    let plans = loaded.updates_of("plan");
    assert_eq!(plans.len(), 1, "{:#?}", loaded.log);
    assert_eq!(plans[0]["entries"][2]["content"], "Ship it");
    // A session without a list sends none.
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let t = prompt(&project, &server, &[], json!([]));
    assert!(t.updates_of("plan").is_empty());
}

#[test]
fn an_approved_plan_switches_the_editors_mode() {
    let project = Project::new();
    let server = MockServer::start_blocking(plan_then_write());
    let t = prompt(
        &project,
        &server,
        &["--permission-mode", "plan"],
        json!(["approve_accept_edits"]),
    );
    let asked = t.entries("permission");
    // One question (the plan); the write then ran without one, in accept-edits.
    assert_eq!(asked.len(), 1, "{:#?}", t.log);
    assert_eq!(
        option_ids(asked[0]),
        ["approve_default", "approve_accept_edits", "keep_planning"]
    );
    assert_eq!(asked[0]["params"]["toolCall"]["toolCallId"], "p1");
    assert_eq!(
        asked[0]["params"]["toolCall"]["content"][0]["content"]["text"],
        PLAN
    );
    let modes: Vec<&Value> = t
        .updates_of("current_mode_update")
        .into_iter()
        .map(|u| &u["currentModeId"])
        .collect();
    assert_eq!(modes, [&json!("accept-edits")]);
    assert_eq!(project.read("a.txt"), "a\n");

    // Kept planning: no mode change, the turn ends, nothing written.
    let project = Project::new();
    let server = MockServer::start_blocking(plan_then_write());
    server.expect_unasked(2);
    let t = prompt(
        &project,
        &server,
        &["--permission-mode", "plan"],
        json!(["keep_planning"]),
    );
    assert!(
        t.updates_of("current_mode_update").is_empty(),
        "{:#?}",
        t.log
    );
    assert_eq!(server.requests().len(), 1);
    assert!(!project.file("a.txt").exists());
}

#[test]
fn each_question_is_a_permission_request_with_an_option_per_choice() {
    let project = Project::new();
    let reply = || {
        vec![
            Reply::tool_calls(vec![("q1", "ask_user", questions())]),
            Reply::text("thanks"),
        ]
    };
    let server = MockServer::start_blocking(reply());
    let t = prompt(&project, &server, &[], json!(["choice_2", "choice_3"]));
    let asked = t.entries("permission");
    assert_eq!(asked.len(), 2, "{:#?}", t.log);
    assert_eq!(option_ids(asked[0]), ["choice_1", "choice_2", "decline"]);
    assert_eq!(
        asked[0]["params"]["toolCall"]["title"],
        "Library: Which library?"
    );
    assert_eq!(
        option_ids(asked[1]),
        ["choice_1", "choice_2", "choice_3", "decline"]
    );
    assert_eq!(
        tool_results(&server.requests()[1]),
        [
            "User has answered your questions: \"Which library?\"=\"time\", \
          \"Which features?\"=\"std\". You can now continue with the user's answers in mind."
        ]
    );

    // Declined at the first: the second is not asked, and nothing is chosen for the user.
    let server = MockServer::start_blocking(reply());
    let t = prompt(&project, &server, &[], json!(["decline"]));
    assert_eq!(t.entries("permission").len(), 1);
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].starts_with("The user declined"), "{results:?}");
}
