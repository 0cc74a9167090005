//! Settings `statusLine` (Claude Code's) in the REPL, through a pseudo-terminal: the command
//! gets Claude Code's JSON on stdin and its first line shows above the prompt at start, after a
//! turn and after `/mode`, not after a command that changed nothing; from Ling's settings or
//! `~/.claude/settings.json`. Without one, nothing runs.

use crate::support::{mock_openai, project};

use crate::support::repl::{self, without_escapes};
use mock_openai::{MockServer, Reply};
use project::Project;

/// A status line command that keeps its input and counts its runs, in `dir`.
fn command(dir: &std::path::Path) -> String {
    let d = dir.display();
    format!(
        "cat > {d}/sl-input.json; n=$(( $(cat {d}/sl-n 2>/dev/null || echo 0) + 1 )); \
         echo $n > {d}/sl-n; printf 'status-line run %s\\nsecond line\\n' $n"
    )
}

fn runs(dir: &std::path::Path) -> u32 {
    std::fs::read_to_string(dir.join("sl-n")).map_or(0, |n| n.trim().parse().unwrap_or(0))
}

#[test]
fn the_status_line_shows_at_start_after_a_turn_and_after_a_mode_change() {
    let out = tempfile::tempdir().unwrap();
    let project = Project::new();
    let settings =
        serde_json::json!({"statusLine": {"type": "command", "command": command(out.path())}});
    std::fs::write(
        project.home.path().join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("answered")]);
    let mut p = repl::start(&project, &server, &["--model", "m7"], &[]);
    p.expect("status-line run 1");
    p.prompt();
    p.send_line("/help");
    p.prompt();
    p.send_line("one");
    let shown = without_escapes(&p.raw("status-line run 2"));
    assert!(shown.contains("answered"), "{shown}");
    p.prompt();
    p.send_line("/mode plan");
    p.expect("status-line run 3");
    p.prompt();
    p.send_line("/exit");
    p.eof();
    // /help changed nothing: three runs, and only the first line shows.
    assert_eq!(runs(out.path()), 3);
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("sl-input.json")).unwrap())
            .unwrap();
    assert_eq!(input["model"]["id"], "m7");
    assert_eq!(input["model"]["display_name"], "m7");
    let root = std::fs::canonicalize(project.path()).unwrap();
    assert_eq!(
        input["workspace"]["project_dir"],
        root.to_string_lossy().as_ref()
    );
    assert!(
        input["session_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{input}"
    );
    assert!(input["cost"]["total_cost_usd"].is_number(), "{input}");
}

#[test]
fn claude_s_user_status_line_runs_and_none_runs_without_one() {
    let out = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    let settings =
        serde_json::json!({"statusLine": {"type": "command", "command": command(out.path())}});
    std::fs::write(
        home.path().join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    let home_dir = home.path().to_string_lossy().into_owned();
    let mut p = repl::start(&project, &server, &[], &[("HOME", home_dir.as_str())]);
    p.expect("status-line run 1");
    p.prompt();
    p.send_line("/exit");
    p.eof();
    assert_eq!(runs(out.path()), 1);
    // claudeCompat.userFiles off: the same HOME runs nothing.
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"claudeCompat": {"userFiles": false}}"#,
    )
    .unwrap();
    let mut p = repl::start(&project, &server, &[], &[("HOME", home_dir.as_str())]);
    p.prompt();
    p.send_line("/exit");
    p.eof();
    assert_eq!(runs(out.path()), 1);
}
