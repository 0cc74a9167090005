//! Codex's side of a run's resolution: `ling exec`'s configuration (Codex's `config.toml`, its
//! profile, `--config` overrides: [`CodexSettings`]) under the flags, and what `exec` means
//! beside `-p` (`--sandbox workspace-write` edits without asking, as Codex's `exec` does).
//! Codex's config is read for `ling exec` and whenever `--profile` or `--config` is given,
//! never with `--ignore-user-config`.

use super::CliError;
use super::args::RunArgs;
use super::compat_args::ApprovalPolicy;
use super::compat_resolve::Resolved;
use crate::config::codex::{CodexSettings, codex_home};
use crate::config::{PermissionMode, SandboxMode};
use crate::setup::RunOptions;

/// Codex's configuration for this run, or the default when the run is not Codex's.
pub fn settings(args: &RunArgs) -> Result<CodexSettings, CliError> {
    let codex = &args.compat.codex;
    if !codex.exec && codex.profile.is_none() && codex.config.is_empty() {
        return Ok(CodexSettings::default());
    }
    CodexSettings::load(
        codex_home().as_deref(),
        !codex.ignore_user_config,
        codex.profile.as_deref(),
        &codex.config,
    )
    .map_err(|e| CliError::Usage(e.to_string()))
}

/// Fills what the flags left open from Codex's settings: the permission mode (its
/// `approval_policy`; `exec --sandbox workspace-write` alone is accept-edits) and the sandbox.
pub fn fill(args: &RunArgs, codex: &CodexSettings, resolved: &mut Resolved) {
    if resolved.sandbox.is_none() {
        resolved.sandbox = codex.sandbox_mode.as_deref().and_then(sandbox_of);
    }
    let policy = codex
        .approval_policy
        .as_deref()
        .and_then(|p| <ApprovalPolicy as clap::ValueEnum>::from_str(p, false).ok());
    if resolved.permission_mode.is_none() {
        resolved.permission_mode = policy.map(ApprovalPolicy::mode);
    }
    resolved.never_ask |= policy == Some(ApprovalPolicy::Never);
    // Codex's exec never stops to ask: with a writable sandbox it edits the workspace.
    if args.compat.codex.exec
        && resolved.permission_mode.is_none()
        && resolved.sandbox == Some(SandboxMode::WorkspaceWrite)
    {
        resolved.permission_mode = Some(PermissionMode::AcceptEdits);
    }
}

/// Codex's settings into the run's options, under the flags.
pub fn apply(args: &RunArgs, codex: &CodexSettings, options: &mut RunOptions) {
    let over = &mut options.overrides;
    if args.agent.model.is_none() {
        over.model = over.model.take().or_else(|| codex.model.clone());
    }
    if args.agent.base_url.is_none() {
        over.base_url = over.base_url.take().or_else(|| codex.base_url.clone());
    }
    over.sandbox_network = codex.network_access;
    over.ignore_codex_rules = args.compat.codex.ignore_rules;
    over.reasoning_effort = over.reasoning_effort.or(codex.reasoning_effort);
    if codex.web_search_disabled {
        over.disallowed_tools.push("web_search".into());
    }
}

fn sandbox_of(name: &str) -> Option<SandboxMode> {
    Some(match name {
        "read-only" => SandboxMode::ReadOnly,
        "workspace-write" => SandboxMode::WorkspaceWrite,
        "danger-full-access" => SandboxMode::Off,
        _ => return None,
    })
}
