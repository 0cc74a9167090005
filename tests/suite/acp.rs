//! `ling acp` driven by a client no one here wrote the protocol of: the suite's client
//! (`tests/peers/acp_client.mjs`) is built on the published `@agentclientprotocol/sdk` 2.4.0,
//! whose schemas check every message Ling sends. Against the mock model: a prompt with a tool
//! call, permissions answered yes and no, a cancel mid-stream, writes routed through
//! `fs/write_text_file`, a `session/load` from Ling's transcript, the trust question, modes and
//! the model choice, `bash` in the editor's terminal, and the editor's MCP servers.

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::acp::{Transcript, run};
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::peers;
use crate::support::project::Project;

fn root(project: &Project) -> String {
    std::fs::canonicalize(project.path())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The tool message the model was sent for `call_id` in request `index`.
fn tool_result(server: &MockServer, index: usize, call_id: &str) -> String {
    let requests = server.requests();
    let messages = requests[index].messages();
    messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id} in request {index}: {messages:#?}"))
        .to_string()
}

/// The statuses a call went through (a `tool_call` without one is `pending`, the protocol's
/// default, which the wire leaves out).
fn statuses(t: &Transcript, call_id: &str) -> Vec<String> {
    t.call(call_id)
        .iter()
        .filter_map(|u| match u["status"].as_str() {
            Some(status) => Some(status.to_string()),
            None if u["sessionUpdate"] == "tool_call" => Some("pending".to_string()),
            None => None,
        })
        .collect()
}

#[test]
fn initialize_declares_what_ling_does() {
    let project = Project::new();
    let t = run(&project, "http://127.0.0.1:9/v1", &[], json!({"steps": []}));
    assert_eq!(t.initialize["protocolVersion"], 1);
    assert_eq!(t.initialize["agentInfo"]["name"], "ling");
    let caps = &t.initialize["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["mcpCapabilities"], json!({"http": true, "sse": true}));
    assert_eq!(
        t.agent_exit, 0,
        "ling acp ends when the client closes stdin"
    );
}

#[test]
fn a_prompt_streams_a_tool_call_and_the_answer_reading_the_editor_buffer() {
    let project = Project::new();
    project.write("notes.txt", "on disk\n");
    let path = format!("{}/notes.txt", root(&project));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_1", "read_file", json!({"path": "notes.txt"}))]),
        Reply::reasoning_then_text("the file is short", "The notes say hello."),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({
            "capabilities": {"fs": true},
            "buffers": {path.clone(): "unsaved hello\n"},
            "steps": [{"op": "new"}, {"op": "prompt", "text": "what do the notes say?"}],
        }),
    );
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    assert_eq!(t.answer(), "The notes say hello.");
    let thoughts: String = t
        .updates_of("agent_thought_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(thoughts, "the file is short");
    let call = t.call("call_1");
    assert_eq!(call[0]["sessionUpdate"], "tool_call");
    assert_eq!(call[0]["title"], "Read notes.txt");
    assert_eq!(call[0]["kind"], "read");
    assert_eq!(call[0]["rawInput"], json!({"path": "notes.txt"}));
    assert_eq!(call[0]["locations"], json!([{"path": path}]));
    assert_eq!(statuses(&t, "call_1"), ["pending", "completed"]);
    // The model read what the editor holds, not the file on disk.
    let reads = t.entries("fs_read");
    assert_eq!(reads.len(), 1, "{:#?}", t.log);
    assert_eq!(reads[0]["params"]["path"], path);
    assert_eq!(tool_result(&server, 1, "call_1"), "     1\tunsaved hello\n");
    // Updates are typed as the SDK's schema says: every one carries the session id.
    let session = &t.sessions[0];
    for entry in t.entries("update") {
        assert_eq!(&entry["sessionId"], session);
    }
}

#[test]
fn a_write_allowed_goes_to_the_editor_and_one_refused_ends_the_turn() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "hello.txt", "content": "hello\n"}),
        )]),
        Reply::tool_calls(vec![(
            "call_x",
            "write_file",
            json!({"path": "second.txt", "content": "no\n"}),
        )]),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({
            "capabilities": {"fs": true},
            "steps": [
                {"op": "new"},
                {"op": "prompt", "text": "write two files", "answers": ["allow_once", "reject_once"]},
            ],
        }),
    );
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    let asked = t.entries("permission");
    assert_eq!(asked.len(), 2, "{:#?}", t.log);
    let first = &asked[0]["params"];
    assert_eq!(first["toolCall"]["toolCallId"], "call_w");
    assert_eq!(first["toolCall"]["title"], "Write hello.txt");
    let kinds: Vec<&str> = first["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    // A new file: a diff from nothing (no `oldText`).
    assert_eq!(
        first["toolCall"]["content"],
        json!([{"type": "diff", "path": format!("{}/hello.txt", root(&project)), "newText": "hello\n"}])
    );
    // Allowed: the write went to the editor, not to the disk.
    let writes = t.entries("fs_write");
    assert_eq!(writes.len(), 1, "{:#?}", t.log);
    assert_eq!(
        writes[0]["params"]["path"],
        format!("{}/hello.txt", root(&project))
    );
    assert_eq!(writes[0]["params"]["content"], "hello\n");
    assert!(!project.file("hello.txt").exists());
    assert_eq!(
        statuses(&t, "call_w"),
        ["pending", "in_progress", "completed"]
    );
    // Refused: not written anywhere, the call failed, and the turn ended (no third request).
    assert!(!project.file("second.txt").exists());
    assert_eq!(statuses(&t, "call_x"), ["pending", "failed"]);
    assert_eq!(server.requests().len(), 2);
    assert!(
        tool_result(&server, 1, "call_w").starts_with("Created hello.txt"),
        "{}",
        tool_result(&server, 1, "call_w")
    );
}

