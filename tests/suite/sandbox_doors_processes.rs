//! The process doors of issue 18 (capabilities, processes that outlive the call, signals, Ling's
//! own memory, an MCP server's grandchildren), tried through the real binary with the harness of
//! `sandbox_doors`.

use crate::suite::sandbox_doors::{Door, OFF, User, door, flavours, settle};
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::process;

use std::process::Command;
use std::time::Duration;

use serde_json::json;

#[test]
fn root_keeps_no_capability_on_any_path() {
    for namespaces in [true, false] {
        // No .git and no .ling: the case that used to get no namespace at all.
        let d = door(User::Root, namespaces);
        let (_, results) = d.bash(
            &[
                "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs' /proc/self/status",
                "mknod blk b 7 0 && echo made",
                "mknod chr c 1 3 && echo made",
            ],
            &[],
        );
        for line in results[0].lines().filter(|l| l.starts_with("Cap")) {
            assert!(
                line.ends_with("0000000000000000"),
                "{namespaces}: {}",
                results[0]
            );
        }
        assert!(results[0].contains("NoNewPrivs:\t1"), "{}", results[0]);
        for result in &results[1..] {
            assert!(!result.contains("made"), "{namespaces}: {result}");
        }
        assert!(!d.s.project.file("blk").exists());
        // Off, root makes the device.
        let (_, results) = d.bash(&["mknod blk b 7 0 && echo made"], OFF);
        assert!(results[0].contains("made"), "{}", results[0]);
        std::fs::remove_file(d.s.project.file("blk")).unwrap();
    }
}

#[test]
fn background_processes_are_listed_and_end_with_ling() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        let out = d.s.project.file("beat");
        let writer = "setsid sh -c 'while :; do echo x >> beat; sleep 0.05; done' > /dev/null 2>&1 < /dev/null & (sh -c 'sleep 300 & echo $! > double.pid' > /dev/null 2>&1 &) ; sleep 0.2; echo started";
        let (_, results) = d.bash(&[writer], &[]);
        assert!(
            results[0].contains("still running in the background"),
            "{user:?}: {}",
            results[0]
        );
        assert!(results[0].contains("sleep 300"), "{}", results[0]);
        // Ling exited at the end of the run: nothing it started goes on.
        let double = process::read_pid(&d.s.project.file("double.pid"), "the double-forked pid");
        assert!(
            process::gone_within(double, Duration::from_secs(5)),
            "{user:?}: the double fork outlived Ling"
        );
        let size = std::fs::metadata(&out).unwrap().len();
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            std::fs::metadata(&out).unwrap().len(),
            size,
            "{user:?}: still writing after Ling"
        );

        // Ling killed with SIGKILL while the model is still answering: the same.
        std::fs::remove_file(&out).unwrap();
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![("c1", "bash", json!({"command": writer}))]),
            Reply::text("late").delay(Duration::from_secs(30)),
        ]);
        let mut cmd = d.command(&server.base_url(), &["-p", "go"]);
        let mut child = process::spawn_captured({
            cmd.stdin(std::process::Stdio::null());
            cmd
        });
        process::wait_for("the writer to start", || out.exists().then_some(()));
        process::wait_for("the second request", || {
            (server.requests().len() >= 2).then_some(())
        });
        child.kill().unwrap();
        child.wait().unwrap();
        settle();
        let size = std::fs::metadata(&out).unwrap().len();
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            std::fs::metadata(&out).unwrap().len(),
            size,
            "{user:?}: still writing after SIGKILL"
        );
    }
}

#[test]
fn a_sandboxed_command_cannot_signal_processes_outside() {
    for (user, namespaces) in flavours() {
        let mut victim = match user {
            User::Root => Command::new("sleep"),
            User::Uid1000 => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=1000", "--regid=1000", "--clear-groups", "sleep"]);
                c
            }
        }
        .arg("60")
        .spawn()
        .unwrap();
        let pid = victim.id();
        let d = door(user, namespaces);
        let (_, results) = d.bash(
            &[
                &format!("kill -STOP {pid}; kill -KILL {pid}; echo sent-$?"),
                "kill -TERM $(ps -o ppid= -p $PPID); echo parent-$?",
            ],
            &[],
        );
        assert!(
            process::alive(pid as i32),
            "{user:?}: the victim was killed: {results:?}"
        );
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        assert!(!state.contains(") T "), "{user:?}: stopped: {state}");
        assert!(results[0].contains("sent-1"), "{}", results[0]);
        assert!(results[1].contains("parent-1"), "{}", results[1]);
        // Off, it can.
        d.bash(&[&format!("kill -KILL {pid}")], OFF);
        victim.wait().unwrap();
    }
}

#[test]
fn ling_is_not_dumpable_so_unsandboxed_children_cannot_read_its_environment() {
    // As an ordinary user: root could read it anyway (CAP_SYS_PTRACE).
    let d = Door::new(User::Uid1000);
    let (_, results) = d.bash(
        &["cat /proc/$(ps -o ppid= -p $PPID | tr -d ' ')/environ | tr '\\0' '\\n' | grep -c LING_HOME; echo read-${PIPESTATUS[0]}"],
        OFF,
    );
    assert!(results[0].contains("Permission denied"), "{}", results[0]);
    assert!(results[0].contains("read-1"), "{}", results[0]);
    // Its own trampoline (the negative): readable.
    let (_, results) = d.bash(
        &["cat /proc/$$/environ | tr '\\0' '\\n' | grep -c LING_HOME"],
        OFF,
    );
    assert!(results[0].starts_with('1'), "{}", results[0]);
}

#[test]
fn grandchildren_of_a_stdio_server_end_when_ling_is_killed() {
    let d = Door::new(User::Root);
    let pid_file = d.s.project.file("grandchild.pid");
    let server = format!(
        "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > {}; exec sleep 300",
        pid_file.display()
    );
    std::fs::write(
        d.s.project.home.path().join("mcp.json"),
        json!({"mcpServers": {"leaky": {"command": "sh", "args": ["-c", server]}}}).to_string(),
    )
    .unwrap();
    let mock = MockServer::start_blocking(vec![Reply::text("late").delay(Duration::from_secs(30))]);
    // Ling may be killed before its request reaches the model.
    mock.allow_unasked(1);
    let mut cmd = d.command(&mock.base_url(), &["-p", "go"]);
    cmd.stdin(std::process::Stdio::null());
    let mut ling = process::spawn_captured(cmd);
    let grandchild = process::read_pid(&pid_file, "the server's grandchild");
    assert!(process::alive(grandchild));
    ling.kill().unwrap();
    ling.wait().unwrap();
    assert!(
        process::gone_within(grandchild, Duration::from_secs(5)),
        "the server's setsid grandchild outlived Ling's SIGKILL"
    );
}
