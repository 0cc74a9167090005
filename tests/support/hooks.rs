//! Helpers for the hook tests: a temp project and `LING_HOME`, hooks.json writers, scripts, and
//! a check that a process is really gone.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use ling::config::hooks::HookLayers;
use ling::config::{Paths, ProjectConfig};
use ling::hooks::{HookContext, HookEngine, HookInput};
use serde_json::{Value, json};
use tempfile::TempDir;

pub struct Project {
    pub root: TempDir,
    pub home: TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            root: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn paths(&self) -> Paths {
        Paths::with_home(
            self.root.path().to_path_buf(),
            self.home.path().to_path_buf(),
        )
    }

    /// Writes `.ling/hooks.json` in the project.
    pub fn project_hooks(&self, hooks: &Value) -> PathBuf {
        let path = self.paths().project_file("hooks.json");
        write(&path, &serde_json::to_string_pretty(hooks).unwrap());
        path
    }

    /// Writes `hooks.json` in `LING_HOME`.
    pub fn user_hooks(&self, hooks: &Value) -> PathBuf {
        let path = self.paths().user_file("hooks.json");
        write(&path, &serde_json::to_string_pretty(hooks).unwrap());
        path
    }

    /// Writes an executable script into the project root; returns `./name` for `command`.
    pub fn script(&self, name: &str, body: &str) -> String {
        let path = self.root().join(name);
        write(&path, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("./{name}")
    }

    /// The project's config as read now, trusted as `ling trust` would record it.
    pub fn trusted(&self) -> ProjectConfig {
        let mut config = ProjectConfig::read(&self.paths()).unwrap();
        config.trust().unwrap();
        config
    }

    /// Loads the engine (the project trusted), failing the test on a configuration error.
    pub fn engine(&self) -> HookEngine {
        HookEngine::load(&self.paths(), &self.trusted(), HookLayers::ALL)
            .expect("hooks did not load")
            .0
    }

    pub fn ctx(&self) -> HookContext {
        HookContext {
            session_id: "session-1".into(),
            transcript_path: self.home.path().join("sessions/session-1.jsonl"),
            cwd: self.root().to_path_buf(),
            permission_mode: "default".into(),
            agent: None,
        }
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root().join(name)).unwrap_or_default()
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `{"hooks": {event: [{"matcher": m, "hooks": handlers}]}}`.
pub fn hooks_file(event: &str, matcher: Option<&str>, handlers: Value) -> Value {
    let mut group = json!({ "hooks": handlers });
    if let Some(m) = matcher {
        group["matcher"] = json!(m);
    }
    json!({ "hooks": { event: [group] } })
}

pub fn command(cmd: &str) -> Value {
    json!({ "type": "command", "command": cmd })
}

pub fn pre_tool(tool: &str, input: Value) -> HookInput {
    HookInput::PreToolUse {
        tool_name: tool.into(),
        tool_input: input,
        tool_use_id: "call_1".into(),
    }
}

pub use super::process::alive;

/// Waits up to `secs` for `name` in the project to hold a pid (without blocking the runtime, so
/// the hooks under test keep running).
pub async fn read_pid(project: &Project, name: &str, secs: f64) -> i32 {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    loop {
        if let Ok(pid) = project.read(name).trim().parse() {
            return pid;
        }
        assert!(std::time::Instant::now() < until, "{name} never held a pid");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Waits up to `secs` for `pid` to be gone; returns whether it is.
pub async fn gone(pid: i32, secs: f64) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    while alive(pid) && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    !alive(pid)
}
