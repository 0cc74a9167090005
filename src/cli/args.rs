//! The command line of `docs/cli.md`, parsed by clap: `ling`'s own flags, its subcommands, and
//! the run's spellings of the flags it shares with `ling acp` and `ling mcp serve`.

use std::path::PathBuf;

use clap::{Arg, Args, Parser, Subcommand, ValueEnum};

use super::agent_flags::AgentFlags;
use crate::config::SandboxMode;

#[derive(Debug, Parser)]
#[command(
    name = "ling",
    version,
    about = "A coding agent in your terminal, for any OpenAI-compatible model",
    args_conflicts_with_subcommands = true,
    after_help = "Run `ling` for the interactive REPL, or `ling -p \"PROMPT\"` for one task.

Examples:
  ling                                          the REPL in this folder
  ling -p \"why does cargo test fail?\"            one task, the answer on stdout
  git diff | ling -p \"review this diff\"          piped input is added to the prompt
  ling -p \"fix the lint\" --allowed-tools 'bash(cargo clippy*)' --permission-mode accept-edits
  ling --base-url http://127.0.0.1:8080/v1      a local llama.cpp server, no key needed
  ling --continue                               pick up this folder's last session
  ling trust                                    trust this folder's .ling/ config
  ling mcp add files -- npx -y @modelcontextprotocol/server-filesystem .

In the REPL: /help lists the commands, Shift-Tab cycles the permission mode, @path attaches a
file, Ctrl-C interrupts a turn, Ctrl-D leaves."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// The flags of `ling` and `ling exec`: an agent run's (`agent_flags::AgentFlags`, with Codex's `-m` and
/// `-s` and Claude Code's `--allowedTools` spellings), and what only a run from the command
/// line has: -p and its prompt, its output, the project's folder, MCP files, the session to
/// continue, and Claude Code's and Codex's own flags.
#[derive(Debug, Args, Default)]
#[command(
    mut_arg("model", |arg| noted(arg.short('m'), "(-m: Codex)")),
    mut_arg("max_turns", |arg| noted(arg, "(exceeding it is an error)")),
    mut_arg("sandbox", |arg| noted(arg.short('s'), "(-s: Codex)")),
    mut_arg("allowed_tools", |arg| {
        noted(arg.visible_alias("allowedTools"), "(--allowedTools: Claude Code)")
    }),
    mut_arg("disallowed_tools", |arg| {
        noted(arg.visible_alias("disallowedTools"), "(--disallowedTools: Claude Code)")
    }),
    mut_arg("allow_sampling", |arg| {
        arg.help("Allow MCP servers' sampling requests in non-interactive runs")
    }),
)]
pub struct RunArgs {
    /// Run one task non-interactively, print the answer and exit
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// The prompt (with -p; without it, the REPL starts with this prompt)
    pub prompt: Option<String>,

    #[command(flatten)]
    pub agent: AgentFlags,

    /// Output of -p runs (default: text)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,

    /// Start in DIR instead of the current directory (the project root is found from it)
    #[arg(short = 'C', long = "cwd", visible_alias = "cd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Another directory the file tools and the sandbox may write (repeatable)
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,

    /// Attach an image (PNG, JPEG, GIF, WebP) to the prompt of a -p run (repeatable, or
    /// comma-separated) (-i: Codex)
    #[arg(
        short = 'i',
        long = "image",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub image: Vec<PathBuf>,

    /// With -p: after each answer run CMD (sandboxed, as a bash command); while it fails its
    /// output goes back to the model, which goes on. Exit 3 when it never passed
    #[arg(long, value_name = "CMD")]
    pub until: Option<String>,

    /// Write the model's side of the session (each request's hash, each streamed response) to
    /// FILE, JSONL, for --replay
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,

    /// Answer the model's requests from a --record FILE instead of a model; a request it does
    /// not have ends the run with exit 4
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,

    /// Extra MCP config: a file, or the JSON itself (repeatable)
    #[arg(long, value_name = "FILE|JSON")]
    pub mcp_config: Vec<PathBuf>,

    /// Use only the --mcp-config files
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// Continue the latest session in this project (-c: Claude Code)
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume the session with this id; without one, the REPL offers a picker (-r: Claude Code)
    #[arg(short = 'r', long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// Work in a new git worktree of the project, on a branch named after it (default name:
    /// ling-XXXXXXXX; folder: settings worktreeDir, default ../REPO-worktrees)
    #[arg(short = 'w', long = "worktree", value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,

    /// More detail on stderr
    #[arg(long)]
    pub verbose: bool,

    #[command(flatten)]
    pub compat: super::compat_args::CompatArgs,
}

