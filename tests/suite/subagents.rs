//! Sub-agents (the `task` tool) through the real binary: four calls of one response run at
//! once (and one at a time with `maxParallelAgents: 1`), the parent gets only each child's
//! answer, a child is refused a tool its definition does not allow, SubagentStart and
//! SubagentStop fire with Claude's fields (a block sends the child back to work), stream-json
//! tags the child's events with its call, and `--resume` restores a child so `task` can
//! continue it. Each with its negative.

use crate::support::{mock_openai, project};

use std::time::Duration;

use mock_openai::{MockServer, Recorded, Reply};
use project::{Project, run};
use serde_json::{Value, json};

fn tool_results(request: &Recorded) -> Vec<(String, String)> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn task(id: &str, prompt: &str, agent: Option<&str>) -> (String, Value) {
    let mut input = json!({"description": format!("job {id}"), "prompt": prompt});
    if let Some(agent) = agent {
        input["subagent_type"] = json!(agent);
    }
    (id.to_string(), input)
}

fn task_calls(tasks: &[(String, Value)]) -> Reply {
    Reply::tool_calls(
        tasks
            .iter()
            .map(|(id, input)| (id.as_str(), "task", input.clone()))
            .collect(),
    )
}

/// Scripts four children, each a `glob` call then its answer, every reply `delay` late.
fn four_children(server: &MockServer, delay: Duration) {
    for name in ["CHILD-A", "CHILD-B", "CHILD-C", "CHILD-D"] {
        server.script_for(
            name,
            vec![
                Reply::tool_calls(vec![("g", "glob", json!({"pattern": "*.txt"}))]).delay(delay),
                Reply::text(&format!("answer of {name}"))
                    .usage(100, 10)
                    .delay(delay),
            ],
        );
    }
}

fn four_tasks() -> Vec<(String, Value)> {
    ["A", "B", "C", "D"]
        .iter()
        .map(|n| {
            task(
                &format!("t{n}"),
                &format!("CHILD-{n}: list the txt files"),
                None,
            )
        })
        .collect()
}

/// When each child's first request came and its last one was answered (its answer came last).
fn spans(server: &MockServer) -> Vec<(std::time::Instant, std::time::Instant)> {
    ["CHILD-A", "CHILD-B", "CHILD-C", "CHILD-D"]
        .iter()
        .map(|name| {
            let requests = server.requests_for(name);
            assert_eq!(requests.len(), 2, "{name}");
            (requests[0].at, requests[1].at)
        })
        .collect()
}

#[test]
fn four_task_calls_run_at_once_and_the_parent_gets_only_their_answers() {
    let p = Project::new();
    p.write("a.txt", "SECRET-OF-A-TXT\n");
    let server = MockServer::start_blocking(vec![
        task_calls(&four_tasks()),
        Reply::text("all four answered"),
    ]);
    four_children(&server, Duration::from_millis(400));
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate", "--output-format", "ling-stream-json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // Every child's first request came before any child's second: they ran at once.
    let spans = spans(&server);
    let last_start = spans.iter().map(|s| s.0).max().unwrap();
    let first_end = spans.iter().map(|s| s.1).min().unwrap();
    assert!(last_start < first_end, "the children ran one after another");
    // The parent's next request holds each answer (and its usage), not the children's work.
    let parent = server.requests_for("delegate");
    assert_eq!(parent.len(), 2);
    let results = tool_results(&parent[1]);
    assert_eq!(results.len(), 4);
    for ((id, content), name) in results.iter().zip(["A", "B", "C", "D"]) {
        assert_eq!(id, &format!("t{name}"));
        assert!(
            content.starts_with(&format!(
                "answer of CHILD-{name}\n\n[general-purpose agent a"
            )),
            "{content}"
        );
        assert!(
            content.contains("2 requests, 100 in / 10 out tokens"),
            "{content}"
        );
    }
    let sent = serde_json::to_string(&parent[1].body).unwrap();
    assert!(
        !sent.contains("a.txt"),
        "a child's tool output reached the parent"
    );
    // A child's own requests: its prompt, its system prompt, no `task` tool.
    let child = &server.requests_for("CHILD-A")[0];
    let system = child.messages()[0]["content"].as_str().unwrap().to_string();
    assert!(
        system.starts_with("You are a sub-agent of Ling"),
        "{system}"
    );
    assert!(!child.tool_names().contains(&"task".to_string()));
    assert!(child.tool_names().contains(&"bash".to_string()));
    // stream-json: the child's lines tagged with the parent's call.
    let lines = out.json_lines();
    let tagged: Vec<&Value> = lines
        .iter()
        .filter(|l| l["parent_tool_use_id"] == "tA")
        .collect();
    let kinds: Vec<String> = tagged
        .iter()
        .map(|l| format!("{}/{}", l["type"], l["subtype"]).replace('"', ""))
        .collect();
    assert_eq!(
        kinds,
        [
            "system/subagent_start",
            "tool_use/null",
            "tool_result/null",
            "assistant/null",
            "system/subagent_stop"
        ],
        "{tagged:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "tool_use" && l["name"] == "task")
    );
    let result = lines.last().unwrap();
    // The run's usage counts the children's tokens too.
    assert_eq!(result["usage"]["prompt_tokens"], 400);
}

