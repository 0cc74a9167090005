//! The doors of issue 18, each tried as an attacker would through the real binary: `ling -p`
//! in the default `workspace-write` sandbox, the mock model asking for commands that go for the
//! door, and a witness outside that records whether anything got through (a listener, a pty
//! master, a process, a file). Each has its negative: the same command with `--sandbox off`
//! (and `--permission-mode bypass`, so it runs in `-p`), or the allowed path, gets through.
//! Where behaviour differs for an ordinary user, the same doors are tried as uid 1000 with
//! `setpriv` (util-linux; the test fails, not skips, without it), and without user namespaces
//! (`LING_SANDBOX_FORCE_NO_NAMESPACES=1`, the path where the holes are cut into the grants).

use crate::suite::sandbox_bash::Sandboxed;
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::process;
use crate::support::project::{self, Output};

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

const OFF: &[&str] = &["--sandbox", "off", "--permission-mode", "bypass"];
const NO_NAMESPACES: &str = "LING_SANDBOX_FORCE_NO_NAMESPACES";

/// Who runs Ling.
#[derive(Clone, Copy, Debug, PartialEq)]
enum User {
    Root,
    Uid1000,
}

/// A sandboxed project with a home directory of its own (`HOME`).
struct Door {
    s: Sandboxed,
    home: tempfile::TempDir,
    user: User,
    env: Vec<(String, String)>,
}

impl Door {
    fn new(user: User) -> Self {
        let s = Sandboxed::new();
        let home = tempfile::tempdir().unwrap();
        let door = Self {
            s,
            home,
            user,
            env: Vec::new(),
        };
        if user == User::Uid1000 {
            for dir in [
                door.s.project.path(),
                door.s.project.home.path(),
                door.s.outside.path(),
                door.home.path(),
            ] {
                chown_1000(dir);
            }
        }
        door
    }

    fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    fn home(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    fn settings(&self, value: serde_json::Value) {
        let path = self.s.project.home.path().join("settings.json");
        std::fs::write(&path, value.to_string()).unwrap();
        if self.user == User::Uid1000 {
            chown_1000(&path);
        }
    }

    fn command(&self, base_url: &str, args: &[&str]) -> Command {
        let mut cmd = match self.user {
            User::Root => Command::new(project::ling_bin()),
            User::Uid1000 => {
                let ling = ling_for_uid_1000();
                let mut cmd = Command::new("setpriv");
                cmd.args(["--reuid=1000", "--regid=1000", "--clear-groups", "--"])
                    .arg(ling);
                cmd
            }
        };
        cmd.current_dir(self.s.project.path())
            .env("LING_HOME", self.s.project.home.path())
            .env("OPENAI_BASE_URL", base_url)
            .env("LING_RETRY_BASE_MS", "5")
            .env("NO_COLOR", "1")
            .env("HOME", self.home.path())
            .env("TMPDIR", self.s.project.home.path().join("tmp"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("LING_BASE_URL")
            .env_remove("LING_MODEL")
            .env_remove("LING_LOG")
            .env_remove(NO_NAMESPACES)
            .args(args);
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// One `ling -p` turn running each of `commands`: the run and the tool results.
    fn bash(&self, commands: &[&str], args: &[&str]) -> (Output, Vec<String>) {
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
        let mut all = vec!["-p", "go"];
        all.extend(args);
        let out = project::run(self.command(&server.base_url(), &all));
        assert_eq!(
            out.code,
            Some(0),
            "{} {:?}: {out:?}",
            commands.join("; "),
            self.user
        );
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

/// `ling` and `ling-exec` copied where uid 1000 can run them (the build's own directory may be
/// beneath one it cannot enter).
fn ling_for_uid_1000() -> &'static Path {
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("ling-uid1000-")
            .tempdir()
            .unwrap()
            .keep();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        for bin in [project::ling_bin(), env!("CARGO_BIN_EXE_ling-exec")] {
            let to = dir.join(Path::new(bin).file_name().unwrap());
            std::fs::copy(bin, &to).unwrap();
        }
        dir.join("ling")
    })
}

fn chown_1000(path: &Path) {
    let status = Command::new("chown")
        .args(["-R", "1000:1000"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(status.success());
}

/// Every flavour a door is tried in: as root and as uid 1000, with and without namespaces.
fn flavours() -> Vec<(User, bool)> {
    vec![
        (User::Root, true),
        (User::Uid1000, true),
        (User::Root, false),
        (User::Uid1000, false),
    ]
}

fn door(user: User, namespaces: bool) -> Door {
    let d = Door::new(user);
    if namespaces {
        d
    } else {
        d.env(NO_NAMESPACES, "1")
    }
}

/// What arrives on connections to `listener`, gathered on a thread.
fn record_tcp(listener: TcpListener) -> Arc<Mutex<Vec<u8>>> {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = Vec::new();
            let _ = stream.read_to_end(&mut buf);
            sink.lock().unwrap().extend(buf);
        }
    });
    got
}

fn record_unix(listener: UnixListener) -> Arc<Mutex<Vec<u8>>> {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = Vec::new();
            let _ = stream.read_to_end(&mut buf);
            sink.lock().unwrap().extend(if buf.is_empty() {
                b"<connected>".to_vec()
            } else {
                buf
            });
        }
    });
    got
}

fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn network_off_refuses_tcp_fast_open_udp_and_dns() {
    for (user, namespaces) in flavours() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = record_tcp(listener);
        let py = |body: &str| format!("python3 -c \"import socket; {body}; print('sent')\"");
        let commands = [
            py(&format!(
                "s=socket.socket(); s.sendto(b'TFO1', socket.MSG_FASTOPEN, ('127.0.0.1', {port}))"
            )),
            py(&format!(
                "s=socket.socket(); s.sendmsg([b'TFO2'], [], socket.MSG_FASTOPEN, ('127.0.0.1', {port}))"
            )),
            py(&format!(
                "s=socket.socket(); s.setsockopt(6, 30, 1); s.connect(('127.0.0.1', {port})); s.send(b'TFO3')"
            )),
            py(&format!(
                "s=socket.socket(socket.AF_INET6); s.connect(('::1', {port}))"
            )),
            py("socket.socket(socket.AF_PACKET, socket.SOCK_RAW)"),
            py("socket.getaddrinfo('example.com', 80)"),
        ];
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        let d = door(user, namespaces);
        let (_, results) = d.bash(&commands, &[]);
        settle();
        assert!(
            got.lock().unwrap().is_empty(),
            "{user:?}: bytes arrived: {results:?}"
        );
        for result in &results {
            assert!(
                !result.contains("sent\n"),
                "{user:?} {namespaces}: {result}"
            );
        }
        for result in &results[..5] {
            assert!(
                result.contains("PermissionError"),
                "{user:?} {namespaces}: {result}"
            );
        }
        // Off, the same Fast Open send reaches the listener.
        d.bash(&commands[..1], OFF);
        process::wait_for("the TFO bytes without the sandbox", || {
            got.lock().unwrap().starts_with(b"TFO1").then_some(())
        });
    }
}

