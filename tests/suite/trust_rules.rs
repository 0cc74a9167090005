//! Bash rules that cannot be dodged and files the model must not change without asking
//! (`docs/tools.md`), through the real binary: the mock model asks for each bypass form of
//! issue 8 and the command must not run; each legitimate form must still run under its allow
//! rule; edits of `.ling`, `.git` and `LING_HOME` ask (so are denied in `-p`) with a hint
//! naming the path rule, and that rule allows them.

use crate::support::{mock_openai, project};

use std::path::Path;
use std::process::Command;

use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

/// The tool results the model was sent in its last request, by call id.
fn tool_results(server: &MockServer) -> Vec<(String, String)> {
    let requests = server.requests();
    let last = requests.last().expect("no request");
    last.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// One `ling -p` turn in which the model calls `calls`, then says "done", without the sandbox.
fn run_calls(
    project: &Project,
    calls: Vec<(String, &str, Value)>,
    args: &[&str],
) -> (Output, Vec<(String, String)>) {
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, tool, input)| (id.as_str(), *tool, input.clone()))
        .collect();
    let server = MockServer::start_blocking(vec![Reply::tool_calls(borrowed), Reply::text("done")]);
    let mut cmd = project.command(&server.base_url());
    // The rules alone, without the shell sandbox (which would let bash run without asking).
    cmd.args(["-p", "go", "--sandbox", "off"]).args(args);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    let results = tool_results(&server);
    assert_eq!(results.len(), calls.len(), "{results:?}");
    (out, results)
}

fn bash_calls(commands: &[String]) -> Vec<(String, &'static str, Value)> {
    commands
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("c{i}"), "bash", json!({"command": c})))
        .collect()
}

fn sh(dir: &Path, script: &str) {
    let status = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "setup failed: {script}");
}

/// Each form removes the file `{v}`; `{v}` is replaced by a victim file per form.
const RM_FORMS: &[&str] = &[
    r"\rm {v}",
    "'rm' {v}",
    "r''m {v}",
    "\"rm\" {v}",
    "/bin/rm {v}",
    "$(printf rm) {v}",
    "x=rm; $x {v}",
    "shopt -s expand_aliases\nalias r=rm\nr {v}",
    "f() { rm {v}; }; f",
    "trap 'rm {v}' EXIT",
    "env -S 'rm {v}'",
    "setsid -w rm {v}",
    "ionice -c3 rm {v}",
    "stdbuf -o0 rm {v}",
    "coproc rm {v}; wait",
    "find . -name {v} -exec rm {} +",
    ". <(echo rm {v})",
    "timeout 5 rm {v}",
    "nice -n 1 rm {v}",
    "sh -c 'rm {v}'",
    "echo rm {v} | bash",
    "env - rm {v}",
    "env - PATH=/usr/bin:/bin rm {v}",
    "script -qc 'rm {v}' /dev/null",
    "find . -name {v} -delete",
    "unlink {v}",
    "shred -u {v}",
];

fn victims(project: &Project) -> Vec<String> {
    (0..RM_FORMS.len())
        .map(|i| {
            let name = format!("victim{i}");
            project.write(&name, "keep me");
            name
        })
        .collect()
}

fn rm_commands(victims: &[String]) -> Vec<String> {
    RM_FORMS
        .iter()
        .zip(victims)
        .map(|(form, v)| form.replace("{v}", v))
        .collect()
}

/// The forms really remove their file when bash runs them, so the test below can fail.
#[test]
fn each_rm_bypass_form_really_removes_its_file_in_bash() {
    let project = Project::new();
    let victims = victims(&project);
    for (command, victim) in rm_commands(&victims).iter().zip(&victims) {
        sh(project.path(), command);
        assert!(
            !project.file(victim).exists(),
            "`{command}` did not remove {victim}"
        );
    }
}

#[test]
fn every_rm_bypass_form_is_denied_by_bash_rm_in_bypass_mode() {
    let project = Project::new();
    let victims = victims(&project);
    let commands = rm_commands(&victims);
    let (out, results) = run_calls(
        &project,
        bash_calls(&commands),
        &[
            "--permission-mode",
            "bypass",
            "--disallowed-tools",
            "bash(rm*)",
        ],
    );
    for ((command, victim), (_, result)) in commands.iter().zip(&victims).zip(&results) {
        assert!(
            project.file(victim).exists(),
            "`{command}` ran: {victim} is gone"
        );
        assert!(
            result.contains("permission denied"),
            "`{command}`: {result}"
        );
        assert!(result.contains("bash(rm*)"), "`{command}`: {result}");
    }
    // A denial the rule matched names what ran; one it could not see says why.
    assert!(
        results[4].1.contains("(it runs `rm victim4`)"),
        "{}",
        results[4].1
    );
    assert!(
        results[6].1.contains("cannot be checked"),
        "{}",
        results[6].1
    );
    assert!(
        out.stderr.contains("permission denied") || out.stderr.contains("denies"),
        "{}",
        out.stderr
    );
}

