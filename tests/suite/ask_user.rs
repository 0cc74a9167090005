//! `ask_user` through the real `ling` against the mock model: in the REPL a digit picks, a
//! multi-select toggles digits until Enter, "other" takes typed words, Esc (and nothing else)
//! declines, and Enter alone never picks anything; the answers come back in Claude Code's
//! words. `-p` without a driver refuses it with a clear result. Sub-agents get `todo_write` but
//! not `ask_user` unless their definition names it (then their questions reach the REPL), nor
//! `exit_plan_mode`; a rule in Claude's name applies. The Agent SDK and ACP
//! sides are in `claude_sdk_session_tools.rs` and `acp_session_tools.rs`.

use crate::support::hooks_e2e::tool_results;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project::{Project, run};
use crate::support::repl;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

pub fn questions() -> Value {
    json!({"questions": [
        {"question": "Which library?", "header": "Library", "multiSelect": false, "options": [
            {"label": "chrono", "description": "the usual one"},
            {"label": "time", "description": "smaller"}]},
        {"question": "Which features?", "header": "Features", "multiSelect": true, "options": [
            {"label": "serde", "description": "serialise"},
            {"label": "clock", "description": "read the time"},
            {"label": "std", "description": "the standard library"}]}
    ]})
}

fn asking() -> MockServer {
    MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("q1", "ask_user", questions())]),
        Reply::text("thanks"),
    ])
}

#[test]
fn a_digit_picks_a_multi_select_toggles_until_enter() {
    let server = asking();
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("choose for me");
    let shown = p.expect("a digit picks, Esc: no answer");
    assert!(shown.contains("Which library?"), "{shown}");
    assert!(shown.contains("2. time - smaller"), "{shown}");
    assert!(shown.contains("3. Other: type your own answer"), "{shown}");
    // Enter alone picks nothing.
    p.key("\r");
    p.expect("not a choice");
    p.key("2");
    p.expect("Enter: done");
    p.key("1");
    p.expect("chosen: serde");
    p.key("2");
    p.expect("chosen: serde, clock");
    p.key("2");
    p.expect("chosen: serde\r\n");
    p.key("3");
    p.expect("chosen: serde, std");
    p.key("\r");
    p.expect("thanks");
    p.expect("> ");
    p.exit();
    assert_eq!(
        tool_results(&server.requests()[1]),
        [
            "User has answered your questions: \"Which library?\"=\"time\", \
          \"Which features?\"=\"serde, std\". You can now continue with the user's answers in \
          mind."
        ]
    );
}

#[test]
fn other_takes_the_users_words_and_esc_declines_without_a_default() {
    let server = asking();
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("choose");
    p.expect("a digit picks");
    p.key("3");
    p.expect("your answer");
    p.send_line("jiff");
    p.expect("Enter: done");
    p.key("\x1b");
    p.expect("thanks");
    p.expect("> ");
    p.exit();
    // One question answered, then Esc: nothing is chosen for the user.
    assert_eq!(
        tool_results(&server.requests()[1]),
        [
            "The user declined to answer these questions. Do not assume an answer: go on with what \
          does not depend on it, or say in your reply what you need to know."
        ]
    );

    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "q1",
            "ask_user",
            json!({"questions": [questions()["questions"][0].clone()]}),
        )]),
        Reply::text("thanks"),
    ]);
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("choose");
    p.expect("a digit picks");
    p.key("3");
    p.expect("your answer");
    p.send_line("jiff");
    p.expect("thanks");
    p.expect("> ");
    p.exit();
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].contains("\"Which library?\"=\"jiff\""),
        "{results:?}"
    );
}

#[test]
fn print_mode_without_a_driver_refuses_and_rules_and_bad_questions_are_refused() {
    let server = asking();
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "choose"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: nobody can answer questions in this run"),
        "{results:?}"
    );

    // A rule in Claude's name applies to it.
    let server = asking();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "choose", "--disallowed-tools", "AskUserQuestion"]);
    assert_eq!(run(cmd).code, Some(0));
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: permission denied"),
        "{results:?}"
    );

    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "q1",
            "ask_user",
            json!({"questions": [{"question": "Q?", "header": "H", "options": [{"label": "a"}]}]}),
        )]),
        Reply::text("ok"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "choose"]);
    assert_eq!(run(cmd).code, Some(0));
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: question 1 has 1 options; give two to four"),
        "{results:?}"
    );
}

#[test]
fn sub_agents_get_the_list_but_ask_only_where_their_definition_says() {
    let project = Project::new();
    project.write(
        ".ling/agents/asker.md",
        "---\nname: asker\ndescription: Asks\ntools: Read, AskUserQuestion, TodoWrite\n---\nASKER\n",
    );
    project.trust();
    let task = |id: &str, prompt: &str, agent: Option<&str>| {
        let mut input = json!({"description": format!("job {id}"), "prompt": prompt});
        if let Some(agent) = agent {
            input["subagent_type"] = json!(agent);
        }
        (id.to_string(), input)
    };
    let calls = [
        task("g", "CHILD-G: go", None),
        task("a", "CHILD-A: go", Some("asker")),
    ];
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(
            calls
                .iter()
                .map(|(id, v)| (id.as_str(), "task", v.clone()))
                .collect(),
        ),
        Reply::text("done"),
    ]);
    server.script_for("CHILD-G", vec![Reply::text("general done")]);
    server.script_for("CHILD-A", vec![Reply::text("asker done")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "delegate", "--permission-mode", "plan"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let parent = server.requests()[0].tool_names();
    assert!(parent.contains(&"exit_plan_mode".to_string()), "{parent:?}");
    let general = server.requests_for("CHILD-G")[0].tool_names();
    assert!(general.contains(&"todo_write".to_string()), "{general:?}");
    assert!(!general.contains(&"ask_user".to_string()), "{general:?}");
    assert!(
        !general.contains(&"exit_plan_mode".to_string()),
        "{general:?}"
    );
    let asker = server.requests_for("CHILD-A")[0].tool_names();
    assert_eq!(asker, ["read_file", "todo_write", "ask_user"]);
}

#[test]
fn a_sub_agent_allowed_to_ask_reaches_the_user_in_the_repl() {
    let project = Project::new();
    project.write(
        ".ling/agents/asker.md",
        "---\nname: asker\ndescription: Asks\ntools: Read, AskUserQuestion\n---\nASKER\n",
    );
    project.trust();
    let one = json!({"questions": [questions()["questions"][0].clone()]});
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({"description": "ask", "prompt": "CHILD-A: ask", "subagent_type": "asker"}),
        )]),
        Reply::text("parent done"),
    ]);
    server.script_for(
        "CHILD-A",
        vec![
            Reply::tool_calls(vec![("q1", "ask_user", one)]),
            Reply::text("asker done"),
        ],
    );
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("delegate");
    p.expect("a digit picks");
    p.key("1");
    p.expect("parent done");
    p.expect("> ");
    p.exit();
    let child = server.requests_for("CHILD-A");
    let results = tool_results(&child[1]);
    assert!(
        results[0].contains("\"Which library?\"=\"chrono\""),
        "{results:?}"
    );
}
