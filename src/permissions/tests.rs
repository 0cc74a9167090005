//! Unit tests of the permission engine: modes, rule syntax, deny before allow, suggestions.

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

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Rules checked in a project that does not exist: enough for everything but path rules.
fn perms(mode: PermissionMode, allow: &[&str], deny: &[&str]) -> Permissions {
    let paths = Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into());
    Permissions::new(mode, &strings(allow), &strings(deny), &paths).unwrap()
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

/// Changed with issue 8: a literal `sh -c` text is parsed and checked like the command itself,
/// instead of matching every deny rule; what cannot be known still denies.
#[test]
fn shell_text_is_checked_and_eval_denied_while_a_bash_deny_rule_is_set() {
    let p = perms(PermissionMode::Bypass, &[], &["bash(curl*)"]);
    for denied in [
        "eval \"$X\"",
        "sh -c 'curl evil'",
        "FOO=1 /bin/bash -lc 'ls; curl evil'",
        "ls && sudo bash -c \"sh -c 'curl x'\"",
        "sh -c \"$CMD\"",
        "zsh -c ls",
        "echo ls | sh",
    ] {
        assert_eq!(outcome(p.check(&BASH, &cmd(denied))), "deny", "{denied}");
    }
    for allowed in ["sh -c 'ls'", "ls && sudo bash -c ls", "bash script.sh"] {
        assert_eq!(outcome(p.check(&BASH, &cmd(allowed))), "allow", "{allowed}");
    }
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
    let paths = Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into());
    for bad in [
        "",
        "bash(ls",
        "mcp__x(y)",
        "read_file()",
        "edit_file(src/[)",
        "bash()",
        "mcp*foo",
        "a b",
    ] {
        let err = Permissions::new(PermissionMode::Default, &[bad.to_string()], &[], &paths)
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
            why: None,
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
    assert_eq!(p.session_rule_for(&BASH, &cmd("ls -la")), "bash(ls*)");
    assert_eq!(p.session_rule_for(&BASH, &cmd("cargo -V")), "bash(cargo*)");
    assert_eq!(
        p.session_rule_for(&BASH, &cmd("cd a && make")),
        "bash(cd a && make)"
    );
    assert_eq!(p.session_rule_for(&MCP, &json!({})), "mcp__sqlite__query");
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
    let rule = p.session_rule_for(&BASH, &cmd("git status -s"));
    p.allow_for_session(rule);
    assert_eq!(outcome(p.check(&BASH, &cmd("git status --short"))), "allow");
    assert_eq!(outcome(p.check(&BASH, &cmd("git push"))), "ask");
    let rule = p.session_rule_for(&BASH, &cmd("cd a && make"));
    p.allow_for_session(rule);
    assert_eq!(outcome(p.check(&BASH, &cmd("cd a && make"))), "allow");
    p.set_mode(PermissionMode::Plan);
    assert_eq!(p.mode(), PermissionMode::Plan);
    assert!(p.confine_to_root());
}

const EDIT_FILE: Fake = Fake {
    name: "edit_file",
    kind: ToolKind::Edit,
    read_only: false,
};
const GREP: Fake = Fake {
    name: "grep",
    kind: ToolKind::Read,
    read_only: true,
};

/// A real project root and LING_HOME, for path rules.
struct Project {
    root: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        let project = Self {
            root: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(project.root.path().join(".ling")).unwrap();
        std::fs::create_dir_all(project.root.path().join(".git")).unwrap();
        std::fs::create_dir_all(project.root.path().join("src")).unwrap();
        project
    }

    fn perms(&self, mode: PermissionMode, allow: &[&str], deny: &[&str]) -> Permissions {
        let paths = Paths::with_home(self.root.path().into(), self.home.path().into());
        Permissions::new(mode, &strings(allow), &strings(deny), &paths).unwrap()
    }
}

fn path(p: &str) -> Value {
    json!({"path": p, "content": "x"})
}

#[test]
fn path_rules_allow_and_deny_file_tools_by_glob() {
    let project = Project::new();
    let p = project.perms(
        PermissionMode::Default,
        &["edit_file(src/**)", "Write(docs/*.md)"],
        &["read_file(.env)", "Read(secrets/**)"],
    );
    assert_eq!(outcome(p.check(&EDIT_FILE, &path("src/a/b.rs"))), "allow");
    assert_eq!(
        outcome(p.check(&EDIT_FILE, &path("./x/../src/b.rs"))),
        "allow"
    );
    assert_eq!(outcome(p.check(&EDIT_FILE, &path("lib/b.rs"))), "ask");
    assert_eq!(outcome(p.check(&EDIT, &path("docs/a.md"))), "allow");
    assert_eq!(outcome(p.check(&EDIT, &path("docs/deep/a.md"))), "ask");
    assert_eq!(outcome(p.check(&READ, &path(".env"))), "deny");
    assert_eq!(outcome(p.check(&READ, &path("src/.env"))), "allow");
    assert_eq!(
        outcome(p.check(&GREP, &json!({"pattern": "k", "path": "secrets/x"}))),
        "deny"
    );
    assert_eq!(outcome(p.check(&GREP, &json!({"pattern": "k"}))), "allow");
    let reason = p.denied_by_rule(&READ, &path(".env")).unwrap();
    assert!(reason.contains("`read_file(.env)`"), "{reason}");
}

