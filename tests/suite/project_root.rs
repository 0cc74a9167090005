//! The project the user is really in, through the real binary: the root found from a
//! subfolder (the nearest `.git`, else `.ling`/`.claude`), instruction files from the root down
//! to the working directory (nearer ones later), `CLAUDE.md` imports, `-C`, `--add-dir` (the
//! file tools and the sandbox), and trust shared by every folder of a trusted root. Each with
//! its negative.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Reply};
use project::{Project, run};
use serde_json::json;

/// The system prompt of the first request.
fn system_prompt(server: &MockServer) -> String {
    server.requests()[0].messages()[0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn started_in_a_subfolder_the_root_s_and_the_folder_s_instructions_both_apply_nearer_later() {
    let p = Project::new();
    std::fs::create_dir(p.file(".git")).unwrap();
    p.write("AGENTS.md", "TOP-RULE: use tabs.\n");
    p.write(
        "crates/app/AGENTS.md",
        "NEAR-RULE: this crate uses spaces.\n",
    );
    p.write("crates/app/CLAUDE.md", "See @docs/style.md\n");
    p.write("crates/app/docs/style.md", "IMPORTED-RULE\n");
    p.write("other/AGENTS.md", "ELSEWHERE-RULE\n");
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.current_dir(p.file("crates/app"))
        .args(["-p", "hi", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let system = system_prompt(&server);
    let top = system.find("TOP-RULE").expect("the root's AGENTS.md");
    let near = system.find("NEAR-RULE").expect("the folder's AGENTS.md");
    assert!(top < near, "the nearer file comes later:\n{system}");
    assert!(system.contains("# Project instructions (crates/app/AGENTS.md)"));
    assert!(system.contains("IMPORTED-RULE"), "{system}");
    assert!(!system.contains("ELSEWHERE-RULE"));
    let root = std::fs::canonicalize(p.path()).unwrap();
    assert!(
        system.contains(&format!(
            "Working directory (project root): {}",
            root.display()
        )),
        "{system}"
    );
    assert!(system.contains("started Ling in crates/app/"), "{system}");
    // The session belongs to the root: `--continue` from the root finds it.
    let server = MockServer::start_blocking(vec![Reply::text("again")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "more", "--continue"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn without_a_marker_above_it_the_subfolder_is_the_root() {
    let p = Project::new();
    p.write("AGENTS.md", "TOP-RULE\n");
    p.write("sub/AGENTS.md", "NEAR-RULE\n");
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.current_dir(p.file("sub")).args(["-p", "hi"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let system = system_prompt(&server);
    assert!(
        system.contains("NEAR-RULE") && !system.contains("TOP-RULE"),
        "{system}"
    );
    // A `.claude` folder marks the root as well as `.git` does.
    std::fs::create_dir(p.file(".claude")).unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.current_dir(p.file("sub")).args(["-p", "hi"]);
    assert_eq!(run(cmd).code, Some(0));
    assert!(system_prompt(&server).contains("TOP-RULE"));
}

#[test]
fn dash_c_starts_in_the_folder_and_finds_its_root() {
    let p = Project::new();
    std::fs::create_dir(p.file(".git")).unwrap();
    p.write("AGENTS.md", "TOP-RULE\n");
    p.write("sub/AGENTS.md", "NEAR-RULE\n");
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.current_dir(std::env::temp_dir())
        .args(["-p", "hi", "-C"])
        .arg(p.file("sub"));
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let system = system_prompt(&server);
    assert!(
        system.contains("TOP-RULE") && system.contains("NEAR-RULE"),
        "{system}"
    );
    // A folder that does not exist is a usage error.
    let mut cmd = p.command("http://127.0.0.1:9");
    cmd.args(["-p", "hi", "-C"]).arg(p.file("nope"));
    assert_eq!(run(cmd).code, Some(2));
}

/// One `-p` run in which the model writes `path` with `write_file`: the tool result.
fn write_outside(p: &Project, path: &std::path::Path, args: &[&str]) -> (String, String) {
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "w",
            "write_file",
            json!({"path": path.display().to_string(), "content": "written\n"}),
        )]),
        Reply::text("done"),
    ]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "write it", "--permission-mode", "accept-edits"])
        .args(args);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let requests = server.requests();
    let result = requests[1]
        .messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    (result, out.stderr)
}

#[test]
fn add_dir_lets_the_file_tools_write_there_and_is_listed_at_start() {
    let p = Project::new();
    let extra = tempfile::tempdir().unwrap();
    let extra_dir = std::fs::canonicalize(extra.path()).unwrap();
    let target = extra_dir.join("notes.txt");
    let (result, stderr) = write_outside(&p, &target, &[]);
    assert!(result.contains("outside the project root"), "{result}");
    assert!(!target.exists());
    let dir = extra_dir.display().to_string();
    let (result, stderr_added) = write_outside(&p, &target, &["--add-dir", &dir]);
    assert!(!result.starts_with("Error"), "{result}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written\n");
    assert!(
        stderr_added.contains(&format!(
            "--add-dir: the file tools and the sandbox may also write {dir}"
        )),
        "{stderr_added}"
    );
    assert!(!stderr.contains("--add-dir:"), "{stderr}");
    // A directory that does not exist is a usage error naming it.
    let mut cmd = p.command("http://127.0.0.1:9");
    cmd.args(["-p", "hi", "--add-dir", "/nonexistent/ling-add"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("--add-dir /nonexistent/ling-add"),
        "{}",
        out.stderr
    );
}

#[test]
fn add_dir_is_writable_in_the_sandbox_and_other_folders_stay_blocked() {
    let s = super::sandbox_bash::Sandboxed::new();
    let file = s.outside("from-bash");
    let command = format!("echo hi > {}", file.display());
    let (_, results) = s.bash(&[&command], &[]);
    assert!(
        results[0].contains("Blocked by the sandbox"),
        "{}",
        results[0]
    );
    assert!(!file.exists());
    let dir = s.outside.path().display().to_string();
    let (_, results) = s.bash(&[&command], &["--add-dir", &dir]);
    assert!(results[0].contains("Exit code: 0"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hi\n");
}

#[test]
fn a_subfolder_of_a_trusted_root_is_trusted_and_ling_trust_there_trusts_the_root() {
    let p = Project::new();
    std::fs::create_dir(p.file(".git")).unwrap();
    std::fs::create_dir_all(p.file("sub/deeper")).unwrap();
    p.write(".ling/settings.json", r#"{"model": "project-model"}"#);
    let trust_of = |dir: &str| {
        let server = MockServer::start_blocking(vec![Reply::text("ok")]);
        let mut cmd = p.command(&server.base_url());
        cmd.current_dir(p.file(dir))
            .args(["-p", "hi", "--output-format", "json"]);
        let out = run(cmd);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let model = server.requests()[0].body["model"].clone();
        (out.json()["project_trust"].clone(), model)
    };
    assert_eq!(
        trust_of("sub/deeper"),
        (json!("untrusted"), json!("gpt-4o-mini"))
    );
    // `ling trust` in the subfolder trusts the root, which every folder of it shares.
    let mut cmd = p.command("http://127.0.0.1:9");
    cmd.current_dir(p.file("sub")).arg("trust");
    assert_eq!(run(cmd).code, Some(0));
    assert_eq!(
        trust_of("sub/deeper"),
        (json!("trusted"), json!("project-model"))
    );
    assert_eq!(trust_of("."), (json!("trusted"), json!("project-model")));
    let trust = std::fs::read_to_string(p.home.path().join("trust.json")).unwrap();
    let root = std::fs::canonicalize(p.path()).unwrap();
    let recorded: serde_json::Value = serde_json::from_str(&trust).unwrap();
    let keys: Vec<&String> = recorded["projects"].as_object().unwrap().keys().collect();
    assert_eq!(keys, [&root.display().to_string()]);
}
