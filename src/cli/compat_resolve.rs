//! Ling's run flags and the Claude Code and Codex spellings of `compat_args.rs` resolved into
//! what the run is asked for ([`Resolved`]): two spellings that ask for different things are a
//! usage error naming both, a refused Claude Code flag one saying why.

use std::path::PathBuf;

use clap::ValueEnum;

use super::CliError;
use super::args::{OutputFormat, RunArgs};
use super::compat_args::{ApprovalPolicy, InputFormat};
use crate::config::{PermissionMode, SandboxMode};

/// `--setting-sources`: which config files a run reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSources {
    pub user: bool,
    pub project: bool,
    pub local: bool,
}

impl SettingSources {
    const ALL: Self = Self {
        user: true,
        project: true,
        local: true,
    };

    fn parse(list: &str) -> Result<Self, CliError> {
        let mut sources = Self {
            user: false,
            project: false,
            local: false,
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "user" => sources.user = true,
                "project" => sources.project = true,
                "local" => sources.local = true,
                other => {
                    return Err(CliError::Usage(format!(
                        "--setting-sources: `{other}` is not a source; give user, project and \
                         local, comma-separated (or nothing for none)"
                    )));
                }
            }
        }
        Ok(sources)
    }

    /// The project files this leaves out.
    pub fn left_out(self) -> Vec<&'static str> {
        use crate::config::claude::{CLAUDE_MCP_FILE, CLAUDE_SETTINGS_FILES};
        let mut names = Vec::new();
        if !self.project {
            names.extend([
                crate::config::SETTINGS_FILE,
                crate::config::hooks::HOOKS_FILE,
                crate::config::mcp::MCP_FILE,
            ]);
            names.extend([CLAUDE_SETTINGS_FILES[0], CLAUDE_MCP_FILE]);
        }
        if !self.local {
            names.push(CLAUDE_SETTINGS_FILES[1]);
        }
        names
    }
}

/// What the flags ask for once every spelling is taken into account.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub setting_sources: SettingSources,
    /// `--tools`, in Ling's names.
    pub tools: Option<Vec<String>>,
    pub session_id: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub never_ask: bool,
    pub sandbox: Option<SandboxMode>,
    pub output_format: OutputFormat,
    pub input_format: InputFormat,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    /// `--permission-prompt-tool stdio`.
    pub stdio_prompt: bool,
    /// `--effort`.
    pub reasoning_effort: Option<crate::config::ReasoningEffort>,
}

/// One setting several spellings may give: the first, unless another gives something else.
fn one<T: PartialEq + Copy + std::fmt::Display>(
    what: &str,
    picks: &[(Option<T>, String)],
) -> Result<Option<T>, CliError> {
    let mut chosen: Option<(T, &str)> = None;
    for (value, spelling) in picks {
        let Some(value) = *value else { continue };
        match chosen {
            Some((first, first_spelling)) if first != value => {
                return Err(CliError::Usage(format!(
                    "{first_spelling} and {spelling} ask for different {what}s ({first} and \
                     {value}); give one of them"
                )));
            }
            Some(_) => {}
            None => chosen = Some((value, spelling)),
        }
    }
    Ok(chosen.map(|(value, _)| value))
}

/// Resolves every spelling of `args`; conflicting ones are a usage error naming both.
pub fn resolve(args: &RunArgs) -> Result<Resolved, CliError> {
    let compat = &args.compat;
    if let Some(refusal) = compat
        .unsupported
        .refusal()
        .or_else(|| compat.codex.unsupported.refusal())
    {
        return Err(CliError::Usage(refusal));
    }
    if compat.fork_session && args.resume.is_none() && !args.continue_session {
        return Err(CliError::Usage(
            "--fork-session copies a recorded session: give it with --resume ID or --continue"
                .into(),
        ));
    }
    let permission_mode = permission_mode(args)?;
    let sandbox = sandbox(args)?;
    let output_format = output_format(args)?;
    let input_format = compat.input_format.unwrap_or_default();
    if input_format == InputFormat::StreamJson && output_format != OutputFormat::StreamJson {
        return Err(CliError::Usage(
            "--input-format stream-json needs --output-format stream-json (the answers to the \
             JSON on stdin are JSON lines on stdout)"
                .into(),
        ));
    }
    let stdio_prompt = stdio_prompt(compat.permission_prompt_tool.as_deref(), input_format)?;
    let tools = match compat.tools.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some(list) => Some(tool_names(list)?),
    };
    let session_id = session_id(compat.session_id.as_ref())?;
    Ok(Resolved {
        tools,
        session_id,
        setting_sources: match &compat.setting_sources {
            Some(list) => SettingSources::parse(list)?,
            None => SettingSources::ALL,
        },
        permission_mode,
        never_ask: compat.ask_for_approval == Some(ApprovalPolicy::Never),
        sandbox,
        output_format,
        input_format,
        system_prompt: text_or_file(&args.agent.system_prompt, &compat.system_prompt_file)?,
        append_system_prompt: text_or_file(
            &args.agent.append_system_prompt,
            &compat.append_system_prompt_file,
        )?,
        stdio_prompt,
        reasoning_effort: compat.effort.as_deref().map(effort).transpose()?,
    })
}

