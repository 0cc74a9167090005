//! Background commands through the real binary (issue 33, item 4): `bash` with
//! `run_in_background` returns at once with an id, `bash_output` reads what the command printed
//! since the last read (all of it, or the lines a filter keeps), `kill_shell` ends its process
//! group; what is left ends with the session, and with Ling on SIGKILL; the sandbox applies; hooks
//! see the tools by Claude Code's names with Claude's fields. Each waits on files the commands
//! write, never on a sleep.

use crate::suite::sandbox_doors::{Door, User};
use crate::support::hooks_e2e;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::process;
use crate::support::project::{Project, run};

use std::time::Duration;

use serde_json::{Value, json};

/// A foreground command that waits until the background command `id`'s spill file (in the
/// run's `TMPDIR`) holds `needle`.
fn wait_in_spill(id: &str, needle: &str) -> Value {
    json!({"command": format!(
        "until grep -qs '{needle}' \"$TMPDIR\"/ling-bg-*/{id}.log; do sleep 0.02; done; echo seen"
    )})
}

/// The tool results the last request carried, in order.
fn tool_results(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .last()
        .expect("no request")
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn project_with_tmp() -> (Project, tempfile::TempDir) {
    (Project::new(), tempfile::tempdir().unwrap())
}

#[test]
fn a_background_command_returns_at_once_is_read_since_the_last_read_and_killed() {
    let (project, tmp) = project_with_tmp();
    let killed_pid = project.path().join("killed.pid");
    let left_pid = project.path().join("left.pid");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            (
                "b1",
                "bash",
                json!({"command": "echo $$ > killed.pid; echo hello; echo world; exec sleep 1000", "run_in_background": true}),
            ),
            (
                "b2",
                "bash",
                json!({"command": "echo $$ > left.pid; exec sleep 1000", "run_in_background": true}),
            ),
        ]),
        Reply::tool_calls(vec![("w", "bash", wait_in_spill("bash_1", "world"))]),
        Reply::tool_calls(vec![("o1", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("o2", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("k", "kill_shell", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("o3", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("o4", "bash_output", json!({"id": "bash_9"}))]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--allowed-tools", "bash"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server);
    let [started, _second, seen, first, second, kill, after, unknown] = &results[..] else {
        panic!("{results:#?}");
    };
    assert!(
        started.starts_with("Started in the background.\nid: bash_1\noutput file: "),
        "{started}"
    );
    assert_eq!(seen.trim_end(), "seen\nExit code: 0");
    assert!(first.contains("state: running\n"), "{first}");
    assert!(first.ends_with("hello\nworld\n"), "{first}");
    assert!(second.ends_with("(no new output)"), "{second}");
    assert!(kill.contains("killed `echo $$ > killed.pid"), "{kill}");
    assert!(after.contains("state: killed (SIGTERM)"), "{after}");
    assert!(
        unknown.contains("no background command has the id \"bash_9\"; there are bash_1, bash_2"),
        "{unknown}"
    );
    let killed = process::read_pid(&killed_pid, "bash_1 wrote no pid");
    let left = process::read_pid(&left_pid, "bash_2 wrote no pid");
    assert!(
        process::gone_within(killed, Duration::from_secs(5)),
        "kill_shell left {killed}"
    );
    // Never killed: it ended with the session.
    assert!(
        process::gone_within(left, Duration::from_secs(5)),
        "bash_2 (pid {left}) outlived the session"
    );
}

#[test]
fn a_filter_returns_only_the_matching_lines_and_consumes_the_rest() {
    let (project, tmp) = project_with_tmp();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "for i in 1 2 3; do echo line$i; done; echo 'ERROR boom'; echo end", "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![("w", "bash", wait_in_spill("bash_1", "end"))]),
        Reply::tool_calls(vec![(
            "o1",
            "bash_output",
            json!({"id": "bash_1", "filter": "ERROR|line2"}),
        )]),
        Reply::tool_calls(vec![("o2", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![(
            "o3",
            "bash_output",
            json!({"id": "bash_1", "filter": "("}),
        )]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--allowed-tools", "bash"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server);
    let filtered = &results[2];
    assert!(filtered.ends_with("\nline2\nERROR boom\n"), "{filtered}");
    assert!(!filtered.contains("line1"), "{filtered}");
    assert!(results[3].ends_with("(no new output)"), "{}", results[3]);
    assert!(
        results[4].contains("filter is not a valid regular expression"),
        "{}",
        results[4]
    );
    // The output file the result names holds all of it, and read_file may read it.
    let file = results[2]
        .lines()
        .find_map(|l| l.strip_prefix("output file: "))
        .and_then(|l| l.split(" (").next())
        .expect("no output file named");
    assert!(
        file.starts_with(&tmp.path().to_string_lossy().to_string()),
        "{file}"
    );
}

#[test]
fn read_file_reads_a_background_commands_output_file_and_nothing_else_outside_the_root() {
    let (project, tmp) = project_with_tmp();
    let session = "5b0d7c7e-0f6a-4c36-9a0e-3d1f3c0f2a11";
    let spill = tmp.path().join(format!("ling-bg-{session}/bash_1.log"));
    let beside = tmp.path().join("beside.log");
    std::fs::write(&beside, "not a spill file").unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo read-me-back", "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![("w", "bash", wait_in_spill("bash_1", "read-me-back"))]),
        Reply::tool_calls(vec![(
            "r1",
            "read_file",
            json!({"path": spill.to_string_lossy()}),
        )]),
        Reply::tool_calls(vec![(
            "r2",
            "read_file",
            json!({"path": beside.to_string_lossy()}),
        )]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path()).args([
        "-p",
        "go",
        "--allowed-tools",
        "bash",
        "--session-id",
        session,
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server);
    assert!(
        results[0].contains(&spill.to_string_lossy().to_string()),
        "{}",
        results[0]
    );
    assert!(results[2].contains("read-me-back"), "{}", results[2]);
    assert!(
        results[3].contains("outside the project root"),
        "{}",
        results[3]
    );
    // The spill files go with the session.
    assert!(
        !spill.exists(),
        "{} is left after the session",
        spill.display()
    );
}

/// A background command in the default sandbox as `user`: its write outside the root is
/// refused (and said in its output) while its write inside goes through; with the sandbox
/// off the same write outside lands.
fn sandbox_case(user: User, off: bool) {
    let door = Door::new(user);
    let escaped = door.s.outside("escaped");
    let command = format!(
        "echo x > '{}'; echo inside > in.txt; echo finished",
        escaped.display()
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": command, "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![("w", "bash", wait_in_spill("bash_1", "finished"))]),
        Reply::tool_calls(vec![("o", "bash_output", json!({"id": "bash_1"}))]),
        Reply::text("done"),
    ]);
    let mut args = vec!["-p", "go"];
    if off {
        args.extend(crate::suite::sandbox_doors::OFF);
    }
    let out = run(door.command(&server.base_url(), &args));
    assert_eq!(out.code, Some(0), "{user:?}: {}", out.stderr);
    let read = &tool_results(&server)[2];
    assert!(door.s.project.file("in.txt").exists(), "{user:?}: {read}");
    if off {
        assert!(escaped.exists(), "{user:?}: with the sandbox off: {read}");
    } else {
        assert!(
            !escaped.exists(),
            "{user:?}: the background write got out: {read}"
        );
        assert!(
            read.contains("Permission denied") || read.contains("Read-only file system"),
            "{user:?}: {read}"
        );
    }
}

#[test]
fn the_sandbox_applies_to_a_background_command_as_root_and_as_a_user() {
    for user in [User::Root, User::Uid1000] {
        sandbox_case(user, false);
        sandbox_case(user, true);
    }
}

#[test]
fn hooks_of_a_claude_code_file_see_bash_output_and_kill_shell_by_claudes_names_and_fields() {
    let project = Project::new();
    let log = hooks_e2e::script(&project, "log.sh", "cat >> hook.log; echo >> hook.log");
    project.write(
        ".claude/settings.json",
        &json!({"hooks": {"PreToolUse": hooks_e2e::group("BashOutput|KillShell", &log)}})
            .to_string(),
    );
    project.trust();
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "exec sleep 1000", "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![("o", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("k", "kill_shell", json!({"id": "bash_1"}))]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--allowed-tools", "bash"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let seen: Vec<Value> = project
        .read("hook.log")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<(&str, &Value)> = seen
        .iter()
        .map(|v| {
            (
                v["tool_name"].as_str().unwrap_or_default(),
                &v["tool_input"],
            )
        })
        .collect();
    // Bash itself is not matched: the matcher names only the two.
    assert_eq!(names.len(), 2, "{seen:#?}");
    assert_eq!(names[0].0, "BashOutput");
    assert_eq!(names[0].1["bash_id"], json!("bash_1"));
    assert_eq!(names[1].0, "KillShell");
    assert_eq!(names[1].1["shell_id"], json!("bash_1"));
}

#[test]
fn a_background_command_ends_when_ling_is_killed_with_sigkill() {
    let (project, tmp) = project_with_tmp();
    let bg_pid = project.path().join("bg.pid");
    let fg_pid = project.path().join("fg.pid");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true}),
        )]),
        // The run is held here, in a foreground command, while Ling is killed.
        Reply::tool_calls(vec![(
            "f",
            "bash",
            json!({"command": "echo $$ > fg.pid; exec sleep 300"}),
        )]),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--allowed-tools", "bash"]);
    let mut ling = process::spawn_captured(cmd);
    let bg = process::read_pid(&bg_pid, "the background command never started");
    let fg = process::read_pid(&fg_pid, "the foreground command never started");
    let _cleanup = KillOnDrop(vec![bg, fg]);
    process::wait_for("the background sleep is not running yet", || {
        let cmdline = std::fs::read(format!("/proc/{bg}/cmdline")).unwrap_or_default();
        cmdline.starts_with(b"sleep\0").then_some(())
    });
    // The foreground call is running: the background one outlived its own call.
    assert!(process::alive(bg), "the background command ended early");
    ling.kill().expect("kill -9 ling");
    let _ = ling.wait();
    assert!(
        process::gone_within(bg, Duration::from_secs(5)),
        "the background `sleep 300` (pid {bg}) outlived kill -9 of Ling"
    );
}

