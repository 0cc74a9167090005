//! The file rules of `docs/trust.md`, through the real binary: everything Ling writes under
//! `LING_HOME` is owner-only (folders 0700, files 0600, looser ones tightened); `AGENTS.md` is
//! read only from inside the project root and only up to 64 KiB; a configuration file that is a
//! FIFO or `/dev/zero` is a configuration error naming it, never a hang.

use crate::support::mcp::test_server;
use crate::support::{mock_openai, project};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run, run_with};
use rexpect::session::spawn_command;
use serde_json::{Value, json};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every folder and file under `dir`, with its mode.
fn modes_under(dir: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let is_dir = path.is_dir();
            found.push((path.clone(), is_dir, mode(&path)));
            if is_dir {
                dirs.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn everything_ling_writes_under_ling_home_is_owner_only() {
    let project = Project::new();
    let home = project.home.path();
    // Left behind loose by an older version: tightened when Ling writes there again.
    std::fs::create_dir_all(home.join("sessions")).unwrap();
    set_mode(&home.join("sessions"), 0o755);
    std::fs::create_dir_all(home.join("logs")).unwrap();
    set_mode(&home.join("logs"), 0o755);
    std::fs::write(home.join("logs/ling.log"), "old line\n").unwrap();
    set_mode(&home.join("logs/ling.log"), 0o644);
    let config = json!({"mcpServers": {"test": {
        "command": test_server(), "args": ["--stderr-lines", "3"], "startupTimeoutMs": 10000
    }}});
    std::fs::write(home.join("mcp.json"), config.to_string()).unwrap();

    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b1", "mcp__test__big", json!({"chars": 150_000}))]),
        Reply::text("done"),
        Reply::text("from the repl"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_LOG", "debug")
        .args(["-p", "big", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);

    // `ling mcp add --scope user` rewrites ~/.ling/mcp.json.
    let mut cmd = project.command(&server.base_url());
    cmd.args(["mcp", "add", "--scope", "user", "other", "--", "true"]);
    assert_eq!(run(cmd).code, Some(0));

    // The REPL writes the history.
    let mut cmd = project.command(&server.base_url());
    cmd.env("TERM", "xterm");
    let mut repl = spawn_command(cmd, Some(20_000)).unwrap();
    repl.exp_string("> ").unwrap();
    repl.send_line("hello from the pty").unwrap();
    repl.exp_string("from the repl").unwrap();
    repl.exp_string("> ").unwrap();
    repl.send_line("/exit").unwrap();
    repl.exp_eof().unwrap();

    let found = modes_under(home);
    let names: Vec<String> = found
        .iter()
        .map(|(path, _, _)| {
            path.strip_prefix(home)
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect();
    for expected in ["history", "logs/ling.log", "logs/mcp-test.log", "mcp.json"] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} in {names:?}"
        );
    }
    for prefix in ["sessions/", "tool-output/"] {
        assert!(
            names.iter().any(|n| n.starts_with(prefix)),
            "{prefix} in {names:?}"
        );
    }
    // The user's own mcp.json was written by the test with the umask's mode, then rewritten by
    // `ling mcp add`: it must be 0600 too.
    // A link (`logs/ling.log`, to today's log file) has no mode of its own: its target, which
    // must be under LING_HOME, is checked where it is.
    let real_home = home.canonicalize().unwrap();
    let inside = |path: &Path| {
        path.canonicalize()
            .is_ok_and(|target| target.starts_with(&real_home))
    };
    let loose: Vec<String> = found
        .iter()
        .filter(|(path, _, _)| !(path.is_symlink() && inside(path)))
        .filter(|(_, is_dir, mode)| *mode != if *is_dir { 0o700 } else { 0o600 })
        .map(|(path, _, mode)| format!("{} {mode:o}", path.display()))
        .collect();
    assert!(loose.is_empty(), "not owner-only: {loose:?}");
}

fn system_prompt(server: &MockServer) -> String {
    let requests = server.requests();
    requests[0].messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_agents_md_symlinked_out_of_the_root_is_not_sent() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "-----BEGIN OUTSIDEMARK PRIVATE KEY-----\n").unwrap();
    let project = Project::new();
    std::os::unix::fs::symlink(&secret, project.file("AGENTS.md")).unwrap();
    project.write("docs/rules.md", "INSIDEMARK: run make test.\n");
    std::os::unix::fs::symlink("docs/rules.md", project.file("LING.md")).unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let system = system_prompt(&server);
    assert!(!system.contains("OUTSIDEMARK"), "the outside file was sent");
    assert!(
        system.contains("INSIDEMARK"),
        "a link inside the root is read"
    );
    let resolved = secret.canonicalize().unwrap();
    let warning = format!(
        "warning: AGENTS.md was not read: it leads to {}, outside the project root",
        resolved.display()
    );
    assert!(out.stderr.contains(&warning), "{}", out.stderr);
}

#[test]
fn a_large_agents_md_is_cut_with_a_warning() {
    let project = Project::new();
    let text = format!("HEADMARK\n{}\nTAILMARK\n", "x".repeat(100 * 1024));
    project.write("AGENTS.md", &text);
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let system = system_prompt(&server);
    assert!(system.contains("HEADMARK") && !system.contains("TAILMARK"));
    assert!(
        out.stderr.contains(
            "warning: AGENTS.md is larger than 64 KiB; only its first 64 KiB went into the \
             system prompt"
        ),
        "{}",
        out.stderr
    );
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

/// Runs `ling args` and expects a configuration error naming `path` (exit 2), quickly.
fn assert_config_error(project: &Project, args: &[&str], path: &Path, kind: &str) -> Output {
    let mut cmd = project.command("http://127.0.0.1:9/v1");
    cmd.args(args);
    let started = Instant::now();
    let out = run_with(cmd, None, Duration::from_secs(20));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.code, Some(2), "stderr: {}", out.stderr);
    let expected = format!("error: {} is {kind}", path.display());
    assert!(
        out.stderr.contains(&expected),
        "{expected:?} not in {}",
        out.stderr
    );
    out
}

#[test]
fn config_files_that_are_fifos_or_devices_are_errors_not_hangs() {
    let project = Project::new();
    let settings = project.home.path().join("settings.json");
    mkfifo(&settings);
    let out = assert_config_error(&project, &["-p", "hi"], &settings, "a FIFO (named pipe)");
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    std::fs::remove_file(&settings).unwrap();

    std::os::unix::fs::symlink("/dev/zero", &settings).unwrap();
    assert_config_error(&project, &["-p", "hi"], &settings, "a character device");
    std::fs::remove_file(&settings).unwrap();

    let hooks = project.home.path().join("hooks.json");
    std::os::unix::fs::symlink("/dev/zero", &hooks).unwrap();
    assert_config_error(&project, &["hooks", "list"], &hooks, "a character device");
    std::fs::remove_file(&hooks).unwrap();

    let extra = project.file("extra-mcp.json");
    mkfifo(&extra);
    let args = ["mcp", "list", "--mcp-config", "extra-mcp.json"];
    assert_config_error(&project, &args, &extra, "a FIFO (named pipe)");
}

#[test]
fn a_config_file_over_the_size_limit_is_an_error() {
    let project = Project::new();
    let mcp = project.home.path().join("mcp.json");
    let padding = " ".repeat(5 * 1024 * 1024);
    std::fs::write(&mcp, format!("{{\"mcpServers\": {{}}{padding}}}")).unwrap();
    let out = assert_config_error(&project, &["mcp", "list"], &mcp, "larger than 4 MiB");
    assert!(out.stderr.contains("make it smaller"), "{}", out.stderr);
}

/// `write_file` and `edit_file` reach the checked path without following a symlink that
/// appears after the check: while a folder of the project is swapped again and again for a
/// symlink to a folder outside, hundreds of writes into it (in `accept-edits`, no question)
/// land inside or fail saying a link appeared, and nothing is ever written outside.
#[test]
fn a_folder_swapped_for_a_symlink_mid_write_never_lets_a_write_out() {
    let project = Project::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.file("sub")).unwrap();
    project.write("sub/seen.txt", "seen\n");
    let calls: Vec<(String, Value)> = (0..150)
        .map(|n| {
            (
                format!("w{n}"),
                json!({"path": format!("sub/f{n}.txt"), "content": format!("{n}\n")}),
            )
        })
        .collect();
    let mut replies = Vec::new();
    for chunk in calls.chunks(50) {
        replies.push(Reply::tool_calls(
            chunk
                .iter()
                .map(|(id, args)| (id.as_str(), "write_file", args.clone()))
                .collect(),
        ));
    }
    replies.push(Reply::text("done"));
    let server = MockServer::start_blocking(replies);

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (sub, aside, target) = (
            project.file("sub"),
            project.file("sub.real"),
            outside.path().to_path_buf(),
        );
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut flips = 0u64;
            let pause = || {
                let until = Instant::now() + Duration::from_micros(200);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            };
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if std::fs::rename(&sub, &aside).is_ok() {
                    let _ = std::os::unix::fs::symlink(&target, &sub);
                    pause();
                    if std::fs::symlink_metadata(&sub).is_ok_and(|m| m.is_symlink()) {
                        let _ = std::fs::remove_file(&sub);
                    }
                    // A write that found `sub` missing made a new one: keep it, and what it
                    // holds, beside the real one.
                    if std::fs::rename(&aside, &sub).is_err() {
                        let _ = std::fs::rename(&aside, format!("{}.{flips}", aside.display()));
                    }
                    flips += 1;
                }
                pause();
            }
            flips
        })
    };
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "write", "--permission-mode", "accept-edits"]);
    let out = run_with(cmd, None, Duration::from_secs(120));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(flips > 10, "the folder was swapped only {flips} times");
    let escaped: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        escaped.is_empty(),
        "written outside the project: {escaped:?}"
    );
    // Every call either wrote inside or was refused (the ones that met a link saying so).
    let last = server.requests().last().unwrap().messages();
    let results: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 150);
    let created = results.iter().filter(|r| r.starts_with("Created")).count();
    for result in &results {
        assert!(
            result.starts_with("Created")
                || result.contains("is a symbolic link")
                || result.contains("outside the project root")
                || result.contains("cannot"),
            "{result}"
        );
    }
    assert!(created > 0, "{results:?}");
}
