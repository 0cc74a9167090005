//! The command-line spellings of Claude Code and Codex CLI, beside Ling's own (`args.rs`), so
//! that what their users type works: each flag here maps to one of Ling's meanings, says its
//! origin in `--help`, and is resolved with Ling's flags in [`resolve`], where two spellings that
//! ask for different things are an error naming both. Claude Code flags Ling has no meaning for
//! are accepted by the parser only to be refused with the reason ([`Unsupported`]).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::CliError;
use super::args::{OutputFormat, RunArgs};
use crate::config::{PermissionMode, SandboxMode};

/// `--input-format`: where the prompts come from in a non-interactive run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum InputFormat {
    /// The prompt argument, or stdin's text
    #[default]
    Text,
    /// JSON lines on stdin: user messages and control requests, several turns in one run
    /// (Claude Code's protocol; needs --output-format stream-json)
    StreamJson,
}

/// Codex's `--ask-for-approval` policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalPolicy {
    /// Ling's default mode
    Untrusted,
    /// Ling's accept-edits mode
    OnFailure,
    /// Ling's accept-edits mode
    OnRequest,
    /// Ling's accept-edits mode, and nothing is asked: what would ask is denied
    Never,
}

impl ApprovalPolicy {
    fn mode(self) -> PermissionMode {
        match self {
            Self::Untrusted => PermissionMode::Default,
            Self::OnFailure | Self::OnRequest | Self::Never => PermissionMode::AcceptEdits,
        }
    }
}

/// Claude Code's and Codex's flags, flattened into [`RunArgs`].
#[derive(Debug, Args, Default)]
pub struct CompatArgs {
    /// Where -p prompts come from: text, or stream-json (JSON lines on stdin) (Claude Code)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,

    /// With --output-format stream-json: stream the answer's text as stream_event messages
    /// (Claude Code)
    #[arg(long)]
    pub include_partial_messages: bool,

    /// With --input-format stream-json: echo each user message back on stdout (Claude Code)
    #[arg(long)]
    pub replay_user_messages: bool,

    /// Who answers the permission questions of a -p run: `stdio` (the program driving
    /// --input-format stream-json, as can_use_tool requests) (Claude Code)
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,

    /// One more settings file (or its JSON), over the project's and the user's; it may hold
    /// Claude Code's hooks (Claude Code)
    #[arg(long, value_name = "FILE|JSON")]
    pub settings: Option<String>,

    /// Which config files load: user (LING_HOME's), project (the project's .ling/,
    /// .claude/settings.json, .mcp.json), local (.claude/settings.local.json); comma-separated,
    /// empty for none (Claude Code)
    #[arg(long, value_name = "LIST")]
    pub setting_sources: Option<String>,

    /// Only these builtin tools, comma-separated (`Bash,Read` or `bash,read_file`; `default`:
    /// all of them) (Claude Code)
    #[arg(long, value_name = "TOOL,...")]
    pub tools: Option<String>,

    /// The id of the new session (a UUID) (Claude Code)
    #[arg(long, value_name = "UUID", conflicts_with_all = ["resume", "continue_session"])]
    pub session_id: Option<String>,

    /// With --resume or --continue: go on in a new session holding that one's conversation
    /// (and its checkpoints), the original left as it is (Claude Code)
    #[arg(long)]
    pub fork_session: bool,

    /// --permission-mode bypass (Claude Code)
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// Accepted: Ling needs no switch to allow bypass mode later (Claude Code)
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,

    /// Replace the built-in system prompt with this file's text (Claude Code)
    #[arg(long, value_name = "FILE", conflicts_with = "system_prompt")]
    pub system_prompt_file: Option<PathBuf>,

    /// Add this file's text to the built-in system prompt (Claude Code)
    #[arg(long, value_name = "FILE", conflicts_with = "append_system_prompt")]
    pub append_system_prompt_file: Option<PathBuf>,

    /// Accepted: hook outcomes are always in stream-json (system/hook_response) (Claude Code)
    #[arg(long)]
    pub include_hook_events: bool,

    /// Accepted: with --input-format stream-json Ling always reads an initialize first
    /// (Claude Code)
    #[arg(long)]
    pub await_initialize: bool,

