//! What bounds a run bounds its sub-agents too, through the real binary: a command's or a
//! loaded skill's `allowed-tools` (with its argument rules) binds the `task` children it
//! starts, a mode change of the session (stream-json's `set_permission_mode`) judges the next
//! call of a child already running, and `--max-turns` counts every agent's requests. Also the
//! driver's changed input (`updatedInput` of `can_use_tool`), checked again before it runs.
//! Each with its negative.

use crate::support::stream_json::StreamSession;
use crate::support::{mock_openai, project};

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use mock_openai::{MockServer, Recorded, Reply};
use project::{Project, run};
use serde_json::{Value, json};

fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

fn task(id: &str, prompt: &str) -> (&'static str, String, Value) {
    (
        "task",
        id.to_string(),
        json!({"description": format!("job {id}"), "prompt": prompt}),
    )
}

fn calls(calls: Vec<(&'static str, String, Value)>) -> Reply {
    Reply::tool_calls(
        calls
            .iter()
            .map(|(name, id, input)| (id.as_str(), *name, input.clone()))
            .collect(),
    )
}

/// A child that tries a command outside `git status`, then answers.
fn script_toucher(server: &MockServer, needle: &str) {
    server.script_for(
        needle,
        vec![
            Reply::tool_calls(vec![
                ("s", "bash", json!({"command": "git status"})),
                ("b", "bash", json!({"command": "touch made.txt"})),
            ]),
            Reply::text("child done"),
        ],
    );
}

#[test]
fn a_command_s_or_a_skill_s_allowed_tools_bind_the_sub_agents_it_starts() {
    let p = Project::new();
    p.write(
        ".ling/commands/st.md",
        "---\nallowed-tools: Bash(git status:*), Task\n---\nCheck the status.\n",
    );
    p.write(
        ".ling/skills/look/SKILL.md",
        "---\nname: look\ndescription: Looks\nallowed-tools: Bash(git status:*), Task\n---\n\
         LOOK-BODY\n",
    );
    p.trust();
    let flags = ["--permission-mode", "bypass", "--sandbox", "off"];

    // The command's child: offered bash alone, and only as `git status`.
    let server = MockServer::start_blocking(vec![
        calls(vec![task("t1", "CHILD-C: look")]),
        Reply::text("done"),
    ]);
    script_toucher(&server, "CHILD-C");
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/st"]).args(flags);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let child = server.requests_for("CHILD-C");
    assert_eq!(child[0].tool_names(), ["bash"]);
    let results = tool_results(&child[1]);
    assert!(!results[0].contains("not allowed"), "{results:?}");
    assert!(
        results[1].starts_with(
            "Error: not allowed: /st's allowed-tools allows bash only as Bash(git status:*)"
        ),
        "{results:?}"
    );
    assert!(
        !p.file("made.txt").exists(),
        "the command's child ran other bash"
    );

    // A loaded skill's narrowing binds a child started after it.
    let server = MockServer::start_blocking(vec![
        calls(vec![("skill", "k".into(), json!({"name": "look"}))]),
        calls(vec![task("t2", "CHILD-K: look")]),
        Reply::text("done"),
    ]);
    script_toucher(&server, "CHILD-K");
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "use the look skill"]).args(flags);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let results = tool_results(&server.requests_for("CHILD-K")[1]);
    assert!(
        results[1].contains("the look skill's allowed-tools allows bash only as"),
        "{results:?}"
    );
    assert!(
        !p.file("made.txt").exists(),
        "the skill's child ran other bash"
    );

    // Negative: the same child of a plain prompt runs it.
    let server = MockServer::start_blocking(vec![
        calls(vec![task("t3", "CHILD-P: look")]),
        Reply::text("done"),
    ]);
    script_toucher(&server, "CHILD-P");
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "delegate"]).args(flags);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(server.requests_for("CHILD-P")[0].tool_names().len() > 1);
    assert!(
        p.file("made.txt").exists(),
        "a plain child could not run bash"
    );
}

