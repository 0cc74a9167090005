//! Claude Code's rule syntax as real deny lists and hook `if`s write it, through the binary:
//! a deny whose pattern starts with `*` (`Bash(*rm *)`) keeps the file it guards, and a hook
//! `if: "Bash(* install)"` runs for the install and not for the build; a rule Ling cannot read
//! stops the run naming its file and the rule.

use crate::support::{hooks_e2e, mock_openai, project};

use hooks_e2e::{ok, script, tool_results};
use mock_openai::{MockServer, Reply};
use project::{Project, run};
use serde_json::json;

fn ling_p(project: &Project, server: &MockServer) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    // Outside the shell sandbox, so that whether `bash` runs is the rules' decision.
    cmd.args(["-p", "go", "--sandbox", "off"]);
    run(cmd)
}

#[test]
fn a_leading_star_deny_keeps_the_file_and_an_if_runs_only_where_it_matches() {
    let project = Project::new();
    let log = script(&project, "log.sh", "cat >> hook-log");
    project.write(
        ".claude/settings.json",
        &json!({
            "permissions": { "allow": ["Bash"], "deny": ["Bash(*rm *)"] },
            "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [
                { "type": "command", "command": log, "if": "Bash(* install)" }
            ] }] }
        })
        .to_string(),
    );
    project.write("notes.txt", "keep me\n");
    project.trust();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![
            ("c1", "bash", json!({ "command": "rm notes.txt" })),
            ("c2", "bash", json!({ "command": "cat notes.txt" })),
            ("c3", "bash", json!({ "command": "true install" })),
            ("c4", "bash", json!({ "command": "true build" })),
        ]),
        Reply::text("done"),
    ]);
    let out = ling_p(&project, &server);
    ok(&out);
    assert!(project.file("notes.txt").exists(), "rm ran under a deny");
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].contains("denied"), "{results:?}");
    assert!(results[0].contains("Bash(*rm *)"), "{results:?}");
    // The negative: a command the rule does not name runs.
    assert!(results[1].contains("keep me"), "{results:?}");
    let hook_log = project.read("hook-log");
    assert!(hook_log.contains("true install"), "{hook_log}");
    assert!(!hook_log.contains("true build"), "{hook_log}");
}

#[test]
fn a_rule_ling_cannot_read_stops_the_run_naming_file_and_rule() {
    let project = Project::new();
    project.write(
        ".claude/settings.json",
        &json!({ "permissions": { "deny": ["Bash(echo \\* *)"] } }).to_string(),
    );
    project.trust();
    let server = MockServer::start_blocking(vec![]);
    let out = ling_p(&project, &server);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains(".claude/settings.json"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(r"Bash(echo \\* *)"), "{}", out.stderr);
    assert!(server.requests().is_empty(), "the run went on");
}
