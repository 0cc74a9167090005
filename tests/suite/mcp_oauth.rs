//! OAuth logins to HTTP MCP servers through the real `ling` binary, against the loopback
//! authorization server of `support::oauth`: `ling mcp login` end to end with the browser step
//! driven by the test (it reads the printed URL and GETs it, as a browser would, then follows
//! the redirect to Ling's listener), the tokens' file and its modes, the refresh of a refused
//! token, `needs-auth` when no login can happen (`ling -p` never waits for one), logout, and
//! `/mcp login` in the REPL (through a pseudo-terminal).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ling::http_client::{self, ClientOptions, Target};
use serde_json::json;

use crate::support::mock_openai::{MockServer, Reply};
use crate::support::oauth::{OAuthWorld, SCOPE, s256};
use crate::support::project::{Project, run, run_with};

/// A trusted project whose `.ling/mcp.json` has the world's MCP server as `remote`.
fn project_for(world: &OAuthWorld) -> Project {
    let project = Project::new();
    let config = json!({"mcpServers": {"remote": {"type": "http", "url": world.mcp_url(),
        "startupTimeoutMs": 10000}}});
    project.write(".ling/mcp.json", &config.to_string());
    project.trust();
    project
}

fn credential_files(project: &Project) -> Vec<PathBuf> {
    let dir = project.home.path().join("credentials");
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// What a browser does with the authorization URL: GET it, and follow its redirect (to Ling's
/// loopback listener) once.
fn browse(url: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client =
            http_client::build(ClientOptions::new(Target::AuthServer).follow_redirects(false))
                .unwrap();
        let answer = client.get(url).send().await.unwrap();
        assert_eq!(answer.status(), 302, "the authorization endpoint redirects");
        let location = answer.headers()["location"].to_str().unwrap().to_string();
        assert!(location.starts_with("http://127.0.0.1:"), "{location}");
        let page = client.get(&location).send().await.unwrap();
        assert_eq!(page.status(), 200);
        let text = page.text().await.unwrap();
        assert!(text.contains("authorized"), "{text}");
    });
}

/// `ling mcp login remote --no-browser`, with the test as the browser. Returns stdout and
/// stderr.
fn login(project: &Project) -> (String, String) {
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(["mcp", "login", "remote", "--no-browser"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child: Child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let err_reader =
        std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let started = Instant::now();
    let mut seen = Vec::new();
    let url = loop {
        let line = received
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no login URL printed; stdout so far: {seen:?}"));
        seen.push(line.clone());
        if let Some(url) = line
            .trim()
            .strip_prefix("http")
            .map(|rest| format!("http{rest}"))
        {
            break url;
        }
    };
    browse(&url);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "login did not finish"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    seen.extend(received.try_iter());
    let stdout = seen.join("\n");
    let stderr = err_reader.join().unwrap_or_default();
    assert!(status.success(), "login failed: {stdout}\n{stderr}");
    (stdout, stderr)
}

fn list_json(project: &Project) -> serde_json::Value {
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(["mcp", "list", "--json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()["servers"][0].clone()
}

#[test]
fn login_end_to_end_keeps_the_token_private_and_uses_it() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    let (stdout, stderr) = login(&project);
    assert!(
        stdout.contains("Logged in to MCP server \"remote\" (1 tool)"),
        "{stdout}"
    );

    // The authorization request: PKCE S256, the resource (RFC 8707), the scope of the
    // challenge; the token request: the verifier matching the challenge, the resource again.
    let auth = |key| world.last(|s| &s.authorizations, key);
    assert_eq!(auth("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(auth("resource"), Some(world.mcp_url()));
    assert_eq!(auth("scope").as_deref(), Some(SCOPE));
    assert_eq!(auth("client_id").as_deref(), Some("ling-test-client"));
    let token = |key| world.last(|s| &s.token_requests, key);
    assert_eq!(token("resource"), Some(world.mcp_url()));
    let verifier = token("code_verifier").unwrap_or_default();
    assert_eq!(Some(s256(&verifier)), auth("code_challenge"));

    // The tokens: one 0600 file in a 0700 folder, never printed.
    let files = credential_files(&project);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&project.home.path().join("credentials")), 0o700);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        stored.contains("at-1") && stored.contains("rt-1"),
        "{stored}"
    );
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains("at-1") && !shown.contains("rt-1"),
            "{shown}"
        );
    }

    // Later runs use the stored token: connected, without another login.
    let listed = list_json(&project);
    assert_eq!(listed["status"], "connected", "{listed}");
    assert_eq!(listed["tools"], 1);
    assert_eq!(world.state.lock().unwrap().authorizations.len(), 1);
    let bearer = world
        .server
        .with_method("POST")
        .into_iter()
        .filter(|r| r.path == "/mcp")
        .filter_map(|r| r.header("authorization").map(str::to_string))
        .next_back();
    assert_eq!(bearer.as_deref(), Some("Bearer at-1"));
}

