//! Files several Ling processes share (`trust.json`, the user's `mcp.json`), through the real
//! binary: many `ling` processes updating one `LING_HOME` at the same moment all keep their
//! change (each update is made under the file's lock, to the file as it is on disk then), and
//! an update that cannot get the lock in time fails naming it, leaving the file as it was.

use crate::support::project::{Output, Project, ling_bin, run};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const SESSIONS: usize = 20;
/// Folders trusted before: a big file, as after months of use, makes each update take long
/// enough that unlocked updates overlap and lose each other's.
const ALREADY_TRUSTED: usize = 2000;

fn ling(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(ling_bin());
    cmd.args(args)
        .env("LING_HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("LING_LOG")
        .env_remove("LING_LOCK_TIMEOUT_MS");
    cmd
}

/// Starts every command at once, then waits for all of them.
fn run_together(commands: Vec<Command>) -> Vec<std::process::Output> {
    let children: Vec<_> = commands
        .into_iter()
        .map(|mut cmd| {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| child.wait_with_output().unwrap())
        .collect()
}

fn assert_all_succeeded(outputs: &[std::process::Output]) {
    for out in outputs {
        assert!(
            out.status.success(),
            "{:?}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The names in `dir`, sorted: no lock file or temporary file may be left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn seed_trust(home: &Path) {
    let record = json!({
        "trustedAt": "2025-01-01T00:00:00Z",
        "fingerprint": "sha256:0",
        "files": {"hooks.json": null, "mcp.json": null, "settings.json": "{}"},
    });
    let projects: serde_json::Map<String, Value> = (0..ALREADY_TRUSTED)
        .map(|n| (format!("/old/project-{n}"), record.clone()))
        .collect();
    let file = json!({"version": 1, "projects": projects});
    std::fs::write(home.join("trust.json"), file.to_string()).unwrap();
}

/// Folders with a project config, ready to trust, and their canonical roots.
fn projects(top: &Path) -> Vec<PathBuf> {
    (0..SESSIONS)
        .map(|n| {
            let dir = top.join(format!("p{n}"));
            std::fs::create_dir_all(dir.join(".ling")).unwrap();
            std::fs::write(dir.join(".ling/settings.json"), "{}\n").unwrap();
            std::fs::canonicalize(&dir).unwrap()
        })
        .collect()
}

#[test]
fn sessions_trusting_folders_at_once_all_keep_theirs() {
    let home = tempfile::tempdir().unwrap();
    let top = tempfile::tempdir().unwrap();
    seed_trust(home.path());
    let dirs = projects(top.path());
    let outputs = run_together(
        dirs.iter()
            .map(|dir| ling(home.path(), &["trust", dir.to_str().unwrap()]))
            .collect(),
    );
    assert_all_succeeded(&outputs);
    let trusted = read_json(&home.path().join("trust.json"));
    let projects = trusted["projects"].as_object().unwrap();
    let missing: Vec<&PathBuf> = dirs
        .iter()
        .filter(|dir| !projects.contains_key(dir.to_str().unwrap()))
        .collect();
    assert_eq!(missing, Vec::<&PathBuf>::new(), "trust lost");
    assert_eq!(projects.len(), ALREADY_TRUSTED + SESSIONS);
    assert_eq!(names(home.path()), ["trust.json"]);

    // Revoking at once: every revoke is kept too, and nothing else is lost.
    let outputs = run_together(
        dirs.iter()
            .step_by(2)
            .map(|dir| ling(home.path(), &["trust", "--revoke", dir.to_str().unwrap()]))
            .collect(),
    );
    assert_all_succeeded(&outputs);
    let trusted = read_json(&home.path().join("trust.json"));
    let projects = trusted["projects"].as_object().unwrap();
    let kept: Vec<bool> = dirs
        .iter()
        .map(|dir| projects.contains_key(dir.to_str().unwrap()))
        .collect();
    let expected: Vec<bool> = (0..SESSIONS).map(|n| n % 2 == 1).collect();
    assert_eq!(kept, expected);
    assert_eq!(projects.len(), ALREADY_TRUSTED + SESSIONS / 2);
}

#[test]
fn sessions_adding_servers_to_the_users_mcp_json_at_once_all_keep_theirs() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let servers: serde_json::Map<String, Value> = (0..ALREADY_TRUSTED)
        .map(|n| {
            (
                format!("old{n}"),
                json!({"command": "true", "args": [n.to_string()]}),
            )
        })
        .collect();
    let file = home.path().join("mcp.json");
    std::fs::write(&file, json!({"mcpServers": servers}).to_string()).unwrap();
    let names_added: Vec<String> = (0..SESSIONS).map(|n| format!("new{n}")).collect();
    let outputs = run_together(
        names_added
            .iter()
            .map(|name| {
                let mut cmd = ling(
                    home.path(),
                    &["mcp", "add", "--scope", "user", name, "--", "true"],
                );
                cmd.current_dir(cwd.path());
                cmd
            })
            .collect(),
    );
    assert_all_succeeded(&outputs);
    let written = read_json(&file);
    let servers = written["mcpServers"].as_object().unwrap();
    let missing: Vec<&String> = names_added
        .iter()
        .filter(|name| !servers.contains_key(name.as_str()))
        .collect();
    assert_eq!(missing, Vec::<&String>::new(), "servers lost");
    assert_eq!(servers.len(), ALREADY_TRUSTED + SESSIONS);
    assert_eq!(names(home.path()), ["mcp.json"]);
}

#[test]
fn an_update_that_cannot_get_the_lock_in_time_names_it_and_changes_nothing() {
    let project = Project::new();
    project.write(".ling/settings.json", "{}\n");
    let home = project.home.path();
    std::fs::write(
        home.join("trust.json"),
        "{\"version\": 1, \"projects\": {}}\n",
    )
    .unwrap();
    // Another Ling in the middle of an update (this test holds the lock instead).
    let lock_path = home.join("trust.json.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap();
    let trust = || {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.arg("trust").env("LING_LOCK_TIMEOUT_MS", "300");
        run(cmd)
    };
    let started = std::time::Instant::now();
    let out: Output = trust();
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    assert!(
        out.stderr.contains(&lock_path.display().to_string())
            && out.stderr.contains("LING_LOCK_TIMEOUT_MS"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(home.join("trust.json")).unwrap(),
        "{\"version\": 1, \"projects\": {}}\n"
    );
    // Let go (as a crashed holder does), the lock file left behind: the next update goes
    // through.
    drop(lock);
    let out = trust();
    assert_eq!(out.code, Some(0), "{out:?}");
    let root = std::fs::canonicalize(project.path()).unwrap();
    assert!(
        read_json(&home.join("trust.json"))["projects"]
            .get(root.to_str().unwrap())
            .is_some()
    );
    assert_eq!(names(home), ["trust.json"]);
}

#[test]
fn a_repositorys_lock_symlink_is_never_followed_by_mcp_add() {
    let project = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("created-by-ling");
    std::fs::create_dir_all(project.file(".ling")).unwrap();
    let lock = project.file(".ling/mcp.json.lock");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let add = || {
        let mut cmd = project.command("http://127.0.0.1:9");
        cmd.args(["mcp", "add", "srv", "--", "true"]);
        run(cmd)
    };
    let out = add();
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("symbolic link")
            && out.stderr.contains(&format!("rm {}", lock.display())),
        "{}",
        out.stderr
    );
    assert!(!target.exists(), "ling created the link's target");
    assert!(!project.file(".ling/mcp.json").exists());
    assert!(std::fs::symlink_metadata(&lock).unwrap().is_symlink());
    // The link deleted as the error says, the same command works.
    std::fs::remove_file(&lock).unwrap();
    let out = add();
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(project.read(".ling/mcp.json").contains("\"srv\""));
    assert!(!target.exists());
}