/// A child whose first call waits on the fifo `gate` and whose second writes `made.txt`, run
/// in bypass; with `to_plan` the session switches to plan while the first call waits.
fn child_across_a_mode_change(to_plan: bool) -> (Project, MockServer) {
    let p = Project::new();
    nix::unistd::mkfifo(&p.file("gate"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let server = MockServer::start_blocking(vec![
        calls(vec![task("t1", "CHILD-M: work")]),
        Reply::text("done"),
    ]);
    server.script_for(
        "CHILD-M",
        vec![
            Reply::tool_calls(vec![(
                "wait",
                "bash",
                json!({"command": "read line < gate"}),
            )]),
            Reply::tool_calls(vec![(
                "w",
                "write_file",
                json!({"path": "made.txt", "content": "x\n"}),
            )]),
            Reply::text("child done"),
        ],
    );
    let mut session = StreamSession::start(
        &p,
        &server,
        &["--permission-mode", "bypass", "--sandbox", "off"],
    );
    session.prompt("delegate");
    // The child's first call runs: its command has the gate open, waiting for a line (a
    // non-blocking open: a command that never starts fails the wait instead of hanging).
    let mut gate =
        crate::support::process::wait_for("the child's command to open the gate", || {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(p.file("gate"))
                .ok()
        });
    if to_plan {
        let answer = session.control(
            "m1",
            json!({"subtype": "set_permission_mode", "mode": "plan"}),
        );
        assert_eq!(answer["subtype"], "success", "{answer}");
    }
    writeln!(gate, "go").unwrap();
    drop(gate);
    let lines = session.read_until(|l| l["type"] == "result");
    assert_eq!(lines.last().unwrap()["subtype"], "success", "{lines:#?}");
    session.finish();
    (p, server)
}

#[test]
fn a_mode_change_of_the_session_reaches_a_sub_agent_already_running() {
    let (p, server) = child_across_a_mode_change(true);
    let results = tool_results(&server.requests_for("CHILD-M")[2]);
    assert!(
        results[1].starts_with("Error: permission denied: plan mode: write_file changes files"),
        "{results:?}"
    );
    assert!(!p.file("made.txt").exists(), "the child wrote in plan mode");
    // Negative: without the change the child's write runs in bypass.
    let (p, _) = child_across_a_mode_change(false);
    assert_eq!(p.read("made.txt"), "x\n");
}

/// `-p delegate` whose model starts `n` children at once, each scripted to glob then answer.
fn many_children(p: &Project, n: usize, max_turns: &str) -> (MockServer, project::Output) {
    let tasks: Vec<_> = (0..n)
        .map(|i| task(&format!("t{i}"), &format!("CHILD-{i:02}: look")))
        .collect();
    let server = MockServer::start_blocking(vec![calls(tasks), Reply::text("all done")]);
    for i in 0..n {
        server.script_for(
            &format!("CHILD-{i:02}:"),
            vec![
                Reply::tool_calls(vec![("g", "glob", json!({"pattern": "*.txt"}))]),
                Reply::text("child answer"),
            ],
        );
    }
    let mut cmd = p.command(&server.base_url());
    cmd.args([
        "-p",
        "delegate",
        "--output-format",
        "json",
        "--max-turns",
        max_turns,
    ]);
    let out = run(cmd);
    (server, out)
}

#[test]
fn max_turns_counts_the_requests_of_every_agent_of_the_run() {
    let p = Project::new();
    // 50 children under --max-turns 5: the parent's request and four children's, no more.
    // The first four children started (four run at once) are stopped before their second.
    let (server, out) = many_children(&p, 50, "5");
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(server.requests().len(), 5);
    server.expect_unasked(50 * 2 - 4 + 1);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_turns", "{result}");
    assert_eq!(result["num_turns"], 1);
    let text = result["result"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("stopped after 5 model requests, 4 of them by sub-agents"),
        "{text}"
    );
    // Negative: a limit above what they need lets all fifty finish.
    let (server, out) = many_children(&p, 50, "200");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(server.requests().len(), 2 + 50 * 2);
    assert_eq!(out.json()["subtype"], "success");
}

/// A stream-json session asked through `can_use_tool`, whose driver allows the model's call
/// with `updated` instead; returns the lines up to the question that follows the answer (the
/// next `can_use_tool`, or the `result`).
fn driver_rewrites(p: &Project, server: &MockServer, extra: &[&str], updated: Value) -> Vec<Value> {
    let mut args = vec!["--permission-prompt-tool", "stdio", "--sandbox", "off"];
    args.extend(extra);
    let mut session = StreamSession::start(p, server, &args);
    session.prompt("go");
    let asked = session.read_until(is_question);
    let id = asked.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    session.answer(&id, json!({"behavior": "allow", "updatedInput": updated}));
    let after = session.read_until(|l| is_question(l) || l["type"] == "result");
    if is_question(after.last().unwrap()) {
        let id = after.last().unwrap()["request_id"]
            .as_str()
            .unwrap()
            .to_string();
        session.answer(&id, json!({"behavior": "deny", "message": "not that"}));
        session.read_until(|l| l["type"] == "result");
    }
    session.finish();
    after
}

fn is_question(line: &Value) -> bool {
    line["type"] == "control_request" && line["request"]["subtype"] == "can_use_tool"
}

#[test]
fn the_driver_s_changed_input_is_checked_against_deny_rules_and_protected_paths_again() {
    let ls = || {
        MockServer::start_blocking(vec![
            Reply::tool_calls(vec![("c1", "bash", json!({"command": "ls"}))]),
            Reply::text("done"),
        ])
    };
    let rm = json!({"command": "rm -rf x"});
    // `ls` rewritten into `rm -rf x` under a `Bash(rm:*)` deny rule: refused.
    let p = Project::new();
    p.write("x/keep", "");
    let server = ls();
    driver_rewrites(
        &p,
        &server,
        &["--disallowed-tools", "Bash(rm:*)"],
        rm.clone(),
    );
    let result = &tool_results(&server.requests()[1])[0];
    assert!(
        result.starts_with("Error: permission denied: the permission rule `Bash(rm:*)`"),
        "{result}"
    );
    assert!(p.file("x/keep").exists(), "the rewritten call ran");
    // Negative: without the rule the driver's rewrite runs.
    let server = ls();
    driver_rewrites(&p, &server, &[], rm);
    assert!(!p.file("x").exists(), "the allowed rewrite did not run");

    // A write rewritten onto a protected path is asked about again, with its new input.
    let write = || {
        MockServer::start_blocking(vec![
            Reply::tool_calls(vec![(
                "w1",
                "write_file",
                json!({"path": "a.txt", "content": "x\n"}),
            )]),
            Reply::text("done"),
        ])
    };
    let p = Project::new();
    let server = write();
    let after = driver_rewrites(
        &p,
        &server,
        &[],
        json!({"file_path": ".git/hooks/pre-commit", "content": "x\n"}),
    );
    let asked = &after.last().unwrap()["request"];
    assert!(is_question(after.last().unwrap()), "{after:#?}");
    assert_eq!(asked["input"]["file_path"], ".git/hooks/pre-commit");
    assert!(
        asked["decision_reason"]
            .as_str()
            .is_some_and(|r| r.contains("protected path")),
        "{asked}"
    );
    assert!(!p.file(".git/hooks/pre-commit").exists());
    // Negative: a rewrite onto an ordinary path is not asked about again.
    let server = write();
    let after = driver_rewrites(
        &p,
        &server,
        &[],
        json!({"file_path": "b.txt", "content": "y\n"}),
    );
    assert_eq!(after.last().unwrap()["type"], "result", "{after:#?}");
    assert_eq!(p.read("b.txt"), "y\n");
}