/// SIGKILLs the pids when dropped, so a failing test leaves nothing running behind it.
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[test]
fn in_print_mode_a_command_past_its_timeout_is_killed_as_before() {
    let (project, tmp) = project_with_tmp();
    let pid_file = project.path().join("slow.pid");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "s",
            "bash",
            json!({"command": "echo $$ >slow.pid; exec sleep 1000", "timeout_ms": 300}),
        )]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("TMPDIR", tmp.path())
        .args(["-p", "go", "--allowed-tools", "bash"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let result = &tool_results(&server)[0];
    assert!(
        result.contains("command timed out after 300 ms"),
        "{result}"
    );
    let pid = process::read_pid(&pid_file, "the slow command wrote no pid");
    assert!(process::gone_within(pid, Duration::from_secs(5)));
}

#[test]
fn through_the_agent_sdk_a_background_command_is_started_read_and_killed() {
    use crate::suite::claude_sdk::{messages, of_type, sdk};
    let (project, _tmp) = project_with_tmp();
    let pid_file = project.path().join("sdk-bg.pid");
    // A marker of this run's own: the spill folders of other runs share the temp dir.
    let marker = format!(
        "from-the-background-{}",
        project.path().file_name().unwrap().to_string_lossy()
    );
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "b1",
            "bash",
            json!({"command": format!("echo $$ > sdk-bg.pid; echo {marker}; exec sleep 1000"),
                   "run_in_background": true}),
        )]),
        Reply::tool_calls(vec![(
            "w",
            "bash",
            json!({"command": format!(
                "until grep -qs {marker} \"${{TMPDIR:-/tmp}}\"/ling-bg-*/bash_1.log; do sleep 0.02; done; echo seen"
            )}),
        )]),
        Reply::tool_calls(vec![("o", "bash_output", json!({"id": "bash_1"}))]),
        Reply::tool_calls(vec![("k", "kill_shell", json!({"id": "bash_1"}))]),
        Reply::text("SDK-BG-DONE"),
    ]);
    // The program allows them by Claude Code's names.
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": ["start it"],
               "options": {"allowedTools": ["Bash", "BashOutput", "KillShell"]}}),
    );
    let messages = messages(&lines);
    let results = of_type(&messages, "result");
    assert_eq!(results.len(), 1, "{messages:#?}");
    assert_eq!(results[0]["subtype"], json!("success"));
    assert_eq!(results[0]["result"], json!("SDK-BG-DONE"));
    let tool_text = serde_json::to_string(&of_type(&messages, "user")).unwrap();
    assert!(
        tool_text.contains("id: bash_1") && tool_text.contains(&marker),
        "{tool_text}"
    );
    assert!(
        tool_text.contains("killed `echo $$ > sdk-bg.pid"),
        "{tool_text}"
    );
    let pid = process::read_pid(&pid_file, "the background command wrote no pid");
    assert!(
        process::gone_within(pid, Duration::from_secs(5)),
        "the background command (pid {pid}) outlived kill_shell"
    );
}
