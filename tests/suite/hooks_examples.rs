//! The example hook scripts in `examples/hooks/` and the repository's own `.ling/hooks.json`,
//! run through the engine exactly as Ling runs them.

use crate::support::{hooks, peers};

use std::path::{Path, PathBuf};

use hooks::{Project, hooks_file, pre_tool, write};
use ling::config::hooks::HookLayers;
use ling::config::{Paths, ProjectConfig};
use ling::hooks::{Decision, HookEngine, HookInput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/hooks")
        .join(name)
}

#[tokio::test]
async fn the_repository_guard_blocks_rm_rf_and_force_pushes_only() {
    peers::require_program("python3");
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::with_home(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        home.path().into(),
    );
    // This repository's own hooks, trusted as `ling trust` would (in the temp LING_HOME).
    let mut project = ProjectConfig::read(&paths).unwrap();
    project.trust().unwrap();
    let (engine, warnings) = HookEngine::load(&paths, &project, HookLayers::ALL).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let ctx = ling::hooks::HookContext {
        session_id: "s".into(),
        transcript_path: home.path().join("t.jsonl"),
        cwd: paths.project_root.clone(),
        permission_mode: "default".into(),
        agent: None,
    };
    for (command, blocked) in [
        ("rm -rf /", true),
        ("cd x && rm -r -f build", true),
        ("git push --force origin main", true),
        ("git push -f", true),
        // Quoting, escapes and paths do not get past it.
        ("'rm' -rf x", true),
        ("/bin/rm -rf x", true),
        ("\\rm -rf x", true),
        ("r''m -fr x", true),
        ("\"rm\" --recursive --force x", true),
        ("git -C . push --force", true),
        ("'git' push -f", true),
        ("/usr/bin/git -c k=v push origin +main", true),
        ("sudo timeout 5 rm -rf /", true),
        ("sh -c 'rm -rf /'", true),
        ("echo \"$(rm -rf x)\"", true),
        ("find . -exec rm -rf {} \\;", true),
        ("ls -la", false),
        ("rm -f stale.txt", false),
        ("rm -r build", false),
        ("git push --force-with-lease", false),
        ("git commit -m 'never rm -rf'", false),
        ("echo rm -f", false),
    ] {
        let outcome = engine
            .run(&pre_tool("bash", json!({"command": command})), &ctx)
            .await;
        assert_eq!(outcome.is_blocked(), blocked, "{command}: {outcome:?}");
        if blocked {
            assert!(
                outcome.reason.unwrap_or_default().contains("guard.sh"),
                "{command}"
            );
        } else {
            assert_eq!(outcome, Default::default(), "{command}");
        }
    }
    let other_tool = engine
        .run(&pre_tool("read_file", json!({"command": "rm -rf /"})), &ctx)
        .await;
    assert_eq!(other_tool.decision, None);
}

#[tokio::test]
async fn audit_log_appends_one_json_line_per_event() {
    let project = Project::new();
    let handler = json!([{"type": "command", "command": format!("sh {}", example("audit-log.sh").display())}]);
    let mut hooks = hooks_file("PreToolUse", None, handler.clone());
    hooks["hooks"]["SessionStart"] = json!([{"hooks": handler}]);
    project.project_hooks(&hooks);
    let engine = project.engine();
    let start = HookInput::SessionStart {
        source: "startup".into(),
    };
    assert_eq!(engine.run(&start, &project.ctx()).await, Default::default());
    let outcome = engine
        .run(
            &pre_tool("bash", json!({"command": "echo 'a\nb'"})),
            &project.ctx(),
        )
        .await;
    assert_eq!(outcome, Default::default());

    let log = project.read(".ling/audit.jsonl");
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert_eq!(lines[0]["input"]["hook_event_name"], "SessionStart");
    assert_eq!(lines[1]["input"]["tool_input"]["command"], "echo 'a\nb'");
    assert!(lines[1]["time"].as_str().unwrap_or_default().ends_with('Z'));
}

#[tokio::test]
async fn format_after_edit_runs_rustfmt_and_tells_the_model() {
    peers::require_program("python3");
    peers::require_program("rustfmt");
    let project = Project::new();
    write(&project.root().join("src/a.rs"), "fn  main( ){let x=1;}\n");
    write(&project.root().join("src/tidy.rs"), "fn main() {}\n");
    project.project_hooks(&hooks_file(
        "PostToolUse",
        Some("write_file|edit_file"),
        json!([{"type": "command", "command": format!("sh {}", example("format-after-edit.sh").display())}]),
    ));
    let engine = project.engine();
    let edited = |path: &str| HookInput::PostToolUse {
        tool_name: "edit_file".into(),
        tool_input: json!({"path": path, "old_string": "a", "new_string": "b"}),
        tool_response: json!("edited"),
        tool_use_id: "c".into(),
    };
    let outcome = engine.run(&edited("src/a.rs"), &project.ctx()).await;
    assert!(outcome.notices.is_empty(), "{:?}", outcome.notices);
    assert_eq!(
        outcome.additional_context,
        vec![
            "rustfmt reformatted src/a.rs after your edit; read it again before editing it further."
        ]
    );
    assert_eq!(project.read("src/a.rs"), "fn main() {\n    let x = 1;\n}\n");

    let unchanged = engine.run(&edited("src/tidy.rs"), &project.ctx()).await;
    assert_eq!(unchanged, Default::default());
    let not_rust = engine.run(&edited("README.md"), &project.ctx()).await;
    assert_eq!(not_rust, Default::default());
    assert_eq!(outcome.decision, None::<Decision>);
}

/// Without python3 the guard checks the whole input with quotes and backslashes removed:
/// stricter, never looser.
#[tokio::test]
async fn the_guard_without_python3_still_sees_through_quotes_and_paths() {
    let project = Project::new();
    let bin = tempfile::tempdir().unwrap();
    for program in ["cat", "tr", "grep"] {
        let found = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {program}"))
            .output()
            .unwrap();
        let path = String::from_utf8(found.stdout).unwrap();
        std::os::unix::fs::symlink(path.trim(), bin.path().join(program)).unwrap();
    }
    let guard = format!(
        "PATH={} /bin/sh {}",
        bin.path().display(),
        example("guard.sh").display()
    );
    project.project_hooks(&hooks_file(
        "PreToolUse",
        Some("bash"),
        json!([{"type": "command", "command": guard}]),
    ));
    let engine = project.engine();
    for (command, blocked) in [
        ("r''m -fr x", true),
        ("/bin/rm -rf x", true),
        ("'git' push -f", true),
        ("git -C . push --force", true),
        ("ls -la", false),
        ("git push --force-with-lease", false),
    ] {
        let outcome = engine
            .run(
                &pre_tool("bash", json!({"command": command})),
                &project.ctx(),
            )
            .await;
        assert_eq!(outcome.is_blocked(), blocked, "{command}: {outcome:?}");
    }
}
