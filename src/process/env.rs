//! [`ChildEnv`]: what every program Ling starts for the user gets, decided once from the
//! resolved settings and handed to the three places that spawn (the `bash` tool through its
//! `ToolContext`, the hook engine, the MCP manager's options). Children are spawned through
//! [`ChildEnv::spawn`], which hands the loader's variables to the trampoline as data; those
//! that run outside the sandbox are kept from what a sandboxed command could have written
//! ([`Outside`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use tokio::process::Command;

use super::ChildError;
use super::code_vars::read_at_start;
use super::exec::{PASS_PREFIX, Trampoline};
use super::lookup::Writable;
use super::sandbox::{self, Decision, Holder, Policy, SandboxMode, Scope};
use crate::config::Settings;
use crate::config::code_check::CodeCheck;

/// The variable the model API key is read from unless settings `apiKeyEnv` names another.
pub const DEFAULT_KEY_VAR: &str = crate::config::DEFAULT_API_KEY_ENV;

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
    /// What children outside the sandbox are kept from, and the `PATH` they get.
    outside: Arc<OutsideState>,
}

/// What a child that runs outside the sandbox (a hook, a stdio server, a helper of Ling's) is
/// kept from: the places a sandboxed command can write, where no program it runs is found and
/// no `PATH` folder it gets lies; and the files the settings' `env` makes every program load
/// (`LD_PRELOAD=./x.so`, a `PATH=./bin` folder that did not exist), checked again before each
/// hook and server starts outside, as `trust::guard` found them.
#[derive(Debug, Clone, Default)]
pub struct Outside {
    pub writable: Writable,
    pub env_check: CodeCheck,
}