#[test]
fn deny_rules_in_user_settings_apply_the_same_way() {
    let project = Project::new();
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"permissions": {"deny": ["bash(rm*)"]}}"#,
    )
    .unwrap();
    project.write("victim", "keep me");
    let (_, results) = run_calls(
        &project,
        bash_calls(&["'rm' victim".to_string(), "ls victim".to_string()]),
        &["--permission-mode", "bypass"],
    );
    assert!(project.file("victim").exists());
    assert!(
        results[0].1.contains("permission denied"),
        "{}",
        results[0].1
    );
    assert!(results[1].1.contains("victim"), "{}", results[1].1);
}

const PUSH_FORMS: &[&str] = &[
    "git  push -q origin HEAD:main",
    "git -C . push -q origin HEAD:main",
    "git -c push.k=v push -q origin HEAD:main",
    "git --no-pager push -q origin HEAD:main",
    "'git' push -q origin HEAD:main",
    "git -c alias.x=push x -q origin HEAD:main",
    "git -c 'alias.x=!git push' x -q origin HEAD:main",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0=push git x -q origin HEAD:main",
    "git config alias.x push && git x -q origin HEAD:main",
    "git send-pack \"$(git remote get-url origin)\" HEAD:refs/heads/main",
    "/usr/lib/git-core/git-push -q origin HEAD:main",
];

/// A repository with one commit and a bare `origin` outside the project root.
fn repo_with_remote(project: &Project) -> tempfile::TempDir {
    let remote = tempfile::tempdir().unwrap();
    sh(remote.path(), "git init -q --bare");
    sh(
        project.path(),
        &format!(
            "git init -q && git commit -q --allow-empty -m first && git remote add origin {}",
            remote.path().display()
        ),
    );
    remote
}

fn pushed(remote: &Path) -> bool {
    let out = Command::new("git")
        .args(["for-each-ref", "--count=1"])
        .current_dir(remote)
        .output()
        .unwrap();
    !out.stdout.is_empty()
}

#[test]
fn every_git_push_bypass_form_is_denied_and_would_really_push() {
    for form in PUSH_FORMS {
        let project = Project::new();
        let remote = repo_with_remote(&project);
        sh(project.path(), form);
        assert!(pushed(remote.path()), "`{form}` does not push in bash");
    }
    let project = Project::new();
    let remote = repo_with_remote(&project);
    let commands: Vec<String> = PUSH_FORMS.iter().map(|f| f.to_string()).collect();
    let (_, results) = run_calls(
        &project,
        bash_calls(&commands),
        &[
            "--permission-mode",
            "bypass",
            "--disallowed-tools",
            "bash(git push*)",
        ],
    );
    assert!(!pushed(remote.path()), "a push got through");
    for (command, (_, result)) in commands.iter().zip(&results) {
        assert!(
            result.contains("`bash(git push*)`"),
            "`{command}`: {result}"
        );
    }
}

