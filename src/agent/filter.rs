//! Narrowings of the tools a run may use: a sub-agent definition's `tools`, a custom command's
//! or a skill's `allowed-tools`. A narrowing only ever takes tools away: a call it does not
//! list is refused before any hook or question, and the model is not offered the tool at all.
//! Entries are Ling's tool names, Claude Code's (`Read`, `Bash`, `Edit`...), MCP names
//! (`mcp__server__tool`, `mcp__server` for all of a server's, `mcp__server__*`) or a rule with
//! an argument (`Bash(git status:*)`, `edit_file(src/**)`), which admits only the calls that
//! rule matches.

use std::path::Path;

use serde_json::Value;

use crate::config::{Paths, PermissionMode};
use crate::permissions::{Check, Permissions};
use crate::tools::Tool;

/// One narrowing: what it admits, and whose it is (for the refusal).
#[derive(Clone)]
pub struct ToolFilter {
    /// Tool names, or prefixes ending in `*`.
    names: Vec<String>,
    /// Rules with an argument, as written, by the tool they name.
    rules: Vec<(String, String)>,
    /// `the reviewer agent's tools`, `/deploy's allowed-tools`.
    pub origin: String,
}

impl std::fmt::Debug for ToolFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolFilter")
            .field("names", &self.names)
            .field("rules", &self.rules)
            .finish()
    }
}

/// Why a narrowing refuses a call: what the model reads (after `not allowed: `), naming the
/// tools or calls it may make instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{tool} is not one of {origin} ({listed}); use one of those")]
    NotListed {
        tool: String,
        origin: String,
        listed: String,
    },
    #[error("{origin} allows {tool} only as {rules}; this call is not one of those")]
    NotMatched {
        tool: String,
        origin: String,
        /// The narrowing's rules for the tool, as written, joined.
        rules: String,
    },
}

/// Ling's tool for a Claude Code tool name, or the name itself.
fn ling_name(name: &str) -> Option<String> {
    let mapped = match name {
        "Bash" => "bash",
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Grep" => "grep",
        "Glob" | "LS" => "glob",
        "Task" | "Agent" => "task",
        "Skill" => "skill",
        "WebFetch" => "web_fetch",
        "WebSearch" => "web_search",
        "TodoWrite" => "todo_write",
        "ExitPlanMode" => "exit_plan_mode",
        "AskUserQuestion" => "ask_user",
        "BashOutput" => "bash_output",
        "KillShell" => "kill_shell",
        // Claude Code tools Ling does not have admit nothing.
        "NotebookEdit" | "NotebookRead" => return None,
        other => other,
    };
    Some(match mapped.strip_prefix("mcp__") {
        Some(rest) if !rest.contains("__") && !rest.ends_with('*') => format!("mcp__{rest}__*"),
        _ => mapped.to_string(),
    })
}

impl ToolFilter {
    /// The narrowing `entries` write; `origin` says whose it is.
    pub fn new(entries: &[String], origin: impl Into<String>) -> Self {
        let mut names = Vec::new();
        let mut rules = Vec::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let (name, arg) = match entry.split_once('(') {
                Some((name, arg)) if arg.ends_with(')') => (name.trim(), Some(arg)),
                _ => (entry, None),
            };
            let Some(tool) = ling_name(name) else {
                continue;
            };
            if arg.is_some() {
                rules.push((tool.clone(), entry.to_string()));
            }
            if !names.contains(&tool) {
                names.push(tool);
            }
        }
        Self {
            names,
            rules,
            origin: origin.into(),
        }
    }

    /// Admits only these tool names (a sub-agent's tools, never more than its parent's).
    pub fn names(names: Vec<String>, origin: impl Into<String>) -> Self {
        Self {
            names,
            rules: Vec::new(),
            origin: origin.into(),
        }
    }

    /// Whether the tool `name` may be called at all.
    pub fn admits(&self, name: &str) -> bool {
        self.names.iter().any(|n| match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => n == name,
        })
    }

    /// The names it admits, as written, for messages.
    pub fn listed(&self) -> String {
        if self.names.is_empty() {
            return "none".into();
        }
        self.names.join(", ")
    }

    /// Whether this call may run: its tool admitted and, when the narrowing gives rules for
    /// it, one of them matching the input (the permission rule matcher decides).
    pub fn check(&self, tool: &dyn Tool, input: &Value, root: &Path) -> Result<(), Refusal> {
        if !self.admits(tool.name()) {
            return Err(Refusal::NotListed {
                tool: tool.name().to_string(),
                origin: self.origin.clone(),
                listed: self.listed(),
            });
        }
        let rules: Vec<String> = self
            .rules
            .iter()
            .filter(|(name, _)| name == tool.name())
            .map(|(_, rule)| rule.clone())
            .collect();
        // A bare entry for the tool admits every call of it.
        let bare = self.rules.iter().all(|(name, _)| name != tool.name());
        if bare {
            return Ok(());
        }
        let paths = Paths::new(root.to_path_buf());
        let matched = Permissions::new(PermissionMode::Default, &rules, &[], &paths)
            .map(|p| p.check(tool, input) == Check::Allow)
            .unwrap_or(false);
        if matched {
            Ok(())
        } else {
            Err(Refusal::NotMatched {
                tool: tool.name().to_string(),
                origin: self.origin.clone(),
                rules: rules.join(", "),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolRegistry;
    use serde_json::json;

    #[test]
    fn claude_names_map_and_rules_narrow_a_tool_to_its_calls() {
        let filter = ToolFilter::new(
            &[
                "Read".into(),
                "Bash(git status:*)".into(),
                "mcp__db".into(),
                "WebFetch".into(),
            ],
            "/x's allowed-tools",
        );
        assert!(filter.admits("read_file") && filter.admits("bash"));
        assert!(filter.admits("mcp__db__query") && !filter.admits("mcp__other__q"));
        assert!(!filter.admits("write_file"));
        let tools = ToolRegistry::builtins();
        let bash = tools.get("bash").unwrap().as_ref();
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            filter.check(bash, &json!({"command": "git status -s"}), root.path()),
            Ok(())
        );
        let refused = filter
            .check(bash, &json!({"command": "git push"}), root.path())
            .unwrap_err()
            .to_string();
        assert!(refused.contains("only as Bash(git status:*)"), "{refused}");
        let write = tools.get("write_file").unwrap().as_ref();
        let refused = filter
            .check(write, &json!({}), root.path())
            .unwrap_err()
            .to_string();
        assert!(refused.starts_with("write_file is not one of /x's allowed-tools"));
    }
}
