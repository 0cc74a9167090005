//! `settings.json` exactly as written ([`RawSettings`], its `permissions` and `projects`
//! entries), the defaults of its keys, and what the command line lays over it
//! ([`SettingsOverrides`], `--settings`'s [`FlagSettings`]). Resolving these into
//! [`Settings`](super::Settings) is `settings.rs`'s.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::ConfigError;
use super::checkpoints::RawCheckpoints;
use super::claude::RawClaudeCompat;
use super::json::{check_object_text, syntax_error};
use super::model_api::{RawModelApi, WireApi};
use super::modes::{ElicitationPolicy, PermissionMode};
use super::sandbox::{RawSandbox, SandboxMode};
use super::tool_search::RawToolSearch;
use super::web::{RawWebFetch, RawWebSearch};

pub const SETTINGS_FILE: &str = "settings.json";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The default `toolOutputLimit`, in characters.
pub const DEFAULT_TOOL_OUTPUT_LIMIT: usize = 100_000;
/// Sub-agents that run at once when settings `maxParallelAgents` does not say.
pub const DEFAULT_MAX_PARALLEL_AGENTS: usize = 4;
/// How deep sub-agents go when settings `maxAgentDepth` does not say: children of the main
/// agent only.
pub const DEFAULT_MAX_AGENT_DEPTH: usize = 1;
/// The default `connectTimeoutMs`.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 10_000;
/// The default `firstByteTimeoutMs`.
pub const DEFAULT_FIRST_BYTE_TIMEOUT_MS: u64 = 120_000;
/// The default `idleTimeoutMs`.
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 90_000;
/// The default `maxRetries`.
pub const DEFAULT_MAX_RETRIES: u32 = 4;
/// The default `maxRetryDelayMs`: the longest wait before one retry.
pub const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;
/// The default `autoCompactPercent`: compact when a request would fill this much of the window.
pub const DEFAULT_AUTO_COMPACT_PERCENT: u8 = 85;
/// The context window assumed when neither settings, the server nor the table of well-known
/// models says (tokens).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 32_768;
/// The default `backgroundOutputBytes` (1 MiB).
pub const DEFAULT_BACKGROUND_OUTPUT_BYTES: usize = 1 << 20;
/// The default `maxStopHookBlocks`.
pub const DEFAULT_MAX_STOP_HOOK_BLOCKS: u32 = 20;
/// The default `idleNotifyMs`: a minute at the prompt, as Claude Code waits.
pub const DEFAULT_IDLE_NOTIFY_MS: u64 = 60_000;
/// The default `maxStreamLineBytes` (8 MiB).
pub const DEFAULT_MAX_STREAM_LINE_BYTES: usize = 8 << 20;

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Default, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    /// Dollars per million prompt (input) tokens.
    #[schemars(range(min = 0))]
    pub input_per_m_tok: f64,
    /// Dollars per million completion (output) tokens.
    #[schemars(range(min = 0))]
    pub output_per_m_tok: f64,
    /// Dollars per million input tokens read from the prompt cache. Default: the input price.
    #[schemars(range(min = 0))]
    #[serde(default)]
    pub cache_read_per_m_tok: Option<f64>,
    /// Dollars per million input tokens written to the prompt cache. Default: the input price.
    #[schemars(range(min = 0))]
    #[serde(default)]
    pub cache_write_per_m_tok: Option<f64>,
}

impl Price {
    /// US dollars for this many prompt and completion tokens.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input_per_m_tok
            + completion_tokens as f64 * self.output_per_m_tok)
            / 1_000_000.0
    }
}

