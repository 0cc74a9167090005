//! `ling mcp serve`, checked by clients no one here wrote: the MCP Inspector CLI lists and calls
//! its tools; the MCP conformance suite runs its server scenarios that apply to a tools-only
//! server (through `tests/peers/mcp_stdio_bridge.mjs`, the Streamable HTTP transport in front of
//! the stdio server, since the suite reaches servers by URL only). A bare client
//! (`support::serve`) checks what the others do not show: permission questions as elicitations,
//! the mode, sandbox and trust rules, progress, cancellation, the 2026-07-28 revision, and the
//! whole agent as the `ling` tool.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::mock_openai::{MockServer, Reply};
use crate::support::peers;
use crate::support::process::gone_within;
use crate::support::project::{Project, ling_bin};
use crate::support::serve::{Served, modern_meta};

const NO_MODEL: &str = "http://127.0.0.1:9/v1";

/// Runs `inspector --cli ling mcp serve -C ROOT SERVE_ARGS -- METHOD_ARGS` (HOME and the
/// Inspector's catalog inside the project's LING_HOME).
fn inspector(project: &Project, serve_args: &[&str], method_args: &[&str]) -> Output {
    let (node, launcher) = peers::npm_script(peers::INSPECTOR);
    let home = project.home.path().join("inspector-home");
    std::fs::create_dir_all(&home).unwrap();
    let root = project.path().to_string_lossy().into_owned();
    Command::new(node)
        .arg(launcher)
        .arg("--cli")
        .arg(ling_bin())
        .args(["mcp", "serve", "-C", &root])
        .args(serve_args)
        .args(method_args)
        .env("HOME", &home)
        .env("MCP_CATALOG_PATH", home.join("catalog.json"))
        .env("LING_HOME", project.home.path())
        .env("OPENAI_BASE_URL", NO_MODEL)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("running the inspector")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspector stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn inspector_lists_the_tools_with_their_annotations() {
    let project = Project::new();
    let out = inspector(&project, &[], &["--method", "tools/list"]);
    assert!(out.status.success(), "{out:?}");
    let tools = stdout_json(&out)["tools"].clone();
    let summary: Vec<(String, bool, bool)> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["annotations"]["readOnlyHint"].as_bool().unwrap(),
                t["annotations"]["destructiveHint"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, bool, bool)> = [
        ("read_file", true, false),
        ("write_file", false, true),
        ("edit_file", false, true),
        ("bash", false, true),
        ("grep", true, false),
        ("glob", true, false),
        ("bash_output", true, false),
        ("kill_shell", true, false),
        ("web_fetch", true, false),
    ]
    .into_iter()
    .map(|(n, r, d)| (n.to_string(), r, d))
    .collect();
    let mut got = summary.clone();
    got.sort();
    let mut want = expected;
    want.sort();
    assert_eq!(got, want);
    assert_eq!(tools[0]["inputSchema"]["type"], "object");
}

#[test]
fn inspector_calls_the_tools_and_an_unasked_edit_is_refused() {
    let project = Project::new();
    project.write("a.txt", "alpha\n");
    let out = inspector(
        &project,
        &[],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=a.txt",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let result = stdout_json(&out);
    assert_eq!(result["isError"], false);
    assert_eq!(text_of(&result), "     1\talpha\n");

    // The default mode asks before a write; the Inspector cannot be asked, so it is denied
    // with the flag that would allow it, and nothing is written.
    let write = [
        "--method",
        "tools/call",
        "--tool-name",
        "write_file",
        "--tool-arg",
        "path=b.txt",
        "--tool-arg",
        "content=beta",
    ];
    let out = inspector(&project, &[], &write);
    let result = stdout_json(&out);
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("--permission-mode accept-edits"),
        "{result}"
    );
    assert!(!project.file("b.txt").exists());

    // In accept-edits the same call runs.
    let out = inspector(&project, &["--permission-mode", "accept-edits"], &write);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout_json(&out)["isError"], false);
    assert_eq!(project.read("b.txt"), "beta");
}

