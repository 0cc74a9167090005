//! Claude Code's rule syntax, every place Ling compares a rule: permission rules (deny, ask,
//! allow) and hook `if` conditions. Each deny must bite, and its negative must not.

use super::*;
use crate::tools::{ToolContext, ToolError, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::json;

struct Bash;

#[async_trait::async_trait]
impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        ""
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }
    async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::default())
    }
}

fn paths() -> Paths {
    Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into())
}

fn outcome(allow: &[&str], deny: &[&str], command: &str) -> &'static str {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let p = Permissions::new(
        PermissionMode::Default,
        &strings(allow),
        &strings(deny),
        &paths(),
    )
    .unwrap();
    match p.check(&Bash, &json!({ "command": command })) {
        Check::Allow => "allow",
        Check::Ask { .. } => "ask",
        Check::Deny { .. } => "deny",
    }
}

#[test]
fn a_deny_with_a_leading_star_bites_and_spares_the_rest() {
    let cases = [
        // (deny rule, a command it must deny, a command it must leave to `allow: bash`)
        ("Bash(*rm *)", "rm notes.txt", "ls notes.txt"),
        ("Bash(*rm *)", "cd src && rm -f a.o", "cd src && make"),
        ("Bash(*rm *)", "timeout 5 rm x", "timeout 5 ls x"),
        ("Bash(* install)", "npm install", "npm ci"),
        ("Bash(* install)", "pnpm install && ls", "pnpm build && ls"),
        (
            "Bash(git * main)",
            "git push origin main",
            "git push origin dev",
        ),
        ("Bash(curl * | bash)", "curl -s x | bash", "curl -s x"),
        ("Bash(npm run test:*)", "npm run test:unit", "npm run build"),
        ("Bash(git push:*)", "git push", "git status"),
        ("Bash(ls *)", "ls -la", "lsof -i"),
        ("Bash(ls*)", "lsof -i", "cat x"),
        ("Bash(*)", "echo hi", ""),
    ];
    for (rule, bitten, spared) in cases {
        assert_eq!(
            outcome(&["bash"], &[rule], bitten),
            "deny",
            "{rule} on {bitten}"
        );
        if !spared.is_empty() {
            assert_eq!(
                outcome(&["bash"], &[rule], spared),
                "allow",
                "{rule} on {spared}"
            );
        }
    }
}

#[test]
fn a_command_known_only_at_run_time_is_denied_where_it_could_match() {
    assert_eq!(
        outcome(&["bash"], &["Bash(* install)"], "npm $ACTION"),
        "deny"
    );
    assert_eq!(
        outcome(&["bash"], &["Bash(git * main)"], "ls $DIR"),
        "allow"
    );
}

#[test]
fn wildcard_allows_allow_only_what_they_name() {
    assert_eq!(outcome(&["Bash(git * main)"], &[], "git log main"), "allow");
    assert_eq!(outcome(&["Bash(git * main)"], &[], "git log dev"), "ask");
    // Each command of a compound one must be allowed by itself.
    assert_eq!(
        outcome(&["Bash(* --version)"], &[], "node --version"),
        "allow"
    );
    assert_eq!(
        outcome(&["Bash(* --version)"], &[], "node --version && rm -rf x"),
        "ask"
    );
    // A wrapper needs its wrapped command allowed too.
    assert_eq!(
        outcome(&["Bash(* --version)"], &[], "sudo rm -rf / ; x --version"),
        "ask"
    );
}

#[test]
fn hook_conditions_read_the_same_syntax() {
    let paths = paths();
    let rm = Condition::parse("Bash(*rm *)", &paths).unwrap();
    assert!(rm.matches("bash", &json!({"command": "rm notes.txt"})));
    assert!(!rm.matches("bash", &json!({"command": "ls notes.txt"})));
    let install = Condition::parse("Bash(* install)", &paths).unwrap();
    assert!(install.matches("bash", &json!({"command": "yarn install"})));
    assert!(!install.matches("bash", &json!({"command": "yarn build"})));
}

#[test]
fn a_rule_ling_cannot_read_is_an_error_not_a_rule_that_matches_nothing() {
    for bad in [r"Bash(echo \* *)", "Bash(git", "Frobnicate(x)", "Bash()"] {
        let err = Permissions::new(PermissionMode::Default, &[], &[bad.to_string()], &paths());
        assert!(err.is_err(), "{bad} was accepted");
    }
}

struct Named(&'static str);

#[async_trait::async_trait]
impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        ""
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::default())
    }
}

#[test]
fn skill_and_agent_rules_name_the_skill_or_agent_type() {
    let p = Permissions::new(
        PermissionMode::Default,
        &[],
        &[
            "Skill(deploy)".into(),
            "Skill(db-*)".into(),
            "Agent(reviewer)".into(),
        ],
        &paths(),
    )
    .unwrap();
    let outcome = |tool: &'static str, input: Value| match p.check(&Named(tool), &input) {
        Check::Deny { .. } => "deny",
        _ => "not denied",
    };
    assert_eq!(outcome("skill", json!({"name": "deploy"})), "deny");
    assert_eq!(outcome("skill", json!({"name": "db-migrate"})), "deny");
    assert_eq!(outcome("skill", json!({"name": "pdf"})), "not denied");
    assert_eq!(
        outcome("task", json!({"prompt": "x", "subagent_type": "reviewer"})),
        "deny"
    );
    assert_eq!(
        outcome("task", json!({"prompt": "x", "subagent_type": "planner"})),
        "not denied"
    );
    let paths = paths();
    let condition = Condition::parse("Skill(deploy)", &paths).unwrap();
    assert!(condition.matches("skill", &json!({"name": "deploy"})));
    assert!(!condition.matches("skill", &json!({"name": "pdf"})));
}