/// `settings.json` exactly as written. Unknown keys are kept in `other` (to be warned about and
/// ignored), so that newer files still load.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RawSettings {
    /// Where this file's JSON Schema is, for editors; Ling does not read it.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// The model id sent to the API. `--model` and `LING_MODEL` come first. Default `gpt-4o-mini`.
    #[schemars(extend("default" = DEFAULT_MODEL))]
    pub model: Option<String>,
    /// Other names for models: `--model NAME`, `LING_MODEL` and `model` may give a key of this
    /// map, and its value is the model id sent, e.g. `{"sonnet": "anthropic/claude-sonnet-4.5",
    /// "fast": "gpt-4o-mini"}`. A project's entry for a name wins over the user's.
    pub model_aliases: Option<BTreeMap<String, String>>,
    /// The server's base URL, ending before `/chat/completions`, e.g.
    /// `http://127.0.0.1:8080/v1` (with `api: anthropic` the server's root). `--base-url`,
    /// `OPENAI_BASE_URL` (with anthropic `ANTHROPIC_BASE_URL`) and `LING_BASE_URL` come first.
    /// Default `https://api.openai.com/v1` (with anthropic `https://api.anthropic.com`).
    #[schemars(extend("default" = DEFAULT_BASE_URL))]
    pub base_url: Option<String>,
    /// The environment variable that holds the API key. Default `OPENAI_API_KEY` (with
    /// `api: anthropic`, `ANTHROPIC_API_KEY`).
    #[schemars(extend("default" = DEFAULT_API_KEY_ENV))]
    pub api_key_env: Option<String>,
    /// The permission mode and rules.
    #[serde(default)]
    pub permissions: RawPermissions,
    /// Turn hooks off: in `~/.ling/settings.json` every hook, in a project's settings only that
    /// project's hooks. Default false.
    #[schemars(extend("default" = false))]
    pub disable_all_hooks: Option<bool>,
    /// Stop a run after this many model requests (exceeding it is an error). Default: no limit
    /// in the REPL, 100 in `-p` runs.
    #[schemars(range(min = 1))]
    pub max_turns: Option<u32>,
    /// Stop spending at this many US dollars: a run (a `-p` run, a REPL or ACP session, with
    /// every sub-agent it starts) ends before a model request that would pass it. Costs come
    /// from `prices`, else Ling's table of well-known models. Default: no cap.
    #[schemars(range(min = 0))]
    pub max_budget_usd: Option<f64>,
    /// How long the REPL waits at its prompt before Notification hooks hear `idle_prompt`, in
    /// milliseconds. Default 60000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_IDLE_NOTIFY_MS))]
    pub idle_notify_ms: Option<u64>,
    /// Bytes of a background command's output kept in memory (its whole output is in a file
    /// too). Default 1048576 (1 MiB).
    #[schemars(range(min = 1), extend("default" = DEFAULT_BACKGROUND_OUTPUT_BYTES))]
    pub background_output_bytes: Option<usize>,
    /// How many times in a row Stop hooks may block the end of a turn (sending the model back
    /// to work) before the run ends with an error, and how many times in a row a goal's check
    /// (`--until`, `/goal`) may fail. Default 20.
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_STOP_HOOK_BLOCKS))]
    pub max_stop_hook_blocks: Option<u32>,
    /// Characters of one tool result sent to the model before it is cut (head and tail kept).
    /// Default 100000.
    #[schemars(extend("default" = DEFAULT_TOOL_OUTPUT_LIMIT))]
    pub tool_output_limit: Option<usize>,
    /// How long connecting to the model server may take, in milliseconds. Default 10000.
    #[schemars(extend("default" = DEFAULT_CONNECT_TIMEOUT_MS))]
    pub connect_timeout_ms: Option<u64>,
    /// How long to wait for the first byte of a model answer, in milliseconds. Default 120000.
    #[schemars(extend("default" = DEFAULT_FIRST_BYTE_TIMEOUT_MS))]
    pub first_byte_timeout_ms: Option<u64>,
    /// How long a model answer may pause between two chunks, in milliseconds. Default 90000.
    #[schemars(extend("default" = DEFAULT_IDLE_TIMEOUT_MS))]
    pub idle_timeout_ms: Option<u64>,
    /// How many times a failed model request is retried (connection errors, 408, 409, 429, 5xx,
    /// a stream cut before anything was shown). Default 4.
    #[schemars(extend("default" = DEFAULT_MAX_RETRIES))]
    pub max_retries: Option<u32>,
    /// The longest wait before a retry, in milliseconds, however long the server's
    /// `Retry-After` asks for. Default 60000.
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_RETRY_DELAY_MS))]
    pub max_retry_delay_ms: Option<u64>,
    /// The longest line of a model's event stream (and the largest non-streamed answer), in
    /// bytes; a longer one fails the request without a retry. Default 8388608 (8 MiB).
    #[schemars(range(min = 1), extend("default" = DEFAULT_MAX_STREAM_LINE_BYTES))]
    pub max_stream_line_bytes: Option<usize>,
    /// Let the `bash` tool, command hooks and stdio MCP servers inherit the API key variable.
    /// Default false.
    #[schemars(extend("default" = false))]
    pub share_api_key_with_tools: Option<bool>,
    /// Allow MCP servers' `sampling/createMessage` in non-interactive runs, without asking.
    /// Default false.
    #[schemars(extend("default" = false))]
    pub allow_sampling: Option<bool>,
    /// Answer to MCP elicitation in non-interactive runs: `decline` (default) or
    /// `accept-defaults` (accept with every field's default, when every required field has one).
    #[schemars(extend("default" = "decline"))]
    pub elicitation: Option<ElicitationPolicy>,
    /// The model's context window in tokens. Default: what the server says (llama.cpp, vLLM,
    /// Ollama), else a table of well-known models, else 32768.
    #[schemars(range(min = 1))]
    pub context_window: Option<u64>,
    /// Summarise the conversation by itself when it nears the context window. Default true.
    #[schemars(extend("default" = true))]
    pub auto_compact: Option<bool>,
    /// How full the context window may get, in percent, before the conversation is compacted.
    /// Default 85.
    #[schemars(range(min = 10, max = 100), extend("default" = DEFAULT_AUTO_COMPACT_PERCENT))]
    pub auto_compact_percent: Option<u8>,
    /// Claude Code's files: `true` (default) reads a trusted project's `.claude/settings.json`,
    /// `.claude/settings.local.json` and `.mcp.json`, and `CLAUDE.md`; `false` none of them;
    /// `{"userHooks": true}` also runs the hooks of `~/.claude/settings.json`.
    pub claude_compat: Option<RawClaudeCompat>,
    /// Your own Codex files: `true` (default) reads Codex's `AGENTS.md`, `prompts/` (as
    /// `/prompts:NAME` commands) and execpolicy `rules/`; `false` none;
    /// `{"userHooks": true}` also runs the hooks of Codex's `hooks.json`.
    pub codex_compat: Option<super::codex_user::RawCodexCompat>,
    /// When MCP tools are offered by name behind `search_tools` rather than in full.
    pub tool_search: Option<RawToolSearch>,
    /// Checkpoints of the writable folders before each turn and each tool call that can
    /// write, for `/rewind`: `false` turns them off; an object sets their bounds.
    pub checkpoints: Option<RawCheckpoints>,
    /// The shell sandbox of the `bash` tool (Linux: Landlock and seccomp).
    #[serde(default)]
    pub sandbox: RawSandbox,
    /// The bounds of the `web_fetch` tool.
    pub web_fetch: Option<RawWebFetch>,
    /// Where the `web_search` tool searches.
    pub web_search: Option<RawWebSearch>,
    /// Environment variables for the programs Ling starts (the `bash` tool, command hooks,
    /// stdio MCP servers), as Claude Code's `env`, e.g. `{"CARGO_TERM_COLOR": "never"}`. The API
    /// key variable is never set this way. A project's value for a name wins over the user's.
    pub env: Option<BTreeMap<String, String>>,
    /// What Ling keeps about each project, by its root (in `~/.ling/settings.json` only): the
    /// MCP servers `/mcp disable` and `/mcp enable` switched off or on there.
    pub projects: Option<BTreeMap<String, RawProjectState>>,
    /// What models cost, for the REPL's `/cost` and `cost_usd` in the JSON results: per model
    /// id, US dollars per million input and output tokens (and prompt-cache reads and writes),
    /// e.g. `{"gpt-4o": {"inputPerMTok": 2.5, "outputPerMTok": 10}}`. A project's entry for a
    /// model wins over the user's.
    pub prices: Option<std::collections::BTreeMap<String, Price>>,
    /// The REPL's colours for code: `auto` (default: the terminal's background, asked of the
    /// terminal or read from `COLORFGBG`), `dark` or `light`.
    #[schemars(extend("enum" = ["auto", "dark", "light"], "default" = "auto"))]
    pub theme: Option<String>,
    /// The REPL's status line, as Claude Code's: `{"type": "command", "command": "..."}`; the
    /// command gets the session as JSON on stdin and the first line it prints shows after
    /// each turn.
    pub status_line: Option<RawStatusLine>,
    /// Claude Code plugins to load, `{"NAME@MARKETPLACE": true}`, when they are on disk
    /// (`config/plugins.rs`).
    pub enabled_plugins: Option<std::collections::BTreeMap<String, bool>>,
    /// Claude Code's marketplaces, `{"NAME": {"source": {"source": "directory", "path":
    /// "..."}}}`: a local folder is read, any other source only named.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub extra_known_marketplaces: Option<serde_json::Value>,
    /// How many sub-agents (`task` calls of one response) run at once; the others wait.
    /// Default 4.
    #[schemars(range(min = 1, max = 64), extend("default" = DEFAULT_MAX_PARALLEL_AGENTS))]
    pub max_parallel_agents: Option<usize>,
    /// How deep sub-agents may nest: 1 (default) lets only the main agent start them, 2 lets
    /// its children start their own, and so on. `maxParallelAgents` and `--max-turns` count
    /// every agent of the tree.
    #[schemars(range(min = 1, max = 8), extend("default" = DEFAULT_MAX_AGENT_DEPTH))]
    pub max_agent_depth: Option<usize>,
    /// Where `-w/--worktree` makes worktrees: a folder, relative to the repository's root
    /// (default `../REPO-worktrees`, beside the repository).
    pub worktree_dir: Option<std::path::PathBuf>,
    /// The wire API and what is sent to it (`api`, `serverKind`, `maxOutputTokens`,
    /// `reasoningEffort`).
    #[serde(flatten)]
    pub model_api: RawModelApi,
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: BTreeMap<String, serde_json::Value>,
}