/// `arg` with `note` after its help: the run's spelling of a shared flag, and whose it is.
fn noted(arg: Arg, note: &str) -> Arg {
    let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
    arg.help(format!("{help} {note}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// The answer on stdout, the rest on stderr
    #[default]
    Text,
    /// One result object at the end
    Json,
    /// Claude Code's messages, one per line (what programs written for `claude -p` and the
    /// Claude Agent SDK read)
    StreamJson,
    /// Ling's own lines, one per event
    LingStreamJson,
    /// Codex's JSONL events (`codex exec --json`: thread.started, item.completed, ...), what
    /// the Codex SDK reads
    CodexJson,
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.to_possible_value();
        f.write_str(name.as_ref().map_or("", |v| v.get_name()))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task and exit, as `ling -p` (Codex's `codex exec`); `-` as the prompt reads it
    /// from stdin
    Exec {
        #[command(flatten)]
        run: Box<RunArgs>,
        /// Codex's `exec resume`
        #[command(subcommand)]
        action: Option<super::codex_args::ExecAction>,
    },
    /// Manage and test MCP servers (.ling/mcp.json)
    Mcp {
        #[command(subcommand)]
        command: super::mcp_cmd::McpCommand,
        /// Project root (default: the current directory)
        #[arg(short = 'C', long = "cwd", value_name = "DIR", global = true)]
        cwd: Option<PathBuf>,
        /// Extra MCP config file (repeatable)
        #[arg(long, value_name = "FILE", global = true)]
        mcp_config: Vec<PathBuf>,
        /// Use only the --mcp-config files
        #[arg(long, global = true)]
        strict_mcp_config: bool,
    },
    /// Trust this folder's project config (.ling/settings.json, hooks.json, mcp.json), list
    /// the trusted folders, or revoke one
    #[command(
        after_help = "A project's own config applies only once its folder is trusted, and only \
                      until it changes. In CI: `ling trust . && ling -p ...`."
    )]
    Trust {
        /// The project root (default: the current directory)
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Every trusted folder, when it was trusted, and whether its config still matches
        #[arg(long, conflicts_with_all = ["dir", "revoke"])]
        list: bool,
        /// Forget the trust of DIR (default: the current directory)
        #[arg(long)]
        revoke: bool,
    },
    /// List this project's recorded sessions (resume one with --resume ID or --continue), or
    /// prune the checkpoints of all sessions
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
        /// Project root (default: the current directory)
        #[arg(short = 'C', long = "cwd", value_name = "DIR", global = true)]
        cwd: Option<PathBuf>,
    },
    /// Inspect hooks (.ling/hooks.json) and test them without a model
    Hooks {
        #[command(subcommand)]
        command: HooksCommand,
        /// Project root (default: the current directory)
        #[arg(short = 'C', long = "cwd", value_name = "DIR", global = true)]
        cwd: Option<PathBuf>,
    },
    /// The Claude Code plugins a run here loads (--plugin-dir, enabledPlugins on disk)
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
        /// Project root (default: the current directory)
        #[arg(short = 'C', long = "cwd", value_name = "DIR", global = true)]
        cwd: Option<PathBuf>,
        /// A plugin folder to list too (repeatable)
        #[arg(long, value_name = "DIR", global = true)]
        plugin_dir: Vec<PathBuf>,
    },
    /// Run a command in the shell sandbox, to try a policy (exits with the command's code)
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim...)
    #[command(
        after_help = "Started by the editor, not by hand: docs/acp.md shows each editor's setup."
    )]
    Acp(super::acp_cmd::AcpArgs),
    /// Print the shell completion script for SHELL on stdout
    #[command(after_help = "Install it once, e.g. `ling completion bash > \
                      ~/.local/share/bash-completion/completions/ling` (the README has zsh and fish).")]
    Completion {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Run CMD in the sandbox a bash command of this project gets: `ling sandbox run -- CMD...`
    Run {
        /// The sandbox mode (default: settings `sandbox.mode`, else workspace-write)
        #[arg(long, value_enum, value_name = "MODE")]
        mode: Option<SandboxMode>,
        /// Allow the network (default: settings `sandbox.network`)
        #[arg(long)]
        network: bool,
        /// Project root (default: the current directory)
        #[arg(short = 'C', long = "cwd", value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The sandbox exactly as given by the hidden path options below, not from settings:
        /// how an `ling acp` session's bash command runs in the editor's terminal (a process
        /// outside Ling's own tree) with the policy Ling decided for it.
        #[command(flatten)]
        exact: ExactPolicy,
        /// The command and its arguments
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
}

/// `ling sandbox run --exact`: every path of a [`crate::process::sandbox::Policy`], hidden
/// (Ling writes them, people do not).
#[derive(Debug, Default, clap::Args)]
pub struct ExactPolicy {
    #[arg(long, hide = true)]
    pub exact: bool,
    #[arg(long, hide = true, value_name = "PATH")]
    pub write: Vec<PathBuf>,
    #[arg(long, hide = true, value_name = "PATH")]
    pub protect: Vec<PathBuf>,
    #[arg(long, hide = true, value_name = "PATH")]
    pub hide: Vec<PathBuf>,
    #[arg(long, hide = true, value_name = "PATH")]
    pub closed: Vec<PathBuf>,
    #[arg(long = "allow-socket", hide = true, value_name = "PATH")]
    pub allow_socket: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Each plugin: its name, where it comes from, its folder and what it brings; then the
    /// enabled plugins that are not loaded, and why
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// This project's sessions, most recent first: id, start, last activity, first prompt,
    /// messages
    List {
        #[arg(long)]
        json: bool,
    },
    /// Bring the checkpoints of all sessions within settings `checkpoints.maxStorage`: the
    /// sessions used longest ago lose theirs first (their conversations stay)
    Prune {
        /// The bound in bytes, instead of the settings' (0: every checkpoint not used in the
        /// last hour)
        #[arg(long, value_name = "BYTES")]
        max_storage: Option<u64>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// The loaded hooks, each with its source file
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run the matching hooks on a made-up event and print the combined outcome
    Run {
        /// Event name, e.g. PreToolUse
        event: String,
        /// Tool name for tool events
        #[arg(long)]
        tool: Option<String>,
        /// Event input as JSON (for tool events: the tool input)
        #[arg(long)]
        input: Option<String>,
        #[arg(long)]
        json: bool,
    },
}
