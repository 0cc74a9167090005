//! `ling sandbox run [--mode M] [--network] -- CMD...`: runs one command in the sandbox a `bash`
//! command of this project gets (the project's settings apply once it is trusted), to try a
//! policy without a model. Exits with the command's exit code (128 + N for signal N).

use std::os::unix::process::ExitStatusExt;

use super::args::{ExactPolicy, SandboxCommand};
use super::{CliError, Exit};
use crate::config::{Paths, SandboxMode, Settings, SettingsOverrides};
use crate::process::ChildEnv;
use crate::process::exec::Trampoline;
use crate::process::sandbox;
use crate::setup::project_root;
use crate::trust::ProjectConfig;

pub async fn run(command: SandboxCommand) -> Result<Exit, CliError> {
    let SandboxCommand::Run {
        mode,
        network,
        cwd,
        exact,
        command,
    } = command;
    if exact.exact {
        return run_exact(mode, network, exact, &command).await;
    }
    let paths = Paths::new(project_root(cwd.as_ref())?);
    let project = ProjectConfig::read(&paths)?;
    let settings = Settings::load(&paths, project.layer(), &SettingsOverrides::default())?;
    let mode = mode
        .or(settings.sandbox.mode)
        .unwrap_or(SandboxMode::WorkspaceWrite);
    let Some((program, args)) = command.split_first() else {
        return Err(CliError::Usage("ling sandbox run needs `-- CMD...`".into()));
    };
    // Holds the run's namespace holder until the command is done.
    let mut children = ChildEnv::default();
    let mut cmd = if mode == SandboxMode::Off {
        tokio::process::Command::new(program)
    } else {
        let mut decision = sandbox::decide(
            &settings.sandbox,
            sandbox::availability(),
            &paths.home,
            sandbox::home_dir().as_deref(),
        )
        .map_err(|e| CliError::Usage(e.to_string()))?;
        sandbox::availability().map_err(|e| CliError::Usage(e.to_string()))?;
        decision.network |= network;
        decision.mode = mode;
        let trampoline = Trampoline::current().ok_or_else(|| {
            CliError::Failed("cannot find Ling's own executable to start the sandbox".into())
        })?;
        // The sandbox a `bash` command of this project gets, through the same code.
        children = children
            .with_trampoline(Some(trampoline))
            .with_sandbox(decision, paths.project_root.clone());
        let policy = children
            .policy(mode)
            .ok_or_else(|| CliError::Failed("the sandbox is off for this project".into()))?;
        children
            .sandboxed_command(program, &policy)
            .map_err(|e| CliError::Failed(e.to_string()))?
    };
    cmd.args(args)
        .current_dir(std::env::current_dir().unwrap_or(paths.project_root));
    wait(cmd, program, children).await
}

/// `--exact`: the policy the options spell, nothing read from settings (an `ling acp` session's
/// command in the editor's terminal, with the sandbox its bash tool decided).
async fn run_exact(
    mode: Option<SandboxMode>,
    network: bool,
    exact: ExactPolicy,
    command: &[std::ffi::OsString],
) -> Result<Exit, CliError> {
    let Some((program, args)) = command.split_first() else {
        return Err(CliError::Usage("ling sandbox run needs `-- CMD...`".into()));
    };
    let mode = match mode {
        Some(SandboxMode::Off) | None => {
            return Err(CliError::Usage(
                "ling sandbox run --exact needs --mode workspace-write or read-only".into(),
            ));
        }
        Some(mode) => mode,
    };
    sandbox::availability().map_err(|e| CliError::Usage(e.to_string()))?;
    let policy = sandbox::Policy {
        mode,
        network,
        write: exact.write,
        protect: exact.protect,
        hide: exact.hide,
        closed: exact.closed,
        unix_sockets: exact.allow_socket,
        join: None,
    };
    let trampoline = Trampoline::current().ok_or_else(|| {
        CliError::Failed("cannot find Ling's own executable to start the sandbox".into())
    })?;
    let children = ChildEnv::default().with_trampoline(Some(trampoline));
    let mut cmd = children
        .sandboxed_command(program, &policy)
        .map_err(|e| CliError::Failed(e.to_string()))?;
    cmd.args(args);
    wait(cmd, program, children).await
}

/// Runs the command to its end; its exit code (128 + N for signal N) is Ling's.
async fn wait(
    mut cmd: tokio::process::Command,
    program: &std::ffi::OsStr,
    children: ChildEnv,
) -> Result<Exit, CliError> {
    // The loader's variables reach the command, not the trampoline.
    children.seal(&mut cmd);
    let status = cmd
        .status()
        .await
        .map_err(|e| CliError::Failed(format!("cannot run {program:?}: {e}")))?;
    drop(children);
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    Ok(Exit::Command(u8::try_from(code).unwrap_or(1)))
}
