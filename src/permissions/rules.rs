//! One permission rule as written in `--allowed-tools`, `--disallowed-tools` or settings
//! `permissions.allow` / `permissions.deny`: a tool name, a name prefix, a bash command
//! pattern or a file tool with a path glob. Claude Code's spellings mean the same: `Bash(npm run
//! test:*)`, `Read`, `Edit(src/**)`, `mcp__server` (every tool of the server), `WebFetch` and
//! `WebFetch(domain:example.com)` (a host, or `*.example.com` for a domain); rules for Claude
//! tools Ling does not have (`NotebookEdit`, `KillShell`...) are accepted and match nothing,
//! with a warning.

use super::PermissionError;
use super::bash_rules::BashPattern;
use super::path_rules::{PathPattern, Scope, path_rule_tools};

#[derive(Debug, Clone)]
pub enum Rule {
    /// An exact tool name.
    Name(String),
    /// A tool-name prefix, written with a trailing `*`.
    NamePrefix(String),
    /// `bash(PREFIX*)` or `bash(COMMAND)`.
    Bash(BashPattern),
    /// `edit_file(src/**)`: the tools it applies to and the path glob.
    Path {
        tools: &'static [&'static str],
        pattern: PathPattern,
    },
    /// A Claude Code tool name that stands for several of Ling's (`Read`: `read_file`, `grep`,
    /// `glob`; `Edit`: `edit_file`, `write_file`).
    Tools(&'static [&'static str]),
    /// `web_fetch(domain:example.com)`: fetches of that host (`*.example.com`: of that domain).
    Domain(String),
    /// `Skill(name)`, `Task(type)`/`Agent(type)`: calls of that tool naming a matching skill
    /// or agent type (`*` anywhere, `:*` at the end for a prefix).
    Named {
        tool: &'static str,
        pattern: NamePattern,
    },
    /// A rule for a Claude Code tool Ling does not have: it matches nothing.
    Ignored,
}

/// The name pattern of a [`Rule::Named`].
#[derive(Debug, Clone)]
pub struct NamePattern(wildmatch::WildMatchPattern<'*', '\0'>);

impl NamePattern {
    pub fn matches(&self, name: &str) -> bool {
        self.0.matches(name)
    }
}

/// What a `skill` call (its `name`) or a `task` call (its `subagent_type`, the general agent
/// when none) names, for [`Rule::Named`].
pub fn named_in<'a>(tool: &str, input: &'a serde_json::Value) -> Option<&'a str> {
    match tool {
        "skill" => input.get("name").and_then(serde_json::Value::as_str),
        "task" => Some(
            input
                .get("subagent_type")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("general-purpose"),
        ),
        _ => None,
    }
}

/// Claude Code tools Ling has no counterpart for: their rules are accepted and ignored.
const CLAUDE_ONLY_TOOLS: [&str; 2] = ["NotebookEdit", "NotebookRead"];

impl Rule {
    pub fn parse(text: &str, scope: &Scope) -> Result<Self, PermissionError> {
        let invalid = |reason: &str| PermissionError::InvalidRule {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        let rule = text.trim();
        if rule.is_empty() {
            return Err(invalid("it is empty"));
        }
        if let Some(open) = rule.find('(') {
            let name = &rule[..open];
            let Some(inner) = rule[open + 1..].strip_suffix(')') else {
                return Err(invalid("a rule with `(` must end with `)`"));
            };
            // `Bash` is how Claude Code spells it; accepting it lets its settings carry over.
            if name == "bash" || name == "Bash" {
                return bash_rule(inner).map_err(invalid);
            }
            if name == "web_fetch" || name == "WebFetch" {
                return domain_rule(inner).map_err(invalid);
            }
            let named_tool = match name {
                "Skill" | "skill" => Some("skill"),
                "Task" | "Agent" | "task" => Some("task"),
                _ => None,
            };
            if let Some(tool) = named_tool {
                let inner = inner.trim();
                if inner.is_empty() || inner.contains(['\\', '\0']) {
                    return Err(invalid("name a skill or agent type, as in `Skill(deploy)`"));
                }
                let text = inner
                    .strip_suffix(":*")
                    .map_or(inner.to_string(), |p| format!("{p}*"));
                return Ok(Rule::Named {
                    tool,
                    pattern: NamePattern(wildmatch::WildMatchPattern::new(&text)),
                });
            }
            if CLAUDE_ONLY_TOOLS.contains(&name) {
                return Ok(Rule::Ignored);
            }
            let Some(tools) = path_rule_tools(name) else {
                return Err(invalid(
                    "only bash, web_fetch and the file tools take an argument, as in `bash(git \
                     status*)`, `web_fetch(domain:docs.rs)` or `edit_file(src/**)`",
                ));
            };
            let pattern = PathPattern::compile(inner, scope)
                .map_err(|reason| invalid(&reason.to_string()))?;
            return Ok(Rule::Path { tools, pattern });
        }
        let (name, wildcard) = match rule.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (rule, false),
        };
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        {
            return Err(invalid(
                "a tool name has only letters, digits, `_`, `-` and `.`, with an optional trailing `*`",
            ));
        }
        if !wildcard && CLAUDE_ONLY_TOOLS.contains(&name) {
            return Ok(Rule::Ignored);
        }
        Ok(if wildcard {
            Rule::NamePrefix(name.to_string())
        } else if name == "Bash" {
            Rule::Name("bash".to_string())
        } else if let Some(ling) = claude_agent_tool(name) {
            Rule::Name(ling.to_string())
        } else if let Some(tools) = path_rule_tools(name).filter(|_| name != name.to_lowercase()) {
            // A Claude Code name: `Read`, `Edit`, `Write`, `MultiEdit`, `Grep`, `Glob`, `LS`.
            Rule::Tools(tools)
        } else if let Some(server) = name.strip_prefix("mcp__").filter(|s| !s.contains("__")) {
            // `mcp__server`: Claude Code's rule for every tool of that server.
            Rule::NamePrefix(format!("mcp__{server}__"))
        } else {
            Rule::Name(name.to_string())
        })
    }