#[test]
fn without_the_editor_fs_a_write_lands_on_disk() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "hello.txt", "content": "hello\n"}),
        )]),
        Reply::text("done"),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({
            "capabilities": {"fs": false},
            "steps": [{"op": "new"}, {"op": "prompt", "text": "write", "answers": ["allow_always"]}],
        }),
    );
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    assert!(t.entries("fs_write").is_empty());
    assert_eq!(project.read("hello.txt"), "hello\n");
}

#[test]
fn a_cancel_mid_stream_ends_the_prompt_cancelled() {
    let project = Project::new();
    let words: Vec<Value> = (0..40)
        .map(|i| crate::support::mock_openai::chunk(json!({"content": format!("word{i} ")}), None))
        .collect();
    let server = MockServer::start_blocking(vec![
        Reply::chunks(words).chunk_delay(Duration::from_millis(100)),
        Reply::text("after the cancel"),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [
            {"op": "new"},
            {"op": "prompt", "text": "talk", "cancelAfterChunks": 2},
            {"op": "prompt", "text": "again"},
        ]}),
    );
    assert_eq!(t.stop_reasons(), ["cancelled", "end_turn"]);
    let prompts = t.responses("prompt");
    let cancel = t.entries("cancel")[0]["at"].as_f64().unwrap();
    let answered = prompts[0]["at"].as_f64().unwrap();
    assert!(
        answered - cancel < 1500.0,
        "the prompt answered {} ms after the cancel",
        answered - cancel
    );
    let answer = t.answer();
    assert!(answer.starts_with("word0 word1 "), "{answer}");
    assert!(!answer.contains("word39"), "the stream went on: {answer}");
    assert!(answer.ends_with("after the cancel"), "{answer}");
}