    /// Codex's exec --json: --output-format stream-json (Codex)
    #[arg(long)]
    pub json: bool,

    /// The permission mode as Codex names its approval policies (Codex)
    #[arg(short = 'a', long, value_enum, value_name = "POLICY")]
    pub ask_for_approval: Option<ApprovalPolicy>,

    /// --permission-mode accept-edits --sandbox workspace-write (Codex)
    #[arg(long)]
    pub full_auto: bool,

    /// --permission-mode bypass --sandbox off (Codex)
    #[arg(long, visible_alias = "yolo")]
    pub dangerously_bypass_approvals_and_sandbox: bool,

    /// Accepted: Ling does not need a git repository (Codex)
    #[arg(long)]
    pub skip_git_repo_check: bool,

    /// Also write the model's last message to FILE (Codex)
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,

    #[command(flatten)]
    pub unsupported: Unsupported,
}

/// Claude Code flags without a meaning in Ling: parsed (hidden) only to be refused by name.
#[derive(Debug, Args, Default)]
pub struct Unsupported {
    #[arg(long, hide = true, value_name = "X")]
    fallback_model: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    max_budget_usd: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    json_schema: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    max_thinking_tokens: Option<String>,
    #[arg(long, hide = true, value_name = "X", num_args = 0..=1, require_equals = true)]
    thinking: Option<Option<String>>,
    #[arg(long, hide = true, value_name = "X")]
    thinking_display: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    effort: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    betas: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    plugin_dir: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    permission_prompts: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    task_budget: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    channels: Option<String>,
    #[arg(long, hide = true)]
    session_mirror: bool,
    #[arg(long, hide = true, value_name = "X")]
    resume_session_at: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    managed_settings: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    debug_file: Option<String>,
    #[arg(long, hide = true, value_name = "X", num_args = 0..=1)]
    debug: Option<Option<String>>,
    #[arg(long, hide = true)]
    no_session_persistence: bool,
    #[arg(long, hide = true, value_name = "X")]
    resume_drops_turn: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    initialize_fields: Option<String>,
    #[arg(long, hide = true)]
    managed_settings_in_initialize: bool,
    #[arg(long, hide = true, value_name = "X")]
    project_config_root: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    plugin_dir_no_mcp: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    workload: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    sdk_url: Option<String>,
}