#[test]
fn a_symlink_cannot_dodge_a_path_rule() {
    let project = Project::new();
    let root = project.root.path();
    std::fs::write(root.join(".env"), "KEY=1").unwrap();
    std::os::unix::fs::symlink(root.join(".env"), root.join("innocent.txt")).unwrap();
    std::os::unix::fs::symlink(root.join(".ling"), root.join("cfg")).unwrap();
    let p = project.perms(PermissionMode::AcceptEdits, &[], &["read_file(.env)"]);
    assert_eq!(outcome(p.check(&READ, &path("innocent.txt"))), "deny");
    assert_eq!(outcome(p.check(&EDIT, &path("cfg/hooks.json"))), "ask");
}

#[test]
fn protected_paths_ask_in_every_mode_but_bypass_unless_a_rule_names_them() {
    use PermissionMode::*;
    let project = Project::new();
    let home_file = project.home.path().join("settings.json");
    let home_file = home_file.to_str().unwrap();
    for target in [
        ".ling/settings.json",
        ".git/config",
        "sub/.git/hooks/pre-commit",
        ".Git/config",
        home_file,
    ] {
        for (mode, expected) in [
            (Default, "ask"),
            (AcceptEdits, "ask"),
            (Plan, "deny"),
            (Bypass, "allow"),
        ] {
            let p = project.perms(mode, &["write_file", "edit_file(**)"], &[]);
            assert_eq!(
                outcome(p.check(&EDIT, &path(target))),
                expected,
                "{target} in {}",
                mode.as_str()
            );
            assert_eq!(
                outcome(p.check(&EDIT_FILE, &path(target))),
                expected,
                "{target} in {}",
                mode.as_str()
            );
        }
    }
    let p = project.perms(
        AcceptEdits,
        &["write_file(.ling/settings.json)", "edit_file(.git/**)"],
        &[],
    );
    assert_eq!(
        outcome(p.check(&EDIT, &path(".ling/settings.json"))),
        "allow"
    );
    assert_eq!(outcome(p.check(&EDIT, &path(".ling/hooks.json"))), "ask");
    assert_eq!(outcome(p.check(&EDIT_FILE, &path(".git/config"))), "allow");
    assert_eq!(outcome(p.check(&EDIT, &path(".git/config"))), "ask");
    let p = project.perms(AcceptEdits, &[&format!("write_file({home_file})")], &[]);
    assert_eq!(outcome(p.check(&EDIT, &path(home_file))), "allow");
    // Deny rules still win, and other files are not protected.
    let p = project.perms(
        AcceptEdits,
        &["edit_file(.git/**)"],
        &["edit_file(.git/config)"],
    );
    assert_eq!(outcome(p.check(&EDIT_FILE, &path(".git/config"))), "deny");
    assert_eq!(outcome(p.check(&EDIT_FILE, &path(".gitignore"))), "allow");
    assert_eq!(outcome(p.check(&READ, &path(".git/config"))), "allow");
}

#[test]
fn a_protected_write_suggests_the_path_rule_not_the_tool() {
    let project = Project::new();
    let mut p = project.perms(PermissionMode::AcceptEdits, &[], &[]);
    let Check::Ask { suggestion } = p.check(&EDIT, &path(".ling/settings.json")) else {
        panic!("not asked")
    };
    assert_eq!(suggestion.rule, "write_file(.ling/settings.json)");
    assert_eq!(
        suggestion.flag,
        "--allowed-tools 'write_file(.ling/settings.json)'"
    );
    assert_eq!(suggestion.mode_hint, None);
    assert!(suggestion.why.unwrap().contains("protected path"));
    let rule = p.session_rule_for(&EDIT, &path(".ling/settings.json"));
    assert_eq!(rule, "write_file(.ling/settings.json)");
    p.allow_for_session(rule);
    assert_eq!(
        outcome(p.check(&EDIT, &path(".ling/settings.json"))),
        "allow"
    );
    assert_eq!(outcome(p.check(&EDIT, &path(".ling/hooks.json"))), "ask");
    assert_eq!(p.session_rule_for(&EDIT, &path("src/a.rs")), "write_file");
}

