//! One permission rule as a condition on a tool call: a hook handler's `if`
//! (`"if": "Bash(git commit*)"`, `"if": "Edit(src/**)"`). It matches a call as an ask rule
//! does: a bash rule when any command the text runs matches it, or when what it runs cannot be
//! known (a guard then runs: the safe side); a path rule when the file tool acts on a matching
//! path; a name rule when it names the tool.

use serde_json::Value;

use super::bash_rules::{self, Verdict};
use super::path_rules::{Scope, Target};
use super::rules::Rule;
use super::shell::{self, Analysis};
use super::{PermissionError, bash_command};
use crate::config::Paths;

/// A parsed rule to test calls against.
#[derive(Debug, Clone)]
pub struct Condition {
    rule: Rule,
    scope: Scope,
}

impl Condition {
    /// Bad syntax is an error naming the rule and saying what rules look like.
    pub fn parse(text: &str, paths: &Paths) -> Result<Self, PermissionError> {
        let scope = Scope::new(&paths.project_root, &paths.home);
        Ok(Self {
            rule: Rule::parse(text, &scope)?,
            scope,
        })
    }

    /// Whether a call of `tool` (Ling's name) with `input` matches.
    pub fn matches(&self, tool: &str, input: &Value) -> bool {
        let target = self.scope.target(tool, input);
        let bash = bash_command(tool, input).map(shell::analyze);
        let host = super::web_rules::fetch_host(tool, input);
        let call = CallFacts {
            tool,
            target: target.as_ref(),
            bash: bash.as_ref(),
            host: host.as_deref(),
            named: super::rules::named_in(tool, input),
        };
        matches_call(&self.rule, &call, &mut None)
    }
}

/// What a rule is matched against: the tool, the path it acts on, the command it runs, the
/// host it fetches.
#[derive(Clone, Copy)]
pub(super) struct CallFacts<'a> {
    pub tool: &'a str,
    pub target: Option<&'a Target>,
    pub bash: Option<&'a Analysis>,
    pub host: Option<&'a str>,
    /// The skill a `skill` call loads, the agent type a `task` call starts.
    pub named: Option<&'a str>,
}

/// Whether `rule` matches a call as an ask rule does. `forms` caches the bash analysis's deny
/// forms across rules.
pub(super) fn matches_call(
    rule: &Rule,
    call: &CallFacts<'_>,
    forms: &mut Option<Vec<Vec<shell::Word>>>,
) -> bool {
    let CallFacts {
        tool,
        target,
        bash,
        host,
        named,
    } = *call;
    match rule {
        Rule::Named {
            tool: ling,
            pattern,
        } => tool == *ling && named.is_some_and(|name| pattern.matches(name)),
        Rule::Domain(pattern) => {
            tool == "web_fetch" && host.is_some_and(|h| crate::web::host_matches(pattern, h))
        }
        Rule::Bash(pattern) => bash.is_some_and(|analysis| {
            let forms = forms.get_or_insert_with(|| bash_rules::deny_forms_of(analysis));
            analysis.error.is_some()
                || !analysis.opaque.is_empty()
                || !matches!(
                    bash_rules::deny_verdict(pattern, analysis, forms).0,
                    Verdict::NoMatch
                )
        }),
        Rule::Path { tools, pattern } => {
            tools.contains(&tool) && target.is_some_and(|t| pattern.matches(t))
        }
        _ => rule.names_tool(tool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rule_matches_the_calls_an_ask_rule_would() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::with_home(dir.path().to_path_buf(), dir.path().join("home"));
        let commit = Condition::parse("Bash(git commit*)", &paths).unwrap();
        let bash = |command: &str| json!({ "command": command });
        assert!(commit.matches("bash", &bash("git commit -m x")));
        assert!(commit.matches("bash", &bash("git add . && git commit -m x")));
        assert!(!commit.matches("bash", &bash("git status")));
        assert!(!commit.matches("bash", &bash("rm -rf build")));
        assert!(!commit.matches("write_file", &json!({"path": "x"})));
        let edits = Condition::parse("Edit(src/**)", &paths).unwrap();
        assert!(edits.matches("edit_file", &json!({"path": "src/a.rs"})));
        assert!(edits.matches("write_file", &json!({"path": "src/b.rs"})));
        assert!(!edits.matches("edit_file", &json!({"path": "docs/a.md"})));
        let any_write = Condition::parse("Write", &paths).unwrap();
        assert!(any_write.matches("write_file", &json!({"path": "x"})));
        assert!(Condition::parse("Bash(git", &paths).is_err());
    }
}