#[test]
fn unix_sockets_served_outside_are_unreachable_unless_allowed() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        // A tmux-like server socket in the writable temp dir, and one outside every writable
        // root, both served by the test.
        let tmp = d.s.project.home.path().join("tmp/tmux-1000");
        std::fs::create_dir_all(&tmp).unwrap();
        let in_tmp = tmp.join("default");
        let outside = d.s.outside("docker.sock");
        let got_tmp = record_unix(UnixListener::bind(&in_tmp).unwrap());
        let got_out = record_unix(UnixListener::bind(&outside).unwrap());
        if user == User::Uid1000 {
            chown_1000(d.s.project.home.path());
            chown_1000(d.s.outside.path());
        }
        let connect = |path: &Path| {
            format!(
                "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); s.send(b'ESCAPE'); print('sent')\"",
                path.display()
            )
        };
        let abstract_name = format!("ling-door-{}-{user:?}-{namespaces}", std::process::id());
        let abstract_listener = {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
            UnixListener::bind_addr(&addr).unwrap()
        };
        let got_abstract = record_unix(abstract_listener);
        let reach_abstract = format!(
            "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0{abstract_name}'); s.send(b'ABS'); print('sent')\""
        );
        let (_, results) = d.bash(
            &[&connect(&in_tmp), &connect(&outside), &reach_abstract],
            &[],
        );
        settle();
        for (got, result) in [
            (&got_tmp, &results[0]),
            (&got_out, &results[1]),
            (&got_abstract, &results[2]),
        ] {
            assert!(
                got.lock().unwrap().is_empty(),
                "{user:?} {namespaces}: {result}"
            );
            assert!(
                !result.contains("sent\n"),
                "{user:?} {namespaces}: {result}"
            );
        }
        // Off, they are reached.
        d.bash(&[&connect(&in_tmp), &connect(&outside)], OFF);
        process::wait_for("the sockets without the sandbox", || {
            (got_tmp.lock().unwrap().starts_with(b"ESCAPE")
                && got_out.lock().unwrap().starts_with(b"ESCAPE"))
            .then_some(())
        });
        got_tmp.lock().unwrap().clear();
        got_out.lock().unwrap().clear();
        if !namespaces {
            continue;
        }
        // Allowed by name, that one is reached and the other stays covered; the project's own
        // sockets (allowed too) work within a command.
        d.settings(json!({"sandbox": {"allowUnixSockets": [in_tmp, "."]}}));
        let own = "python3 -c \"import socket,os; l=socket.socket(socket.AF_UNIX); l.bind('own.sock'); l.listen(1); c=socket.socket(socket.AF_UNIX); c.connect('own.sock'); print('own-ok')\"";
        let (_, results) = d.bash(&[&connect(&in_tmp), &connect(&outside), own], &[]);
        settle();
        assert!(
            got_tmp.lock().unwrap().starts_with(b"ESCAPE"),
            "{user:?}: {results:?}"
        );
        assert!(got_out.lock().unwrap().is_empty(), "{user:?}: {results:?}");
        assert!(results[2].contains("own-ok"), "{user:?}: {}", results[2]);
    }
}