#[test]
fn a_refused_token_is_refreshed_before_asking_again() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    login(&project);
    world.revoke_access_tokens();
    let listed = list_json(&project);
    assert_eq!(listed["status"], "connected", "{listed}");
    assert_eq!(
        world.last(|s| &s.token_requests, "grant_type").as_deref(),
        Some("refresh_token")
    );
    assert_eq!(
        world
            .last(|s| &s.token_requests, "refresh_token")
            .as_deref(),
        Some("rt-1")
    );
    // The new tokens replace the old ones in the file; no second login happened.
    let stored = std::fs::read_to_string(&credential_files(&project)[0]).unwrap();
    assert!(
        stored.contains("at-2") && !stored.contains("at-1"),
        "{stored}"
    );
    assert_eq!(world.state.lock().unwrap().authorizations.len(), 1);
}

#[test]
fn a_session_takes_the_tokens_another_session_refreshed_instead_of_losing_the_login() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    login(&project);
    // Session A connects with at-1, then waits for the model.
    let model = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "mcp__remote__whoami", json!({}))])
            .delay(Duration::from_secs(5)),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&model.base_url());
    cmd.args([
        "-p",
        "who am I?",
        "--allowed-tools",
        "mcp__remote__*",
        "--output-format",
        "json",
    ]);
    let a = crate::support::process::spawn_captured(cmd);
    crate::support::process::wait_for("session A connected and asked the model", || {
        let listed = world
            .server
            .with_method("POST")
            .iter()
            .any(|r| r.json()["method"] == "tools/list");
        (listed && model.requests().len() == 1).then_some(())
    });
    // Meanwhile session B finds at-1 refused and refreshes: rt-1 is spent, at-2 on disk.
    world.revoke_access_tokens();
    let listed = list_json(&project);
    assert_eq!(listed["status"], "connected", "{listed}");
    assert_eq!(
        model.requests().len(),
        1,
        "session B took longer than A's model"
    );
    // A's call is refused at-1: it takes B's tokens, not a refresh with the spent rt-1.
    let out = a.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let tool_result = model.requests()[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        tool_result.contains("you are the test user"),
        "{tool_result}"
    );
    let stored = std::fs::read_to_string(&credential_files(&project)[0]).unwrap();
    assert!(
        stored.contains("at-2") && stored.contains("rt-2"),
        "{stored}"
    );
    let refreshes = world
        .state
        .lock()
        .unwrap()
        .token_requests
        .iter()
        .filter(|pairs| {
            pairs
                .iter()
                .any(|(k, v)| k == "grant_type" && v == "refresh_token")
        })
        .count();
    assert_eq!(refreshes, 1, "a session refreshed with a spent token");
    assert_eq!(world.state.lock().unwrap().authorizations.len(), 1);
}

#[test]
fn without_a_login_the_server_needs_auth_and_print_mode_never_waits() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    let listed = list_json(&project);
    assert_eq!(listed["status"], "needs-auth", "{listed}");
    let error = listed["error"].as_str().unwrap_or_default();
    assert!(error.contains("ling mcp login remote"), "{error}");

    let model = MockServer::start_blocking(vec![Reply::text("done without it")]);
    let mut cmd = project.command(&model.base_url());
    cmd.args(["-p", "hi", "--output-format", "json"]);
    let started = Instant::now();
    let out = run_with(cmd, None, Duration::from_secs(20));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let server = &out.json()["mcp_servers"][0];
    assert_eq!(server["status"], "needs-auth", "{server}");
    assert!(
        out.stderr.contains("ling mcp login remote"),
        "{}",
        out.stderr
    );
    // No authorization was ever started: no browser, no listener, no wait.
    assert!(world.state.lock().unwrap().authorizations.is_empty());
    assert!(!out.stdout.contains("/authorize") && !out.stderr.contains("/authorize"));
}