#[test]
fn a_question_goes_to_the_client_as_a_form_elicitation() {
    let project = Project::new();
    let mut served = Served::start(&project, NO_MODEL, &[]);
    served.initialize(json!({"elicitation": {"form": {}}}));
    for (answer, file, written) in [
        (
            json!({"action": "accept", "content": {"decision": "once"}}),
            "yes.txt",
            true,
        ),
        (json!({"action": "decline"}), "no.txt", false),
    ] {
        let id = served.request(
            "tools/call",
            json!({"name": "write_file", "arguments": {"path": file, "content": "x"}}),
        );
        let ask = served.take("an elicitation", |m| m["method"] == "elicitation/create");
        let message = ask["params"]["message"].as_str().unwrap();
        assert!(message.contains("write_file"), "{message}");
        assert!(message.contains(file), "{message}");
        let schema = &ask["params"]["requestedSchema"]["properties"]["decision"];
        assert_eq!(schema["enum"], json!(["once", "always", "no"]));
        served.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": answer}));
        let result = served.answer(id);
        assert_eq!(result["result"]["isError"], !written, "{result}");
        assert_eq!(project.file(file).exists(), written, "{file}");
    }
    assert_eq!(served.finish(), Some(0));
}

#[test]
fn progress_is_reported_and_a_cancelled_call_stops() {
    let project = Project::new();
    let mut served = Served::start(&project, NO_MODEL, &["--permission-mode", "bypass"]);
    served.initialize(json!({}));
    let id = served.request(
        "tools/call",
        json!({
            "name": "bash",
            "arguments": {"command": "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done"},
            "_meta": {"progressToken": "p1"},
        }),
    );
    let answer = served.answer(id);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let progress: Vec<Value> = served
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "no progress was reported");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "p1")
    );
    let counts: Vec<u64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_u64().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| p["params"]["message"].as_str().unwrap())
        .collect();
    assert!(messages[0].starts_with("bash for i in"), "{messages:?}");
    assert!(
        messages.contains(&"line1"),
        "the output lines come as progress: {messages:?}"
    );

    // A call cancelled mid-way stops its command and gets no answer; the server goes on.
    let pid_file = project.file("pid");
    let id = served.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": format!("echo $$ > {}; sleep 30", pid_file.display())}}),
    );
    let pid = crate::support::process::read_pid(&pid_file, "the command's pid");
    let cancelled_at = Instant::now();
    served.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "test"}}),
    );
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the command outlived its cancel"
    );
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));
    let ping = served.call("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    let late = served.drain(Duration::from_millis(300));
    assert!(
        !late.iter().any(|m| m["id"] == id),
        "a cancelled request was answered: {late:?}"
    );
    assert_eq!(served.finish(), Some(0));
}

#[test]
fn the_2026_07_28_revision_needs_no_handshake() {
    let project = Project::new();
    project.write("a.txt", "alpha\n");
    let mut served = Served::start(&project, NO_MODEL, &[]);
    let discover = served.call("server/discover", json!({"_meta": modern_meta()}));
    let result = &discover["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": false})
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ling"
    );
    let list = served.call("tools/list", json!({"_meta": modern_meta()}));
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "public");
    assert!(list["result"]["ttlMs"].as_u64().unwrap() > 0);
    let call = served.call(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "a.txt"}, "_meta": modern_meta()}),
    );
    assert_eq!(call["result"]["content"][0]["text"], "     1\talpha\n");
    assert_eq!(call["result"]["resultType"], "complete");

    let no_meta = served.call("tools/list", json!({}));
    assert_eq!(no_meta["error"]["code"], -32602, "{no_meta}");
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let unsupported = served.call("tools/list", json!({"_meta": old}));
    assert_eq!(unsupported["error"]["code"], -32022);
    assert_eq!(
        unsupported["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
    );
    let removed = served.call("initialize", json!({"_meta": modern_meta()}));
    assert_eq!(removed["error"]["code"], -32601, "{removed}");

    // The same process still takes a 2025-11-25 client.
    let init = served.initialize(json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "ling");
    assert_eq!(served.finish(), Some(0));
}

