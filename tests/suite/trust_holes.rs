//! The smaller holes of the trust issue, through the real binary: children (the `bash` tool, a
//! command hook, a stdio MCP server) do not inherit the model API key unless settings
//! `shareApiKeyWithTools`; the `bash` tool's shell and stdio servers die with Ling on `kill -9`;
//! a transcript whose last line was torn is repaired on `--continue`; `-p` stops at its default
//! turn limit; `Retry-After: 0` still backs off, and a huge one is capped; an over-long event-stream
//! line fails at once, without a retry.
//!
//! Everything is configured the user's way (`LING_HOME/settings.json`, `LING_HOME/hooks.json`,
//! `--mcp-config`), which applies in any project, trusted or not.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, process, project};

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mock_openai::{MockServer, Recorded, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

const OPENAI_KEY: &str = "sk-openai-secret-4711";
const OTHER_KEY: &str = "sk-other-secret-0815";
/// A variable that is no key: children must still see it, or the checks prove nothing.
const MARKER: &str = "LING_TEST_VISIBLE=still-here";

fn write_home(project: &Project, name: &str, value: &Value) {
    std::fs::write(project.home.path().join(name), value.to_string())
        .unwrap_or_else(|e| panic!("write {name}: {e}"));
}

/// `ling -p PROMPT` with both keys in its environment and the key variable of the settings
/// named `OTHER_KEY_VAR`.
fn keyed_command(project: &Project, server: &MockServer, settings: Value) -> Command {
    let mut settings = settings;
    settings["apiKeyEnv"] = json!("LING_TEST_OTHER_KEY");
    write_home(project, "settings.json", &settings);
    let mut cmd = project.command(&server.base_url());
    let (marker, value) = MARKER.split_once('=').unwrap_or_default();
    cmd.env("OPENAI_API_KEY", OPENAI_KEY)
        .env("LING_TEST_OTHER_KEY", OTHER_KEY)
        .env(marker, value);
    cmd
}

/// Asserts the environment dump `env` of a child holds neither key, or both when `shared`.
fn assert_keys(env: &str, shared: bool, what: &str) {
    assert!(
        env.contains(MARKER),
        "{what}: not an environment dump:\n{env}"
    );
    for key in [OPENAI_KEY, OTHER_KEY] {
        assert_eq!(
            env.contains(key),
            shared,
            "{what}: key {key} seen = {}, wanted {shared}:\n{env}",
            env.contains(key)
        );
    }
}

/// The content of the tool messages of a recorded request.
fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn bash_env_run(shared: bool) -> String {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "env"}))]),
        Reply::text("done"),
    ]);
    let project = Project::new();
    let settings = json!({"shareApiKeyWithTools": shared});
    let mut cmd = keyed_command(&project, &server, settings);
    cmd.args(["-p", "show env", "--allowed-tools", "bash"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The model's own request still carries the key: only children lose it.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {OTHER_KEY}").as_str())
    );
    tool_results(&requests[1]).join("\n")
}

#[test]
fn the_bash_tool_does_not_see_the_api_key_variables() {
    assert_keys(&bash_env_run(false), false, "bash tool");
}

#[test]
fn share_api_key_with_tools_lets_the_bash_tool_see_them() {
    assert_keys(&bash_env_run(true), true, "bash tool, shared");
}

fn hook_env_run(project: &Project, shared: bool) -> String {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let dump = project.home.path().join("hook.env");
    let command = format!("env > '{}'", dump.display());
    let hooks =
        json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}});
    write_home(project, "hooks.json", &hooks);
    let mut cmd = keyed_command(project, &server, json!({"shareApiKeyWithTools": shared}));
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    std::fs::read_to_string(&dump).expect("the hook did not run")
}

#[test]
fn a_command_hook_does_not_see_the_api_key_variables_unless_shared() {
    assert_keys(&hook_env_run(&Project::new(), false), false, "hook");
    assert_keys(&hook_env_run(&Project::new(), true), true, "hook, shared");
}