#[test]
fn the_users_terminal_cannot_be_opened_and_tiocsti_is_refused() {
    use std::os::fd::AsRawFd;
    for (user, namespaces) in flavours() {
        let pty = nix::pty::openpty(None, None).unwrap();
        let slave = std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd())).unwrap();
        if user == User::Uid1000 {
            nix::unistd::fchown(&pty.slave, Some(1000.into()), Some(1000.into())).unwrap();
        }
        let master = std::fs::File::from(pty.master);
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let mut reader = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let slave = slave.display().to_string();
        let write = format!("printf 'FAKE allow?' > {slave} && echo wrote");
        let read = format!("timeout 1 cat {slave}; echo read-$?");
        let tiocsti = "python3 -c \"import fcntl,termios; fcntl.ioctl(1, termios.TIOCSTI, b'x')\"";
        let inside =
            "python3 -c \"import os; m,s=os.openpty(); os.write(s, b'in'); print(os.read(m, 2))\"";
        let d = door(user, namespaces);
        let (_, results) = d.bash(&[&write, &read, tiocsti, inside], &[]);
        settle();
        assert!(
            got.lock().unwrap().is_empty(),
            "{user:?} {namespaces}: {results:?}"
        );
        assert!(!results[0].contains("wrote"), "{}", results[0]);
        // Not there (the holder's own devpts) or not allowed (Landlock).
        for result in &results[..2] {
            assert!(
                result.contains("Permission denied") || result.contains("No such file"),
                "{user:?} {namespaces}: {result}"
            );
        }
        assert!(results[2].contains("PermissionError"), "{}", results[2]);
        if namespaces {
            // A pty made inside works (the holder's own devpts).
            assert!(results[3].contains("b'in'"), "{user:?}: {}", results[3]);
        }
        // Off: the write reaches the terminal, and TIOCSTI is an ordinary ioctl (ENOTTY here).
        let (_, results) = d.bash(&[&write, tiocsti], OFF);
        process::wait_for("the write without the sandbox", || {
            got.lock().unwrap().starts_with(b"FAKE").then_some(())
        });
        assert!(results[1].contains("Inappropriate ioctl"), "{}", results[1]);
        drop(pty.slave);
    }
}

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
fn credentials_are_hidden_and_a_read_is_reported_blocked() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        std::fs::create_dir_all(d.home(".ssh")).unwrap();
        std::fs::write(d.home(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
        std::fs::write(d.home(".netrc"), "machine x password SECRET-NETRC").unwrap();
        std::fs::create_dir_all(d.home(".config/gh")).unwrap();
        std::fs::write(d.home(".config/gh/hosts.yml"), "oauth_token: SECRET-GH").unwrap();
        std::fs::write(d.home("notes.txt"), "PUBLIC").unwrap();
        std::fs::create_dir_all(d.s.project.home.path().join("credentials")).unwrap();
        std::fs::write(
            d.s.project.home.path().join("credentials/x.json"),
            "SECRET-LING",
        )
        .unwrap();
        if user == User::Uid1000 {
            chown_1000(d.home.path());
            chown_1000(d.s.project.home.path());
        }
        let (_, results) = d.bash(
            &[
                "cat ~/.ssh/id_ed25519",
                "cat ~/.netrc",
                "cat ~/.config/gh/hosts.yml",
                "cat \"$LING_HOME/credentials/x.json\"",
                "ls ~/.ssh",
                "cat ~/notes.txt",
            ],
            &[],
        );
        for result in &results[..5] {
            assert!(
                !result.contains("SECRET"),
                "{user:?} {namespaces}: {result}"
            );
            assert!(
                result.contains("Permission denied"),
                "{user:?} {namespaces}: {result}"
            );
        }
        assert!(
            results[0].contains(&format!(
                "Blocked by the sandbox: reading {}",
                d.home(".ssh")
                    .canonicalize()
                    .unwrap()
                    .join("id_ed25519")
                    .display()
            )) || results[0].contains("Blocked by the sandbox: reading"),
            "{}",
            results[0]
        );
        assert!(results[5].contains("PUBLIC"), "{}", results[5]);
        // allowRead lifts one default; off shows them all.
        d.settings(json!({"sandbox": {"allowRead": ["~/.netrc"]}}));
        let (_, results) = d.bash(&["cat ~/.netrc", "cat ~/.ssh/id_ed25519"], &[]);
        assert!(results[0].contains("SECRET-NETRC"), "{}", results[0]);
        assert!(!results[1].contains("SECRET"), "{}", results[1]);
        let (_, results) = d.bash(&["cat ~/.ssh/id_ed25519"], OFF);
        assert!(results[0].contains("SECRET-KEY"), "{}", results[0]);
    }
}

