//! [`ChildEnv`]: what every program Ling starts for the user gets, decided once from the
//! resolved settings and handed to the three places that spawn (the `bash` tool through its
//! `ToolContext`, the hook engine, the MCP manager's options).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::process::Command;

use super::exec::Trampoline;
use super::sandbox::{self, Decision, Holder, Policy, SandboxMode, Scope};
use crate::config::Settings;

/// The variable the model API key is read from unless settings `apiKeyEnv` names another.
pub const DEFAULT_KEY_VAR: &str = crate::config::DEFAULT_API_KEY_ENV;

const NO_TRAMPOLINE: &str = "the shell sandbox needs Ling's trampoline (`ling __ling-exec`), \
                             which this process cannot start; use --sandbox off";

/// The environment children start in: Ling's own minus the variables that hold the model API
/// key (unless settings `shareApiKeyWithTools`), and, from the `ling` binary, the trampoline
/// that ties a child to Ling's life. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ChildEnv {
    removed: Arc<[String]>,
    /// Settings `env`: set in every child (never a removed variable).
    added: Arc<[(String, String)]>,
    trampoline: Option<Trampoline>,
    /// The run's sandbox and project root, for every child that may be sandboxed (the `bash`
    /// tool's, command hooks with `sandbox.hooks`, stdio MCP servers with `"sandbox"`).
    sandbox: Option<Arc<RunSandbox>>,
    /// The namespaces sandboxed commands join (started with the first that needs them).
    holder: Arc<Mutex<Option<HolderState>>>,
}

/// The run's namespace holder, or that it could not be had.
#[derive(Debug)]
enum HolderState {
    Running(Holder),
    Refused,
}

/// The run's sandbox: the decision, the project root, and what it protects and hides (found
/// once, at the first command that needs it).
#[derive(Debug)]
struct RunSandbox {
    decision: Decision,
    root: PathBuf,
    scope: OnceLock<Scope>,
}

impl RunSandbox {
    fn scope(&self) -> &Scope {
        self.scope.get_or_init(|| self.decision.scope(&self.root))
    }
}

impl PartialEq for ChildEnv {
    fn eq(&self, other: &Self) -> bool {
        let sandbox = |e: &Self| {
            e.sandbox
                .as_ref()
                .map(|s| (s.decision.clone(), s.root.clone()))
        };
        self.removed == other.removed
            && self.added == other.added
            && self.trampoline == other.trampoline
            && sandbox(self) == sandbox(other)
    }
}

/// The `bash` tool's shell, ready to spawn: `report` is the pipe on which its supervising
/// trampoline says how the command ended and what it left running
/// ([`crate::process::supervise::Report`]); `None` without a trampoline.
pub struct Session {
    pub command: Command,
    pub report: Option<tokio::net::unix::pipe::Receiver>,
}

impl Eq for ChildEnv {}

impl Default for ChildEnv {
    /// Without `OPENAI_API_KEY`, started directly: the safe choice for code that was not told
    /// the settings (library users, tests).
    fn default() -> Self {
        Self::without([DEFAULT_KEY_VAR])
    }
}

impl ChildEnv {
    /// Children without the key variables the settings name: `OPENAI_API_KEY` and `apiKeyEnv`,
    /// or none with `shareApiKeyWithTools`.
    pub fn from_settings(settings: &Settings) -> Self {
        let mut removed = Vec::new();
        if !settings.share_api_key_with_tools {
            removed.push(DEFAULT_KEY_VAR.to_string());
            if settings.api_key_env != DEFAULT_KEY_VAR {
                removed.push(settings.api_key_env.clone());
            }
        }
        let mut env = Self::without(removed);
        env.added = settings
            .env
            .iter()
            .filter(|(name, _)| *name != DEFAULT_KEY_VAR && **name != settings.api_key_env)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        env
    }

    /// Children that do not inherit these variables, started directly.
    pub fn without<S: Into<String>>(vars: impl IntoIterator<Item = S>) -> Self {
        Self {
            removed: vars.into_iter().map(Into::into).collect(),
            added: Arc::new([]),
            trampoline: None,
            sandbox: None,
            holder: Arc::default(),
        }
    }

    /// Starts tied children through `trampoline` (none: directly).
    /// The program children start through, when they start through one.
    pub fn trampoline_exe(&self) -> Option<&std::path::Path> {
        self.trampoline.as_ref().map(Trampoline::exe)
    }

    pub fn with_trampoline(mut self, trampoline: Option<Trampoline>) -> Self {
        self.trampoline = trampoline;
        self
    }

    /// The run's sandbox (`decision`) for commands run in `root`.
    pub fn with_sandbox(mut self, decision: Decision, root: PathBuf) -> Self {
        self.sandbox = Some(Arc::new(RunSandbox {
            decision,
            root,
            scope: OnceLock::new(),
        }));
        self
    }

