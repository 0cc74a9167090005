//! The command-line spellings of Claude Code and Codex CLI, beside Ling's own (`args.rs`), so
//! that what their users type works: each flag here maps to one of Ling's meanings and says its
//! origin in `--help`; `compat_resolve.rs` resolves them with Ling's flags. Claude Code flags
//! Ling has no meaning for are accepted by the parser only to be refused with the reason
//! ([`Unsupported`]).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::config::PermissionMode;

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
    pub(super) fn mode(self) -> PermissionMode {
        match self {
            Self::Untrusted => PermissionMode::Default,
            Self::OnFailure | Self::OnRequest | Self::Never => PermissionMode::AcceptEdits,
        }
    }
}

/// Claude Code's and Codex's flags, flattened into [`RunArgs`](crate::cli::RunArgs).
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

    /// Codex's JSONL events on stdout, as `codex exec --json` writes them (--output-format
    /// codex-json) (Codex)
    #[arg(long, visible_alias = "experimental-json")]
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

    /// Load the Claude Code plugin in DIR (its commands, agents, skills, hooks and MCP
    /// servers); repeatable (Claude Code)
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Vec<PathBuf>,

    /// Also write the model's last message to FILE (Codex)
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,

    /// The final answer must be JSON matching this JSON Schema (given as JSON); the result's
    /// `structured_output` carries it (Claude Code)
    #[arg(long, value_name = "SCHEMA")]
    pub json_schema: Option<String>,

    /// Start the session as this agent: its prompt, tools and model (Claude Code)
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,

    /// Sub-agent definitions as JSON: {"NAME": {"description", "prompt", "tools", "model"}}
    /// (Claude Code)
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,

    /// The model's reasoning effort: minimal, low, medium or high (xhigh and max are high);
    /// settings `reasoningEffort` for this run (Claude Code)
    #[arg(long, value_name = "LEVEL")]
    pub effort: Option<String>,

    #[command(flatten)]
    pub codex: super::codex_args::CodexArgs,

    #[command(flatten)]
    pub unsupported: Unsupported,
}

/// Claude Code flags without a meaning in Ling: parsed (hidden) only to be refused by name.
#[derive(Debug, Args, Default)]
pub struct Unsupported {
    #[arg(long, hide = true, value_name = "X")]
    fallback_model: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    max_thinking_tokens: Option<String>,
    #[arg(long, hide = true, value_name = "X", num_args = 0..=1, require_equals = true)]
    thinking: Option<Option<String>>,
    #[arg(long, hide = true, value_name = "X")]
    thinking_display: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    betas: Option<String>,
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
    /// Whether each flag of [`REFUSED`] was given, in its order.
    fn given(&self) -> [bool; 18] {
        [
            self.fallback_model.is_some(),
            self.max_thinking_tokens.is_some()
                || self.thinking.is_some()
                || self.thinking_display.is_some(),
            self.betas.is_some(),
            self.permission_prompts.is_some(),
            self.task_budget.is_some(),
            self.channels.is_some(),
            self.session_mirror,
            self.resume_session_at.is_some(),
            self.managed_settings.is_some(),
            self.debug_file.is_some(),
            self.debug.is_some(),
            self.no_session_persistence,
            self.resume_drops_turn.is_some(),
            self.initialize_fields.is_some() || self.managed_settings_in_initialize,
            self.project_config_root.is_some(),
            self.plugin_dir_no_mcp.is_some(),
            self.workload.is_some(),
            self.sdk_url.is_some(),
        ]
    }

    /// The first flag given, with why Ling refuses it.
    pub(super) fn refusal(&self) -> Option<String> {
        let (flag, why) = self
            .given()
            .into_iter()
            .zip(REFUSED)
            .find_map(|(given, refused)| given.then_some(refused))?;
        Some(format!(
            "{flag} is a Claude Code flag Ling does not support: {why}"
        ))
    }
}

/// Why each Claude Code flag of [`Unsupported`] is refused, in the order of
/// [`Unsupported::given`]: (the flag as named in the refusal, the reason).
const REFUSED: [(&str, &str); 18] = [
    (
        "--fallback-model",
        "Ling talks to one model; choose it with --model",
    ),
    (
        "--max-thinking-tokens/--thinking",
        "Ling sends no thinking budget to an OpenAI-compatible server",
    ),
    (
        "--betas",
        "Anthropic API betas do not apply to an OpenAI-compatible server",
    ),
    ("--permission-prompts", "use --permission-prompt-tool stdio"),
    ("--task-budget", "task budgets are not supported"),
    ("--channels", "channels are not supported"),
    ("--session-mirror", "session stores are not supported"),
    (
        "--resume-session-at",
        "resume a whole session with --resume ID",
    ),
    ("--managed-settings", "use --settings FILE|JSON"),
    (
        "--debug-file",
        "Ling's debug log is LING_HOME/logs/ling.log (LING_LOG=debug)",
    ),
    (
        "--debug",
        "set LING_LOG=debug; the log is LING_HOME/logs/ling.log",
    ),
    (
        "--no-session-persistence",
        "every session is recorded (hooks read its transcript); point LING_HOME at a temporary directory to keep none",
    ),
    (
        "--resume-drops-turn",
        "resume a whole session with --resume ID",
    ),
    (
        "--initialize-fields/--managed-settings-in-initialize",
        "settings go by --settings FILE|JSON",
    ),
    (
        "--project-config-root",
        "the project root is the directory Ling runs in (-C DIR)",
    ),
    (
        "--plugin-dir-no-mcp",
        "load the plugin with --plugin-dir (its MCP servers come with it)",
    ),
    ("--workload", "workloads are not supported"),
    ("--sdk-url", "Ling is driven over stdin and stdout only"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn each_refused_flag_is_refused_with_its_own_reason() {
        for (flag, why) in REFUSED {
            let given = flag.split('/').next().unwrap_or(flag);
            // A flag that takes no value leaves `x` to the prompt.
            let cli = Cli::try_parse_from(["ling", given, "x"]).unwrap();
            assert_eq!(
                cli.run.compat.unsupported.refusal(),
                Some(format!(
                    "{flag} is a Claude Code flag Ling does not support: {why}"
                )),
                "{given}"
            );
        }
        assert_eq!(Unsupported::default().refusal(), None);
    }
}