impl RawSettings {
    /// An untrusted project's file: only its `permissions.deny` and `permissions.ask` rules
    /// (which only narrow) are read; whatever else it says is neither used nor checked, so a key
    /// of a newer Ling there does not stop this one.
    pub fn narrowing_only(text: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct File {
            #[serde(default)]
            permissions: Narrowing,
            #[serde(default)]
            sandbox: NarrowingSandbox,
        }
        #[derive(Default, Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct NarrowingSandbox {
            deny_read: Option<Vec<String>>,
        }
        #[derive(Default, Deserialize)]
        struct Narrowing {
            #[serde(default)]
            deny: Vec<String>,
            #[serde(default)]
            ask: Vec<String>,
        }
        let file: File = serde_json::from_str(text)?;
        Ok(Self {
            permissions: RawPermissions {
                deny: file.permissions.deny,
                ask: file.permissions.ask,
                ..RawPermissions::default()
            },
            // So does hiding more files from sandboxed commands.
            sandbox: RawSandbox {
                deny_read: file.sandbox.deny_read,
                ..RawSandbox::default()
            },
            ..Self::default()
        })
    }

    /// What an untrusted project's settings keep: their deny rules, which only narrow.
    pub fn deny_only(self) -> Self {
        Self {
            permissions: RawPermissions {
                deny: self.permissions.deny,
                // `ask` only narrows too.
                ask: self.permissions.ask,
                ..RawPermissions::default()
            },
            // So does hiding more files from sandboxed commands.
            sandbox: RawSandbox {
                deny_read: self.sandbox.deny_read,
                ..RawSandbox::default()
            },
            ..Self::default()
        }
    }
}