    /// Whether the rule was accepted only to be ignored (a Claude Code tool Ling lacks).
    pub fn is_ignored(&self) -> bool {
        matches!(self, Rule::Ignored)
    }

    /// Whether the rule names `tool` whatever its input (a name or name prefix).
    pub fn names_tool(&self, tool: &str) -> bool {
        match self {
            Rule::Name(name) => tool == name,
            Rule::NamePrefix(prefix) => tool.starts_with(prefix.as_str()),
            Rule::Tools(tools) => tools.contains(&tool),
            Rule::Bash(_)
            | Rule::Path { .. }
            | Rule::Domain(_)
            | Rule::Named { .. }
            | Rule::Ignored => false,
        }
    }
}

/// Ling's name for Claude Code's `Task` (sub-agents), `Skill`, `WebFetch`, `WebSearch`,
/// `BashOutput`, `KillShell` and the session's own tools (`TodoWrite`, `ExitPlanMode`,
/// `AskUserQuestion`).
fn claude_agent_tool(name: &str) -> Option<&'static str> {
    match name {
        "Task" => Some("task"),
        "TodoWrite" => Some("todo_write"),
        "ExitPlanMode" => Some("exit_plan_mode"),
        "AskUserQuestion" => Some("ask_user"),
        "Skill" => Some("skill"),
        "WebFetch" => Some("web_fetch"),
        "WebSearch" => Some("web_search"),
        "BashOutput" => Some("bash_output"),
        "KillShell" => Some("kill_shell"),
        _ => None,
    }
}

/// `domain:HOST` (Claude Code's form), `HOST` or `*.DOMAIN`, without scheme, port or path.
fn domain_rule(inner: &str) -> Result<Rule, &'static str> {
    let host = inner.trim();
    let host = host.strip_prefix("domain:").unwrap_or(host).trim();
    let valid = !host.is_empty()
        && host
            .trim_start_matches("*.")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
        && !host.contains("://");
    if !valid {
        return Err(
            "a web_fetch rule names a host, as in `web_fetch(domain:docs.rs)` or \
             `web_fetch(domain:*.python.org)`, without scheme, port or path",
        );
    }
    Ok(Rule::Domain(host.to_ascii_lowercase()))
}

fn bash_rule(inner: &str) -> Result<Rule, &'static str> {
    let inner = inner.trim();
    if inner.is_empty() {
        return Err("the command pattern is empty; write `bash` to match every command");
    }
    // `:*` is Claude Code's older spelling of a prefix rule.
    let prefix = inner.strip_suffix(":*").or_else(|| inner.strip_suffix('*'));
    // A `*` anywhere but at the end: Claude Code's wildcard rule, matched on the text.
    if prefix.unwrap_or(inner).contains('*') {
        let text = match inner.strip_suffix(":*") {
            Some(head) => format!("{head} *"),
            None => inner.to_string(),
        };
        return BashPattern::wildcard(&text).map(Rule::Bash);
    }
    Ok(Rule::Bash(match prefix {
        Some(prefix) => BashPattern::new(prefix, false),
        None => BashPattern::new(inner, true),
    }))
}