#[test]
fn a_session_loads_from_its_transcript() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_g", "glob", json!({"pattern": "*.md"}))]),
        Reply::text("There is one."),
        Reply::text("Still one."),
    ]);
    project.write("README.md", "# hi\n");
    let first = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [{"op": "new"}, {"op": "prompt", "text": "any markdown?"}]}),
    );
    let id = first.sessions[0].clone();
    let second = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [
            {"op": "load", "sessionId": id},
            {"op": "prompt", "text": "and now?"},
        ]}),
    );
    let load = second.responses("load");
    assert!(load[0].get("error").is_none(), "{load:#?}");
    assert_eq!(load[0]["result"]["modes"]["currentModeId"], "default");
    // The history was replayed before the load answered.
    let load_at = load[0]["at"].as_f64().unwrap();
    let replayed: Vec<&Value> = second
        .entries("update")
        .into_iter()
        .filter(|e| e["at"].as_f64().unwrap() <= load_at)
        .map(|e| &e["update"])
        .collect();
    let kinds: Vec<&str> = replayed
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .filter(|k| *k != "config_option_update")
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    assert_eq!(replayed[0]["content"]["text"], "any markdown?");
    assert_eq!(replayed[1]["title"], "glob *.md");
    assert_eq!(replayed[3]["content"]["text"], "There is one.");
    assert_eq!(second.stop_reasons(), ["end_turn"]);
    // The model got the whole conversation back, under the same session.
    let last = server.requests().last().unwrap().messages();
    let texts: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(texts, ["any markdown?", "and now?"]);
    let transcript = project.home.path().join(format!("sessions/{id}.jsonl"));
    assert!(
        std::fs::read_to_string(transcript)
            .unwrap()
            .contains("and now?")
    );

    // An id that was never recorded is an error the client sees.
    let missing = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [{"op": "load", "sessionId": "0000-nope"}]}),
    );
    let error = &missing.responses("load")[0]["error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no session 0000-nope"),
        "{error}"
    );
}

/// A project whose settings allow `write_file` without asking: once trusted, the call runs
/// without a question; untrusted, it asks.
fn project_allowing_writes() -> Project {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        r#"{"permissions": {"allow": ["write_file"]}}"#,
    );
    project
}

fn trust_then_write(answer: &str, write_answer: Option<&str>) -> (Project, Transcript) {
    let project = project_allowing_writes();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text("ok"),
    ]);
    // A refused write ends the turn before the answer.
    if write_answer == Some("reject_once") {
        server.expect_unasked(1);
    }
    let mut answers = vec![answer];
    answers.extend(write_answer);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [{"op": "new"}, {"op": "prompt", "text": "write", "answers": answers}]}),
    );
    (project, t)
}

#[test]
fn the_trust_question_is_a_permission_request() {
    let (project, t) = trust_then_write("allow_always", None);
    let asked = t.entries("permission");
    assert_eq!(asked.len(), 1, "only the trust question: {:#?}", t.log);
    let question = &asked[0]["params"]["toolCall"];
    assert_eq!(question["title"], "Trust this folder's project config?");
    // It lists what the REPL's question lists: here the allow rule the settings add.
    let listed = question["content"][0]["content"]["text"].as_str().unwrap();
    assert!(listed.contains("settings.json"), "{listed}");
    assert!(listed.contains("permissions.allow"), "{listed}");
    assert!(listed.contains("write_file"), "{listed}");
    // Trusted: recorded, and the project's allow rule let the write run unasked.
    let trust = std::fs::read_to_string(project.home.path().join("trust.json")).unwrap();
    assert!(trust.contains(&root(&project)), "{trust}");
    assert_eq!(project.read("a.txt"), "a\n");
    assert_eq!(t.stop_reasons(), ["end_turn"]);

    // Not trusted: nothing recorded, the project's rule is skipped, so the write asks.
    let (project, t) = trust_then_write("reject_once", Some("reject_once"));
    let asked = t.entries("permission");
    assert_eq!(asked.len(), 2, "{:#?}", t.log);
    assert_eq!(asked[1]["params"]["toolCall"]["toolCallId"], "call_w");
    assert!(!project.home.path().join("trust.json").exists());
    assert!(!project.file("a.txt").exists());
}

