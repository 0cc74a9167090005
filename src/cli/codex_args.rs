//! Codex CLI's `codex exec` command line, beside Claude Code's (`compat_args.rs`): the flags CI
//! scripts, `openai/codex-action` and the published `@openai/codex-sdk` pass (`--cd`,
//! `--output-schema`, `--ephemeral`, `--ignore-user-config`, `--ignore-rules`, `--config
//! key=value`, `--profile`, `--experimental-json`), `exec resume [ID|--last]`, and those Ling
//! cannot honour, parsed only to be refused by name with the reason ([`CodexUnsupported`]).
//! Under `exec`, Codex's short `-c key=value` and `-p PROFILE` mean what they mean to Codex
//! ([`codex_spellings`] rewrites them before clap sees them); elsewhere `-c` and `-p` stay
//! Claude Code's `--continue` and `--print`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// The arguments with Codex's meaning of `-c` and `-p` under `exec`: `-c X` is `--config X`,
/// `-p X` is `--profile X` (up to a `--`). Any other command line is left as it is.
pub fn codex_spellings(args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).and_then(|a| a.to_str()) != Some("exec") {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut literal = false;
    for arg in args {
        let text = arg.to_str().unwrap_or_default();
        let spelled = match text {
            _ if literal => None,
            "--" => {
                literal = true;
                None
            }
            "-c" => Some("--config".to_string()),
            "-p" => Some("--profile".to_string()),
            _ if text.starts_with("-c") && text.contains('=') && !text.starts_with("--") => {
                Some(format!("--config={}", &text[2..]))
            }
            _ => None,
        };
        out.push(spelled.map_or(arg, OsString::from));
    }
    out
}

/// Codex's `--color`: accepted; Ling's `exec` never colours stdout, and stderr follows the
/// terminal and `NO_COLOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Always,
    Never,
    Auto,
}

/// Codex's `exec` flags, flattened into the run's [`CompatArgs`](super::compat_args::CompatArgs).
#[derive(Debug, Args, Default)]
pub struct CodexArgs {
    /// A Codex config override, `key=value` (the value in TOML): model, approval_policy,
    /// sandbox_mode, sandbox_workspace_write.network_access, openai_base_url,
    /// model_reasoning_effort, web_search; repeatable (`-c` under `exec`) (Codex)
    #[arg(long = "config", value_name = "key=value")]
    pub config: Vec<String>,

    /// The profile of ~/.codex/config.toml whose model and approval settings apply (`-p` under
    /// `exec`) (Codex)
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// The final answer must be JSON matching this JSON Schema; checked, and asked again once
    /// when it does not (Codex)
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,

    /// Record no session (nothing to resume, no checkpoints) (Codex)
    #[arg(long)]
    pub ephemeral: bool,

    /// Read neither ~/.codex/config.toml nor Ling's user settings, hooks and MCP servers
    /// (Codex)
    #[arg(long)]
    pub ignore_user_config: bool,

    /// Load no Codex execpolicy `.rules` files (Codex)
    #[arg(long)]
    pub ignore_rules: bool,

    /// Accepted: Ling's exec writes no colour to stdout (Codex)
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<Color>,

    /// Accepted: Ling's exec draws no progress (Codex)
    #[arg(long, hide = true)]
    pub progress_cursor: bool,

    #[command(flatten)]
    pub unsupported: CodexUnsupported,

    /// The run is `ling exec` (Codex's command): Codex's config applies.
    #[arg(skip)]
    pub exec: bool,
}

