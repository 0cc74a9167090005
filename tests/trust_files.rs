//! The file rules of `docs/trust.md`, through the real binary: everything Ling writes under
//! `LING_HOME` is owner-only (folders 0700, files 0600, looser ones tightened); `AGENTS.md` is
//! read only from inside the project root and only up to 64 KiB; a configuration file that is a
//! FIFO or `/dev/zero` is a configuration error naming it, never a hang.

#[path = "support/ling.rs"]
mod ling;
#[path = "support/mock_openai.rs"]
mod mock_openai;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ling::{Output, Project, run, run_with};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use rexpect::session::spawn_command;
use serde_json::json;

fn test_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap_or_else(|| panic!("no target dir above {}", exe.display()));
    dir.join("examples").join("mcp-test-server")
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Every folder and file under `dir`, with its mode.
fn modes_under(dir: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
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
    std::fs::create_dir_all(home.join("sessions")).unwrap_or_else(|e| panic!("{e}"));
    set_mode(&home.join("sessions"), 0o755);
    std::fs::create_dir_all(home.join("logs")).unwrap_or_else(|e| panic!("{e}"));
    set_mode(&home.join("logs"), 0o755);
    std::fs::write(home.join("logs/ling.log"), "old line\n").unwrap_or_else(|e| panic!("{e}"));
    set_mode(&home.join("logs/ling.log"), 0o644);
    let config = json!({"mcpServers": {"test": {
        "command": test_server(), "args": ["--stderr-lines", "3"], "startupTimeoutMs": 10000
    }}});
    std::fs::write(home.join("mcp.json"), config.to_string()).unwrap_or_else(|e| panic!("{e}"));

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
    let mut repl = spawn_command(cmd, Some(20_000)).unwrap_or_else(|e| panic!("pty: {e}"));
    repl.exp_string("> ").unwrap_or_else(|e| panic!("{e}"));
    repl.send_line("hello from the pty")
        .unwrap_or_else(|e| panic!("{e}"));
    repl.exp_string("from the repl")
        .unwrap_or_else(|e| panic!("{e}"));
    repl.exp_string("> ").unwrap_or_else(|e| panic!("{e}"));
    repl.send_line("/exit").unwrap_or_else(|e| panic!("{e}"));
    repl.exp_eof().unwrap_or_else(|e| panic!("{e}"));

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
    let loose: Vec<String> = found
        .iter()
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
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let secret = outside.path().join("id_rsa");
    std::fs::write(&secret, "-----BEGIN OUTSIDEMARK PRIVATE KEY-----\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let project = Project::new();
    std::os::unix::fs::symlink(&secret, project.file("AGENTS.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    project.write("docs/rules.md", "INSIDEMARK: run make test.\n");
    std::os::unix::fs::symlink("docs/rules.md", project.file("LING.md"))
        .unwrap_or_else(|e| panic!("{e}"));
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
    let resolved = secret.canonicalize().unwrap_or_else(|e| panic!("{e}"));
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
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap_or_else(|e| panic!("{e}"));
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
    std::fs::remove_file(&settings).unwrap_or_else(|e| panic!("{e}"));

    std::os::unix::fs::symlink("/dev/zero", &settings).unwrap_or_else(|e| panic!("{e}"));
    assert_config_error(&project, &["-p", "hi"], &settings, "a character device");
    std::fs::remove_file(&settings).unwrap_or_else(|e| panic!("{e}"));

    let hooks = project.home.path().join("hooks.json");
    std::os::unix::fs::symlink("/dev/zero", &hooks).unwrap_or_else(|e| panic!("{e}"));
    assert_config_error(&project, &["hooks", "list"], &hooks, "a character device");
    std::fs::remove_file(&hooks).unwrap_or_else(|e| panic!("{e}"));

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
    std::fs::write(&mcp, format!("{{\"mcpServers\": {{}}{padding}}}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = assert_config_error(&project, &["mcp", "list"], &mcp, "larger than 4 MiB");
    assert!(out.stderr.contains("make it smaller"), "{}", out.stderr);
}