#[test]
fn with_max_parallel_agents_one_the_children_run_one_at_a_time() {
    let p = Project::new();
    std::fs::write(
        p.home.path().join("settings.json"),
        r#"{"maxParallelAgents": 1}"#,
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![task_calls(&four_tasks()), Reply::text("done")]);
    four_children(&server, Duration::from_millis(50));
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mut spans = spans(&server);
    spans.sort();
    for pair in spans.windows(2) {
        assert!(pair[0].1 < pair[1].0, "two children overlapped");
    }
}

#[test]
fn a_child_is_refused_a_tool_its_definition_does_not_allow() {
    let p = Project::new();
    p.write(
        ".ling/agents/reader.md",
        "---\nname: reader\ndescription: Reads files and reports\ntools: Read, Grep\n---\n\
         READER-PROMPT: you only read.\n",
    );
    p.trust();
    let server = MockServer::start_blocking(vec![
        task_calls(&[
            task("r", "CHILD-R: check", Some("reader")),
            task("g", "CHILD-G: check", None),
        ]),
        Reply::text("done"),
    ]);
    server.script_for(
        "CHILD-R",
        vec![
            Reply::tool_calls(vec![("b", "bash", json!({"command": "echo hi"}))]),
            Reply::text("reader gave up"),
        ],
    );
    server.script_for("CHILD-G", vec![Reply::text("general done")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let reader = server.requests_for("CHILD-R");
    assert_eq!(reader[0].tool_names(), ["read_file", "grep"]);
    let system = reader[0].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.starts_with("READER-PROMPT"), "{system}");
    let refused = &tool_results(&reader[1])[0].1;
    assert!(
        refused.starts_with(
            "Error: not allowed: bash is not one of the reader agent's tools (read_file, grep)"
        ),
        "{refused}"
    );
    // The general-purpose child has every tool the parent has, but `task`.
    let general = server.requests_for("CHILD-G");
    let names = general[0].tool_names();
    assert!(names.contains(&"bash".to_string()) && !names.contains(&"task".to_string()));
    // An unknown type is an error the parent's model reads.
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("x", "CHILD-X", Some("nobody"))]),
        Reply::text("done"),
    ]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate"]);
    assert_eq!(run(cmd).code, Some(0));
    let result = &tool_results(&server.requests()[1])[0].1;
    assert!(
        result.contains("no agent type \"nobody\"; the types are: general-purpose, reader"),
        "{result}"
    );
}

#[test]
fn a_child_s_approval_is_the_non_interactive_rule_in_p() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("t", "CHILD-W: write", None)]),
        Reply::text("done"),
    ]);
    server.script_for(
        "CHILD-W",
        vec![
            Reply::tool_calls(vec![("b", "bash", json!({"command": "touch made.txt"}))]),
            Reply::text("could not"),
        ],
    );
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate", "--sandbox", "off"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let denied = &tool_results(&server.requests_for("CHILD-W")[1])[0].1;
    assert!(denied.contains("this run is non-interactive"), "{denied}");
    assert!(!p.file("made.txt").exists());
    assert!(
        out.stderr.contains("general-purpose denied bash"),
        "{}",
        out.stderr
    );
}