/// An `--mcp-config` file with one stdio server, `sh -c SCRIPT` exec'ing the test server.
fn mcp_config(project: &Project, script: &str, env: Value) -> PathBuf {
    let path = project.home.path().join("servers.json");
    let config = json!({"mcpServers": {"probe": {
        "command": "sh",
        "args": ["-c", script],
        "env": env,
    }}});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Starts the server in a `-p` run (and, when `list`, for `ling mcp list`); returns the
/// environment it started with.
fn mcp_env_run(shared: bool, env: Value, list: bool) -> String {
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    // `ling mcp list` never asks the model.
    server.expect_unasked(usize::from(list));
    let project = Project::new();
    let dump = project.home.path().join("server.env");
    let script = format!(
        "env > '{}'; exec '{}'",
        dump.display(),
        test_server().display()
    );
    let config = mcp_config(&project, &script, env);
    let mut cmd = keyed_command(&project, &server, json!({"shareApiKeyWithTools": shared}));
    if list {
        cmd.args(["mcp", "list", "--mcp-config"]).arg(&config);
    } else {
        cmd.args(["-p", "hi", "--mcp-config"]).arg(&config);
    }
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    if list {
        assert!(out.stdout.contains("connected"), "{}", out.stdout);
    }
    std::fs::read_to_string(&dump).expect("the server did not start")
}

#[test]
fn a_stdio_mcp_server_does_not_see_the_api_key_variables_unless_shared() {
    assert_keys(&mcp_env_run(false, json!({}), false), false, "mcp server");
    assert_keys(&mcp_env_run(false, json!({}), true), false, "mcp list");
    assert_keys(
        &mcp_env_run(true, json!({}), false),
        true,
        "mcp server, shared",
    );
}

#[test]
fn a_stdio_mcp_servers_own_env_may_still_pass_the_key() {
    let env = json!({"OPENAI_API_KEY": "${OPENAI_API_KEY}"});
    let dump = mcp_env_run(false, env, false);
    assert!(
        dump.contains(&format!("OPENAI_API_KEY={OPENAI_KEY}")),
        "the server's explicit env was not passed:\n{dump}"
    );
    assert!(!dump.contains(OTHER_KEY), "{dump}");
}

#[test]
fn a_missing_stdio_server_command_is_still_named_in_the_error() {
    let server = MockServer::start_blocking(vec![]);
    let project = Project::new();
    let path = project.home.path().join("servers.json");
    let config = json!({"mcpServers": {"gone": {"command": "ling-no-such-server-xyz"}}});
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["mcp", "list", "--mcp-config"]).arg(&path);
    let out = run(cmd);
    assert!(
        out.stdout
            .contains("cannot start `ling-no-such-server-xyz`")
            && out.stdout.contains("No such file or directory"),
        "stdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn kill_9_of_ling_takes_the_bash_tools_command_and_stdio_servers_with_it() {
    let project = Project::new();
    // In the project: LING_HOME is read-only to the sandboxed command.
    let sleep_pid = project.path().join("sleep.pid");
    let server_pid = project.home.path().join("server.pid");
    // A server that stops reading after the handshake never sees its stdin close: only the
    // parent-death signal can end it.
    let script = format!(
        "echo $$ > '{}'; exec '{}' --stop-reading-after 4",
        server_pid.display(),
        test_server().display()
    );
    let config = mcp_config(&project, &script, json!({}));
    let command = format!("echo $$ > '{}'; exec sleep 300", sleep_pid.display());
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "c1",
        "bash",
        json!({"command": command}),
    )])]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "sleep", "--allowed-tools", "bash", "--mcp-config"])
        .arg(&config);
    let mut ling = process::spawn_captured(cmd);
    let sleep = process::read_pid(&sleep_pid, "the bash tool never started sleep");
    let mcp = process::read_pid(&server_pid, "the MCP server never started");
    let _cleanup = KillOnDrop(vec![sleep, mcp]);
    // The command really runs (exec'd sleep, same pid) before Ling is killed.
    process::wait_for("sleep is not running yet", || {
        let cmdline = std::fs::read(format!("/proc/{sleep}/cmdline")).unwrap_or_default();
        cmdline.starts_with(b"sleep\0").then_some(())
    });
    assert!(process::alive(mcp), "the server died early");

    ling.kill().expect("kill -9 ling");
    let _ = ling.wait();
    let limit = Duration::from_secs(5);
    assert!(
        process::gone_within(sleep, limit),
        "the bash tool's `sleep 300` (pid {sleep}) outlived `kill -9` of Ling"
    );
    assert!(
        process::gone_within(mcp, limit),
        "the stdio MCP server (pid {mcp}) outlived `kill -9` of Ling"
    );
}

