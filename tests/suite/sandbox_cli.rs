//! The shell sandbox around the `bash` tool, through the real binary: `ling sandbox run`, a
//! kernel without Landlock (forced with `LING_SANDBOX_FORCE_UNAVAILABLE=1`), what an untrusted
//! project's settings can and cannot do to it, the trust listing, hooks in the sandbox, a hook's
//! `ask`, the REPL's question to run a blocked command outside, and the controlling terminal.

use crate::suite::sandbox_bash::Sandboxed;
use crate::support::{hooks_e2e, mock_openai, process, project};

use mock_openai::{MockServer, Reply};
use project::run;
use rexpect::session::spawn_command;
use serde_json::json;

fn sandbox_run(s: &Sandboxed, args: &[&str]) -> project::Output {
    let mut cmd = s.command("http://127.0.0.1:9");
    cmd.args(["sandbox", "run"]).args(args);
    run(cmd)
}

#[test]
fn sandbox_run_exits_with_the_commands_code_inside_the_policy() {
    let s = Sandboxed::new();
    let outside = s.outside("x");
    let out = sandbox_run(&s, &["--", "sh", "-c", "echo in > a.txt; exit 7"]);
    assert_eq!(out.code, Some(7), "{out:?}");
    assert_eq!(s.project.read("a.txt"), "in\n");
    let out = sandbox_run(&s, &["--", "touch", outside.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("Permission denied"), "{}", out.stderr);
    assert!(!outside.exists());
    let out = sandbox_run(&s, &["--mode", "read-only", "--", "touch", "b.txt"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(!s.project.file("b.txt").exists());
    let out = sandbox_run(
        &s,
        &["--mode", "off", "--", "touch", outside.to_str().unwrap()],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(outside.exists());
    let out = sandbox_run(&s, &["--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.code, Some(128 + 15), "{out:?}");
}

#[test]
fn without_landlock_the_default_warns_and_asks_an_explicit_mode_fails() {
    let s = Sandboxed::new();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "touch made"}))]),
        Reply::text("done"),
    ]);
    let mut cmd = s.command(&server.base_url());
    cmd.args(["-p", "go", "--output-format", "stream-json"])
        .env("LING_SANDBOX_FORCE_UNAVAILABLE", "1");
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let warnings: Vec<_> = out
        .stderr
        .lines()
        .filter(|l| l.contains("no shell sandbox"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].contains("every command asks"),
        "{}",
        warnings[0]
    );
    // Fallen back: bash asks again, which -p denies.
    assert!(!s.project.file("made").exists());
    let lines = out.json_lines();
    assert_eq!(lines[0]["sandbox"]["mode"], "off");
    assert!(out.stdout.contains("needs approval"), "{}", out.stdout);

    for args in [
        &["-p", "go", "--sandbox", "workspace-write"][..],
        &["sandbox", "run", "--", "true"][..],
    ] {
        let mut cmd = s.command("http://127.0.0.1:9");
        cmd.args(args).env("LING_SANDBOX_FORCE_UNAVAILABLE", "1");
        let out = run(cmd);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(out.stderr.contains("Linux 6.7"), "{}", out.stderr);
        assert!(out.stderr.contains("Landlock"), "{}", out.stderr);
    }

    // `sandbox.required: false` lets the explicit mode fall back too, with the warning.
    std::fs::write(
        s.project.home.path().join("settings.json"),
        json!({"sandbox": {"mode": "read-only", "required": false}}).to_string(),
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("hi")]);
    let mut cmd = s.command(&server.base_url());
    cmd.args(["-p", "go"])
        .env("LING_SANDBOX_FORCE_UNAVAILABLE", "1");
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("no shell sandbox"), "{}", out.stderr);
}

