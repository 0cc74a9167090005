//! The shell sandbox of `docs/tools.md` through the real binary: `ling -p` with the mock model
//! calling `bash`, no rule and no flag but the one under test. Each containment has its
//! negative: what the sandbox refuses fails (and is reported as blocked, naming the path or the
//! network), what it allows runs.
//!
//! Ling's temp dir is a temp dir of its own (`TMPDIR`) so that `/tmp`, where the test's other
//! temp dirs are, counts as outside.

use crate::support::{mock_openai, project};

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mock_openai::{MockServer, Reply};
use project::{Output, Project, run};
use serde_json::json;

/// A project whose `bash` commands run in the sandbox, with a directory outside it.
pub struct Sandboxed {
    pub project: Project,
    /// A directory outside every writable root.
    pub outside: tempfile::TempDir,
    /// The run's temp dir (`TMPDIR`), a writable root of its own: not inside `LING_HOME`,
    /// which the sandbox keeps read-only.
    pub tmp: tempfile::TempDir,
}

impl Sandboxed {
    pub fn new() -> Self {
        Self {
            project: Project::new(),
            outside: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    pub fn outside(&self, name: &str) -> PathBuf {
        self.outside.path().join(name)
    }

    pub fn command(&self, base_url: &str) -> Command {
        let mut cmd = self.project.command(base_url);
        cmd.env("TMPDIR", self.tmp.path());
        cmd
    }

    /// One `ling -p` turn in which the model runs each of `commands` with bash, then says
    /// "done": the run's output and the tool results, in order.
    pub fn bash(&self, commands: &[&str], args: &[&str]) -> (Output, Vec<String>) {
        let calls: Vec<(String, serde_json::Value)> = commands
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("c{i}"), json!({"command": c})))
            .collect();
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(
                calls
                    .iter()
                    .map(|(id, input)| (id.as_str(), "bash", input.clone()))
                    .collect(),
            ),
            Reply::text("done"),
        ]);
        let mut cmd = self.command(&server.base_url());
        cmd.args(["-p", "go"]).args(args);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
        let requests = server.requests();
        let results: Vec<String> = requests
            .last()
            .expect("no request")
            .messages()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(results.len(), commands.len(), "{results:?}");
        (out, results)
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn writes_inside_the_root_run_without_a_rule_and_writes_outside_are_blocked() {
    let s = Sandboxed::new();
    let outside = s.outside("f");
    let (_, results) = s.bash(
        &[
            "echo in > inside.txt && mkdir -p build/out && echo ok > build/out/x && cat inside.txt",
            &format!("echo out > {}", shown(&outside)),
            "echo t > \"$TMPDIR/t\" && echo tmp-ok",
        ],
        &[],
    );
    assert!(results[0].starts_with("in\nExit code: 0"), "{}", results[0]);
    assert_eq!(s.project.read("build/out/x"), "ok\n");
    assert!(!outside.exists(), "the write outside happened");
    assert!(results[1].contains("Permission denied"), "{}", results[1]);
    assert!(
        results[1].contains(&format!(
            "Blocked by the sandbox: writing {}",
            shown(&outside)
        )),
        "{}",
        results[1]
    );
    assert!(results[1].contains("--sandbox off"), "{}", results[1]);
    assert!(
        results[1].contains("sandbox.writableRoots"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("tmp-ok"), "{}", results[2]);
}

#[test]
fn writable_roots_widen_and_sandbox_off_lifts_it() {
    let s = Sandboxed::new();
    let outside = s.outside("f");
    std::fs::write(
        s.project.home.path().join("settings.json"),
        json!({"sandbox": {"writableRoots": [s.outside.path()]}}).to_string(),
    )
    .unwrap();
    let (_, results) = s.bash(&[&format!("echo out > {}", shown(&outside))], &[]);
    assert!(results[0].ends_with("Exit code: 0"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "out\n");

    // Off: no sandbox, and bash asks again (denied in -p).
    let s = Sandboxed::new();
    let (_, results) = s.bash(&["true"], &["--sandbox", "off"]);
    assert!(results[0].contains("needs approval"), "{}", results[0]);
}

#[test]
fn git_and_ling_of_the_project_stay_read_only() {
    let s = Sandboxed::new();
    s.project.write(".git/HEAD", "ref: refs/heads/main\n");
    s.project.write(".git/hooks/.keep", "");
    s.project.write(".ling/settings.json", "{}");
    let (_, results) = s.bash(
        &[
            "echo evil > .git/hooks/pre-commit",
            "echo '{}' > .ling/hooks.json",
            "echo x >> .git/HEAD",
            "rm -rf .git; mv .ling ling2",
            "echo fine > src.txt && echo wrote",
        ],
        &[],
    );
    assert!(!s.project.file(".git/hooks/pre-commit").exists());
    assert!(!s.project.file(".ling/hooks.json").exists());
    assert_eq!(s.project.read(".git/HEAD"), "ref: refs/heads/main\n");
    assert!(s.project.file(".ling/settings.json").exists());
    assert!(s.project.file(".git/hooks/.keep").exists());
    for result in &results[..3] {
        assert!(
            result.contains("Blocked by the sandbox: writing"),
            "{result}"
        );
    }
    assert!(
        results[0].contains(".git/hooks/pre-commit"),
        "{}",
        results[0]
    );
    assert!(results[1].contains(".ling/hooks.json"), "{}", results[1]);
    assert!(results[4].contains("wrote"), "{}", results[4]);
    assert_eq!(s.project.read("src.txt"), "fine\n");
}

#[test]
fn read_only_writes_nothing_but_dev_null() {
    let s = Sandboxed::new();
    s.project.write("keep.txt", "kept\n");
    let (_, results) = s.bash(
        &[
            "touch new.txt",
            "echo x > keep.txt",
            "echo t > \"$TMPDIR/t\"",
            "echo gone > /dev/null && cat keep.txt",
        ],
        &["--sandbox", "read-only"],
    );
    assert!(!s.project.file("new.txt").exists());
    assert_eq!(s.project.read("keep.txt"), "kept\n");
    assert!(!s.tmp.path().join("t").exists());
    for result in &results[..3] {
        assert!(result.contains("Blocked by the sandbox"), "{result}");
        assert!(
            result.contains("read-only sandbox writes nothing"),
            "{result}"
        );
    }
    assert!(
        results[3].starts_with("kept\nExit code: 0"),
        "{}",
        results[3]
    );
}

#[test]
fn python_and_the_children_of_a_command_stay_sandboxed() {
    let s = Sandboxed::new();
    let a = s.outside("py");
    let b = s.outside("child");
    let c = s.outside("background");
    let (_, results) = s.bash(
        &[
            &format!("python3 -c \"open('{}', 'w').write('x')\"", shown(&a)),
            &format!("sh -c \"bash -c 'touch {}'\"", shown(&b)),
            &format!(
                "(sleep 0.2; touch {} 2> err.txt) & wait; cat err.txt",
                shown(&c)
            ),
            "python3 -c \"open('ok.txt', 'w').write('x')\" && echo py-ok",
        ],
        &[],
    );
    for (path, result) in [(&a, &results[0]), (&b, &results[1]), (&c, &results[2])] {
        assert!(!path.exists(), "{} was written: {result}", path.display());
        assert!(result.contains("Permission denied"), "{result}");
    }
    assert!(results[0].contains("PermissionError"), "{}", results[0]);
    assert!(results[3].contains("py-ok"), "{}", results[3]);
}

fn tcp_connect(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn tcp_and_udp_fail_with_the_network_off_and_work_with_it_on() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = listener.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let send_udp = format!("echo datagram > /dev/udp/127.0.0.1/{udp_port} && echo sent");
    let python_udp = format!(
        "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\
         .sendto(b'py', ('127.0.0.1', {udp_port})); print('sent')\""
    );

    let s = Sandboxed::new();
    let (_, results) = s.bash(&[&tcp_connect(tcp), &send_udp, &python_udp], &[]);
    for result in &results {
        assert!(
            !result.contains("connected") && !result.contains("sent"),
            "{result}"
        );
        assert!(result.contains("Permission denied"), "{result}");
    }
    assert!(
        results[0].contains("Blocked by the sandbox: the network"),
        "{}",
        results[0]
    );
    let mut buf = [0u8; 64];
    assert!(udp.recv(&mut buf).is_err(), "a datagram got through");

    std::fs::write(
        s.project.home.path().join("settings.json"),
        json!({"sandbox": {"network": true}}).to_string(),
    )
    .unwrap();
    let (_, results) = s.bash(&[&tcp_connect(tcp), &send_udp, &python_udp], &[]);
    assert!(results[0].contains("connected"), "{}", results[0]);
    assert!(results[1].contains("sent"), "{}", results[1]);
    assert!(results[2].contains("sent"), "{}", results[2]);
    let n = udp.recv(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"datagram") || buf[..n].starts_with(b"py"));
}

#[test]
fn plan_mode_runs_ls_read_only_and_refuses_touch() {
    let s = Sandboxed::new();
    s.project.write("listed.txt", "");
    let (_, results) = s.bash(&["ls", "touch made.txt"], &["--permission-mode", "plan"]);
    assert!(results[0].contains("listed.txt"), "{}", results[0]);
    assert!(results[0].ends_with("Exit code: 0"), "{}", results[0]);
    assert!(!s.project.file("made.txt").exists());
    assert!(
        results[1].contains("Blocked by the sandbox"),
        "{}",
        results[1]
    );

    // Without the sandbox, plan mode denies bash as before.
    let (_, results) = s.bash(&["ls"], &["--permission-mode", "plan", "--sandbox", "off"]);
    assert!(results[0].contains("plan mode"), "{}", results[0]);
}

#[test]
fn print_mode_runs_version_commands_with_no_rule() {
    let s = Sandboxed::new();
    let (_, results) = s.bash(&["cargo --version", "git --version"], &[]);
    assert!(results[0].starts_with("cargo "), "{}", results[0]);
    assert!(results[1].starts_with("git version"), "{}", results[1]);
    // A deny rule still applies inside the sandbox.
    let (_, results) = s.bash(&["git --version"], &["--disallowed-tools", "bash(git*)"]);
    assert!(results[0].contains("permission denied"), "{}", results[0]);
}

#[test]
fn the_init_line_shows_the_sandbox() {
    let s = Sandboxed::new();
    for (args, mode, network) in [
        (&[][..], "workspace-write", false),
        (&["--sandbox", "read-only"][..], "read-only", false),
        // What bash really gets in plan mode (issue 23: this said workspace-write).
        (&["--permission-mode", "plan"][..], "read-only", false),
        (&["--sandbox", "off"][..], "off", true),
    ] {
        // Both stream formats: Claude Code's messages and Ling's own lines.
        for format in ["stream-json", "ling-stream-json"] {
            let server = MockServer::start_blocking(vec![Reply::text("hi")]);
            let mut cmd = s.command(&server.base_url());
            cmd.args(["-p", "x", "--output-format", format]).args(args);
            let out = run(cmd);
            assert_eq!(out.code, Some(0), "{}", out.stderr);
            let init = out
                .json_lines()
                .into_iter()
                .find(|l| l["subtype"] == "init")
                .unwrap_or_else(|| panic!("no init line in {format}: {}", out.stdout));
            assert_eq!(
                init["sandbox"],
                json!({"mode": mode, "network": network}),
                "{format}"
            );
        }
    }
}