/// One project's entry of `projects` (the user's settings).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "ProjectState")]
pub struct RawProjectState {
    /// MCP servers not started in this project, whatever their config says (`/mcp disable`).
    #[serde(default)]
    pub disabled_mcp_servers: Vec<String>,
    /// MCP servers started in this project even when their config says `"disabled": true`
    /// (`/mcp enable`).
    #[serde(default)]
    pub enabled_mcp_servers: Vec<String>,
}

/// `permissions` of `settings.json`. Rules: a tool name (`read_file`), a trailing wildcard
/// (`mcp__sqlite__*`), `bash(PREFIX*)` or `bash(exact command)`, or a file tool with a path glob
/// (`edit_file(src/**)`). Deny rules win over allow rules, and rules over the mode.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "Permissions")]
pub struct RawPermissions {
    /// Calls these rules allow without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Calls these rules deny. An untrusted project's deny rules still apply.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Calls these rules always ask about, whatever the mode or an allow rule says (deny rules
    /// still win).
    #[serde(default)]
    pub ask: Vec<String>,
    /// The permission mode when `--permission-mode` is not given. Default `default`.
    #[schemars(extend("default" = "default"))]
    pub default_mode: Option<PermissionMode>,
    /// Keys Ling does not know, warned about and ignored.
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Settings `statusLine` (Claude Code's).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RawStatusLine {
    /// `command`, the only kind.
    #[serde(rename = "type")]
    pub kind: StatusLineKind,
    /// Run with `sh -c`, outside the sandbox, as a hook's command.
    pub command: String,
    /// Claude Code's left padding: accepted, not used.
    pub padding: Option<u32>,
}

/// The kinds of status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusLineKind {
    Command,
}