#[test]
fn the_project_rules_apply_only_once_it_is_trusted() {
    let project = Project::new();
    project.write(
        ".ling/settings.json",
        r#"{"permissions": {"allow": ["write_file"]}}"#,
    );
    let write = json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}});
    let mut served = Served::start(&project, NO_MODEL, &[]);
    let init = served.initialize(json!({}));
    let instructions = init["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("not trusted"), "{instructions}");
    let denied = served.call("tools/call", write.clone());
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(!project.file("a.txt").exists());
    drop(served);

    project.trust();
    let mut served = Served::start(&project, NO_MODEL, &[]);
    served.initialize(json!({}));
    let allowed = served.call("tools/call", write);
    assert_eq!(allowed["result"]["isError"], false, "{allowed}");
    assert_eq!(project.read("a.txt"), "a");
}

#[test]
fn bash_runs_in_the_sandbox() {
    let project = Project::new();
    let mut served = Served::start(
        &project,
        NO_MODEL,
        &["--sandbox", "read-only", "--permission-mode", "bypass"],
    );
    served.initialize(json!({}));
    let result = served.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo x > written.txt"}}),
    );
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.ends_with("Exit code: 0"), "{text}");
    assert!(
        !project.file("written.txt").exists(),
        "the sandbox let the write through"
    );
}

