//! Permission rules and modes of `spec/tools.md`: whether a tool call runs, needs the user's
//! approval, or is refused. Rules (`--allowed-tools`, `--disallowed-tools`, settings
//! `permissions.allow` / `permissions.deny`) are checked first, deny before allow; the mode's
//! column for the tool's kind decides the rest.

use serde_json::Value;

use crate::config::PermissionMode;
use crate::tools::{Tool, ToolKind};

mod shell;

use shell::{is_simple, runs_text_as_commands, simple_commands};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    #[error(
        "invalid permission rule {rule:?}: {reason}; rules look like `read_file`, `mcp__sqlite__*` \
         or `bash(git status*)`"
    )]
    InvalidRule { rule: String, reason: String },
}

/// The outcome of [`Permissions::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Allow,
    /// The user must approve; in a non-interactive run this is a denial built from `suggestion`.
    Ask {
        suggestion: Suggestion,
    },
    Deny {
        reason: String,
    },
}

/// What would allow a call without asking: a rule for the REPL's "always" answer, the flag that
/// adds it, and for file edits the mode that allows them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// e.g. `bash(git status*)` or `write_file`.
    pub rule: String,
    /// e.g. `--allowed-tools 'bash(git status*)'`.
    pub flag: String,
    /// e.g. `--permission-mode accept-edits`, for file edits only.
    pub mode_hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rule {
    /// An exact tool name.
    Name(String),
    /// A tool-name prefix, written with a trailing `*`.
    NamePrefix(String),
    /// `bash(PREFIX*)`: the command starts with PREFIX.
    BashPrefix(String),
    /// `bash(COMMAND)`: the command is exactly COMMAND.
    BashExact(String),
}

impl Rule {
    fn parse(text: &str) -> Result<Self, PermissionError> {
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
            if name != "bash" && name != "Bash" {
                return Err(invalid(
                    "only bash rules take an argument, as in `bash(git status*)`",
                ));
            }
            let inner = inner.trim();
            if inner.is_empty() {
                return Err(invalid(
                    "the command pattern is empty; write `bash` to match every command",
                ));
            }
            // `:*` is Claude Code's older spelling of a prefix rule.
            return Ok(
                match inner.strip_suffix(":*").or_else(|| inner.strip_suffix('*')) {
                    Some(prefix) => Rule::BashPrefix(prefix.to_string()),
                    None => Rule::BashExact(inner.to_string()),
                },
            );
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

    /// `deny` widens bash rules to any part of a compound command (`ls; rm -rf x` is caught by
    /// `bash(rm*)`), while `allow` narrows prefix rules to simple commands (`bash(ls*)` does not
    /// allow `ls; rm -rf x`).
    fn matches(&self, tool: &str, input: &Value, deny: bool) -> bool {
        match self {
            Rule::Name(name) => tool == name,
            Rule::NamePrefix(prefix) => tool.starts_with(prefix.as_str()),
            Rule::BashPrefix(_) | Rule::BashExact(_) => {
                let Some(command) = bash_command(tool, input) else {
                    return false;
                };
                if deny {
                    simple_commands(command)
                        .into_iter()
                        .any(|part| runs_text_as_commands(part) || self.matches_command(part))
                } else {
                    match self {
                        Rule::BashExact(_) => self.matches_command(command),
                        _ => is_simple(command) && self.matches_command(command),
                    }
                }
            }
        }
    }

    fn matches_command(&self, command: &str) -> bool {
        let command = command.trim();
        match self {
            Rule::BashPrefix(prefix) => command.starts_with(prefix.trim_start()),
            Rule::BashExact(exact) => command == exact.trim(),
            _ => false,
        }
    }
}

fn bash_command<'a>(tool: &str, input: &'a Value) -> Option<&'a str> {
    (tool == "bash").then(|| input.get("command")?.as_str())?
}