impl Unsupported {
    /// The first flag given, with why Ling refuses it.
    fn refusal(&self) -> Option<String> {
        let given = [
            (
                self.fallback_model.is_some(),
                "--fallback-model",
                "Ling talks to one model; choose it with --model",
            ),
            (
                self.max_budget_usd.is_some(),
                "--max-budget-usd",
                "Ling cannot stop at a cost (it knows prices only from settings `prices`); bound a run with --max-turns",
            ),
            (
                self.json_schema.is_some(),
                "--json-schema",
                "structured output is not supported",
            ),
            (
                self.max_thinking_tokens.is_some()
                    || self.thinking.is_some()
                    || self.thinking_display.is_some(),
                "--max-thinking-tokens/--thinking",
                "Ling sends no thinking budget to an OpenAI-compatible server",
            ),
            (
                self.effort.is_some(),
                "--effort",
                "Ling sends no effort level to the model",
            ),
            (
                self.betas.is_some(),
                "--betas",
                "Anthropic API betas do not apply to an OpenAI-compatible server",
            ),
            (
                self.plugin_dir.is_some(),
                "--plugin-dir",
                "Ling does not load Claude Code plugins",
            ),
            (
                self.permission_prompts.is_some(),
                "--permission-prompts",
                "use --permission-prompt-tool stdio",
            ),
            (
                self.task_budget.is_some(),
                "--task-budget",
                "task budgets are not supported",
            ),
            (
                self.channels.is_some(),
                "--channels",
                "channels are not supported",
            ),
            (
                self.session_mirror,
                "--session-mirror",
                "session stores are not supported",
            ),
            (
                self.resume_session_at.is_some(),
                "--resume-session-at",
                "resume a whole session with --resume ID",
            ),
            (
                self.managed_settings.is_some(),
                "--managed-settings",
                "use --settings FILE|JSON",
            ),
            (
                self.debug_file.is_some(),
                "--debug-file",
                "Ling's debug log is LING_HOME/logs/ling.log (LING_LOG=debug)",
            ),
            (
                self.debug.is_some(),
                "--debug",
                "set LING_LOG=debug; the log is LING_HOME/logs/ling.log",
            ),
            (
                self.no_session_persistence,
                "--no-session-persistence",
                "every session is recorded (hooks read its transcript); point LING_HOME at a temporary directory to keep none",
            ),
            (
                self.resume_drops_turn.is_some(),
                "--resume-drops-turn",
                "resume a whole session with --resume ID",
            ),
            (
                self.initialize_fields.is_some() || self.managed_settings_in_initialize,
                "--initialize-fields/--managed-settings-in-initialize",
                "settings go by --settings FILE|JSON",
            ),
            (
                self.project_config_root.is_some(),
                "--project-config-root",
                "the project root is the directory Ling runs in (-C DIR)",
            ),
            (
                self.plugin_dir_no_mcp.is_some(),
                "--plugin-dir-no-mcp",
                "Ling does not load Claude Code plugins",
            ),
            (
                self.workload.is_some(),
                "--workload",
                "workloads are not supported",
            ),
            (
                self.sdk_url.is_some(),
                "--sdk-url",
                "Ling is driven over stdin and stdout only",
            ),
        ];
        given.iter().find(|(set, ..)| *set).map(|(_, flag, why)| {
            format!("{flag} is a Claude Code flag Ling does not support: {why}")
        })
    }
}

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
    if let Some(refusal) = compat.unsupported.refusal() {
        return Err(CliError::Usage(refusal));
    }
    if compat.fork_session && args.resume.is_none() && !args.continue_session {
        return Err(CliError::Usage(
            "--fork-session copies a recorded session: give it with --resume ID or --continue"
                .into(),
        ));
    }
    let bypass = compat.dangerously_bypass_approvals_and_sandbox;
    let permission_mode = one(
        "permission mode",
        &[
            (
                args.permission_mode,
                format!("--permission-mode {}", flag_value(args.permission_mode)),
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
                bypass.then_some(PermissionMode::Bypass),
                "--dangerously-bypass-approvals-and-sandbox (Codex: bypass)".into(),
            ),
        ],
    )?;
    let sandbox = one(
        "sandbox mode",
        &[
            (
                args.sandbox,
                format!("--sandbox {}", flag_value(args.sandbox)),
            ),
            (
                compat.full_auto.then_some(SandboxMode::WorkspaceWrite),
                "--full-auto (Codex: workspace-write)".into(),
            ),
            (
                bypass.then_some(SandboxMode::Off),
                "--dangerously-bypass-approvals-and-sandbox (Codex: sandbox off)".into(),
            ),
        ],
    )?;
    let output_format = one(
        "output format",
        &[
            (
                args.output_format,
                format!("--output-format {}", flag_value(args.output_format)),
            ),
            (
                compat.json.then_some(OutputFormat::StreamJson),
                "--json (Codex: stream-json)".into(),
            ),
        ],
    )?
    .unwrap_or_default();
    let input_format = compat.input_format.unwrap_or_default();
    if input_format == InputFormat::StreamJson && output_format != OutputFormat::StreamJson {
        return Err(CliError::Usage(
            "--input-format stream-json needs --output-format stream-json (the answers to the \
             JSON on stdin are JSON lines on stdout)"
                .into(),
        ));
    }
    let stdio_prompt = match compat.permission_prompt_tool.as_deref() {
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
    };
    let tools = match compat.tools.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some(list) => Some(tool_names(list)?),
    };
    let session_id = match &compat.session_id {
        Some(id) if uuid::Uuid::parse_str(id).is_err() => {
            return Err(CliError::Usage(format!(
                "--session-id {id:?} is not a UUID; give one such as {}",
                uuid::Uuid::new_v4()
            )));
        }
        other => other.clone(),
    };
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
        system_prompt: text_or_file(&args.system_prompt, &compat.system_prompt_file)?,
        append_system_prompt: text_or_file(
            &args.append_system_prompt,
            &compat.append_system_prompt_file,
        )?,
        stdio_prompt,
    })
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&flag_value(Some(*self)))
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
        assert_eq!(r.output_format, OutputFormat::StreamJson);
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
            err.contains("--output-format json and --json (Codex: stream-json)"),
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