#[test]
fn legitimate_forms_run_under_their_allow_rules_in_default_mode() {
    let project = Project::new();
    sh(project.path(), "git init -q && mkdir sub");
    let commands: Vec<String> = [
        "touch plain",
        "'touch' quoted",
        "/usr/bin/env touch by-env",
        "timeout 5 touch timed",
        "LC_ALL=C touch localised",
        "touch both && touch chained",
        "touch redirected 2>&1",
        "touch quiet >/dev/null 2>&1",
        "git status --short",
        "git -C sub status --short",
        "git --no-pager status --short",
        "cargo test --lib 2>&1",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let (_, results) = run_calls(
        &project,
        bash_calls(&commands),
        &[
            "--allowed-tools",
            "bash(touch*),bash(git status*)",
            "--allowed-tools",
            "bash(cargo test*)",
        ],
    );
    for (command, (_, result)) in commands.iter().zip(&results) {
        assert!(
            !result.contains("permission denied"),
            "`{command}` was denied: {result}"
        );
    }
    for file in [
        "plain",
        "quoted",
        "by-env",
        "timed",
        "localised",
        "both",
        "chained",
        "redirected",
        "quiet",
    ] {
        assert!(project.file(file).exists(), "{file} was not created");
    }
    assert!(
        results[11].1.contains("Cargo.toml"),
        "cargo did not run: {}",
        results[11].1
    );
}

#[test]
fn an_allow_rule_does_not_stretch_to_what_it_does_not_name() {
    let project = Project::new();
    sh(project.path(), "git init -q");
    let commands: Vec<String> = [
        "touch a; mkdir evil1",
        "touch b > evil2",
        "git -c core.fsmonitor='touch evil3' status",
        "GIT_DIR=/tmp git status",
        "sudo -n touch evil4",
        "find . -maxdepth 0 -exec mkdir evil5 \\;",
        "sh -c 'mkdir evil6'",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let (out, results) = run_calls(
        &project,
        bash_calls(&commands),
        &[
            "--allowed-tools",
            "bash(touch*),bash(git status*),bash(find*),bash(sh*)",
        ],
    );
    for (command, (_, result)) in commands.iter().zip(&results) {
        assert!(
            result.contains("needs approval"),
            "`{command}` was not asked: {result}"
        );
    }
    for file in ["evil1", "evil2", "evil3", "evil4", "evil5", "evil6"] {
        assert!(!project.file(file).exists(), "{file} was created");
    }
    assert!(out.stderr.contains("--allowed-tools"), "{}", out.stderr);
}

#[test]
fn the_hint_names_the_wrapped_command_never_the_wrapper() {
    let project = Project::new();
    let (out, results) = run_calls(
        &project,
        bash_calls(&[
            "env LC_ALL=C ls -la".to_string(),
            "timeout 9 git -C . log".to_string(),
        ]),
        &[],
    );
    assert!(
        results[0].1.contains("--allowed-tools 'bash(ls*)'"),
        "{}",
        results[0].1
    );
    assert!(
        results[1].1.contains("--allowed-tools 'bash(git log*)'"),
        "{}",
        results[1].1
    );
    assert!(
        !out.stderr.contains("--allowed-tools 'bash(env")
            && !out.stderr.contains("--allowed-tools 'bash(timeout"),
        "{}",
        out.stderr
    );
}

fn write(path: &str) -> Value {
    json!({"path": path, "content": "{\"permissions\": {\"defaultMode\": \"bypass\"}}\n"})
}

#[test]
fn protected_writes_are_denied_in_print_mode_with_a_path_rule_hint() {
    let project = Project::new();
    project.write(".git/config", "[core]\n\tbare = false\n");
    let calls = vec![
        ("w".to_string(), "write_file", write(".ling/settings.json")),
        ("r".to_string(), "read_file", json!({"path": ".git/config"})),
        (
            "e".to_string(),
            "edit_file",
            json!({"path": ".git/config", "old_string": "bare = false", "new_string": "fsmonitor = touch pwned"}),
        ),
        ("n".to_string(), "write_file", write("notes.txt")),
    ];
    let (out, results) = run_calls(&project, calls, &["--permission-mode", "accept-edits"]);
    assert!(
        !project.file(".ling/settings.json").exists(),
        "the protected write ran"
    );
    assert!(
        !project.read(".git/config").contains("fsmonitor"),
        "the protected edit ran"
    );
    assert!(
        project.file("notes.txt").exists(),
        "an ordinary write was not allowed"
    );
    let (w, e) = (&results[0].1, &results[2].1);
    assert!(
        w.contains("--allowed-tools 'write_file(.ling/settings.json)'"),
        "{w}"
    );
    assert!(w.contains("protected path"), "{w}");
    assert!(!w.contains("--permission-mode accept-edits"), "{w}");
    assert!(
        e.contains("--allowed-tools 'edit_file(.git/config)'"),
        "{e}"
    );
    assert!(
        out.stderr.contains("write_file(.ling/settings.json)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rule_naming_the_protected_path_allows_it() {
    let project = Project::new();
    project.write(".git/config", "[core]\n\tbare = false\n");
    let calls = vec![
        ("w".to_string(), "write_file", write(".ling/settings.json")),
        ("r".to_string(), "read_file", json!({"path": ".git/config"})),
        (
            "e".to_string(),
            "edit_file",
            json!({"path": ".git/config", "old_string": "bare = false", "new_string": "bare = true"}),
        ),
        ("o".to_string(), "write_file", write(".ling/hooks.json")),
    ];
    let (_, results) = run_calls(
        &project,
        calls,
        &[
            "--permission-mode",
            "accept-edits",
            "--allowed-tools",
            "write_file(.ling/settings.json),edit_file(.git/**),write_file",
        ],
    );
    assert!(
        project.file(".ling/settings.json").exists(),
        "{:?}",
        results[0]
    );
    assert!(
        project.read(".git/config").contains("bare = true"),
        "{:?}",
        results[2]
    );
    // The bare `write_file` rule does not reach other protected files.
    assert!(!project.file(".ling/hooks.json").exists());
    assert!(
        results[3].1.contains("write_file(.ling/hooks.json)"),
        "{}",
        results[3].1
    );
}

#[test]
fn a_symlink_to_a_protected_file_is_protected_too() {
    let project = Project::new();
    project.write(".ling/hooks.json", "{}\n");
    std::os::unix::fs::symlink(".ling/hooks.json", project.file("notes.json")).unwrap();
    std::os::unix::fs::symlink(".ling", project.file("cfg")).unwrap();
    let calls = vec![
        ("r".to_string(), "read_file", json!({"path": "notes.json"})),
        ("w".to_string(), "write_file", write("notes.json")),
        ("d".to_string(), "write_file", write("cfg/settings.json")),
    ];
    let (_, results) = run_calls(&project, calls, &["--permission-mode", "accept-edits"]);
    assert_eq!(project.read(".ling/hooks.json"), "{}\n");
    assert!(!project.file(".ling/settings.json").exists());
    assert!(
        results[1].1.contains("write_file(.ling/hooks.json)"),
        "{}",
        results[1].1
    );
    assert!(
        results[2].1.contains("write_file(.ling/settings.json)"),
        "{}",
        results[2].1
    );
}

#[test]
fn files_under_ling_home_are_protected() {
    let project = Project::new();
    // LING_HOME inside the project, so the file tools can reach it without bypass.
    let home = project.file("home");
    std::fs::create_dir_all(&home).unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("w", "write_file", write("home/hooks.json"))]),
        Reply::text("done"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.env("LING_HOME", &home)
        .args(["-p", "go", "--permission-mode", "accept-edits"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "stderr: {}", out.stderr);
    assert!(
        !home.join("hooks.json").exists(),
        "a write into LING_HOME ran"
    );
    let results = tool_results(&server);
    assert!(
        results[0].1.contains("write_file(home/hooks.json)"),
        "{}",
        results[0].1
    );
    assert!(
        results[0].1.contains("inside LING_HOME"),
        "{}",
        results[0].1
    );
}

/// Allow rules for reading commands do not allow the options that make them write files
/// (the sandbox off, so nothing else would stop them): each form really writes in bash, is
/// not run under the reading rule, and the reading forms still run.
#[test]
fn reading_rules_are_not_write_primitives() {
    let outside = tempfile::tempdir().unwrap();
    let target = |n: usize| outside.path().join(format!("w{n}")).display().to_string();
    let forms: Vec<String> = vec![
        format!("git diff --output={}", target(0)),
        format!("git log --output={} -1", target(1)),
        format!("find . -maxdepth 0 -fprint {}", target(2)),
        format!("sort -o {} input", target(3)),
        format!("sed -n 'w {}' input", target(4)),
        format!("find . -maxdepth 0 -fls {}", target(5)),
    ];
    let setup = |project: &Project| {
        sh(
            project.path(),
            "git init -q && git commit -q --allow-empty -m first && echo x > input",
        );
    };
    // Each form really writes its file in bash.
    for (n, form) in forms.iter().enumerate() {
        let project = Project::new();
        setup(&project);
        sh(project.path(), form);
        assert!(Path::new(&target(n)).exists(), "`{form}` writes nothing");
        std::fs::remove_file(target(n)).unwrap();
    }
    let project = Project::new();
    setup(&project);
    let mut commands = forms.clone();
    commands.extend(
        [
            "git diff --stat",
            "git log --oneline -1",
            "find . -maxdepth 0",
            "sort input",
            "sed -n 1p input",
        ]
        .map(String::from),
    );
    let (_, results) = run_calls(
        &project,
        bash_calls(&commands),
        &[
            "--allowed-tools",
            "bash(git diff*),bash(git log*),bash(find*),bash(sort*),bash(sed*)",
        ],
    );
    for (n, (command, (_, result))) in commands.iter().zip(&results).enumerate().take(forms.len()) {
        assert!(
            !Path::new(&target(n)).exists(),
            "`{command}` wrote: {result}"
        );
        assert!(
            result.contains("permission denied"),
            "`{command}`: {result}"
        );
    }
    for (command, (_, result)) in commands.iter().zip(&results).skip(forms.len()) {
        assert!(
            !result.contains("permission denied"),
            "`{command}`: {result}"
        );
    }
}
