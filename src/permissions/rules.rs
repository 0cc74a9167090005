//! One permission rule as written in `--allowed-tools`, `--disallowed-tools` or settings
//! `permissions.allow` / `permissions.deny`: a tool name, a name prefix, a bash command
//! pattern or a file tool with a path glob.

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
}

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
            let Some(tools) = path_rule_tools(name) else {
                return Err(invalid(
                    "only bash and the file tools take an argument, as in `bash(git status*)` or \
                     `edit_file(src/**)`",
                ));
            };
            let pattern = PathPattern::compile(inner, scope).map_err(|reason| invalid(&reason))?;
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
        Ok(if wildcard {
            Rule::NamePrefix(name.to_string())
        } else if name == "Bash" {
            Rule::Name("bash".to_string())
        } else {
            Rule::Name(name.to_string())
        })
    }

    /// Whether the rule names `tool` whatever its input (a name or name prefix).
    pub fn names_tool(&self, tool: &str) -> bool {
        match self {
            Rule::Name(name) => tool == name,
            Rule::NamePrefix(prefix) => tool.starts_with(prefix.as_str()),
            Rule::Bash(_) | Rule::Path { .. } => false,
        }
    }
}

fn bash_rule(inner: &str) -> Result<Rule, &'static str> {
    let inner = inner.trim();
    if inner.is_empty() {
        return Err("the command pattern is empty; write `bash` to match every command");
    }
    // `:*` is Claude Code's older spelling of a prefix rule.
    Ok(Rule::Bash(
        match inner.strip_suffix(":*").or_else(|| inner.strip_suffix('*')) {
            Some(prefix) => BashPattern::new(prefix, false),
            None => BashPattern::new(inner, true),
        },
    ))
}