#[test]
fn modes_and_the_model_choice() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text("planned"),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &["--model", "first-model"],
        json!({"steps": [
            {"op": "new"},
            {"op": "set_mode", "mode": "plan"},
            {"op": "set_model", "model": "second-model"},
            {"op": "prompt", "text": "make a plan"},
            {"op": "set_mode", "mode": "no-such-mode"},
        ]}),
    );
    let new = &t.responses("new")[0]["result"];
    let ids: Vec<&str> = new["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["default", "accept-edits", "plan", "bypass", "dont-ask"]
    );
    assert_eq!(new["configOptions"][1]["currentValue"], "first-model");
    let mode_updates = t.updates_of("current_mode_update");
    assert_eq!(mode_updates[0]["currentModeId"], "plan");
    let set_model = &t.responses("set_model")[0]["result"];
    assert_eq!(
        set_model["configOptions"][1]["currentValue"],
        "second-model"
    );
    // Plan mode denies the write without a question; the model asked for is the one used.
    assert!(t.entries("permission").is_empty());
    assert!(!project.file("a.txt").exists());
    assert_eq!(statuses(&t, "call_w"), ["pending", "failed"]);
    assert_eq!(server.requests()[0].body["model"], "second-model");
    let error = &t.responses("set_mode")[1]["error"];
    assert_eq!(error["code"], -32602, "{error}");
}

/// Runs `command` as the model's one `bash` call in a client that offers terminals, with
/// `ling acp ARGS`; the transcript, the server, and the arguments of the terminal it made.
fn bash_in_a_terminal(
    project: &Project,
    args: &[&str],
    command: &str,
) -> (Transcript, MockServer, Vec<String>) {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("call_b", "bash", json!({"command": command}))]),
        Reply::text("ran"),
    ]);
    let t = run(
        project,
        &server.base_url(),
        args,
        json!({
            "capabilities": {"terminal": true},
            "steps": [{"op": "new"}, {"op": "prompt", "text": "run it"}],
        }),
    );
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    let created = t.entries("terminal_create");
    assert_eq!(created.len(), 1, "{:#?}", t.log);
    assert_eq!(created[0]["params"]["command"], "env");
    assert_eq!(created[0]["params"]["cwd"], root(project));
    let argv = created[0]["params"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    (t, server, argv)
}

#[test]
fn bash_runs_in_the_editor_terminal() {
    let project = Project::new();
    let command = "echo from-the-terminal; exit 3";
    let (t, server, args) = bash_in_a_terminal(
        &project,
        &["--sandbox", "off", "--permission-mode", "bypass"],
        command,
    );
    assert_eq!(args[args.len() - 3..], ["bash", "-c", command]);
    assert!(
        args.windows(2).any(|w| w == ["-u", "OPENAI_API_KEY"]),
        "{args:?}"
    );
    // The call shows the terminal, before and after it ends.
    let call = t.call("call_b");
    let terminal = json!([{"type": "terminal", "terminalId": "term-1"}]);
    assert!(call.iter().any(|u| u["content"] == terminal), "{call:#?}");
    assert_eq!(call.last().unwrap()["content"], terminal);
    assert_eq!(t.entries("terminal_release").len(), 1);
    assert_eq!(
        tool_result(&server, 1, "call_b"),
        "from-the-terminal\nExit code: 3"
    );
}

#[test]
fn a_sandboxed_bash_in_the_editor_terminal_keeps_the_sandbox() {
    let project = Project::new();
    let (_, server, args) = bash_in_a_terminal(
        &project,
        &["--sandbox", "read-only", "--permission-mode", "bypass"],
        "echo x > written.txt",
    );
    assert!(
        args.windows(5)
            .any(|w| w == ["sandbox", "run", "--mode", "read-only", "-C"]),
        "{args:?}"
    );
    assert!(
        !project.file("written.txt").exists(),
        "the read-only sandbox let the write through"
    );
    let result = tool_result(&server, 1, "call_b");
    assert!(!result.ends_with("Exit code: 0"), "{result}");
}