#[test]
fn subagent_start_and_stop_hooks_fire_with_claude_s_fields_and_a_block_sends_the_child_back() {
    let p = Project::new();
    let log = p.home.path().join("hooks.log");
    let marker = p.home.path().join("blocked-once");
    let hooks = json!({"hooks": {
        "SubagentStart": [{"matcher": "general-purpose", "hooks": [{"type": "command",
            "command": format!("cat >> {log}; echo >> {log}; echo START-CONTEXT", log = log.display())}]}],
        "SubagentStop": [{"hooks": [{"type": "command",
            "command": format!(
                "cat >> {log}; echo >> {log}; if [ ! -e {m} ]; then touch {m}; echo 'CHECK AGAIN' >&2; exit 2; fi",
                log = log.display(), m = marker.display())}]}],
        "Stop": [{"hooks": [{"type": "command",
            "command": format!("cat >> {log}; echo >> {log}", log = log.display())}]}],
    }});
    std::fs::write(p.home.path().join("hooks.json"), hooks.to_string()).unwrap();
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("t1", "CHILD-H: work", None)]),
        Reply::text("parent done"),
    ]);
    server.script_for(
        "CHILD-H",
        vec![Reply::text("first try"), Reply::text("second try")],
    );
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let events: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["SubagentStart", "SubagentStop", "SubagentStop", "Stop"]
    );
    let agent_id = events[0]["agent_id"].as_str().unwrap();
    assert_eq!(events[0]["agent_type"], "general-purpose");
    assert_eq!(events[1]["agent_id"], agent_id);
    assert_eq!(events[1]["last_assistant_message"], "first try");
    assert_eq!(events[1]["stop_hook_active"], false);
    assert_eq!(events[2]["last_assistant_message"], "second try");
    assert!(
        events[1]["agent_transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl")
    );
    // The parent's Stop is the parent's: no agent fields.
    assert!(events[3].get("agent_id").is_none());
    // The start hook's output went to the child, the stop block's reason back to it.
    let child = server.requests_for("CHILD-H");
    assert_eq!(child.len(), 2);
    let system = child[0].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("START-CONTEXT"), "{system}");
    let last = child[1].messages();
    assert_eq!(last.last().unwrap()["content"], "CHECK AGAIN");
    let result = &tool_results(&server.requests_for("delegate")[1])[0].1;
    assert!(result.starts_with("second try"), "{result}");
}

#[test]
fn resume_restores_the_children_and_task_continues_one() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("t1", "CHILD-R: remember the number 42", None)]),
        Reply::text("parent done"),
    ]);
    server.script_for("CHILD-R", vec![Reply::text("noted 42")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let session = out.json()["session_id"].as_str().unwrap().to_string();
    let result = &tool_results(&server.requests_for("delegate")[1])[0].1;
    let agent_id = result
        .split("task resume=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    // The transcript keeps the child's messages, linked to the call.
    let transcript =
        std::fs::read_to_string(p.home.path().join(format!("sessions/{session}.jsonl"))).unwrap();
    let child_lines: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "subagent")
        .collect();
    assert_eq!(child_lines.len(), 2, "{transcript}");
    assert_eq!(child_lines[0]["parent_tool_use_id"], "t1");
    assert_eq!(child_lines[0]["agent_id"], agent_id.as_str());
    assert_eq!(child_lines[1]["line"]["message"]["content"], "noted 42");

    let mut resumed = json!({"prompt": "CHILD-R2: which number?", "resume": agent_id});
    resumed["description"] = json!("ask again");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("t2", "task", resumed)]),
        Reply::text("it was 42"),
    ]);
    server.script_for("CHILD-R", vec![Reply::text("the number was 42")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "ask the child", "--resume", &session]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let child = server.requests_for("CHILD-R");
    assert_eq!(child.len(), 1);
    let contents: Vec<String> = child[0].messages()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        contents,
        [
            "CHILD-R: remember the number 42",
            "noted 42",
            "CHILD-R2: which number?"
        ]
    );
    // The parent's own history holds the child's answer only, not its conversation.
    let parent = serde_json::to_string(&server.requests()[0].body["messages"]).unwrap();
    assert!(!parent.contains("remember the number 42\"}"), "{parent}");
    // A child id the session does not have is an error.
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t3",
            "task",
            json!({"prompt": "CHILD-Z", "resume": "a0000000000"}),
        )]),
        Reply::text("ok"),
    ]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "again"]);
    assert_eq!(run(cmd).code, Some(0));
    let result = &tool_results(&server.requests()[1])[0].1;
    assert!(result.contains("no sub-agent a0000000000"), "{result}");
}