    /// The policy of a command in `mode` (the answer of [`Decision::effective`]): `None` when
    /// off or when this run has no sandbox.
    pub fn policy(&self, mode: SandboxMode) -> Option<Policy> {
        let run = self.sandbox.as_deref()?;
        if !run.decision.is_on() {
            return None;
        }
        run.decision.policy(mode, run.scope())
    }

    /// The sandbox of command hooks: the run's, when it is on and settings `sandbox.hooks`.
    pub fn hook_policy(&self) -> Option<Policy> {
        let run = self.sandbox.as_deref()?;
        if !run.decision.hooks {
            return None;
        }
        self.policy(run.decision.mode)
    }

    /// The sandbox of a stdio MCP server whose entry asks for `mode`: an error when this
    /// kernel cannot enforce it (the server then does not start).
    pub fn server_policy(&self, mode: SandboxMode) -> Result<Option<Policy>, String> {
        if mode == SandboxMode::Off {
            return Ok(None);
        }
        sandbox::availability().map_err(|e| e.to_string())?;
        let Some(run) = self.sandbox.as_deref() else {
            // No run (library users): the sandbox of a run in the working directory.
            let mut decision = Decision::off();
            decision.network = false;
            let scope = decision.scope(&std::env::current_dir().unwrap_or_default());
            decision.mode = mode;
            return Ok(decision.policy(mode, &scope));
        };
        let mut decision = run.decision.clone();
        // The server's network is the run's, off without a sandbox.
        decision.network = decision.is_on() && decision.network;
        Ok(decision.policy(mode, run.scope()))
    }

    /// A tied child inside `policy` (its own group is the caller's to set). An error without a
    /// trampoline, which alone can apply a sandbox.
    pub fn sandboxed_command(
        &self,
        program: impl AsRef<OsStr>,
        policy: &Policy,
    ) -> Result<Command, String> {
        let Some(trampoline) = &self.trampoline else {
            return Err(NO_TRAMPOLINE.into());
        };
        let policy = self.joined(trampoline, policy);
        let mut options = vec![OsString::from("--supervise")];
        options.extend(policy.to_args());
        let mut cmd = trampoline.command_with(program.as_ref(), &options);
        self.strip(&mut cmd);
        Ok(cmd)
    }

    /// `policy` joining the run's namespace holder (started here, with the first sandboxed
    /// command, or restarted for other paths). Without a holder (user namespaces refused) the
    /// grants go around the protected and hidden paths instead, and only once per run is that
    /// tried.
    fn joined(&self, trampoline: &Trampoline, policy: &Policy) -> Policy {
        let mut policy = policy.clone();
        if std::env::var_os(sandbox::FORCE_NO_NAMESPACES_VAR).is_some_and(|v| v == "1") {
            return policy;
        }
        // The run's whole scope, whatever this command's mode, so that plan mode's read-only
        // commands and the others share one holder.
        let (protect, hide) = match self.sandbox.as_deref() {
            Some(run) => (run.scope().protect.clone(), run.scope().hide.clone()),
            None => (policy.protect.clone(), policy.hide.clone()),
        };
        let Ok(mut holder) = self.holder.lock() else {
            return policy;
        };
        let serves = |h: &HolderState| match h {
            HolderState::Running(h) => h.serves(&protect, &hide),
            HolderState::Refused => true,
        };
        if holder.as_ref().is_none_or(|h| !serves(h)) {
            *holder = Some(match Holder::start(trampoline.exe(), &protect, &hide) {
                Ok(started) => HolderState::Running(started),
                Err(e) => {
                    tracing::info!("sandbox: {e}; the grants go around protected paths");
                    HolderState::Refused
                }
            });
        }
        policy.join = match holder.as_ref() {
            Some(HolderState::Running(h)) => Some(h.pid()),
            _ => None,
        };
        policy
    }

    /// The variables children do not inherit.
    pub fn removed(&self) -> &[String] {
        &self.removed
    }

    /// Whether tied children go through the trampoline (and so die with Ling).
    pub fn is_tied(&self) -> bool {
        self.trampoline.is_some()
    }

