//! Background sub-agents and nesting through the real binary: a `task` with
//! `run_in_background` returns at once, the parent answers, and the child's answer reaches the
//! parent afterwards as a `<task-notification>` message of a new turn (the `-p` run ends with
//! that turn); with settings `maxAgentDepth` 2 a child starts a child of its own, which cannot
//! go deeper, even with `maxParallelAgents` 1 (a child lends its slot to its own). Each with
//! its negative.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Recorded, Reply};
use project::{Project, run};
use serde_json::{Value, json};

fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn last_user(request: &Recorded) -> String {
    let messages = request.messages();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    last["content"].as_str().unwrap().to_string()
}

fn task(id: &str, prompt: &str, background: bool) -> Reply {
    Reply::tool_calls(vec![(
        id,
        "task",
        json!({"description": "look it up", "prompt": prompt, "run_in_background": background}),
    )])
}

#[test]
fn a_background_childs_answer_reaches_the_parent_after_the_parent_answered() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task("bg1", "BG-CHILD: find the answer", true),
        Reply::text("PARENT-FIRST: it runs in the background").usage(10, 1),
        Reply::text("PARENT-AFTER: the child found it").usage(10, 1),
    ]);
    // The child answers only once the parent has sent its second request, whatever the
    // timing: a parent that waited for it would never get there.
    server.script_for(
        "BG-CHILD",
        vec![
            Reply::text("CHILD-FINDING 42")
                .usage(100, 5)
                .after("BG-PARENT", 2),
        ],
    );
    let mut cmd = p.command(&server.base_url());
    cmd.args([
        "-p",
        "BG-PARENT: delegate",
        "--output-format",
        "ling-stream-json",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let parent = server.requests_for("BG-PARENT");
    assert_eq!(parent.len(), 3, "the parent's requests");
    // The call returned at once, naming the child; the parent answered without its finding.
    let results = tool_results(&parent[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("started in the background"),
        "{results:?}"
    );
    let second = serde_json::to_string(&parent[1].body).unwrap();
    assert!(!second.contains("CHILD-FINDING"), "{second}");
    // Its answer came as a message of a new turn, after the parent's answer.
    let notice = last_user(&parent[2]);
    assert!(notice.starts_with("<task-notification>"), "{notice}");
    assert!(notice.contains("<status>completed</status>"), "{notice}");
    assert!(
        notice.contains("<result>\nCHILD-FINDING 42\n</result>"),
        "{notice}"
    );
    let messages = parent[2].messages();
    let answered = messages
        .iter()
        .position(|m| m["content"] == "PARENT-FIRST: it runs in the background")
        .expect("the parent's first answer is in its history");
    assert_eq!(
        answered,
        messages.len() - 2,
        "the notice follows the answer"
    );
    // The output: the child's lines tagged with the call, its stop after the first answer,
    // and the run's result is the last turn's, with the child's tokens counted.
    let lines = out.json_lines();
    let position = |pred: &dyn Fn(&Value) -> bool| lines.iter().position(pred).unwrap();
    let first_answer = position(&|l| {
        l["type"] == "assistant"
            && l["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("PARENT-FIRST"))
    });
    let child_stop = position(&|l| l["subtype"] == "subagent_stop");
    assert!(first_answer < child_stop, "{}", out.stdout);
    assert_eq!(lines[child_stop]["parent_tool_use_id"], "bg1");
    assert_eq!(lines[child_stop]["is_error"], false);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["result"], "PARENT-AFTER: the child found it");
    assert_eq!(result["usage"]["prompt_tokens"], 120);
}

#[test]
fn a_foreground_child_is_waited_for_and_answers_in_the_call() {
    // The negative of the above: without `run_in_background` the answer is the call's result
    // and no notice follows.
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task("fg1", "FG-CHILD: find the answer", false),
        Reply::text("PARENT: got it"),
    ]);
    server.script_for("FG-CHILD", vec![Reply::text("CHILD-FINDING 7")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "FG-PARENT: delegate"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let parent = server.requests_for("FG-PARENT");
    assert_eq!(parent.len(), 2);
    assert!(tool_results(&parent[1])[0].starts_with("CHILD-FINDING 7"));
    assert!(out.stdout.trim_end().ends_with("PARENT: got it"));
}

/// A child that starts a grandchild, under `settings`.
fn nested(settings: &str) -> (MockServer, project::Output) {
    let p = Project::new();
    std::fs::write(p.home.path().join("settings.json"), settings).unwrap();
    let server = MockServer::start_blocking(vec![
        task("c1", "NEST-CHILD: ask your own helper", false),
        Reply::text("PARENT: done"),
    ]);
    server.script_for(
        "NEST-CHILD",
        vec![
            task("g1", "NEST-GRANDCHILD: answer", false),
            Reply::text("CHILD: my helper said so"),
        ],
    );
    server.script_for("NEST-GRANDCHILD", vec![Reply::text("GRANDCHILD: 3")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "NEST-PARENT: delegate"]);
    let out = run(cmd);
    (server, out)
}

#[test]
fn with_max_agent_depth_two_a_child_starts_its_own_and_no_deeper() {
    let (server, out) = nested(r#"{"maxAgentDepth": 2, "maxParallelAgents": 1}"#);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let child = server.requests_for("NEST-CHILD");
    assert!(child[0].tool_names().contains(&"task".to_string()));
    assert!(tool_results(&child[1])[0].starts_with("GRANDCHILD: 3"));
    let grandchild = server.requests_for("NEST-GRANDCHILD");
    assert_eq!(grandchild.len(), 1);
    assert!(
        !grandchild[0].tool_names().contains(&"task".to_string()),
        "depth 2 is the bound"
    );
    let parent = server.requests_for("NEST-PARENT");
    assert!(tool_results(&parent[1])[0].starts_with("CHILD: my helper said so"));
}

#[test]
fn by_default_a_child_has_no_task_tool() {
    let (server, out) = nested("{}");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let child = server.requests_for("NEST-CHILD");
    assert!(!child[0].tool_names().contains(&"task".to_string()));
    // Its call of a tool it does not have is refused; the grandchild never runs.
    assert!(server.requests_for("NEST-GRANDCHILD").is_empty());
    server.expect_unasked(1);
}

#[test]
fn the_repl_lists_a_running_background_agent_and_stops_it() {
    use crate::support::repl;
    let server = MockServer::start_blocking(vec![
        task("bg1", "BG-SLOW: take your time", true),
        Reply::text("PARENT: it started"),
        Reply::text("PARENT: heard it was stopped"),
    ]);
    // The child's answer never comes on its own: only the stop ends it.
    server.script_for(
        "BG-SLOW",
        vec![Reply::text("never seen").after("NOT-A-CONVERSATION", 1)],
    );
    let project = Project::new();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.expect("> ");
    p.send_line("REPL-PARENT: go");
    p.expect("PARENT: it started");
    p.expect("background agent(s) at work");
    p.expect("> ");
    p.send_line("/agents");
    let shown = p.expect("Running now") + &p.expect("> ");
    let shown = repl::without_escapes(&shown.replace('\r', ""));
    let listed = shown
        .lines()
        .skip_while(|l| !l.contains("stops one)"))
        .nth(1)
        .unwrap_or_else(|| panic!("no running agent listed: {shown}"))
        .to_string();
    assert!(
        listed.contains("general-purpose \"look it up\""),
        "{listed}"
    );
    assert!(listed.contains("background"), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_string();
    assert!(id.starts_with('a') && id.len() == 12, "{listed}");
    p.send_line("/agents stop nope");
    p.expect("no sub-agent \"nope\" is running");
    p.expect("> ");
    p.send_line(&format!("/agents stop {id}"));
    p.expect(&format!("stopping sub-agent {id}"));
    // Once it has stopped its notice goes to the model as a turn of its own: at once, when
    // the child ended before the REPL came back to the top of its loop, so what comes before
    // the next prompt is kept too.
    let mut seen = p.expect("> ");
    // Each line typed brings the REPL back to the top of its loop, where an answer that came
    // is taken; the output is read whole, however the turn's lines were cut.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !repl::without_escapes(&seen).contains("PARENT: heard it was stopped")
        && std::time::Instant::now() < deadline
    {
        p.send_line("/help");
        seen.push_str(&p.expect("/quit"));
        seen.push_str(&p.expect("> "));
    }
    assert!(
        repl::without_escapes(&seen).contains("PARENT: heard it was stopped"),
        "the stopped agent's notice never reached the model: {seen}"
    );
    let parent = server.requests_for("REPL-PARENT");
    assert_eq!(parent.len(), 3);
    let notice = last_user(&parent[2]);
    assert!(notice.contains("<status>stopped</status>"), "{notice}");
    assert!(notice.contains("the user stopped it (/agents)"), "{notice}");
    p.send_line("/exit");
    p.eof();
}
