//! Codex's `codex exec` command line for CI, through the real binary (as openai/codex-action
//! and Codex's docs use it): `--config key=value` and `-c` under `exec`, `--profile`/`-p` over
//! `~/.codex/config.toml` (HOME is a temp dir), `--ignore-user-config`, `--ephemeral`,
//! `exec resume --last`, `--cd`, `exec --sandbox workspace-write` editing without a question,
//! and the Codex flags Ling cannot honour refused by name with the reason. Each with its
//! negative.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run, run_with};
use serde_json::json;

/// A HOME holding Codex's `config.toml`.
fn codex_home(config: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    std::fs::write(home.path().join(".codex/config.toml"), config).unwrap();
    home
}

fn ling(project: &Project, server: &MockServer, home: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.env("HOME", home).env_remove("CODEX_HOME").args(args);
    run(cmd)
}

fn model_sent(server: &MockServer) -> serde_json::Value {
    server.requests()[0].body["model"].clone()
}

const CONFIG: &str = "model = \"from-file\"\n\n[profiles.ci]\nmodel = \"from-profile\"\n";

#[test]
fn codex_config_profile_and_overrides_choose_the_model() {
    let home = codex_home(CONFIG);
    let project = Project::new();
    for (args, model) in [
        (&["exec", "x"][..], "from-file"),
        (&["exec", "-p", "ci", "x"], "from-profile"),
        (
            &["exec", "--profile", "ci", "-c", "model=\"from-c\"", "x"],
            "from-c",
        ),
        (&["-p", "x", "--config", "model=from-config"], "from-config"),
        (
            &["exec", "-c", "model=\"from-c\"", "-m", "from-flag", "x"],
            "from-flag",
        ),
        // Not read without Codex's spelling, nor with --ignore-user-config.
        (&["-p", "x"], "gpt-4o-mini"),
        (&["exec", "--ignore-user-config", "x"], "gpt-4o-mini"),
    ] {
        let server = MockServer::start_blocking(vec![Reply::text("ok")]);
        let out = ling(&project, &server, home.path(), args);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert_eq!(model_sent(&server), json!(model), "{args:?}");
    }
}

#[test]
fn codex_settings_ling_cannot_honour_are_refused_by_name() {
    let home = codex_home(CONFIG);
    let project = Project::new();
    let server = MockServer::start_blocking(vec![]);
    for (args, says) in [
        (
            &["exec", "-c", "features.web=true", "x"][..],
            "Ling does not read Codex's `features.web`",
        ),
        (&["exec", "-c", "model", "x"], "give key=value"),
        (
            &["exec", "-c", "approval_policy=\"sometimes\"", "x"],
            "`sometimes` is not one of",
        ),
        (&["exec", "-p", "nope", "x"], "no [profiles.nope]"),
        (
            &["exec", "--oss", "x"],
            "--oss/--local-provider is a Codex flag Ling does not support",
        ),
        (
            &["exec", "--enable", "foo", "x"],
            "--enable/--disable is a Codex flag",
        ),
        (
            &["exec", "--not-so-yolo", "x"],
            "--not-so-yolo is a Codex flag",
        ),
        (
            &["exec", "review", "--uncommitted"],
            "exec review is a Codex flag",
        ),
        (&["exec", "resume"], "exec resume needs the session's id"),
        (
            &["exec", "--output-schema", "missing.json", "x"],
            "--output-schema missing.json",
        ),
    ] {
        let out = ling(&project, &server, home.path(), args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("error: unexpected argument"),
            "{}",
            out.stderr
        );
    }
    assert!(server.requests().is_empty());
}

/// A run whose model writes `out.txt`, then answers.
fn write_replies() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "x\n"}),
        )]),
        Reply::text("done"),
    ]
}

#[test]
fn exec_with_a_writable_sandbox_edits_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    let server = MockServer::start_blocking(write_replies());
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--sandbox", "workspace-write", "w"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(project.read("out.txt"), "x\n");
    // `-p` with the same sandbox keeps Ling's default mode: the edit is denied.
    let project = Project::new();
    let server = MockServer::start_blocking(write_replies());
    let out = ling(
        &project,
        &server,
        home.path(),
        &["-p", "w", "--sandbox", "workspace-write"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("out.txt").exists());
    // So does a Codex config saying `approval_policy = "untrusted"` under exec.
    let home = codex_home("approval_policy = \"untrusted\"\n");
    let project = Project::new();
    let server = MockServer::start_blocking(write_replies());
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--sandbox", "workspace-write", "w"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!project.file("out.txt").exists());
}

fn sessions(project: &Project) -> usize {
    std::fs::read_dir(project.home.path().join("sessions")).map_or(0, |d| d.count())
}

#[test]
fn ephemeral_records_nothing_and_resume_last_continues_what_was_recorded() {
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    let server = MockServer::start_blocking(vec![Reply::text("one")]);
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--ephemeral", "first"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(sessions(&project), 0);
    // Nothing to resume.
    let server = MockServer::start_blocking(vec![]);
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "resume", "--last", "again"],
    );
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    // Without --ephemeral the session is recorded, and `exec resume --last` continues it.
    let server = MockServer::start_blocking(vec![Reply::text("one"), Reply::text("two")]);
    let out = ling(&project, &server, home.path(), &["exec", "remember plum"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(sessions(&project), 1);
    let mut cmd = project.command(&server.base_url());
    cmd.env("HOME", home.path())
        .args(["exec", "--json", "resume", "--last", "-"]);
    let out = run_with(cmd, Some("and now?"), std::time::Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = server.requests()[1].messages().to_vec();
    let all = serde_json::Value::from(sent).to_string();
    assert!(
        all.contains("remember plum") && all.contains("and now?"),
        "{all}"
    );
    assert_eq!(out.json_lines()[0]["type"], json!("thread.started"));
}

#[test]
fn cd_is_the_directory_the_run_works_in() {
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    project.write("sub/.git/HEAD", "ref: refs/heads/main\n");
    let server = MockServer::start_blocking(write_replies());
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--cd", "sub", "--full-auto", "w"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(project.read("sub/out.txt"), "x\n");
    assert!(!project.file("out.txt").exists());
}

#[test]
fn a_failed_turn_is_error_then_turn_failed() {
    let home = tempfile::tempdir().unwrap();
    let project = Project::new();
    let schema = r#"{"type": "object", "required": ["n"]}"#;
    project.write("schema.json", schema);
    let server = MockServer::start_blocking(vec![Reply::text("no"), Reply::text("still no")]);
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--json", "--output-schema", "schema.json", "x"],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let lines = out.json_lines();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(kinds[kinds.len() - 2..], ["error", "turn.failed"]);
    assert!(!kinds.contains(&"turn.completed"));
    // A matching answer completes the turn, its text the checked JSON.
    let server = MockServer::start_blocking(vec![Reply::text("{ \"n\": 1 }")]);
    let out = ling(
        &project,
        &server,
        home.path(),
        &["exec", "--json", "--output-schema", "schema.json", "x"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lines = out.json_lines();
    let answer = lines.iter().find(|l| l["item"]["type"] == "agent_message");
    assert_eq!(
        answer.map(|l| l["item"]["text"].clone()),
        Some(json!("{\"n\":1}"))
    );
    assert_eq!(
        lines.last().map(|l| l["type"].clone()),
        Some(json!("turn.completed"))
    );
}
