//! The GitHub Action (`action.yml`): its steps' `run:` scripts, taken from the file as GitHub
//! would run them (each step's `env:` filled from the inputs, `GITHUB_ENV` carried to the next
//! step), with a fake `GITHUB_EVENT_PATH`, `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`, the built
//! `ling` as `ling-path` (so the install step is skipped), against the mock model.

use crate::support::{mock_openai, project};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, ling_bin};
use serde_json::json;

/// One step of the action: its `env:` (name → the text after the colon) and its script.
struct Step {
    env: Vec<(String, String)>,
    run: String,
}

/// The inputs' defaults and the steps of `action.yml`, read with the indentation the file uses.
fn action() -> (BTreeMap<String, String>, Vec<Step>) {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let mut defaults = BTreeMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut section = "";
    let mut input = String::new();
    let mut in_env = false;
    let mut in_run = false;
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = if line == "inputs:" { "inputs" } else { "" };
        }
        if line == "  steps:" {
            section = "steps";
            continue;
        }
        match section {
            "inputs" => {
                if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'))
                    && !name.starts_with(' ')
                {
                    input = name.to_string();
                } else if let Some(value) = line.trim().strip_prefix("default: ") {
                    defaults.insert(input.clone(), value.trim_matches('"').to_string());
                }
            }
            "steps" => {
                if line.starts_with("    - ") {
                    steps.push(Step {
                        env: Vec::new(),
                        run: String::new(),
                    });
                    in_env = false;
                    in_run = false;
                    continue;
                }
                let step = steps.last_mut().unwrap();
                if in_run {
                    step.run
                        .push_str(line.strip_prefix("        ").unwrap_or(line));
                    step.run.push('\n');
                } else if line == "      env:" {
                    in_env = true;
                } else if line == "      run: |" {
                    in_run = true;
                    in_env = false;
                } else if in_env && let Some((name, value)) = line.trim().split_once(": ") {
                    step.env.push((name.to_string(), value.to_string()));
                }
            }
            _ => {}
        }
    }
    (defaults, steps)
}

/// What running the action left: its exit code, outputs, summary.
struct Ran {
    code: Option<i32>,
    outputs: String,
    summary: String,
    stderr: String,
    /// Workflow commands (`::error::`) go to stdout.
    stdout: String,
}

fn run_action(
    project: &Project,
    base_url: &str,
    inputs: &[(&str, &str)],
    event: serde_json::Value,
) -> Ran {
    let (mut values, steps) = action();
    assert!(steps.len() == 2, "an install and a run step");
    for (name, value) in inputs {
        values.insert(name.to_string(), value.to_string());
    }
    values.insert("ling-path".into(), ling_bin().to_string());
    let github = tempfile::tempdir().unwrap();
    let file = |name: &str| github.path().join(name);
    std::fs::write(file("event.json"), event.to_string()).unwrap();
    for name in ["output", "summary", "env"] {
        std::fs::write(file(name), "").unwrap();
    }
    let mut code = Some(0);
    let mut stderr = String::new();
    let mut stdout = String::new();
    for step in &steps {
        let mut cmd = project.command(base_url);
        cmd.arg("-c")
            .arg(&step.run)
            .env("GITHUB_EVENT_PATH", file("event.json"))
            .env("GITHUB_OUTPUT", file("output"))
            .env("GITHUB_STEP_SUMMARY", file("summary"))
            .env("GITHUB_ENV", file("env"))
            .env("RUNNER_TEMP", github.path());
        // What earlier steps put in GITHUB_ENV.
        for line in std::fs::read_to_string(file("env")).unwrap().lines() {
            if let Some((name, value)) = line.split_once('=') {
                cmd.env(name, value);
            }
        }
        for (name, expression) in &step.env {
            let value = match expression
                .strip_prefix("${{ inputs.")
                .and_then(|e| e.strip_suffix(" }}"))
            {
                Some(input) => values.get(input).cloned().unwrap_or_default(),
                // `github.*` and `runner.*`: unused once ling-path is given.
                None => String::new(),
            };
            cmd.env(name, value);
        }
        let mut program = Command::new("bash");
        program.args(cmd.get_args());
        program.current_dir(project.path());
        for (name, value) in cmd.get_envs() {
            match value {
                Some(value) => program.env(name, value),
                None => program.env_remove(name),
            };
        }
        let out = project::run(program);
        stderr.push_str(&out.stderr);
        stdout.push_str(&out.stdout);
        code = out.code;
        if code != Some(0) {
            break;
        }
    }
    Ran {
        code,
        outputs: std::fs::read_to_string(file("output")).unwrap(),
        summary: std::fs::read_to_string(file("summary")).unwrap(),
        stderr,
        stdout,
    }
}

fn output(ran: &Ran, name: &str) -> String {
    let mut lines = ran.outputs.lines();
    while let Some(line) = lines.next() {
        if let Some(value) = line.strip_prefix(&format!("{name}=")) {
            return value.to_string();
        }
        if let Some(delimiter) = line.strip_prefix(&format!("{name}<<")) {
            return lines
                .by_ref()
                .take_while(|l| *l != delimiter)
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    panic!("no output {name} in {}", ran.outputs)
}

#[test]
fn a_comment_that_calls_ling_is_answered_in_the_summary_and_the_output() {
    let server = MockServer::start_blocking(vec![Reply::text("All tests pass.")]);
    let project = Project::new();
    let event = json!({"comment": {"body": "@ling  check the tests\n"}});
    let ran = run_action(
        &project,
        &server.base_url(),
        &[("model", "test-model")],
        event,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(output(&ran, "answer"), "All tests pass.");
    assert_eq!(output(&ran, "exit-code"), "0");
    assert_eq!(output(&ran, "subtype"), "success");
    assert_eq!(output(&ran, "skipped"), "false");
    assert!(ran.summary.contains("All tests pass."), "{}", ran.summary);
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], "test-model");
    assert_eq!(mock_openai::first_user_text(&sent[0]), "check the tests");

    // A comment that does not call Ling runs nothing.
    let server = MockServer::start_blocking(vec![]);
    let event = json!({"comment": {"body": "looks good to me"}});
    let ran = run_action(&project, &server.base_url(), &[], event);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(output(&ran, "skipped"), "true");
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn a_failed_run_fails_the_step_with_ling_s_exit_code() {
    let server = MockServer::start_blocking(vec![Reply::tool_calls(vec![(
        "c1",
        "bash",
        json!({"command": "true"}),
    )])]);
    let project = Project::new();
    let inputs = [
        ("prompt", "fix it"),
        ("max-turns", "1"),
        ("allowed-tools", "bash"),
    ];
    let ran = run_action(&project, &server.base_url(), &inputs, json!({}));
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(output(&ran, "exit-code"), "1");
    assert_eq!(output(&ran, "subtype"), "error_max_turns");
    assert!(
        ran.stdout.contains("::error::ling exited 1"),
        "{}",
        ran.stdout
    );
}