/// SIGKILLs the pids when dropped, so a failing test leaves nothing running behind it.
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in self.0.iter().filter(|pid| process::alive(**pid)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn transcript_path(project: &Project, id: &str) -> PathBuf {
    project
        .home
        .path()
        .join("sessions")
        .join(format!("{id}.jsonl"))
}

fn canonical_root(project: &Project) -> String {
    std::fs::canonicalize(project.path())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn run_json(project: &Project, server: &MockServer, args: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["--output-format", "json"]).args(args);
    run(cmd)
}

#[test]
fn a_torn_last_transcript_line_is_repaired_and_continue_loses_nothing() {
    let server =
        MockServer::start_blocking(vec![Reply::text("Still here."), Reply::text("And again.")]);
    let project = Project::new();
    let id = "99999999-8888-7777-6666-555555555555";
    let header = json!({"type": "session", "id": id, "cwd": canonical_root(&project),
        "created": "2024-01-01T00:00:00Z", "model": "m"});
    let user = json!({"type": "message", "message": {"role": "user", "content": "remember 7"}});
    let answer =
        json!({"type": "message", "message": {"role": "assistant", "content": "Noted: 7."}});
    let torn = r#"{"type":"message","message":{"role":"user","content":"half a mess"#;
    let path = transcript_path(&project, id);
    std::fs::create_dir_all(path.parent().expect("no parent")).unwrap();
    std::fs::write(&path, format!("{header}\n{user}\n{answer}\n{torn}")).unwrap();

    let out = run_json(&project, &server, &["-p", "what number?", "--continue"]);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.json()["session_id"], id);
    assert!(
        out.stderr.contains("was cut off") && out.stderr.contains(&path.display().to_string()),
        "the repair was not reported: {}",
        out.stderr
    );
    let history = |request: &Recorded| request.messages()[1..].to_vec();
    assert_eq!(
        history(&server.requests()[0]),
        vec![
            user["message"].clone(),
            answer["message"].clone(),
            json!({"role": "user", "content": "what number?"}),
        ]
    );

    // Every line parses now, the new exchange included, and the next --continue sees it all.
    let text = std::fs::read_to_string(&path).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let out = run_json(&project, &server, &["-p", "again?", "--continue"]);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(!out.stderr.contains("skipped"), "{}", out.stderr);
    let second = history(&server.requests()[1]);
    assert_eq!(second.len(), 5, "{second:?}");
    assert_eq!(
        second[3],
        json!({"role": "assistant", "content": "Still here."})
    );
}

#[test]
fn print_mode_stops_at_the_default_turn_limit_and_says_how_to_raise_it() {
    // A model that never stops asking for a tool; the default limit (100) ends the run.
    let call = || Reply::tool_calls(vec![("g", "glob", json!({"pattern": "*.none"}))]);
    let server = MockServer::start_blocking((0..105).map(|_| call()).collect());
    server.expect_unasked(5);
    let project = Project::new();
    let out = run_json(&project, &server, &["-p", "loop forever"]);
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    let result = out.json();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["num_turns"], 100);
    let text = result["result"].as_str().unwrap_or_default();
    assert!(
        text.contains("default limit")
            && text.contains("--max-turns N")
            && text.contains("maxTurns"),
        "{result}"
    );
    assert_eq!(server.requests().len(), 100);
}