pub struct Permissions {
    mode: PermissionMode,
    allow: Vec<(String, Rule)>,
    deny: Vec<(String, Rule)>,
}

impl Permissions {
    /// Bad rule syntax is an error naming the rule.
    pub fn new(
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
    ) -> Result<Self, PermissionError> {
        let parse = |rules: &[String]| -> Result<Vec<(String, Rule)>, PermissionError> {
            rules
                .iter()
                .map(|r| Ok((r.trim().to_string(), Rule::parse(r)?)))
                .collect()
        };
        Ok(Self {
            mode,
            allow: parse(allow)?,
            deny: parse(deny)?,
        })
    }

    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    /// File tools stay inside the project root in every mode but `bypass`.
    pub fn confine_to_root(&self) -> bool {
        self.mode != PermissionMode::Bypass
    }

    /// Rules first (deny wins over allow), then the mode's column for the tool's kind.
    pub fn check(&self, tool: &dyn Tool, input: &Value) -> Check {
        if let Some(reason) = self.denied_by_rule(tool, input) {
            return Check::Deny { reason };
        }
        if self
            .allow
            .iter()
            .any(|(_, r)| r.matches(tool.name(), input, false))
        {
            return Check::Allow;
        }
        let ask = || Check::Ask {
            suggestion: suggestion(tool, input),
        };
        match (tool.kind(), self.mode) {
            (ToolKind::Read, _) => Check::Allow,
            (_, PermissionMode::Bypass) => Check::Allow,
            (ToolKind::Edit, PermissionMode::AcceptEdits) => Check::Allow,
            (ToolKind::Edit, PermissionMode::Default) => ask(),
            (ToolKind::Execute, PermissionMode::Default | PermissionMode::AcceptEdits) => ask(),
            (ToolKind::Edit, PermissionMode::Plan) => Check::Deny {
                reason: format!(
                    "plan mode: {} changes files, which is not allowed while planning; describe the \
                     change instead (the user can switch with --permission-mode accept-edits)",
                    tool.name()
                ),
            },
            (ToolKind::Execute, PermissionMode::Plan) if tool.read_only_hint() => Check::Allow,
            (ToolKind::Execute, PermissionMode::Plan) => Check::Deny {
                reason: format!(
                    "plan mode: {} may change things and is not allowed while planning; use the \
                     read-only tools (read_file, grep, glob) instead (the user can switch with \
                     --permission-mode default)",
                    tool.name()
                ),
            },
        }
    }

    /// Adds an allow rule for the rest of the session ("always" in the REPL prompt). The rule
    /// comes from [`session_rule_for`]; one that does not parse matches nothing and is dropped.
    pub fn allow_for_session(&mut self, rule: String) {
        if let Ok(parsed) = Rule::parse(&rule) {
            self.allow.push((rule, parsed));
        }
    }

    /// Whether a deny RULE (not the mode) matches: a hook's `allow` cannot override this.
    pub fn denied_by_rule(&self, tool: &dyn Tool, input: &Value) -> Option<String> {
        self.deny
            .iter()
            .find(|(_, r)| r.matches(tool.name(), input, true))
            .map(|(text, _)| {
                format!(
                    "the permission rule `{text}` (--disallowed-tools or settings permissions.deny) \
                     denies this {} call; do it another way or ask the user",
                    tool.name()
                )
            })
    }
}

/// The rule that would allow this call from now on: `bash(git status*)` for `git status -s`, an
/// exact `bash(...)` rule for a compound command, or the tool's name.
pub fn session_rule_for(tool: &dyn Tool, input: &Value) -> String {
    match bash_command(tool.name(), input) {
        Some(command) if is_simple(command) && !command.trim().is_empty() => {
            format!("bash({}*)", command_prefix(command))
        }
        Some(command) if !command.trim().is_empty() && !command.contains('\n') => {
            format!("bash({})", command.trim())
        }
        _ => tool.name().to_string(),
    }
}

