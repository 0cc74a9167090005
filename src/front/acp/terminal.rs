//! `bash` commands in the editor's own terminals (`terminal/*`) when the client offers them, so
//! the user watches the command run with its tool call. The command keeps Ling's shell sandbox:
//! in a sandboxed session the terminal runs `ling sandbox run --mode M -C ROOT -- bash -c CMD`,
//! the same sandbox a bash command of the project gets, without the API key variables
//! (`env -u`). Timeouts and cancels kill it through `terminal/kill`; the terminal is released
//! when the command is done (the editor keeps showing its output).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    CreateTerminalRequest, CreateTerminalResponse, EnvVariable, KillTerminalRequest,
    ReleaseTerminalRequest, SessionId, TerminalOutputRequest, TerminalOutputResponse,
    WaitForTerminalExitRequest,
};
use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::updates::UpdateSink;
use crate::rpc::Peer;
use crate::tools::{HostedCommand, HostedRun, ShellHost, ToolError};

/// The editor's terminals, for one session.
pub(super) struct ClientTerminals {
    pub peer: Peer,
    pub session_id: String,
    pub sink: Arc<UpdateSink>,
    /// `LING_HOME`, passed on so `ling sandbox run` reads the same settings and trust.
    pub home: PathBuf,
    /// How long the editor may take to answer one terminal request (not the command's run).
    pub timeout: Duration,
}

impl ClientTerminals {
    async fn call(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        self.peer
            .request(method, params, Some(self.timeout), None)
            .await
            .map_err(|e| ToolError::failed(format!("the editor's terminal failed ({method}): {e}")))
    }

    fn session(&self) -> SessionId {
        SessionId::new(self.session_id.as_str())
    }

    /// Kills the command (it may have ended already; that is fine).
    async fn kill(&self, terminal: &str) {
        let request = KillTerminalRequest::new(self.session(), terminal.to_string());
        if let Ok(params) = serde_json::to_value(&request) {
            let _ = self.call("terminal/kill", params).await;
        }
    }

    async fn release(&self, terminal: &str) {
        let request = ReleaseTerminalRequest::new(self.session(), terminal.to_string());
        if let Ok(params) = serde_json::to_value(&request) {
            let _ = self.call("terminal/release", params).await;
        }
    }

    async fn output(&self, terminal: &str) -> Result<TerminalOutputResponse, ToolError> {
        let request = TerminalOutputRequest::new(self.session(), terminal.to_string());
        let params = encode(&request)?;
        let answer = self.call("terminal/output", params).await?;
        serde_json::from_value(answer).map_err(|e| {
            ToolError::failed(format!("the editor's terminal output is unreadable: {e}"))
        })
    }
}

fn encode(value: &impl serde::Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|e| ToolError::failed(format!("cannot encode: {e}")))
}

/// The program and arguments that run `command` as Ling's own bash tool would.
pub(super) fn argv(command: &HostedCommand, ling: &str) -> (String, Vec<String>) {
    let mut args: Vec<String> = Vec::new();
    for var in &command.remove_env {
        args.push("-u".into());
        args.push(var.clone());
    }
    if let Some(policy) = &command.sandbox {
        args.push(ling.to_string());
        args.extend(["sandbox".into(), "run".into(), "--mode".into()]);
        args.push(policy.mode.as_str().into());
        if policy.network {
            args.push("--network".into());
        }
        args.push("-C".into());
        args.push(command.cwd.to_string_lossy().into_owned());
        // The policy the bash tool decided, exactly: the trusted code kept read-only, the
        // --add-dir folders, the allowed sockets (the terminal is not Ling's child, so it
        // cannot join the run's namespaces; the grants go around the protected paths).
        args.push("--exact".into());
        for (flag, paths) in [
            ("--write", &policy.write),
            ("--protect", &policy.protect),
            ("--hide", &policy.hide),
            ("--closed", &policy.closed),
            ("--allow-socket", &policy.unix_sockets),
        ] {
            for path in paths {
                args.push(flag.into());
                args.push(path.to_string_lossy().into_owned());
            }
        }
        args.push("--".into());
    }
    args.extend(["bash".into(), "-c".into(), command.command.clone()]);
    ("env".into(), args)
}