    /// `program`, started directly, without the removed variables. Arguments, stdio, working
    /// directory and further variables are the caller's; a variable the caller sets explicitly
    /// afterwards (an MCP server's `env`) is passed even if it is one of the removed ones.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.strip(&mut cmd);
        cmd
    }

    /// Like [`ChildEnv::command`], but the child dies with Ling, even on SIGKILL, when there is
    /// a trampoline (`exec`). Spawn it from async code (a runtime worker or the main thread),
    /// never from a `spawn_blocking` thread: the kernel signals the child when the spawning
    /// *thread* ends, and blocking-pool threads end when idle.
    pub fn tied_command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = match &self.trampoline {
            // Supervised: what the program starts ends with it, or with Ling.
            Some(trampoline) => trampoline.command_with(program.as_ref(), &["--supervise".into()]),
            None => Command::new(program),
        };
        self.strip(&mut cmd);
        cmd
    }

    /// The `bash` tool's shell: tied to Ling like [`ChildEnv::tied_command`], in a session of
    /// its own (its pid is its process group, and it has no controlling terminal), supervised
    /// with a report (so nothing it starts outlives Ling, and the call learns what it left
    /// running), and inside `sandbox` when given. Its stdin is the report pipe (the shell's own
    /// is `/dev/null`): the caller must not set it. Without a trampoline the child only gets a
    /// process group of its own and no stdin, and a sandbox is an error.
    pub fn session_command(
        &self,
        program: impl AsRef<OsStr>,
        sandbox: Option<&Policy>,
    ) -> Result<Session, String> {
        let (mut cmd, report) = match &self.trampoline {
            Some(trampoline) => {
                let mut options: Vec<OsString> = vec!["--setsid".into(), "--report".into()];
                let sandbox = sandbox.map(|p| self.joined(trampoline, p));
                options.extend(sandbox.as_ref().map(Policy::to_args).unwrap_or_default());
                let mut cmd = trampoline.command_with(program.as_ref(), &options);
                let (writer, reader) = tokio::net::unix::pipe::pipe()
                    .map_err(|e| format!("cannot make the report pipe: {e}"))?;
                let writer = writer
                    .into_blocking_fd()
                    .map_err(|e| format!("cannot make the report pipe: {e}"))?;
                cmd.stdin(Stdio::from(writer));
                (cmd, Some(reader))
            }
            None if sandbox.is_some() => return Err(NO_TRAMPOLINE.into()),
            None => {
                let mut cmd = Command::new(program);
                cmd.process_group(0).stdin(Stdio::null());
                (cmd, None)
            }
        };
        self.strip(&mut cmd);
        Ok(Session {
            command: cmd,
            report,
        })
    }

    fn strip(&self, cmd: &mut Command) {
        for var in self.removed.iter() {
            cmd.env_remove(var);
        }
        for (name, value) in self.added.iter() {
            cmd.env(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RawSettings, SettingsOverrides};

    fn settings(json: &str) -> Settings {
        let raw: RawSettings = serde_json::from_str(json).unwrap();
        Settings::resolve(
            &RawSettings::default(),
            &raw,
            &SettingsOverrides::default(),
            &|_| None,
        )
        .unwrap()
    }

    #[test]
    fn the_key_variables_are_removed_unless_shared() {
        assert_eq!(
            ChildEnv::from_settings(&settings("{}")).removed(),
            ["OPENAI_API_KEY"]
        );
        assert_eq!(
            ChildEnv::from_settings(&settings(r#"{"apiKeyEnv":"DEEPSEEK_API_KEY"}"#)).removed(),
            ["OPENAI_API_KEY", "DEEPSEEK_API_KEY"]
        );
        let shared = r#"{"apiKeyEnv":"K","shareApiKeyWithTools":true}"#;
        assert!(
            ChildEnv::from_settings(&settings(shared))
                .removed()
                .is_empty()
        );
        assert_eq!(ChildEnv::default().removed(), ["OPENAI_API_KEY"]);
    }

    #[test]
    fn an_explicit_variable_set_after_wins_over_the_removal() {
        let mut cmd = ChildEnv::default().command("env");
        cmd.env("OPENAI_API_KEY", "passed");
        let envs: Vec<_> = cmd.as_std().get_envs().collect();
        assert_eq!(
            envs,
            vec![(OsStr::new("OPENAI_API_KEY"), Some(OsStr::new("passed")))]
        );
        let cmd = ChildEnv::default().command("env");
        let envs: Vec<_> = cmd.as_std().get_envs().collect();
        assert_eq!(envs, vec![(OsStr::new("OPENAI_API_KEY"), None)]);
    }

    #[test]
    fn tied_commands_go_through_the_trampoline_when_there_is_one() {
        let direct = ChildEnv::default().tied_command("bash");
        assert_eq!(direct.as_std().get_program(), "bash");
        let tied = ChildEnv::default()
            .with_trampoline(Some(Trampoline::with_exe("/opt/ling")))
            .tied_command("bash");
        assert_eq!(tied.as_std().get_program(), "/opt/ling");
        assert_eq!(tied.as_std().get_args().last(), Some(OsStr::new("bash")));
    }
}