#[test]
fn the_editor_terminal_gets_the_exact_policy_with_its_protected_paths() {
    let project = Project::new();
    project.write(".git/HEAD", "ref: refs/heads/main\n");
    let (_, _server, args) = bash_in_a_terminal(
        &project,
        &[
            "--sandbox",
            "workspace-write",
            "--permission-mode",
            "bypass",
        ],
        "echo a > ok.txt; echo b > .git/planted; true",
    );
    assert!(args.iter().any(|a| a == "--exact"), "{args:?}");
    let protect = args
        .windows(2)
        .filter(|w| w[0] == "--protect")
        .map(|w| w[1].clone())
        .collect::<Vec<_>>();
    assert!(
        protect.iter().any(|p| p.ends_with("/.git")),
        "the terminal's policy does not keep .git read-only: {args:?}"
    );
    assert!(project.file("ok.txt").exists(), "the root is not writable");
    assert!(
        !project.file(".git/planted").exists(),
        "the editor terminal wrote into the protected .git"
    );
}

#[test]
fn the_editors_mcp_servers_join_the_session() {
    let project = Project::new();
    let server_bin = peers::example("mcp-test-server");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_e",
            "mcp__editor__echo",
            json!({"text": "through the editor's server"}),
        )]),
        Reply::text("echoed"),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &["--permission-mode", "bypass"],
        json!({"steps": [
            {"op": "new", "mcpServers": [
                {"name": "editor", "command": server_bin, "args": [], "env": []},
                {"name": "bad__name", "command": server_bin, "args": [], "env": []},
            ]},
            {"op": "prompt", "text": "echo"},
        ]}),
    );
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    let tools = server.requests()[0].tool_names();
    assert!(
        tools.contains(&"mcp__editor__echo".to_string()),
        "{tools:?}"
    );
    assert_eq!(
        tool_result(&server, 1, "call_e"),
        "through the editor's server"
    );
    assert_eq!(t.call("call_e")[0]["title"], "editor: echo");
    assert!(t.agent_stderr.contains("bad__name"), "{}", t.agent_stderr);
    // The session's server file is gone with the session.
    let left = std::fs::read_dir(project.home.path().join("acp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0);
}

/// The model reads `sub/notes.txt` and edits it through the editor (which saves to disk,
/// following links as editors do); with `swap`, the editor's read number `swap` is followed by
/// a command's swap of `sub` for a link to a folder outside the project.
fn edit_through_the_editor(
    swap: Option<u64>,
) -> (Project, tempfile::TempDir, Transcript, MockServer) {
    let project = Project::new();
    project.write("sub/notes.txt", "old\n");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("notes.txt"), "old\n").unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_r",
            "read_file",
            json!({"path": "sub/notes.txt"}),
        )]),
        Reply::tool_calls(vec![(
            "call_e",
            "edit_file",
            json!({"path": "sub/notes.txt", "old_string": "old", "new_string": "new"}),
        )]),
        Reply::text("edited"),
    ]);
    let mut scenario = json!({
        "capabilities": {"fs": true},
        "saveToDisk": true,
        "steps": [{"op": "new"}, {"op": "prompt", "text": "edit the notes"}],
    });
    if let Some(read) = swap {
        scenario["swapOnRead"] = json!({
            "read": read,
            "path": format!("{}/sub", root(&project)),
            "target": outside.path(),
        });
    }
    let t = run(
        &project,
        &server.base_url(),
        &["--permission-mode", "accept-edits", "--sandbox", "off"],
        scenario,
    );
    (project, outside, t, server)
}