#[test]
fn an_untrusted_project_cannot_turn_the_sandbox_off_and_the_listing_shows_it() {
    let s = Sandboxed::new();
    s.project.write(
        ".ling/settings.json",
        r#"{"sandbox": {"mode": "off", "writableRoots": ["/srv/cache"]}}"#,
    );
    let init = |s: &Sandboxed| {
        let server = MockServer::start_blocking(vec![Reply::text("hi")]);
        let mut cmd = s.command(&server.base_url());
        cmd.args(["-p", "x", "--output-format", "stream-json"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        out.json_lines()[0]["sandbox"]["mode"].clone()
    };
    assert_eq!(init(&s), "workspace-write");

    let mut cmd = s.command("http://127.0.0.1:9");
    cmd.arg("trust");
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("sandbox.mode"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("bash commands would run without the sandbox"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("/srv/cache"), "{}", out.stdout);
    // Trusted, it applies.
    assert_eq!(init(&s), "off");
}

#[test]
fn hooks_run_in_the_sandbox_only_with_sandbox_hooks() {
    let s = Sandboxed::new();
    let outside = s.outside("hook-wrote");
    let command = format!("touch {} 2>/dev/null; true", outside.display());
    std::fs::write(
        s.project.home.path().join("hooks.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}})
            .to_string(),
    )
    .unwrap();
    let prompt = |s: &Sandboxed| {
        let server = MockServer::start_blocking(vec![Reply::text("hi")]);
        let mut cmd = s.command(&server.base_url());
        cmd.args(["-p", "x"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
    };
    std::fs::write(
        s.project.home.path().join("settings.json"),
        json!({"sandbox": {"hooks": true}}).to_string(),
    )
    .unwrap();
    prompt(&s);
    assert!(!outside.exists(), "a sandboxed hook wrote outside");
    std::fs::write(s.project.home.path().join("settings.json"), "{}").unwrap();
    prompt(&s);
    assert!(outside.exists(), "the unsandboxed hook did not run");
}

#[test]
fn a_hooks_ask_still_asks_inside_the_sandbox() {
    let s = Sandboxed::new();
    let ask = hooks_e2e::pre_output(
        json!({"permissionDecision": "ask", "permissionDecisionReason": "check it"}),
    );
    let ask = hooks_e2e::script(&s.project, "ask.sh", &ask);
    std::fs::write(
        s.project.home.path().join("hooks.json"),
        json!({"hooks": {"PreToolUse": hooks_e2e::group("bash", &ask)}}).to_string(),
    )
    .unwrap();
    let (_, results) = s.bash(&["touch asked"], &[]);
    assert!(!s.project.file("asked").exists());
    assert!(results[0].contains("check it"), "{}", results[0]);
    assert!(results[0].contains("non-interactive"), "{}", results[0]);
}

fn repl(s: &Sandboxed, server: &MockServer) -> rexpect::session::PtySession {
    let mut cmd = s.command(&server.base_url());
    cmd.env("TERM", "xterm");
    spawn_command(cmd, Some(20_000)).expect("spawn in a pty")
}

#[test]
fn in_the_repl_a_blocked_command_may_run_once_outside() {
    let s = Sandboxed::new();
    let outside = s.outside("escaped");
    let touch = format!("touch {}", outside.display());
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": touch}))]),
        Reply::text("first"),
        Reply::tool_calls(vec![("c2", "bash", json!({"command": touch}))]),
        Reply::text("second"),
    ]);
    let mut p = repl(&s, &server);
    p.exp_string("> ").unwrap();
    p.send_line("touch it").unwrap();
    p.exp_string("the sandbox blocked writing").unwrap();
    p.exp_string("allow?").unwrap();
    p.send_line("n").unwrap();
    p.exp_string("first").unwrap();
    assert!(!outside.exists(), "denied, it still ran outside");
    p.exp_string("> ").unwrap();
    p.send_line("again").unwrap();
    p.exp_string("allow?").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("second").unwrap();
    p.send_line("/status").unwrap();
    p.exp_string("sandbox      workspace-write (network off")
        .unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert!(outside.exists(), "approved, it did not run outside");
    let requests = server.requests();
    let results = |i: usize| {
        requests[i]
            .messages()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert!(
        results(1)[0].contains("Blocked by the sandbox"),
        "{:?}",
        results(1)
    );
    assert!(results(3)[1].ends_with("Exit code: 0"), "{:?}", results(3));
}

#[test]
fn bash_commands_have_no_controlling_terminal() {
    let s = Sandboxed::new();
    // Under a terminal (a pty), with and without the sandbox: the session is the trampoline's.
    for args in [
        &[][..],
        &["--sandbox", "off", "--permission-mode", "bypass"][..],
    ] {
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![(
                "c1",
                "bash",
                json!({"command": "tty; exec 3>/dev/tty && echo opened"}),
            )]),
            Reply::text("done"),
        ]);
        let mut cmd = s.command(&server.base_url());
        cmd.args(["-p", "go"]).args(args).env("TERM", "xterm");
        let mut p = spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
        p.exp_eof().unwrap();
        let requests = server.requests();
        let result = requests[1]
            .messages()
            .iter()
            .rfind(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        assert!(result.starts_with("not a tty"), "{args:?}: {result}");
        assert!(!result.contains("opened"), "{args:?}: {result}");
    }
}

#[test]
fn a_stdio_server_runs_in_the_sandbox_only_when_its_entry_asks() {
    let s = Sandboxed::new();
    let outside = s.outside("server-wrote");
    let entry = |sandbox: Option<&str>| {
        let mut server = json!({
            "command": "sh",
            "args": ["-c", format!("touch {} 2>/dev/null; exit 1", outside.display())],
        });
        if let Some(mode) = sandbox {
            server["sandbox"] = json!(mode);
        }
        std::fs::write(
            s.project.home.path().join("mcp.json"),
            json!({"mcpServers": {"probe": server}}).to_string(),
        )
        .unwrap();
    };
    let list = || {
        let mut cmd = s.command("http://127.0.0.1:9");
        cmd.args(["mcp", "list"]);
        run(cmd)
    };
    entry(Some("workspace-write"));
    let out = list();
    assert!(out.stdout.contains("probe"), "{out:?}");
    assert!(!outside.exists(), "a sandboxed server wrote outside");
    entry(None);
    list();
    assert!(outside.exists(), "the unsandboxed server did not run");

    // Only stdio servers can be sandboxed, and only in a mode Ling knows.
    for bad in [
        json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "sandbox": "read-only"}),
        json!({"command": "sh", "sandbox": "strict"}),
    ] {
        std::fs::write(
            s.project.home.path().join("mcp.json"),
            json!({"mcpServers": {"probe": bad}}).to_string(),
        )
        .unwrap();
        let out = list();
        assert_eq!(out.code, Some(2), "{out:?}");
        assert!(out.stderr.contains("\"sandbox\""), "{}", out.stderr);
    }
}

#[test]
fn commands_join_one_namespace_holder_which_ends_with_ling() {
    let s = Sandboxed::new();
    s.project.write(".git/HEAD", "x\n");
    // The shell's parent is its supervising trampoline, whose parent is Ling.
    let probe = "readlink /proc/self/ns/mnt; pgrep -P $(ps -o ppid= -p $PPID) -f -- --hold";
    let (_, results) = s.bash(&[probe, probe], &[]);
    let lines: Vec<Vec<&str>> = results.iter().map(|r| r.lines().collect()).collect();
    // Both commands in the same mount namespace, not Ling's, held by one child of Ling.
    assert_eq!(lines[0][0], lines[1][0], "{results:?}");
    let own = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    assert_ne!(lines[0][0], own.to_str().unwrap(), "{results:?}");
    assert_eq!(lines[0][1], lines[1][1], "{results:?}");
    let holder: i32 = lines[0][1]
        .parse()
        .unwrap_or_else(|_| panic!("{results:?}"));
    assert!(
        process::gone_within(holder, std::time::Duration::from_secs(5)),
        "the holder outlived Ling"
    );
}