#[async_trait]
impl ShellHost for ClientTerminals {
    async fn run(
        &self,
        command: HostedCommand,
        cancel: &CancellationToken,
    ) -> Result<HostedRun, ToolError> {
        let ling = std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "ling".into());
        let (program, args) = argv(&command, &ling);
        let request = CreateTerminalRequest::new(self.session(), program)
            .args(args)
            .env(vec![EnvVariable::new(
                "LING_HOME",
                self.home.to_string_lossy().into_owned(),
            )])
            .cwd(command.cwd.clone())
            .output_byte_limit(u64::try_from(command.output_limit).unwrap_or(u64::MAX));
        let answer = self.call("terminal/create", encode(&request)?).await?;
        let created: CreateTerminalResponse = serde_json::from_value(answer)
            .map_err(|e| ToolError::failed(format!("the editor made no terminal: {e}")))?;
        let terminal = created.terminal_id.0.to_string();
        if let Some(call) = &command.call_id {
            self.sink.terminal(call, &terminal);
        }
        let wait = WaitForTerminalExitRequest::new(self.session(), terminal.clone());
        let wait = encode(&wait)?;
        let mut timed_out = false;
        tokio::select! {
            waited = self.peer.request("terminal/wait_for_exit", wait, None, None) => {
                if let Err(e) = waited {
                    tracing::warn!("acp: waiting for the editor's terminal failed: {e}");
                }
            }
            () = tokio::time::sleep(command.timeout) => {
                timed_out = true;
                self.kill(&terminal).await;
            }
            () = cancel.cancelled() => {
                self.kill(&terminal).await;
                self.release(&terminal).await;
                return Err(ToolError::Interrupted);
            }
        }
        let output = self.output(&terminal).await;
        self.release(&terminal).await;
        let output = output?;
        let status = output.exit_status.unwrap_or_default();
        Ok(HostedRun {
            output: output.output,
            truncated: output.truncated,
            exit_code: status.exit_code,
            signal: status.signal,
            timed_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SandboxMode;
    use crate::process::sandbox::Policy;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_sandboxed_command_runs_through_ling_sandbox_run_without_the_key() {
        let mut command = HostedCommand {
            call_id: None,
            command: "cargo test".into(),
            cwd: PathBuf::from("/p"),
            sandbox: Some(Policy {
                mode: SandboxMode::WorkspaceWrite,
                network: false,
                write: vec![PathBuf::from("/p")],
                protect: vec![PathBuf::from("/p/.git")],
                hide: vec![PathBuf::from("/home/u/.ssh")],
                closed: Vec::new(),
                unix_sockets: vec![PathBuf::from("/run/user/1000/bus")],
                join: Some(7),
            }),
            remove_env: vec!["OPENAI_API_KEY".into()],
            output_limit: 1000,
            timeout: Duration::from_secs(1),
        };
        let (program, args) = argv(&command, "/bin/ling");
        assert_eq!(program, "env");
        assert_eq!(
            args,
            [
                "-u",
                "OPENAI_API_KEY",
                "/bin/ling",
                "sandbox",
                "run",
                "--mode",
                "workspace-write",
                "-C",
                "/p",
                "--exact",
                "--write",
                "/p",
                "--protect",
                "/p/.git",
                "--hide",
                "/home/u/.ssh",
                "--allow-socket",
                "/run/user/1000/bus",
                "--",
                "bash",
                "-c",
                "cargo test"
            ]
        );
        command.sandbox = None;
        command.remove_env.clear();
        assert_eq!(argv(&command, "/bin/ling").1, ["bash", "-c", "cargo test"]);
    }
}
