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

pub(crate) const OFF: &[&str] = &["--sandbox", "off", "--permission-mode", "bypass"];
pub(crate) const NO_NAMESPACES: &str = "LING_SANDBOX_FORCE_NO_NAMESPACES";

/// Who runs Ling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum User {
    Root,
    Uid1000,
}

/// A sandboxed project with a home directory of its own (`HOME`).
pub(crate) struct Door {
    pub(crate) s: Sandboxed,
    pub(crate) home: tempfile::TempDir,
    pub(crate) user: User,
    env: Vec<(String, String)>,
}

impl Door {
    pub(crate) fn new(user: User) -> Self {
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
                door.s.tmp.path(),
                door.home.path(),
            ] {
                chown_1000(dir);
            }
        }
        door
    }

    pub(crate) fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    pub(crate) fn home(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    pub(crate) fn settings(&self, value: serde_json::Value) {
        let path = self.s.project.home.path().join("settings.json");
        std::fs::write(&path, value.to_string()).unwrap();
        if self.user == User::Uid1000 {
            chown_1000(&path);
        }
    }

    pub(crate) fn command(&self, base_url: &str, args: &[&str]) -> Command {
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
            .env("TMPDIR", self.s.tmp.path())
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
    pub(crate) fn bash(&self, commands: &[&str], args: &[&str]) -> (Output, Vec<String>) {
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
/// beneath one it cannot enter). One folder per build of the two binaries (named after their
/// sizes and times), reused by every test binary and run of that build instead of a copy each.
pub(crate) fn ling_for_uid_1000() -> &'static Path {
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        use std::os::unix::fs::PermissionsExt;
        let bins = [project::ling_bin(), env!("CARGO_BIN_EXE_ling-exec")];
        let mut build = std::collections::hash_map::DefaultHasher::new();
        for bin in bins {
            let meta = std::fs::metadata(bin).unwrap();
            (bin, meta.len(), meta.modified().unwrap()).hash(&mut build);
        }
        let dir = std::env::temp_dir().join(format!("ling-uid1000-{:016x}", build.finish()));
        if dir.join("ling").exists() {
            return dir.join("ling");
        }
        // Built beside it and renamed into place: a test binary running at the same time sees
        // the whole folder or none.
        let staging = tempfile::Builder::new()
            .prefix("ling-uid1000-staging-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for bin in bins {
            let to = staging.path().join(Path::new(bin).file_name().unwrap());
            std::fs::copy(bin, &to).unwrap();
        }
        let staged = staging.keep();
        if std::fs::rename(&staged, &dir).is_err() {
            // Another test binary put the same build there first.
            std::fs::remove_dir_all(&staged).ok();
        }
        dir.join("ling")
    })
}

pub(crate) fn chown_1000(path: &Path) {
    let status = Command::new("chown")
        .args(["-R", "1000:1000"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(status.success());
}

/// Every flavour a door is tried in: as root and as uid 1000, with and without namespaces.
pub(crate) fn flavours() -> Vec<(User, bool)> {
    vec![
        (User::Root, true),
        (User::Uid1000, true),
        (User::Root, false),
        (User::Uid1000, false),
    ]
}

pub(crate) fn door(user: User, namespaces: bool) -> Door {
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

pub(crate) fn settle() {
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
        let tmp = d.s.tmp.path().join("tmux-1000");
        std::fs::create_dir_all(&tmp).unwrap();
        let in_tmp = tmp.join("default");
        let outside = d.s.outside("docker.sock");
        let got_tmp = record_unix(UnixListener::bind(&in_tmp).unwrap());
        let got_out = record_unix(UnixListener::bind(&outside).unwrap());
        if user == User::Uid1000 {
            chown_1000(d.s.tmp.path());
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