/// Claude Code's effort levels as Ling's reasoning effort (`xhigh` and `max`: the highest).
fn effort(level: &str) -> Result<crate::config::ReasoningEffort, CliError> {
    use crate::config::ReasoningEffort::{High, Low, Medium, Minimal};
    match level.trim().to_ascii_lowercase().as_str() {
        "minimal" | "none" | "off" => Ok(Minimal),
        "low" => Ok(Low),
        "medium" => Ok(Medium),
        "high" | "xhigh" | "max" => Ok(High),
        other => Err(CliError::Usage(format!(
            "--effort {other:?}: give minimal, low, medium, high, xhigh or max"
        ))),
    }
}

/// The permission mode of `--permission-mode` and of Claude Code's and Codex's spellings.
fn permission_mode(args: &RunArgs) -> Result<Option<PermissionMode>, CliError> {
    let compat = &args.compat;
    one(
        "permission mode",
        &[
            (
                args.agent.permission_mode,
                format!(
                    "--permission-mode {}",
                    flag_value(args.agent.permission_mode)
                ),
            ),
            (
                compat
                    .dangerously_skip_permissions
                    .then_some(PermissionMode::Bypass),
                "--dangerously-skip-permissions (Claude Code: bypass)".into(),
            ),
            (
                compat.ask_for_approval.map(ApprovalPolicy::mode),
                format!(
                    "--ask-for-approval {} (Codex)",
                    compat
                        .ask_for_approval
                        .and_then(|p| p.to_possible_value())
                        .map(|v| v.get_name().to_string())
                        .unwrap_or_default()
                ),
            ),
            (
                compat.full_auto.then_some(PermissionMode::AcceptEdits),
                "--full-auto (Codex: accept-edits)".into(),
            ),
            (
                compat
                    .dangerously_bypass_approvals_and_sandbox
                    .then_some(PermissionMode::Bypass),
                "--dangerously-bypass-approvals-and-sandbox (Codex: bypass)".into(),
            ),
        ],
    )
}

/// The sandbox mode of `--sandbox` and of Codex's spellings.
fn sandbox(args: &RunArgs) -> Result<Option<SandboxMode>, CliError> {
    let compat = &args.compat;
    one(
        "sandbox mode",
        &[
            (
                args.agent.sandbox,
                format!("--sandbox {}", flag_value(args.agent.sandbox)),
            ),
            (
                compat.full_auto.then_some(SandboxMode::WorkspaceWrite),
                "--full-auto (Codex: workspace-write)".into(),
            ),
            (
                compat
                    .dangerously_bypass_approvals_and_sandbox
                    .then_some(SandboxMode::Off),
                "--dangerously-bypass-approvals-and-sandbox (Codex: sandbox off)".into(),
            ),
        ],
    )
}

/// The output format of `--output-format` and of Codex's `--json` (its events; text by
/// default).
fn output_format(args: &RunArgs) -> Result<OutputFormat, CliError> {
    let compat = &args.compat;
    Ok(one(
        "output format",
        &[
            (
                args.output_format,
                format!("--output-format {}", flag_value(args.output_format)),
            ),
            (
                compat.json.then_some(OutputFormat::CodexJson),
                "--json (Codex: codex-json)".into(),
            ),
        ],
    )?
    .unwrap_or_default())
}

/// Whether `--permission-prompt-tool` asks the program on stdin (`stdio`, which needs
/// `--input-format stream-json`); any other tool is refused.
fn stdio_prompt(tool: Option<&str>, input_format: InputFormat) -> Result<bool, CliError> {
    Ok(match tool {
        None => false,
        Some("stdio") if input_format == InputFormat::StreamJson => true,
        Some("stdio") => {
            return Err(CliError::Usage(
                "--permission-prompt-tool stdio asks the program on stdin, so it needs \
                 --input-format stream-json"
                    .into(),
            ));
        }
        Some(other) => {
            return Err(CliError::Usage(format!(
                "--permission-prompt-tool {other}: Ling asks only through `stdio` (the program \
                 driving --input-format stream-json); an MCP tool as the prompt is not supported"
            )));
        }
    })
}

/// `--session-id`, which must be a UUID.
fn session_id(id: Option<&String>) -> Result<Option<String>, CliError> {
    match id {
        Some(id) if uuid::Uuid::parse_str(id).is_err() => Err(CliError::Usage(format!(
            "--session-id {id:?} is not a UUID; give one such as {}",
            uuid::Uuid::new_v4()
        ))),
        other => Ok(other.cloned()),
    }
}