#[test]
fn with_agent_the_whole_agent_is_the_ling_tool() {
    let project = Project::new();
    let model = MockServer::start_blocking(vec![
        Reply::text("The answer is 4."),
        Reply::text("Still 4."),
    ]);
    let mut served = Served::start(&project, &model.base_url(), &["--agent"]);
    served.initialize(json!({}));
    let list = served.call("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "ling");
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], false);
    let first = served.call(
        "tools/call",
        json!({"name": "ling", "arguments": {"prompt": "what is 2+2?"}}),
    );
    let result = &first["result"];
    assert_eq!(result["isError"], false, "{first}");
    assert_eq!(result["content"][0]["text"], "The answer is 4.");
    let session = result["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let again = served.call(
        "tools/call",
        json!({"name": "ling", "arguments": {"prompt": "sure?", "session_id": session}}),
    );
    assert_eq!(
        again["result"]["structuredContent"]["session_id"],
        session.as_str()
    );
    assert_eq!(again["result"]["content"][0]["text"], "Still 4.");
    let users: Vec<String> = model.requests()[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(users, ["what is 2+2?", "sure?"]);
    let bad = served.call("tools/call", json!({"name": "ling", "arguments": {}}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(served.finish(), Some(0));
}

/// The bridge in front of `ling mcp serve -C ROOT`: its URL, and the bridge process.
struct Bridge {
    child: std::process::Child,
    url: String,
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bridge(project: &Project) -> Bridge {
    use std::io::BufRead;
    let node = peers::node();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp_stdio_bridge.mjs");
    let mut child = Command::new(node)
        .arg(script)
        .arg("--")
        .arg(ling_bin())
        .args(["mcp", "serve", "-C"])
        .arg(project.path())
        .env("LING_HOME", project.home.path())
        .env("OPENAI_BASE_URL", NO_MODEL)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("the bridge said {line:?}"))
        .to_string();
    Bridge { child, url }
}

/// Runs one server scenario of the suite `runner` at `version`; its checks (id, status).
fn scenario(
    runner: &str,
    url: &str,
    name: &str,
    version: &str,
    out: &std::path::Path,
) -> Vec<(String, String)> {
    let (node, suite) = peers::npm_script(runner);
    let dir = out.join(format!("{name}-{version}"));
    let run = Command::new(node)
        .arg(suite)
        .args([
            "server",
            "--url",
            url,
            "--scenario",
            name,
            "--spec-version",
            version,
            "-o",
        ])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let checks = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{name}: no results ({e}): {run:?}"))
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .find(|f| f.file_name() == "checks.json")
        .unwrap_or_else(|| panic!("{name}: no checks.json: {run:?}"));
    let checks: Value = serde_json::from_slice(&std::fs::read(checks.path()).unwrap()).unwrap();
    checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every check of a scenario must pass (or be skipped, which the suite does for what the
/// server does not declare), except the named ones, which are not about a tools-only stdio
/// server: `not_applicable` lists them with the reason, and must fail as expected (so the list
/// stays true).
fn assert_passes(checks: &[(String, String)], scenario: &str, not_applicable: &[(&str, &str)]) {
    assert!(!checks.is_empty(), "{scenario}: no checks ran");
    for (id, status) in checks {
        let excused = not_applicable.iter().any(|(n, _)| n == id);
        if excused {
            assert_ne!(
                status, "SUCCESS",
                "{scenario}: {id} passes now: take it off the list"
            );
        } else {
            assert!(
                status == "SUCCESS" || status == "SKIPPED" || status == "INFO",
                "{scenario}: {id} is {status}: {checks:?}"
            );
        }
    }
}

#[test]
fn the_conformance_suite_passes_the_scenarios_of_a_tools_only_server() {
    let project = Project::new();
    let bridge = bridge(&project);
    let out = tempfile::tempdir().unwrap();
    // 0.1.16 and 0.2.0-alpha.12 at 2025-11-25: the handshake, ping, the tool list.
    for runner in [peers::CONFORMANCE, peers::CONFORMANCE_NEXT] {
        for name in ["server-initialize", "ping", "tools-list"] {
            let checks = scenario(runner, &bridge.url, name, "2025-11-25", out.path());
            assert_passes(&checks, name, &[]);
        }
    }
    // 2026-07-28: the tool list (names, determinism), the stateless revision, caching hints.
    let next = peers::CONFORMANCE_NEXT;
    let checks = scenario(next, &bridge.url, "tools-list", "2026-07-28", out.path());
    assert_passes(&checks, "tools-list", &[]);
    let checks = scenario(
        next,
        &bridge.url,
        "server-stateless",
        "2026-07-28",
        out.path(),
    );
    assert_passes(
        &checks,
        "server-stateless",
        &[
            (
                "sep-2575-http-server-header-mismatch-400",
                "the MCP-Protocol-Version header is HTTP's; the bridge passes the body on",
            ),
            (
                "sep-2575-server-rejects-undeclared-capability",
                "needs the suite's test_missing_capability tool",
            ),
            (
                "sep-2575-missing-capability-http-400",
                "needs the suite's test_missing_capability tool",
            ),
            (
                "sep-2575-http-server-no-independent-requests-on-stream",
                "needs the suite's test_streaming_elicitation tool",
            ),
            (
                "sep-2575-server-no-log-without-loglevel",
                "needs the suite's test_logging_tool tool",
            ),
        ],
    );
    let checks = scenario(next, &bridge.url, "caching", "2026-07-28", out.path());
    assert_passes(
        &checks,
        "caching",
        &[
            (
                "sep-2549-prompts-list-caching-hints",
                "a tools-only server has no prompts/list",
            ),
            (
                "sep-2549-resources-list-caching-hints",
                "a tools-only server has no resources/list",
            ),
            (
                "sep-2549-resources-templates-list-caching-hints",
                "a tools-only server has no resource templates",
            ),
        ],
    );
    assert!(
        checks
            .iter()
            .any(|(id, s)| id == "sep-2549-tools-list-caching-hints" && s == "SUCCESS"),
        "{checks:?}"
    );
    drop(bridge);
}
