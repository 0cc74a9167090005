//! Runs the real `ling` binary for the integration tests: a temp dir as project root, another as
//! `LING_HOME`, no inherited model configuration, a bounded wait, and the output captured.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn ling_bin() -> &'static str {
    env!("CARGO_BIN_EXE_ling")
}

/// A project root and a `LING_HOME`, both temporary.
pub struct Project {
    pub root: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    pub fn new() -> Self {
        Self {
            root: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.file(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.file(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    /// Trusts this project as a user would: the real `ling trust` with this `LING_HOME`. Call it
    /// after writing the project config (any later change makes the project untrusted again).
    pub fn trust(&self) {
        let mut cmd = self.command("http://127.0.0.1:9");
        cmd.arg("trust");
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "ling trust failed: {out:?}");
    }

    /// A `ling` command in this project, pointed at `base_url`, with a clean environment.
    pub fn command(&self, base_url: &str) -> Command {
        let mut cmd = Command::new(ling_bin());
        cmd.current_dir(self.root.path())
            .env("LING_HOME", self.home.path())
            .env("OPENAI_BASE_URL", base_url)
            .env("LING_RETRY_BASE_MS", "5")
            .env("NO_COLOR", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("LING_BASE_URL")
            .env_remove("LING_MODEL")
            .env_remove("LING_LOG");
        cmd
    }
}

#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}):\n{}", self.stdout))
    }

    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}\n{}", self.stdout))
            })
            .collect()
    }
}

/// Runs `cmd` with `stdin` (None = no stdin at all), killing it after `limit`.
pub fn run_with(mut cmd: Command, stdin: Option<&str>, limit: Duration) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn ling");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("no stdin");
        pipe.write_all(input.as_bytes()).unwrap();
    }
    let mut stdout = child.stdout.take().expect("no stdout");
    let mut stderr = child.stderr.take().expect("no stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ling did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        code: status.code(),
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

pub fn run(cmd: Command) -> Output {
    run_with(cmd, None, Duration::from_secs(60))
}