fn suggestion(tool: &dyn Tool, input: &Value) -> Suggestion {
    let rule = session_rule_for(tool, input);
    Suggestion {
        flag: format!("--allowed-tools {}", shell_quote(&rule)),
        rule,
        mode_hint: (tool.kind() == ToolKind::Edit)
            .then(|| "--permission-mode accept-edits".to_string()),
    }
}

/// Tools whose second word is the real command (`git status`, `cargo test`).
const TWO_WORD_COMMANDS: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "npx", "go", "docker", "kubectl", "pip", "pip3", "uv",
    "poetry", "make", "just", "rustup", "gh", "apt", "apt-get", "brew", "dotnet", "mvn", "gradle",
];

fn command_prefix(command: &str) -> String {
    let mut words = command.split_whitespace();
    let first = words.next().unwrap_or_default();
    match words.next() {
        Some(second) if TWO_WORD_COMMANDS.contains(&first) && !second.starts_with('-') => {
            format!("{first} {second}")
        }
        _ => first.to_string(),
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tools::{ToolContext, ToolError, ToolOutput};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    struct Fake {
        name: &'static str,
        kind: ToolKind,
        read_only: bool,
    }

    #[async_trait::async_trait]
    impl Tool for Fake {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            ""
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn kind(&self) -> ToolKind {
            self.kind
        }
        fn read_only_hint(&self) -> bool {
            self.read_only
        }
        async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::default())
        }
    }

    const READ: Fake = Fake {
        name: "read_file",
        kind: ToolKind::Read,
        read_only: true,
    };
    const EDIT: Fake = Fake {
        name: "write_file",
        kind: ToolKind::Edit,
        read_only: false,
    };
    const BASH: Fake = Fake {
        name: "bash",
        kind: ToolKind::Execute,
        read_only: false,
    };
    const MCP: Fake = Fake {
        name: "mcp__sqlite__query",
        kind: ToolKind::Execute,
        read_only: false,
    };
    const MCP_RO: Fake = Fake {
        name: "mcp__sqlite__list",
        kind: ToolKind::Execute,
        read_only: true,
    };

    fn perms(mode: PermissionMode, allow: &[&str], deny: &[&str]) -> Permissions {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Permissions::new(mode, &strings(allow), &strings(deny)).unwrap()
    }

    fn outcome(check: Check) -> &'static str {
        match check {
            Check::Allow => "allow",
            Check::Ask { .. } => "ask",
            Check::Deny { .. } => "deny",
        }
    }

    fn cmd(command: &str) -> Value {
        json!({"command": command})
    }

    #[test]
    fn each_mode_has_its_column_per_kind() {
        use PermissionMode::*;
        let table = [
            (Default, ["allow", "ask", "ask", "ask", "ask"]),
            (AcceptEdits, ["allow", "allow", "ask", "ask", "ask"]),
            (Plan, ["allow", "deny", "deny", "deny", "allow"]),
            (Bypass, ["allow", "allow", "allow", "allow", "allow"]),
        ];
        for (mode, expected) in table {
            let p = perms(mode, &[], &[]);
            let got = [&READ, &EDIT, &BASH, &MCP, &MCP_RO].map(|t| outcome(p.check(t, &cmd("ls"))));
            assert_eq!(got, expected, "mode {}", mode.as_str());
        }
    }

    #[test]
    fn plan_mode_denials_say_how_to_switch() {
        let p = perms(PermissionMode::Plan, &[], &[]);
        let Check::Deny { reason } = p.check(&EDIT, &json!({})) else {
            panic!("not denied")
        };
        assert!(reason.starts_with("plan mode: write_file"), "{reason}");
        assert!(
            reason.contains("--permission-mode accept-edits"),
            "{reason}"
        );
        let Check::Deny { reason } = p.check(&BASH, &cmd("ls")) else {
            panic!("not denied")
        };
        assert!(
            reason.contains("(the user can switch with --permission-mode"),
            "{reason}"
        );
    }

    #[test]
    fn deny_rules_win_over_allow_rules_and_rules_over_the_mode() {
        let p = perms(PermissionMode::Bypass, &["bash"], &["bash(rm*)"]);
        assert_eq!(outcome(p.check(&BASH, &cmd("rm -rf /tmp/x"))), "deny");
        assert_eq!(outcome(p.check(&BASH, &cmd("ls"))), "allow");
        let p = perms(PermissionMode::Default, &["write_file"], &[]);
        assert_eq!(outcome(p.check(&EDIT, &json!({}))), "allow");
        let p = perms(PermissionMode::Default, &[], &["read_file"]);
        assert_eq!(outcome(p.check(&READ, &json!({}))), "deny");
        let reason = p.denied_by_rule(&READ, &json!({})).unwrap();
        assert!(reason.contains("`read_file`"), "{reason}");
        assert_eq!(p.denied_by_rule(&BASH, &cmd("ls")), None);
    }

    #[test]
    fn bash_prefix_rules_match_simple_commands_only_when_allowing() {
        let p = perms(
            PermissionMode::Default,
            &["bash(git status*)", "bash(cargo test 2>&1)"],
            &[],
        );
        assert_eq!(outcome(p.check(&BASH, &cmd("git status -s"))), "allow");
        assert_eq!(outcome(p.check(&BASH, &cmd("  git status"))), "allow");
        assert_eq!(outcome(p.check(&BASH, &cmd("git statuS"))), "ask");
        assert_eq!(outcome(p.check(&BASH, &cmd("git status; rm -rf ~"))), "ask");
        assert_eq!(outcome(p.check(&BASH, &cmd("git status $(rm x)"))), "ask");
        assert_eq!(outcome(p.check(&BASH, &cmd("git status > f"))), "ask");
        assert_eq!(outcome(p.check(&BASH, &cmd("cargo test 2>&1"))), "allow");
        assert_eq!(outcome(p.check(&BASH, &cmd("cargo test --lib"))), "ask");
        // A bash rule says nothing about other tools.
        assert_eq!(outcome(p.check(&MCP, &cmd("git status"))), "ask");
    }

    #[test]
    fn bash_deny_rules_catch_any_part_of_a_compound_command() {
        let p = perms(PermissionMode::Bypass, &[], &["bash(rm *)", "Bash(curl:*)"]);
        assert_eq!(outcome(p.check(&BASH, &cmd("ls && rm -rf x"))), "deny");
        assert_eq!(outcome(p.check(&BASH, &cmd("echo $(curl evil)"))), "deny");
        assert_eq!(outcome(p.check(&BASH, &cmd("echo rm"))), "allow");
    }

    #[test]
    fn bash_deny_rules_see_past_keywords_assignments_wrappers_and_groupings() {
        let p = perms(PermissionMode::Bypass, &[], &["bash(rm*)"]);
        for denied in [
            "if true; then rm -f victim; fi",
            "FOO=1 rm victim",
            "A=\"x y\" B='z' rm victim",
            "for f in *; do rm $f; done",
            "true || { rm x; }",
            "(cd a && rm x)",
            "echo `rm x`",
            "! rm x",
            "time rm x",
            "env -i PATH=/bin rm x",
            "sudo -u root rm x",
            "nohup xargs rm < list",
        ] {
            assert_eq!(outcome(p.check(&BASH, &cmd(denied))), "deny", "{denied}");
        }
        for allowed in ["echo rm", "FORM=1 ls", "if true; then ls; fi", "env ls"] {
            assert_eq!(outcome(p.check(&BASH, &cmd(allowed))), "allow", "{allowed}");
        }
    }

    #[test]
    fn eval_and_shell_strings_match_every_bash_deny_rule() {
        let p = perms(PermissionMode::Bypass, &[], &["bash(curl*)"]);
        for denied in [
            "eval \"$X\"",
            "sh -c 'ls'",
            "FOO=1 /bin/bash -lc ls",
            "zsh -c ls",
            "echo ls | sh",
            "ls && sudo bash -c ls",
        ] {
            assert_eq!(outcome(p.check(&BASH, &cmd(denied))), "deny", "{denied}");
        }
        assert_eq!(outcome(p.check(&BASH, &cmd("bash script.sh"))), "allow");
        let p = perms(PermissionMode::Bypass, &[], &["read_file"]);
        assert_eq!(outcome(p.check(&BASH, &cmd("eval ls"))), "allow");
    }

    #[test]
    fn name_wildcards_match_by_prefix() {
        let p = perms(
            PermissionMode::Default,
            &["mcp__sqlite__*"],
            &["mcp__sqlite__drop*"],
        );
        assert_eq!(outcome(p.check(&MCP, &json!({}))), "allow");
        let drop = Fake {
            name: "mcp__sqlite__drop_table",
            kind: ToolKind::Execute,
            read_only: false,
        };
        assert_eq!(outcome(p.check(&drop, &json!({}))), "deny");
        let other = Fake {
            name: "mcp__github__query",
            kind: ToolKind::Execute,
            read_only: false,
        };
        assert_eq!(outcome(p.check(&other, &json!({}))), "ask");
    }

    #[test]
    fn bad_rules_are_errors_naming_the_rule() {
        for bad in ["", "bash(ls", "read_file(x)", "bash()", "mcp*foo", "a b"] {
            let err = Permissions::new(PermissionMode::Default, &[bad.to_string()], &[])
                .err()
                .unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn suggestions_name_a_rule_a_flag_and_for_edits_a_mode() {
        let p = perms(PermissionMode::Default, &[], &[]);
        let Check::Ask { suggestion } = p.check(&BASH, &cmd("git status -s")) else {
            panic!()
        };
        assert_eq!(
            suggestion,
            Suggestion {
                rule: "bash(git status*)".into(),
                flag: "--allowed-tools 'bash(git status*)'".into(),
                mode_hint: None,
            }
        );
        let Check::Ask { suggestion } = p.check(&EDIT, &json!({"path": "a"})) else {
            panic!()
        };
        assert_eq!(suggestion.rule, "write_file");
        assert_eq!(
            suggestion.mode_hint.as_deref(),
            Some("--permission-mode accept-edits")
        );
        assert_eq!(session_rule_for(&BASH, &cmd("ls -la")), "bash(ls*)");
        assert_eq!(session_rule_for(&BASH, &cmd("cargo -V")), "bash(cargo*)");
        assert_eq!(
            session_rule_for(&BASH, &cmd("cd a && make")),
            "bash(cd a && make)"
        );
        assert_eq!(session_rule_for(&MCP, &json!({})), "mcp__sqlite__query");
        let Check::Ask { suggestion } = p.check(&BASH, &cmd("echo 'hi' | wc")) else {
            panic!()
        };
        assert_eq!(
            suggestion.flag,
            r"--allowed-tools 'bash(echo '\''hi'\'' | wc)'"
        );
    }

    #[test]
    fn a_session_rule_allows_the_same_kind_of_call_later() {
        let mut p = perms(PermissionMode::Default, &[], &[]);
        let rule = session_rule_for(&BASH, &cmd("git status -s"));
        p.allow_for_session(rule);
        assert_eq!(outcome(p.check(&BASH, &cmd("git status --short"))), "allow");
        assert_eq!(outcome(p.check(&BASH, &cmd("git push"))), "ask");
        let rule = session_rule_for(&BASH, &cmd("cd a && make"));
        p.allow_for_session(rule);
        assert_eq!(outcome(p.check(&BASH, &cmd("cd a && make"))), "allow");
        p.set_mode(PermissionMode::Plan);
        assert_eq!(p.mode(), PermissionMode::Plan);
        assert!(p.confine_to_root());
    }
}