/// [`Outside`] once known (the project's, or around the working folder), and the `PATH`
/// children outside get, found once.
#[derive(Debug, Default)]
struct OutsideState {
    outside: OnceLock<Outside>,
    path: OnceLock<Option<OsString>>,
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
            outside: Arc::default(),
        }
    }

    /// What children outside the sandbox are kept from (`trust::guard` finds it for a run).
    /// Without it: the temp folders and the working folder as the project.
    pub fn with_outside(mut self, outside: Outside) -> Self {
        let state = OutsideState::default();
        let _ = state.outside.set(outside);
        self.outside = Arc::new(state);
        self
    }

    fn outside(&self) -> &Outside {
        self.outside.outside.get_or_init(|| Outside {
            writable: Writable::around(&std::env::current_dir().unwrap_or_default()),
            env_check: CodeCheck::default(),
        })
    }

    /// The `PATH` children get: the settings', else Ling's own.
    fn child_path(&self) -> Option<OsString> {
        self.added
            .iter()
            .rev()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| OsString::from(value))
            .or_else(|| std::env::var_os("PATH"))
    }

    /// The program a child outside the sandbox runs: `program` looked up on `path` (its own
    /// `PATH`; `None`: the one children get) without a folder a sandboxed command can write.
    pub fn find_outside(&self, program: &OsStr, path: Option<&OsStr>) -> std::io::Result<PathBuf> {
        let path = path.map(OsStr::to_os_string).or_else(|| self.child_path());
        self.outside().writable.find(program, path.as_deref())
    }

    /// `path` as a child outside the sandbox gets it: without the folders a sandboxed command
    /// can write, and relative ones.
    pub fn outside_path(&self, path: &OsStr) -> OsString {
        self.outside().writable.path(path)
    }

    /// Sets the `PATH` of a child outside the sandbox (the one children get, without the
    /// folders a sandboxed command can write).
    fn set_outside_path(&self, cmd: &mut Command) {
        let path = self
            .outside
            .path
            .get_or_init(|| self.child_path().map(|p| self.outside_path(&p)));
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
    }

    /// The files the settings' `env` makes every program load are still what they were
    /// trusted as (or what they were when the session started).
    fn check_env_files(&self) -> Result<(), ChildError> {
        Ok(self.outside().env_check.verify()?)
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

    /// The run's sandbox decision, the one every front end's status shows; off when this run
    /// has none.
    pub fn decision(&self) -> &Decision {
        static OFF: LazyLock<Decision> = LazyLock::new(Decision::off);
        self.sandbox.as_deref().map_or(&OFF, |run| &run.decision)
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
    pub fn server_policy(&self, mode: SandboxMode) -> Result<Option<Policy>, sandbox::Unavailable> {
        if mode == SandboxMode::Off {
            return Ok(None);
        }
        sandbox::availability()?;
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
    ) -> Result<Command, ChildError> {
        let Some(trampoline) = &self.trampoline else {
            return Err(ChildError::NoTrampoline);
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

    /// `program`, started directly outside the sandbox (a command hook's `sh`), without the
    /// removed variables: found on `PATH` without a folder a sandboxed command can write, with
    /// that `PATH`, and only while the files the settings' `env` makes it load are as checked.
    /// Arguments, stdio, working directory and further variables are the caller's.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Result<Command, ChildError> {
        self.check_env_files()?;
        let program = program.as_ref();
        let found = self
            .find_outside(program, None)
            .map_err(|source| ChildError::NotFound {
                program: program.to_string_lossy().into_owned(),
                source,
            })?;
        let mut cmd = Command::new(found);
        cmd.arg0(program);
        self.strip(&mut cmd);
        self.set_outside_path(&mut cmd);
        Ok(cmd)
    }

    /// A program of Ling's own (the browser it opens): Ling's environment without the removed
    /// variables and without the settings' `env`, found and given `PATH` as a child outside the
    /// sandbox is.
    pub fn helper_command(&self, program: &OsStr) -> std::io::Result<Command> {
        let path = std::env::var_os("PATH");
        let found = self.outside().writable.find(program, path.as_deref())?;
        let mut cmd = Command::new(found);
        cmd.arg0(program);
        for var in self.removed.iter() {
            cmd.env_remove(var);
        }
        if let Some(path) = path {
            cmd.env("PATH", self.outside_path(&path));
        }
        Ok(cmd)
    }

    /// Like [`ChildEnv::command`], but the child dies with Ling, even on SIGKILL, when there is
    /// a trampoline (`exec`); `program` is the caller's, found with [`ChildEnv::find_outside`]
    /// (a stdio server's, on its own `PATH`). Spawn it from async code (a runtime worker or the
    /// main thread), never from a `spawn_blocking` thread: the kernel signals the child when
    /// the spawning *thread* ends, and blocking-pool threads end when idle.
    pub fn tied_command(&self, program: impl AsRef<OsStr>) -> Result<Command, ChildError> {
        self.check_env_files()?;
        let mut cmd = match &self.trampoline {
            // Supervised: what the program starts ends with it, or with Ling.
            Some(trampoline) => trampoline.command_with(program.as_ref(), &["--supervise".into()]),
            None => Command::new(program),
        };
        self.strip(&mut cmd);
        self.set_outside_path(&mut cmd);
        Ok(cmd)
    }

    /// Spawns `cmd`, made by this `ChildEnv`. A child started through the trampoline gets the
    /// variables the dynamic loader acts on (`LD_PRELOAD`...: inherited, from the settings, or
    /// set by the caller) handed over as data, set for the program only: the trampoline, which
    /// runs outside the sandbox, never loads what they name.
    pub fn spawn(&self, cmd: &mut Command) -> std::io::Result<tokio::process::Child> {
        self.seal(cmd);
        cmd.spawn()
    }

    /// The hand-over of [`ChildEnv::spawn`], for a caller that does not spawn at once.
    pub fn seal(&self, cmd: &mut Command) {
        let Some(trampoline) = &self.trampoline else {
            return;
        };
        if cmd.as_std().get_program() != trampoline.exe().as_os_str() {
            return;
        }
        let mut loaders: BTreeMap<OsString, Option<OsString>> = inherited_loaders()
            .iter()
            .map(|(name, value)| (name.clone(), Some(value.clone())))
            .collect();
        for (name, value) in cmd.as_std().get_envs() {
            if read_at_start(&name.to_string_lossy()) {
                loaders.insert(name.to_os_string(), value.map(OsStr::to_os_string));
            }
        }
        for (name, value) in loaders {
            cmd.env_remove(&name);
            if let Some(value) = value {
                let mut passed = OsString::from(PASS_PREFIX);
                passed.push(&name);
                cmd.env(passed, value);
            }
        }
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
    ) -> Result<Session, ChildError> {
        let (mut cmd, report) = match &self.trampoline {
            Some(trampoline) => {
                let mut options: Vec<OsString> = vec!["--setsid".into(), "--report".into()];
                let sandbox = sandbox.map(|p| self.joined(trampoline, p));
                options.extend(sandbox.as_ref().map(Policy::to_args).unwrap_or_default());
                // Outside the sandbox, the shell is not one a sandboxed command could plant.
                let program = match sandbox {
                    Some(_) => PathBuf::from(program.as_ref()),
                    None => self.find_bash_outside(program.as_ref())?,
                };
                let mut cmd = trampoline.command_with(program.as_os_str(), &options);
                let (writer, reader) =
                    tokio::net::unix::pipe::pipe().map_err(ChildError::ReportPipe)?;
                let writer = writer.into_blocking_fd().map_err(ChildError::ReportPipe)?;
                cmd.stdin(Stdio::from(writer));
                (cmd, Some(reader))
            }
            None if sandbox.is_some() => return Err(ChildError::NoTrampoline),
            None => {
                let mut cmd = Command::new(self.find_bash_outside(program.as_ref())?);
                cmd.arg0(program.as_ref())
                    .process_group(0)
                    .stdin(Stdio::null());
                (cmd, None)
            }
        };
        self.strip(&mut cmd);
        Ok(Session {
            command: cmd,
            report,
        })
    }

    fn find_bash_outside(&self, program: &OsStr) -> Result<PathBuf, ChildError> {
        self.find_outside(program, None)
            .map_err(|source| ChildError::NotFound {
                program: program.to_string_lossy().into_owned(),
                source,
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

/// Ling's own variables that the dynamic loader acts on, read once (Ling does not change its
/// environment).
fn inherited_loaders() -> &'static [(OsString, OsString)] {
    static LOADERS: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();
    LOADERS.get_or_init(|| {
        std::env::vars_os()
            .filter(|(name, _)| read_at_start(&name.to_string_lossy()))
            .collect()
    })
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
        let key = |cmd: &Command| {
            cmd.as_std()
                .get_envs()
                .find(|(name, _)| *name == "OPENAI_API_KEY")
                .map(|(_, value)| value.map(OsStr::to_os_string))
        };
        let mut cmd = ChildEnv::default().command("env").unwrap();
        cmd.env("OPENAI_API_KEY", "passed");
        assert_eq!(key(&cmd), Some(Some("passed".into())));
        let cmd = ChildEnv::default().command("env").unwrap();
        assert_eq!(key(&cmd), Some(None));
    }

    #[test]
    fn tied_commands_go_through_the_trampoline_when_there_is_one() {
        let direct = ChildEnv::default().tied_command("bash").unwrap();
        assert_eq!(direct.as_std().get_program(), "bash");
        let tied = ChildEnv::default()
            .with_trampoline(Some(Trampoline::with_exe("/opt/ling")))
            .tied_command("bash")
            .unwrap();
        assert_eq!(tied.as_std().get_program(), "/opt/ling");
        assert_eq!(tied.as_std().get_args().last(), Some(OsStr::new("bash")));
    }

    #[test]
    fn the_trampoline_gets_the_loaders_variables_only_as_data() {
        let env = ChildEnv::from_settings(&settings(
            r#"{"env":{"LD_PRELOAD":"./x.so","NODE_OPTIONS":"-r ./y.js"}}"#,
        ))
        .with_trampoline(Some(Trampoline::with_exe("/opt/ling-exec")));
        let mut cmd = env.tied_command("srv").unwrap();
        cmd.env("LD_LIBRARY_PATH", "./lib");
        env.seal(&mut cmd);
        let set: BTreeMap<_, _> = cmd.as_std().get_envs().collect();
        assert_eq!(set[OsStr::new("LD_PRELOAD")], None);
        assert_eq!(set[OsStr::new("LD_LIBRARY_PATH")], None);
        assert_eq!(
            set[OsStr::new("LING_EXEC_PASS_LD_PRELOAD")],
            Some(OsStr::new("./x.so"))
        );
        assert_eq!(
            set[OsStr::new("LING_EXEC_PASS_LD_LIBRARY_PATH")],
            Some(OsStr::new("./lib"))
        );
        // Not the loader's: set as it is.
        assert_eq!(
            set[OsStr::new("NODE_OPTIONS")],
            Some(OsStr::new("-r ./y.js"))
        );
        // Started directly (a hook's shell outside the sandbox), the settings apply as they are.
        let cmd = env.command("sh").unwrap();
        let set: BTreeMap<_, _> = cmd.as_std().get_envs().collect();
        assert_eq!(set[OsStr::new("LD_PRELOAD")], Some(OsStr::new("./x.so")));
    }
}