#[test]
fn ctrl_c_stops_the_children_with_the_run() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[
            task("t1", "CHILD-S: slow", None),
            task("t2", "CHILD-T: slow", None),
        ]),
        Reply::text("never"),
    ]);
    server.expect_unasked(1);
    for name in ["CHILD-S", "CHILD-T"] {
        server.script_for(
            name,
            vec![Reply::text("too late").delay(Duration::from_secs(30))],
        );
    }
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate"]);
    let mut child = crate::support::process::spawn_captured(cmd);
    crate::support::process::wait_for("both children to ask the model", || {
        (server.requests_for("CHILD-S").len() == 1 && server.requests_for("CHILD-T").len() == 1)
            .then_some(())
    });
    let sent = std::time::Instant::now();
    crate::support::process::interrupt(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "the children held the run"
    );
    // No request after the interrupt: the parent did not go on without them.
    assert_eq!(server.requests_for("delegate").len(), 1);
}

#[test]
fn claude_s_task_name_is_task_in_permission_rules() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("t1", "CHILD-N: anything", None)]),
        Reply::text("done"),
    ]);
    server.script_for("CHILD-N", vec![Reply::text("ran")]);
    // The child is refused, so its reply is never asked for.
    server.expect_unasked(1);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate", "--disallowed-tools", "Task"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = &tool_results(&server.requests()[1])[0].1;
    assert!(result.starts_with("Error: permission denied"), "{result}");
    assert!(server.requests_for("CHILD-N").is_empty());
    assert!(
        !out.stderr
            .contains("names a Claude Code tool Ling does not have")
    );
}

fn repl(p: &Project, server: &MockServer, args: &[&str]) -> rexpect::session::PtySession {
    let mut cmd = p.command(&server.base_url());
    cmd.args(args).env("TERM", "xterm");
    rexpect::session::spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

fn expect(p: &mut rexpect::session::PtySession, text: &str) -> String {
    p.exp_string(text)
        .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"))
}

#[test]
fn in_the_repl_commands_are_listed_a_builtin_is_not_replaced_and_a_child_asks_by_name() {
    let p = Project::new();
    p.write(".ling/commands/help.md", "HIJACKED-HELP\n");
    p.write(
        ".ling/commands/ship.md",
        "---\ndescription: Ship the release\n---\nSHIP-BODY $ARGUMENTS\n",
    );
    p.write(
        ".ling/agents/reviewer.md",
        "---\ndescription: Reviews diffs\ntools: Bash\n---\nYou review.\n",
    );
    p.trust();
    let server = MockServer::start_blocking(vec![
        Reply::text("shipped"),
        task_calls(&[task("t1", "CHILD-Q: touch it", Some("reviewer"))]),
        Reply::text("the reviewer made it"),
    ]);
    server.script_for(
        "CHILD-Q",
        vec![
            Reply::tool_calls(vec![("b", "bash", json!({"command": "touch made.txt"}))]),
            Reply::text("made"),
        ],
    );
    let mut s = repl(&p, &server, &["--sandbox", "off"]);
    expect(&mut s, "is one of Ling's own commands");
    expect(&mut s, "> ");
    s.send_line("/help").unwrap();
    expect(&mut s, "show this help");
    expect(&mut s, "Custom commands");
    expect(&mut s, "/ship");
    expect(&mut s, "Ship the release (project)");
    expect(&mut s, "> ");
    s.send_line("/agents").unwrap();
    expect(&mut s, "general-purpose");
    expect(&mut s, "reviewer");
    expect(&mut s, "> ");
    s.send_line("/ship v2").unwrap();
    expect(&mut s, "shipped");
    expect(&mut s, "> ");
    s.send_line("have it reviewed").unwrap();
    expect(&mut s, "asked by sub-agent reviewer: job t1");
    expect(&mut s, "allow?");
    s.send_line("y").unwrap();
    expect(&mut s, "the reviewer made it");
    expect(&mut s, "> ");
    s.send_line("/exit").unwrap();
    s.exp_eof().unwrap();
    assert!(p.file("made.txt").exists());
    let first = &server.requests()[0];
    let sent: Vec<String> = first
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(sent, ["SHIP-BODY v2\n"]);
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(
        !serde_json::to_string(&bodies)
            .unwrap_or_default()
            .contains("HIJACKED")
    );
}

/// In Claude Code's stream-json a Task's own tool calls, results and answer are the usual
/// `assistant` and `user` messages with `parent_tool_use_id` naming the parent's call (the
/// Agent SDK tells them apart by it); the parent's own messages have `null` there.
#[test]
fn claude_stream_json_tags_a_childs_messages_with_the_parents_call() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[task("t1", "CHILD-X: look", None)]),
        Reply::text("all done"),
    ]);
    server.script_for(
        "CHILD-X",
        vec![
            Reply::tool_calls(vec![("g1", "glob", json!({"pattern": "*.txt"}))]),
            Reply::text("child answer"),
        ],
    );
    let mut cmd = p.command(&server.base_url());
    cmd.args([
        "-p",
        "delegate",
        "--output-format",
        "stream-json",
        "--verbose",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines = out.json_lines();
    let tagged: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["parent_tool_use_id"] == "t1")
        .map(|l| {
            let block = &l["message"]["content"][0];
            (
                l["type"].as_str().unwrap_or_default().to_string(),
                block["type"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tagged,
        [
            ("assistant".to_string(), "tool_use".to_string()),
            ("user".to_string(), "tool_result".to_string()),
            ("assistant".to_string(), "text".to_string()),
        ],
        "{}",
        out.stdout
    );
    // The parent's own call is untagged.
    assert!(lines.iter().any(|l| l["type"] == "assistant"
        && l["parent_tool_use_id"].is_null()
        && l["message"]["content"][0]["id"] == "t1"));
}

/// The model writes the description: a newline in it must not draw a line of its own in the
/// REPL (one that reads like Ling's call line), and a control character shows as text.
#[test]
fn in_the_repl_a_childs_description_stays_on_its_one_line() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({
                "description": "look around\n● bash(FAKE-LINE)\x1b[1A",
                "prompt": "CHILD-D: look",
            }),
        )]),
        Reply::text("parent done"),
    ]);
    server.script_for("CHILD-D", vec![Reply::text("child done")]);
    let mut s = repl(&p, &server, &["--sandbox", "off"]);
    expect(&mut s, "> ");
    s.send_line("delegate").unwrap();
    // The PTY's bytes are read one char each: the UTF-8 of `⏎` and `●` spelled that way.
    let one_line: String = "✓ look around⏎● bash(FAKE-LINE)^[[1A · 0 tools"
        .bytes()
        .map(char::from)
        .collect();
    expect(&mut s, &one_line);
    expect(&mut s, "parent done");
    expect(&mut s, "> ");
    s.send_line("/exit").unwrap();
    s.exp_eof().unwrap();
}