/// `ling exec`'s own subcommands, as Codex's: `resume`, and `review` (refused).
#[derive(Debug, Subcommand)]
pub enum ExecAction {
    /// Continue a recorded session by id, or the latest with --last (Codex)
    Resume(ResumeArgs),
    /// Codex's code review: not supported (ask for a review in the prompt instead)
    #[command(hide = true)]
    Review {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

/// `exec resume [ID] [PROMPT]`, `exec resume --last [PROMPT]`, and the run flags Codex also
/// takes after `resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session's id (a unique prefix is enough); with --last, the prompt
    #[arg(value_name = "SESSION_ID")]
    pub session_id: Option<String>,
    /// The prompt (`-` or none: read from stdin)
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Continue this project's most recent session
    #[arg(long)]
    pub last: bool,
    /// Accepted: Ling's sessions are listed per project
    #[arg(long)]
    pub all: bool,
    #[arg(
        short = 'i',
        long = "image",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub image: Vec<PathBuf>,
    #[arg(long, visible_alias = "experimental-json")]
    pub json: bool,
    #[arg(short = 'm', long, value_name = "MODEL")]
    pub model: Option<String>,
    #[arg(long = "config", value_name = "key=value")]
    pub config: Vec<String>,
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,
    #[arg(long)]
    pub skip_git_repo_check: bool,
    #[arg(long)]
    pub ephemeral: bool,
}

impl ResumeArgs {
    /// The session asked for and the prompt, Codex's way: with `--last` a single positional
    /// is the prompt.
    pub fn target(&self) -> (Option<String>, Option<String>) {
        if self.last && self.prompt.is_none() {
            (None, self.session_id.clone())
        } else {
            (self.session_id.clone(), self.prompt.clone())
        }
    }
}

/// Codex flags without a meaning in Ling: parsed (hidden) only to be refused by name.
#[derive(Debug, Args, Default)]
pub struct CodexUnsupported {
    #[arg(long, hide = true)]
    oss: bool,
    #[arg(long, hide = true, value_name = "X")]
    local_provider: Option<String>,
    #[arg(long, hide = true)]
    not_so_yolo: bool,
    #[arg(long, hide = true, value_name = "X")]
    enable: Vec<String>,
    #[arg(long, hide = true, value_name = "X")]
    disable: Vec<String>,
    #[arg(long, hide = true, value_name = "X")]
    thread_source: Option<String>,
    #[arg(long, hide = true, value_name = "X")]
    cyber_access_program: Option<String>,
}

/// Why each Codex flag of [`CodexUnsupported`] is refused, in the order of
/// [`CodexUnsupported::given`].
pub const CODEX_REFUSED: [(&str, &str); 6] = [
    (
        "--oss/--local-provider",
        "point --base-url at the local server's OpenAI-compatible API (Ollama: \
         http://localhost:11434/v1, LM Studio: http://localhost:1234/v1)",
    ),
    (
        "--not-so-yolo",
        "Ling has no auto-reviewer of approvals; use --permission-mode accept-edits or allow \
         rules",
    ),
    (
        "--enable/--disable",
        "Codex's feature flags do not apply to Ling",
    ),
    ("--thread-source", "Ling records no thread source"),
    (
        "--cyber-access-program",
        "it selects an OpenAI program Ling does not know",
    ),
    (
        "exec review",
        "ask for the review in the prompt (`ling exec \"review the uncommitted changes\"`)",
    ),
];

impl CodexUnsupported {
    /// Whether each flag of [`CODEX_REFUSED`] but the last (a subcommand) was given.
    fn given(&self) -> [bool; 5] {
        [
            self.oss || self.local_provider.is_some(),
            self.not_so_yolo,
            !self.enable.is_empty() || !self.disable.is_empty(),
            self.thread_source.is_some(),
            self.cyber_access_program.is_some(),
        ]
    }

    /// The first flag given, with why Ling refuses it.
    pub fn refusal(&self) -> Option<String> {
        self.given()
            .into_iter()
            .zip(CODEX_REFUSED)
            .find_map(|(given, refused)| given.then(|| refusal(refused)))
    }
}

/// The refusal of one of [`CODEX_REFUSED`].
pub fn refusal((flag, why): (&str, &str)) -> String {
    format!("{flag} is a Codex flag Ling does not support: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelled(args: &[&str]) -> Vec<String> {
        codex_spellings(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn dash_c_and_dash_p_are_codex_s_only_under_exec() {
        assert_eq!(
            spelled(&[
                "ling",
                "exec",
                "-c",
                "model=\"m\"",
                "-p",
                "ci",
                "-cx=1",
                "--",
                "-c"
            ]),
            [
                "ling",
                "exec",
                "--config",
                "model=\"m\"",
                "--profile",
                "ci",
                "--config=x=1",
                "--",
                "-c"
            ]
        );
        assert_eq!(
            spelled(&["ling", "-p", "-c", "x"]),
            ["ling", "-p", "-c", "x"]
        );
    }

    #[test]
    fn each_refused_codex_flag_says_why() {
        use crate::cli::Cli;
        use clap::Parser;
        for ((flag, _), given) in CODEX_REFUSED.iter().zip(0..5) {
            let name = flag.split('/').next().unwrap_or(flag);
            let args: Vec<&str> = match given {
                1 => vec!["ling", name, "x"],
                _ if name == "--oss" => vec!["ling", name, "x"],
                _ => vec!["ling", name, "v", "x"],
            };
            let cli = Cli::try_parse_from(&args).unwrap();
            let said = cli.run.compat.codex.unsupported.refusal().unwrap();
            assert!(
                said.starts_with(&format!("{flag} is a Codex flag")),
                "{said}"
            );
        }
        assert_eq!(CodexUnsupported::default().refusal(), None);
    }
}