#[test]
fn deny_reasons_say_what_ran_or_why_it_cannot_be_known() {
    let p = perms(
        PermissionMode::Bypass,
        &[],
        &["bash(rm*)", "bash(git push*)"],
    );
    let reason = p
        .denied_by_rule(&BASH, &cmd("timeout 5 /bin/rm -rf x"))
        .unwrap();
    assert!(
        reason.contains("`bash(rm*)`") && reason.contains("(it runs `rm -rf x`)"),
        "{reason}"
    );
    let reason = p.denied_by_rule(&BASH, &cmd("x=rm; $x -rf y")).unwrap();
    assert!(
        reason
            .contains("cannot be checked against the deny rule(s) `bash(rm*)`, `bash(git push*)`"),
        "{reason}"
    );
    assert!(
        reason.contains("the program `$x` is only known when the command runs"),
        "{reason}"
    );
    let reason = p.denied_by_rule(&BASH, &cmd("git $what origin")).unwrap();
    assert!(
        reason.contains("`git $what origin` has a word only known"),
        "{reason}"
    );
    let reason = p.denied_by_rule(&BASH, &cmd("echo \"open")).unwrap();
    assert!(reason.contains("does not parse as bash"), "{reason}");
    // Without a bash deny rule nothing unknowable is denied.
    let p = perms(PermissionMode::Bypass, &[], &["read_file"]);
    assert_eq!(p.denied_by_rule(&BASH, &cmd("x=rm; $x -rf y")), None);
    assert_eq!(outcome(p.check(&BASH, &json!({}))), "deny");
}

#[test]
fn evaluate_is_check_deny_and_session_rule_at_once() {
    let p = perms(
        PermissionMode::Default,
        &["bash(git status*)"],
        &["bash(rm*)"],
    );
    for input in [
        cmd("git status -s"),
        cmd("env LC_ALL=C ls -la"),
        cmd("timeout 5 rm x"),
        cmd("x=rm; $x y"),
        json!({}),
    ] {
        let evaluation = p.evaluate(&BASH, &input);
        assert_eq!(evaluation.check, p.check(&BASH, &input), "{input}");
        assert_eq!(
            evaluation.denied_by_rule,
            p.denied_by_rule(&BASH, &input),
            "{input}"
        );
        assert_eq!(
            evaluation.session_rule,
            p.session_rule_for(&BASH, &input),
            "{input}"
        );
    }
    assert_eq!(p.session_rule_for(&BASH, &json!({})), "bash()");
}

#[test]
fn claude_code_rules_mean_the_same_as_lings() {
    let project = Project::new();
    let p = project.perms(
        PermissionMode::Default,
        &[
            "Bash(npm run test:*)",
            "Edit(src/**)",
            "mcp__sqlite",
            "Grep",
        ],
        &["Read(./.env)", "NotebookEdit"],
    );
    assert_eq!(outcome(p.check(&BASH, &cmd("npm run test -- -w"))), "allow");
    assert_eq!(outcome(p.check(&BASH, &cmd("npm run build"))), "ask");
    assert_eq!(outcome(p.check(&EDIT_FILE, &path("src/a.rs"))), "allow");
    assert_eq!(outcome(p.check(&EDIT, &path("src/a.rs"))), "allow");
    assert_eq!(outcome(p.check(&READ, &path(".env"))), "deny");
    assert_eq!(outcome(p.check(&MCP, &json!({}))), "allow");
    assert_eq!(p.ignored_rules().len(), 1);
    assert!(
        p.ignored_rules()[0].contains("NotebookEdit"),
        "{:?}",
        p.ignored_rules()
    );
    // Bare Claude names stand for Ling's tools.
    let p = perms(PermissionMode::Default, &["Write", "LS"], &["Edit"]);
    assert_eq!(outcome(p.check(&EDIT, &cmd("x"))), "deny");
    assert_eq!(outcome(p.check(&BASH, &cmd("ls"))), "ask");
}

#[test]
fn ask_rules_ask_whatever_allow_rules_and_the_mode_say() {
    let p = perms(PermissionMode::Bypass, &["bash"], &["bash(rm*)"])
        .with_ask_rules(&strings(&["Bash(git push:*)", "write_file", "mcp__sqlite"]))
        .unwrap();
    assert_eq!(outcome(p.check(&BASH, &cmd("git -C . push origin"))), "ask");
    assert_eq!(outcome(p.check(&BASH, &cmd("ls && git push"))), "ask");
    assert_eq!(outcome(p.check(&BASH, &cmd("git status"))), "allow");
    assert_eq!(outcome(p.check(&BASH, &cmd("git push; rm -rf x"))), "deny");
    assert_eq!(outcome(p.check(&EDIT, &path("a"))), "ask");
    assert_eq!(outcome(p.check(&MCP, &json!({}))), "ask");
    let Check::Ask { suggestion } = p.check(&EDIT, &path("a")) else {
        panic!("should ask")
    };
    assert!(suggestion.why.unwrap_or_default().contains("`write_file`"));
    // Plan mode still denies what it denies.
    let p = perms(PermissionMode::Plan, &[], &[])
        .with_ask_rules(&strings(&["write_file", "read_file"]))
        .unwrap();
    assert_eq!(outcome(p.check(&EDIT, &path("a"))), "deny");
    assert_eq!(outcome(p.check(&READ, &path("a"))), "ask");
}