#[test]
fn home_as_the_project_keeps_its_dotfiles_read_only_and_says_so() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        std::fs::write(d.home(".bashrc"), "# mine\n").unwrap();
        std::fs::create_dir_all(d.home(".config")).unwrap();
        std::fs::create_dir_all(d.home("work")).unwrap();
        if user == User::Uid1000 {
            chown_1000(d.home.path());
        }
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![
                ("c1", "bash", json!({"command": "echo evil >> ~/.bashrc"})),
                (
                    "c2",
                    "bash",
                    json!({"command": "mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys"}),
                ),
                (
                    "c3",
                    "bash",
                    json!({"command": "echo x > ~/.config/autostart && echo wrote"}),
                ),
                (
                    "c4",
                    "bash",
                    json!({"command": "echo fine > ~/work/x.txt && echo ok"}),
                ),
                ("c5", "bash", json!({"command": "echo new > ~/new.txt"})),
            ]),
            Reply::text("done"),
        ]);
        let mut cmd = d.command(&server.base_url(), &["-p", "go"]);
        cmd.current_dir(d.home.path());
        let out = project::run(cmd);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert!(
            out.stderr
                .contains("the project root is your home directory"),
            "{}",
            out.stderr
        );
        assert_eq!(
            std::fs::read_to_string(d.home(".bashrc")).unwrap(),
            "# mine\n"
        );
        assert!(
            !d.home(".ssh/authorized_keys").exists(),
            "{user:?} {namespaces}"
        );
        assert!(
            !d.home(".config/autostart").exists(),
            "{user:?} {namespaces}"
        );
        assert_eq!(
            std::fs::read_to_string(d.home("work/x.txt")).unwrap(),
            "fine\n"
        );
        assert!(!d.home("new.txt").exists(), "{user:?} {namespaces}");
    }
}

#[test]
fn nested_repositories_symlinked_git_and_a_created_git() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        let p = &d.s.project;
        p.write(".git/HEAD", "ref: refs/heads/main\n");
        p.write(".git/hooks/.keep", "");
        p.write("vendor/lib/.git/config", "[core]\n");
        p.write("realgit/config", "[core]\n");
        std::fs::create_dir_all(p.file("sub")).unwrap();
        p.write("vendor/lib/file", "");
        std::fs::create_dir_all(p.file("linked")).unwrap();
        std::os::unix::fs::symlink("../realgit", p.file("linked/.git")).unwrap();
        if user == User::Uid1000 {
            chown_1000(p.path());
        }
        let (_, results) = d.bash(
            &[
                "echo '[core] fsmonitor = evil' >> vendor/lib/.git/config",
                "ln -s ../.git/hooks sub/h && echo evil > sub/h/pre-commit",
                "rm linked/.git && mkdir linked/.git && echo evil > linked/.git/config; ls -la linked",
                "echo ok > vendor/lib/file && echo wrote",
            ],
            &[],
        );
        assert_eq!(
            p.read("vendor/lib/.git/config"),
            "[core]\n",
            "{user:?} {namespaces}: {}",
            results[0]
        );
        assert!(!p.file(".git/hooks/pre-commit").exists(), "{}", results[1]);
        assert!(
            results[1].contains(&format!(
                "writing {}",
                p.path()
                    .canonicalize()
                    .unwrap()
                    .join(".git/hooks/pre-commit")
                    .display()
            )),
            "{user:?} {namespaces}: {}",
            results[1]
        );
        // The replaced link is caught: put back and said.
        assert!(
            std::fs::symlink_metadata(p.file("linked/.git"))
                .unwrap()
                .is_symlink(),
            "{}",
            results[2]
        );
        // (Without namespaces the grants keep it from being removed at all.)
        assert!(
            results[2].contains("Blocked by the sandbox: replacing")
                || (!namespaces && results[2].contains("cannot remove 'linked/.git'")),
            "{user:?} {namespaces}: {}",
            results[2]
        );
        assert_eq!(p.read("realgit/config"), "[core]\n");
        assert!(results[3].contains("wrote"), "{}", results[3]);

        // A project without .git: the model makes one that would run code at the user's next
        // `git status`; the result says so.
        let d = door(user, namespaces);
        let (_, results) = d.bash(
            &["git init -q . && git config core.fsmonitor 'touch /tmp/pwned' && echo made"],
            &[],
        );
        assert!(results[0].contains("created .git"), "{}", results[0]);
        assert!(results[0].contains("fsmonitor"), "{}", results[0]);
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
