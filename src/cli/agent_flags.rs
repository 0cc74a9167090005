//! The flags of an agent run, declared once: [`AgentFlags`] (the model and its server, the
//! permission mode, sandbox and rules, hooks, the system prompt, sampling) is flattened into
//! `ling`'s and `ling exec`'s flags, `ling acp`'s and `ling mcp serve`'s; `--api`'s values; how
//! repeated rule flags split into rules; and where a command's MCP servers come from.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::config::{PermissionMode, SandboxMode, SettingsOverrides};
use crate::session::{PromptOptions, Resume, RunOptions};

/// The flags every command that starts an agent run takes. `ling` and `ling exec` add their own
/// spellings of some of them (Codex's `-m` and `-s`, Claude Code's `--allowedTools`).
#[derive(Debug, Args, Default, Clone)]
pub struct AgentFlags {
    /// Model id sent to the API [env: LING_MODEL]
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// OpenAI-compatible base URL, ending before /chat/completions [env: OPENAI_BASE_URL, LING_BASE_URL]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// The model server's wire API (default: anthropic for api.anthropic.com, else chat) [settings: api]
    #[arg(long, value_enum, value_name = "API")]
    pub api: Option<ApiArg>,

    /// Stop after N model requests in one run
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Stop before a model request that would take the run past this many US dollars (prices:
    /// settings `prices`, else Ling's table) [settings: maxBudgetUsd]
    #[arg(long, value_name = "USD", value_parser = budget)]
    pub max_budget_usd: Option<f64>,

    /// Permission mode
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionMode>,

    /// The shell sandbox of the bash tool (default: workspace-write where the kernel has Landlock)
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxMode>,

    /// Allow rules, comma-separated: a tool name, `mcp__server__*`, or `bash(PREFIX*)`.
    // Raw flag values; `split_rules` splits them (a `//` comment: doc comments become the help).
    #[arg(long, value_name = "RULE,...")]
    pub allowed_tools: Vec<String>,

    /// Deny rules, comma-separated (deny wins over allow).
    // Raw flag values, like `allowed_tools`.
    #[arg(long, value_name = "RULE,...")]
    pub disallowed_tools: Vec<String>,

    /// Load no hooks at all
    #[arg(long)]
    pub no_hooks: bool,

    /// Replace the built-in system prompt
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,

    /// Add to the built-in system prompt
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// Allow MCP servers' sampling requests without asking
    #[arg(long)]
    pub allow_sampling: bool,
}

impl AgentFlags {
    /// The run options these flags ask for, with these `--mcp-config` files.
    pub fn run_options(&self, mcp_config: &[PathBuf], strict_mcp_config: bool) -> RunOptions {
        RunOptions {
            overrides: SettingsOverrides {
                model: self.model.clone(),
                base_url: self.base_url.clone(),
                permission_mode: self.permission_mode,
                allowed_tools: split_rules(&self.allowed_tools),
                disallowed_tools: split_rules(&self.disallowed_tools),
                max_turns: self.max_turns,
                max_budget_usd: self.max_budget_usd,
                no_hooks: self.no_hooks,
                allow_sampling: self.allow_sampling,
                sandbox: self.sandbox,
                api: self.api.map(Into::into),
                ..SettingsOverrides::default()
            },
            mcp_config: mcp_config.to_vec(),
            strict_mcp_config,
            prompt: PromptOptions {
                replace: self.system_prompt.clone(),
                append: self.append_system_prompt.clone(),
                ..PromptOptions::default()
            },
            resume: Resume::New,
            tools: None,
            session_id: None,
            fork_session: false,
            ephemeral: false,
            plugin_dirs: Vec::new(),
            program: Default::default(),
        }
    }
}

/// `--max-budget-usd`'s value: US dollars, 0 or more.
fn budget(text: &str) -> Result<f64, String> {
    match text.trim().trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!(
            "{text:?} is not an amount of US dollars; give one like 5 or 0.50"
        )),
    }
}

/// `--api`: the wire API of the model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApiArg {
    /// OpenAI chat completions (most providers, every local server)
    Chat,
    /// OpenAI Responses (reasoning carried between turns)
    Responses,
    /// Anthropic Messages (with prompt caching)
    Anthropic,
}

impl From<ApiArg> for crate::config::WireApi {
    fn from(api: ApiArg) -> Self {
        match api {
            ApiArg::Chat => Self::Chat,
            ApiArg::Responses => Self::Responses,
            ApiArg::Anthropic => Self::Anthropic,
        }
    }
}

/// The rules of repeated `--allowed-tools` / `--disallowed-tools` values, split on commas and
/// (as Claude Code's `--allowedTools "Bash(git:*) Edit"`) spaces outside parentheses:
/// `bash(echo a,b)` is one rule, as Ling's own suggestions write it.
pub fn split_rules(values: &[String]) -> Vec<String> {
    let mut rules = Vec::new();
    for value in values {
        let (mut depth, mut start) = (0usize, 0);
        for (i, c) in value.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' | ' ' if depth == 0 => {
                    rules.push(value[start..i].to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
        rules.push(value[start..].to_string());
    }
    rules.retain(|rule| !rule.trim().is_empty());
    rules
}

/// Where `ling mcp` (and `ling mcp serve`'s run) reads its servers from: `ling mcp`'s `-C`,
/// `--mcp-config` and `--strict-mcp-config`.
pub struct McpSources {
    pub cwd: Option<PathBuf>,
    pub extra: Vec<PathBuf>,
    pub strict: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn rules_split_on_commas_outside_parentheses_only() {
        let values = [
            "read_file,bash(echo a,b && ls),glob".to_string(),
            "grep".to_string(),
        ];
        assert_eq!(
            split_rules(&values),
            ["read_file", "bash(echo a,b && ls)", "glob", "grep"]
        );
        let claude = ["Bash(git commit:*) Edit, Read".to_string()];
        assert_eq!(split_rules(&claude), ["Bash(git commit:*)", "Edit", "Read"]);
    }
}