#[test]
fn an_editor_write_is_checked_when_sent_and_never_follows_a_link_swapped_in() {
    // Without a swap the edit reaches the editor, which saves it.
    let (project, _outside, t, server) = edit_through_the_editor(None);
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    assert_eq!(project.read("sub/notes.txt"), "new\n");
    let reads = t.entries("fs_read").len() as u64;
    assert!(
        tool_result(&server, 2, "call_e").starts_with("Edited sub/notes.txt"),
        "{}",
        tool_result(&server, 2, "call_e")
    );

    // The same edit, with `sub` swapped for a link out of the project after the edit's own
    // read (the last read before the write): the write is refused, nothing outside changes.
    let (project, outside, t, server) = edit_through_the_editor(Some(reads));
    assert_eq!(t.entries("swapped").len(), 1, "{:#?}", t.log);
    assert!(
        t.entries("fs_write").is_empty(),
        "{:#?}",
        t.entries("fs_write")
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("notes.txt")).unwrap(),
        "old\n",
        "the editor's save followed the link out of the project"
    );
    assert_eq!(project.read("sub.moved/notes.txt"), "old\n");
    let result = tool_result(&server, 2, "call_e");
    assert!(result.contains("symbolic link"), "{result}");
    assert_eq!(statuses(&t, "call_e").last().unwrap(), "failed");
}

/// A session of project `first`, recorded there; then `ling acp` in `second` (same
/// `LING_HOME`) asked to load or resume it with `second` as its cwd.
#[test]
fn a_session_of_another_project_is_not_loaded_or_resumed() {
    let first = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("hello"), Reply::text("again")]);
    let recorded = run(
        &first,
        &server.base_url(),
        &[],
        json!({"steps": [{"op": "new"}, {"op": "prompt", "text": "hi"}]}),
    );
    let id = recorded.sessions[0].clone();
    let other = tempfile::tempdir().unwrap();
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    let t = run(
        &first,
        &server.base_url(),
        &[],
        json!({"steps": [
            {"op": "load", "sessionId": id, "cwd": other_root},
            {"op": "resume", "sessionId": id, "cwd": other_root},
            {"op": "resume", "sessionId": id},
            {"op": "prompt", "sessionId": id, "text": "still there?"},
        ]}),
    );
    for op in ["load", "resume"] {
        let response = &t.responses(op)[0];
        let message = response["error"]["message"].as_str().unwrap_or_else(|| {
            panic!("{op} of another project's session was not refused: {response:#}")
        });
        assert!(
            message.contains(&format!(
                "session {id} was recorded for the project {}",
                root(&first)
            )) && message.contains(&other_root.display().to_string()),
            "{message}"
        );
    }
    // In its own project the same session resumes and answers.
    let resumed = &t.responses("resume")[1];
    assert!(resumed.get("error").is_none(), "{resumed:#}");
    assert_eq!(t.stop_reasons(), ["end_turn"]);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn rewind_is_offered_as_a_command_and_puts_back_a_prompts_writes() {
    let project = Project::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "call_w",
            "write_file",
            json!({"path": "hello.txt", "content": "hello\n"}),
        )]),
        Reply::text("done"),
    ]);
    let t = run(
        &project,
        &server.base_url(),
        &[],
        json!({
            "capabilities": {"fs": false},
            "steps": [
                {"op": "new"},
                {"op": "prompt", "text": "write", "answers": ["allow_always"]},
                {"op": "prompt", "text": "/rewind 1"},
            ],
        }),
    );
    let offered = t.updates_of("available_commands_update");
    let names: Vec<String> = offered
        .iter()
        .flat_map(|u| {
            u["availableCommands"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    assert!(names.iter().any(|n| n == "rewind"), "{offered:?}");
    assert_eq!(t.stop_reasons(), ["end_turn", "end_turn"]);
    assert!(
        t.answer().contains("Rewound to just before message 1"),
        "{}",
        t.answer()
    );
    assert!(!project.file("hello.txt").exists());
    // The rewind is Ling's: the model was asked only for the first prompt.
    assert_eq!(server.requests().len(), 2);
}