/// `--settings FILE|JSON` (Claude Code's flag): one more settings file, over the project's and
/// the user's. It may hold Claude Code's `hooks` too (loaded as a Claude Code file's).
#[derive(Debug, Clone)]
pub struct FlagSettings {
    /// The file, or `--settings` for JSON given on the command line.
    pub source: std::path::PathBuf,
    pub text: String,
    pub raw: RawSettings,
}

impl FlagSettings {
    /// `value` is the JSON itself when it starts with `{`, else a file (relative to `root`).
    pub fn read(value: &str, root: &std::path::Path) -> Result<Self, ConfigError> {
        let (source, text) = if value.trim_start().starts_with('{') {
            (std::path::PathBuf::from("--settings"), value.to_string())
        } else {
            let path = root.join(value);
            let text = super::read_config_text(&path)?.ok_or_else(|| ConfigError::Read {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            })?;
            (path, text)
        };
        check_object_text(&source, &text)?;
        let raw = serde_json::from_str(&text).map_err(|e| syntax_error(&source, &e))?;
        Ok(Self { source, text, raw })
    }
}

/// What the command line says; each field overrides the environment and the settings files.
#[derive(Debug, Default, Clone)]
pub struct SettingsOverrides {
    /// `--settings`: a settings layer over the files.
    pub settings: Option<FlagSettings>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    pub max_turns: Option<u32>,
    /// `--max-budget-usd`.
    pub max_budget_usd: Option<f64>,
    pub no_hooks: bool,
    pub allow_sampling: bool,
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// Nothing is asked (Codex's `--ask-for-approval never`).
    pub never_ask: bool,
    /// `--api`.
    pub api: Option<WireApi>,
    /// The sandbox's network (Codex's `sandbox_workspace_write.network_access`).
    pub sandbox_network: Option<bool>,
    /// The model's reasoning effort for this run: `--effort`, or Codex's
    /// `model_reasoning_effort`.
    pub reasoning_effort: Option<super::ReasoningEffort>,
    /// `--ignore-rules` (Codex): no execpolicy `.rules` file is read.
    pub ignore_codex_rules: bool,
}