#[test]
fn retry_after_zero_still_backs_off() {
    let server = MockServer::start_blocking(vec![
        Reply::status(429).retry_after(0),
        Reply::status(503).retry_after_ms(0),
        Reply::status(429).retry_after(0),
        Reply::text("finally"),
    ]);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_RETRY_BASE_MS", "100").args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "finally\n");
    let at: Vec<Instant> = server.requests().iter().map(|r| r.at).collect();
    assert_eq!(at.len(), 4);
    // Backoff 100, 200, 400 ms with ±20% jitter; a little slack for the clock.
    for (retry, floor_ms) in [(1, 75), (2, 150), (3, 300)] {
        let gap = at[retry] - at[retry - 1];
        assert!(
            gap >= Duration::from_millis(floor_ms),
            "retry {retry} came after {gap:?}, under the {floor_ms} ms floor"
        );
    }
}

#[test]
fn a_huge_retry_after_is_capped_by_max_retry_delay_ms() {
    let server = MockServer::start_blocking(vec![
        Reply::status(429).retry_after(3600),
        Reply::text("soon"),
    ]);
    let project = Project::new();
    write_home(&project, "settings.json", &json!({"maxRetryDelayMs": 200}));
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let started = Instant::now();
    let out = project::run_with(cmd, None, Duration::from_secs(20));
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "soon\n");
    assert!(started.elapsed() < Duration::from_secs(10));
    let at: Vec<Instant> = server.requests().iter().map(|r| r.at).collect();
    let gap = at[1] - at[0];
    assert!(
        gap >= Duration::from_millis(150) && gap < Duration::from_secs(5),
        "{gap:?}"
    );
}

/// A stream whose one `data:` line is `len` bytes long, then the connection closes.
fn long_line(len: usize) -> Reply {
    let mut line = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"".to_vec();
    line.resize(len, b'x');
    Reply::raw_sse(vec![line])
}

fn assert_refused_once(out: &Output, server: &MockServer, limit: &str) {
    assert_eq!(out.code, Some(1), "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains(&format!("a line over {limit} bytes"))
            && out.stderr.contains("maxStreamLineBytes")
            && out.stderr.contains("did not retry"),
        "{}",
        out.stderr
    );
    assert_eq!(
        server.requests().len(),
        1,
        "the long line was downloaded again"
    );
    assert_eq!(server.remaining(), 1);
}

#[test]
fn an_event_stream_line_over_the_default_cap_fails_without_a_retry() {
    let server =
        MockServer::start_blocking(vec![long_line(9 << 20), Reply::text("must not be fetched")]);
    server.expect_unasked(1);
    let project = Project::new();
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_refused_once(&out, &server, "8388608");
}

#[test]
fn the_line_cap_is_a_setting() {
    let server =
        MockServer::start_blocking(vec![long_line(5000), Reply::text("must not be fetched")]);
    server.expect_unasked(1);
    let project = Project::new();
    write_home(
        &project,
        "settings.json",
        &json!({"maxStreamLineBytes": 4096}),
    );
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_refused_once(&out, &server, "4096");

    // Under the cap the same kind of answer goes through.
    let ok = format!(
        "data: {}\n\ndata: [DONE]\n\n",
        mock_openai::chunk(json!({"content": "y".repeat(3000)}), Some("stop"))
    );
    let server = MockServer::start_blocking(vec![Reply::raw_sse(vec![ok.into_bytes()])]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout.trim_end().len(), 3000);
}

#[test]
fn a_non_streamed_answer_over_the_cap_fails_the_same_way() {
    // `stream: true` ignored: the whole answer as one JSON body, bounded like one line.
    let body = Reply::status(200).message(&"z".repeat(5000));
    let server = MockServer::start_blocking(vec![body, Reply::text("must not be fetched")]);
    server.expect_unasked(1);
    let project = Project::new();
    write_home(
        &project,
        "settings.json",
        &json!({"maxStreamLineBytes": 4096}),
    );
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_refused_once(&out, &server, "4096");
}