#[test]
fn a_401_on_a_tool_call_ends_in_needs_auth() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    login(&project);
    let model = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "mcp__remote__whoami", json!({}))]),
        Reply::text("the server wants a login"),
    ]);
    let mut cmd = project.command(&model.base_url());
    cmd.args([
        "-p",
        "who am I?",
        "--allowed-tools",
        "mcp__remote__*",
        "--output-format",
        "stream-json",
    ]);
    // The grant is revoked: the call gets a 401 that no refresh can fix.
    world.state.lock().unwrap().refuse_calls = true;
    let out = run_with(cmd, None, Duration::from_secs(30));
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = out.json_lines();
    let result = lines.last().unwrap();
    let server = &result["mcp_servers"][0];
    assert_eq!(server["status"], "needs-auth", "{result}");
    let tool_result = model.requests()[1]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        tool_result.contains("ling mcp login remote"),
        "{tool_result}"
    );
    assert_eq!(world.state.lock().unwrap().authorizations.len(), 1);
}

#[test]
fn logout_deletes_the_tokens() {
    let world = OAuthWorld::start();
    let project = project_for(&world);
    login(&project);
    assert_eq!(credential_files(&project).len(), 1);
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(["mcp", "logout", "remote"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("Logged out"), "{}", out.stdout);
    assert!(credential_files(&project).is_empty());
    assert_eq!(list_json(&project)["status"], "needs-auth");
    let mut again = project.command("http://127.0.0.1:9");
    again.args(["mcp", "logout", "remote"]);
    assert!(run(again).stdout.contains("nothing to do"));
}

#[test]
fn the_repl_logs_in_with_slash_mcp_login() {
    use rexpect::session::spawn_command;
    let world = OAuthWorld::start();
    let project = project_for(&world);
    let model = MockServer::start_blocking(vec![]);
    let mut cmd = project.command(&model.base_url());
    cmd.env("TERM", "xterm").env("LING_NO_BROWSER", "1");
    let mut p = spawn_command(cmd, Some(30_000)).unwrap();
    p.exp_string("> ").unwrap();
    // The server starts in the background and finds no token.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        p.send_line("/mcp").unwrap();
        let (_, state) = p
            .exp_regex("(starting|needs-auth|connected|failed)")
            .unwrap();
        p.exp_string("> ").unwrap();
        match state.as_str() {
            "needs-auth" => break,
            "starting" if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100))
            }
            other => panic!("remote is {other}"),
        }
    }
    p.send_line("/mcp login remote").unwrap();
    p.exp_string("open this URL in a browser").unwrap();
    let (_, url) = p
        .exp_regex(r"http://127\.0\.0\.1:[0-9]+/authorize\?[^\s\x1b]+")
        .unwrap();
    browse(&url);
    p.exp_regex("remote +http +connected").unwrap();
    p.exp_string("> ").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(credential_files(&project).len(), 1);
}

/// An authorization server whose metadata names a `javascript:` authorization endpoint: the
/// login fails saying so, and no such URL is printed (or handed to a browser: with a display
/// set, `xdg-open` would be the opener). The same world with its own endpoint logs in.
#[test]
fn a_non_http_authorization_endpoint_is_refused_and_never_printed() {
    let world = OAuthWorld::start();
    world.state.lock().unwrap().authorization_endpoint =
        Some("javascript:alert(document.domain)//".into());
    let project = project_for(&world);
    let mut cmd = project.command("http://127.0.0.1:9");
    cmd.args(["mcp", "login", "remote", "--no-browser"]);
    let out = run_with(cmd, None, Duration::from_secs(20));
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.contains("not http(s)"), "{}", out.stderr);
    for text in [&out.stdout, &out.stderr] {
        assert!(!text.contains("alert"), "{text}");
    }
    assert!(world.state.lock().unwrap().authorizations.is_empty());

    world.state.lock().unwrap().authorization_endpoint = None;
    let (stdout, _) = login(&project);
    assert!(stdout.contains("/authorize"), "{stdout}");
}