/// `--tools Bash,Read` in Ling's names; a name that is no builtin tool is an error listing them.
fn tool_names(list: &str) -> Result<Vec<String>, CliError> {
    use crate::hooks::claude::{TOOL_NAMES, ling_tool_name};
    list.split([',', ' '])
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|name| {
            let known = TOOL_NAMES.iter().any(|(ling, _)| *ling == name);
            match ling_tool_name(name) {
                Some(ling) => Ok(ling.to_string()),
                None if known => Ok(name.to_string()),
                None => Err(CliError::Usage(format!(
                    "--tools: `{name}` is not one of Ling's builtin tools ({})",
                    TOOL_NAMES
                        .iter()
                        .map(|(ling, claude)| format!("{ling} or {claude}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            }
        })
        .collect()
}

/// The value a flag was given, as typed on the command line.
fn flag_value<T: ValueEnum>(value: Option<T>) -> String {
    value
        .and_then(|v| v.to_possible_value())
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

fn text_or_file(text: &Option<String>, file: &Option<PathBuf>) -> Result<Option<String>, CliError> {
    match (text, file) {
        (Some(text), _) => Ok(Some(text.clone())),
        (None, Some(file)) => std::fs::read_to_string(file).map(Some).map_err(|e| {
            CliError::Usage(format!(
                "cannot read the prompt file {}: {e}",
                file.display()
            ))
        }),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;
    use pretty_assertions::assert_eq;

    fn resolved(args: &[&str]) -> Result<Resolved, String> {
        let cli = Cli::try_parse_from(std::iter::once("ling").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        resolve(&cli.run).map_err(|e| e.to_string())
    }

    #[test]
    fn each_spelling_maps_to_lings_meaning() {
        let r = resolved(&["--dangerously-skip-permissions"]).unwrap();
        assert_eq!(r.permission_mode, Some(PermissionMode::Bypass));
        let r = resolved(&["--permission-mode", "acceptEdits"]).unwrap();
        assert_eq!(r.permission_mode, Some(PermissionMode::AcceptEdits));
        let r = resolved(&["-a", "never"]).unwrap();
        assert_eq!(
            (r.permission_mode, r.never_ask),
            (Some(PermissionMode::AcceptEdits), true)
        );
        let r = resolved(&["--full-auto"]).unwrap();
        assert_eq!(r.sandbox, Some(SandboxMode::WorkspaceWrite));
        let r = resolved(&["--yolo"]).unwrap();
        assert_eq!(
            (r.permission_mode, r.sandbox),
            (Some(PermissionMode::Bypass), Some(SandboxMode::Off))
        );
        let r = resolved(&["-s", "danger-full-access"]).unwrap();
        assert_eq!(r.sandbox, Some(SandboxMode::Off));
        let r = resolved(&["--json"]).unwrap();
        assert_eq!(r.output_format, OutputFormat::CodexJson);
        // The same thing twice is no conflict.
        let r = resolved(&[
            "--permission-mode",
            "bypass",
            "--dangerously-skip-permissions",
        ]);
        assert_eq!(r.unwrap().permission_mode, Some(PermissionMode::Bypass));
    }

    #[test]
    fn conflicting_spellings_name_both() {
        let err = resolved(&[
            "--permission-mode",
            "plan",
            "--dangerously-skip-permissions",
        ])
        .unwrap_err();
        assert_eq!(
            err,
            "--permission-mode plan and --dangerously-skip-permissions (Claude Code: bypass) ask \
             for different permission modes (plan and bypass); give one of them"
        );
        let err = resolved(&["--json", "--output-format", "json"]).unwrap_err();
        assert!(
            err.contains("--output-format json and --json (Codex: codex-json)"),
            "{err}"
        );
        let err = resolved(&["--sandbox", "read-only", "--yolo"]).unwrap_err();
        assert!(
            err.contains("--sandbox read-only and --dangerously-bypass"),
            "{err}"
        );
        let err = resolved(&["-a", "untrusted", "--full-auto"]).unwrap_err();
        assert!(
            err.contains("--ask-for-approval untrusted (Codex)"),
            "{err}"
        );
    }

    #[test]
    fn claude_flags_without_a_meaning_are_refused_by_name() {
        let err = resolved(&["--fallback-model", "x"]).unwrap_err();
        assert!(
            err.starts_with("--fallback-model is a Claude Code flag Ling does not support"),
            "{err}"
        );
        let err = resolved(&["--thinking=adaptive"]).unwrap_err();
        assert!(err.contains("--max-thinking-tokens/--thinking"), "{err}");
        let err = resolved(&["--permission-prompt-tool", "mcp__x__y"]).unwrap_err();
        assert!(err.contains("only through `stdio`"), "{err}");
        let err = resolved(&["--input-format", "stream-json"]).unwrap_err();
        assert!(err.contains("needs --output-format stream-json"), "{err}");
    }
}