/// Two sub-agents that both need a question at once: one question has the keyboard, the other
/// waits (said so) and is asked when the first is answered; each is answered by its own key,
/// and nothing typed for a question goes to the line typed ahead. Before the
/// floor, the second child's events resumed the key reader under the first question and the
/// REPL hung.
#[test]
fn in_the_repl_two_children_asking_at_once_are_asked_in_turn() {
    let p = Project::new();
    let server = MockServer::start_blocking(vec![
        task_calls(&[
            task("t1", "CHILD-ONE: make one", None),
            task("t2", "CHILD-TWO: make two", None),
        ]),
        Reply::text("parent done"),
    ]);
    for (name, file) in [("CHILD-ONE", "one.txt"), ("CHILD-TWO", "two.txt")] {
        server.script_for(
            name,
            vec![
                Reply::tool_calls(vec![(
                    "b",
                    "bash",
                    json!({"command": format!("touch {file}")}),
                )]),
                Reply::text(&format!("{name} finished")),
            ],
        );
    }
    let mut s = repl(&p, &server, &["--sandbox", "off"]);
    expect(&mut s, "> ");
    s.send_line("make both").unwrap();
    expect(&mut s, "asked by sub-agent general-purpose: job t");
    expect(&mut s, "allow?");
    // The other child asks while this question is open: it waits, and says so.
    expect(&mut s, "(1 more question waiting)");
    s.send("1").unwrap();
    s.flush().unwrap();
    expect(&mut s, "asked by sub-agent general-purpose: job t");
    expect(&mut s, "allow?");
    s.send("1").unwrap();
    s.flush().unwrap();
    expect(&mut s, "parent done");
    expect(&mut s, "> ");
    s.send_line("/exit").unwrap();
    s.exp_eof().unwrap();
    let made: Vec<bool> = ["one.txt", "two.txt"]
        .iter()
        .map(|f| p.file(f).exists())
        .collect();
    assert_eq!(made, [true, true]);
    // The parent's next request carried both answers and no line typed ahead was sent.
    let user_lines: Vec<String> = server
        .requests()
        .iter()
        .flat_map(|r| r.messages())
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        user_lines.iter().all(|l| !l.starts_with('1')),
        "{user_lines:?}"
    );
}
