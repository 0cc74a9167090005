//! Checkpoints and `/rewind` through the real binary (issue 31): a turn whose sandboxed `bash`
//! creates, removes, renames, chmods, relinks and writes ignored folders, plus an edit, is
//! undone by `/rewind 2` sent as the prompt of `ling -p --resume ID`, byte for byte (every file
//! hashed with its mode, ignored ones included), as root and as uid 1000; the conversation then
//! no longer holds the turn; a file changed outside Ling since is left alone unless forced;
//! `--fork-session` goes on under a new id, the original untouched; `checkpoints: false` turns
//! them off; `ling sessions prune` drops the oldest session's checkpoints first. The rewind is
//! also tried with the walk that replaces inotify where it is missing.

use crate::suite::sandbox_doors::{Door, User, chown_1000, door};
use crate::support::mock_openai::{MockServer, Recorded, Reply};
use crate::support::project::{self, Output, Project};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Every path below `root`: its kind and mode, a file's content hash, a link's target.
fn tree(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else {
                let hash = Sha256::digest(std::fs::read(&path).unwrap());
                let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
                format!("file {mode:o} {hex}")
            };
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), what));
        }
    }
    out.sort();
    out
}

fn session_id(out: &Output) -> String {
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()["session_id"].as_str().unwrap().to_string()
}

/// The messages of a request after the system prompt.
fn history(request: &Recorded) -> Vec<Value> {
    request.messages()[1..].to_vec()
}

/// A project with tracked, ignored and executable files, an empty folder and a symlink.
fn lay_out(root: &Path) {
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(".gitignore", "target/\nnode_modules/\nbuild-cache/\n");
    write("src/a.txt", "alpha\nbeta\n");
    write("gone.txt", "to be removed\n");
    write("old-name.txt", "to be renamed\n");
    write("script.sh", "#!/bin/sh\necho hi\n");
    write("target/keep.txt", "old build\n");
    write("build-cache/x.bin", "\u{0}\u{1}cache");
    std::fs::create_dir(root.join("empty-dir")).unwrap();
    std::os::unix::fs::symlink("gone.txt", root.join("link.txt")).unwrap();
}

const COMMAND: &str = "echo created > created.txt && rm gone.txt && mv old-name.txt new-name.txt \
    && chmod +x script.sh && echo rebuilt > target/keep.txt && mkdir -p target/debug \
    node_modules/pkg && printf built > target/debug/out && echo dep > node_modules/pkg/index.js \
    && rm -r build-cache && rmdir empty-dir && ln -sfn src/a.txt link.txt";

/// The whole story for one user: a first turn, a turn that changes everything, `/rewind 2`,
/// and a next turn that must not see the rewound one.
fn rewind_puts_back_every_byte(user: User, inotify: bool) {
    let mut d: Door = door(user, true);
    if !inotify {
        d = d.env("LING_CHECKPOINTS_NO_INOTIFY", "1");
    }
    let root = d.s.project.path().to_path_buf();
    lay_out(&root);
    if user == User::Uid1000 {
        chown_1000(&root);
    }
    let json = ["--output-format", "json"];

    let server = MockServer::start_blocking(vec![Reply::text("hello")]);
    let id = session_id(&project::run(
        d.command(&server.base_url(), &[&["-p", "first"][..], &json].concat()),
    ));
    let before = tree(&root);

    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({ "command": COMMAND }))]),
        Reply::tool_calls(vec![("c2", "read_file", json!({ "path": "src/a.txt" }))]),
        Reply::tool_calls(vec![(
            "c3",
            "edit_file",
            json!({ "path": "src/a.txt", "old_string": "alpha", "new_string": "omega" }),
        )]),
        Reply::text("done"),
    ]);
    let args = [
        &["-p", "change things", "--resume", &id][..],
        &["--permission-mode", "accept-edits"],
        &json,
    ]
    .concat();
    let out = project::run(d.command(&server.base_url(), &args));
    assert_eq!(out.code, Some(0), "{out:?}");
    let changed = tree(&root);
    assert_ne!(changed, before);
    let results: Vec<Value> = server.requests()[3]
        .messages()
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        !results
            .iter()
            .any(|r| r["content"].as_str().unwrap().starts_with("Error")),
        "{results:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.txt")).unwrap(),
        "omega\nbeta\n"
    );
    assert!(root.join("node_modules/pkg/index.js").exists());

    let server = MockServer::start_blocking(Vec::new());
    let out = project::run(d.command(&server.base_url(), &["-p", "/rewind 2", "--resume", &id]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("Rewound to just before message 2 (\"change things\")"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("restored src/a.txt"), "{}", out.stdout);
    assert!(
        out.stdout.contains("removed  created.txt"),
        "{}",
        out.stdout
    );
    assert!(server.requests().is_empty(), "the model was asked");
    assert_eq!(tree(&root), before);

    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let out = project::run(d.command(&server.base_url(), &["-p", "what now?", "--resume", &id]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        history(&server.requests()[0]),
        vec![
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": "hello"}),
            json!({"role": "user", "content": "what now?"}),
        ]
    );
}

#[test]
fn rewind_puts_back_every_byte_a_turn_changed_as_root() {
    rewind_puts_back_every_byte(User::Root, true);
}

#[test]
fn rewind_puts_back_every_byte_a_turn_changed_as_uid_1000() {
    rewind_puts_back_every_byte(User::Uid1000, true);
}

/// The walk every look falls back to without inotify finds the same changes.
#[test]
fn rewind_puts_back_every_byte_a_turn_changed_without_inotify() {
    rewind_puts_back_every_byte(User::Root, false);
}

/// One `ling -p` run in `project`.
fn run(project: &Project, replies: Vec<Reply>, args: &[&str]) -> (Output, MockServer) {
    let server = MockServer::start_blocking(replies);
    let mut cmd = project.command(&server.base_url());
    cmd.args(args);
    (project::run(cmd), server)
}

#[test]
fn a_file_changed_outside_ling_since_is_not_overwritten_unless_forced() {
    let project = Project::new();
    project.write("mine.txt", "original\n");
    project.write("yours.txt", "original\n");
    let (out, _) = run(
        &project,
        vec![
            Reply::tool_calls(vec![(
                "c1",
                "bash",
                json!({"command": "echo ling > mine.txt && echo ling > yours.txt"}),
            )]),
            Reply::text("done"),
        ],
        &["-p", "write both", "--output-format", "json"],
    );
    let id = session_id(&out);
    assert_eq!(project.read("yours.txt"), "ling\n");
    // You edit one of them after the turn, outside Ling.
    project.write("yours.txt", "my own words\n");

    let (out, _) = run(
        &project,
        Vec::new(),
        &["-p", "/rewind 1 code", "--resume", &id],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains("yours.txt: changed outside Ling since"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("/rewind 1 code --force"),
        "{}",
        out.stderr
    );
    assert_eq!(project.read("mine.txt"), "original\n");
    assert_eq!(project.read("yours.txt"), "my own words\n");

    let (out, _) = run(
        &project,
        Vec::new(),
        &["-p", "/rewind 1 code --force", "--resume", &id],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(project.read("yours.txt"), "original\n");
}

#[test]
fn a_forked_session_resumes_separately_and_the_original_is_untouched() {
    let project = Project::new();
    let (out, _) = run(
        &project,
        vec![Reply::text("red it is")],
        &["-p", "remember red", "--output-format", "json"],
    );
    let original = session_id(&out);
    let transcript = project
        .home
        .path()
        .join("sessions")
        .join(format!("{original}.jsonl"));
    let recorded = std::fs::read(&transcript).unwrap();

    let (out, server) = run(
        &project,
        vec![Reply::text("blue in the fork")],
        &[
            "-p",
            "the fork says blue",
            "--resume",
            &original,
            "--fork-session",
            "--output-format",
            "json",
        ],
    );
    let fork = session_id(&out);
    assert_ne!(fork, original);
    assert_eq!(
        history(&server.requests()[0]),
        vec![
            json!({"role": "user", "content": "remember red"}),
            json!({"role": "assistant", "content": "red it is"}),
            json!({"role": "user", "content": "the fork says blue"}),
        ]
    );
    assert_eq!(std::fs::read(&transcript).unwrap(), recorded);

    let (out, server) = run(
        &project,
        vec![Reply::text("still red")],
        &["-p", "and the original?", "--resume", &original],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(history(&server.requests()[0]).len(), 3);
    let (out, server) = run(
        &project,
        vec![Reply::text("blue")],
        &["-p", "and the fork?", "--resume", &fork],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let sent = history(&server.requests()[0]);
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert_eq!(sent[2]["content"], "the fork says blue");
    // The fork's copy of the checkpoints knows the message it inherited.
    let (out, _) = run(
        &project,
        Vec::new(),
        &["-p", "/rewind 1 code", "--resume", &fork],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains("files: nothing to put back"),
        "{}",
        out.stdout
    );
}

#[test]
fn fork_session_needs_a_session_to_fork() {
    let project = Project::new();
    let (out, _) = run(&project, Vec::new(), &["-p", "x", "--fork-session"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("--fork-session copies a recorded session"),
        "{}",
        out.stderr
    );
}

#[test]
fn checkpoints_false_records_none_and_the_conversation_still_rewinds() {
    let project = Project::new();
    std::fs::write(
        project.home.path().join("settings.json"),
        r#"{"checkpoints": false}"#,
    )
    .unwrap();
    project.write("a.txt", "original\n");
    let (out, _) = run(
        &project,
        vec![
            Reply::tool_calls(vec![("c1", "bash", json!({"command": "echo x > a.txt"}))]),
            Reply::text("done"),
        ],
        &["-p", "change a", "--output-format", "json"],
    );
    let id = session_id(&out);
    assert!(!project.home.path().join("checkpoints").exists());

    let (out, _) = run(&project, Vec::new(), &["-p", "/rewind 1", "--resume", &id]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("checkpoints are off"), "{}", out.stdout);
    assert_eq!(project.read("a.txt"), "x\n");
    // The conversation was rewound all the same: there is no message 1 any more.
    let (out, _) = run(
        &project,
        Vec::new(),
        &["-p", "/rewind 1 conversation", "--resume", &id],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("there is no user message 1 in this session: it has 0"),
        "{}",
        out.stderr
    );
}

#[test]
fn sessions_prune_drops_the_oldest_sessions_checkpoints_first() {
    let home = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    let mut projects = Vec::new();
    for (i, content) in ["old project file\n", "new project file\n"]
        .iter()
        .enumerate()
    {
        let project = Project {
            root: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir_in(home.path()).unwrap(),
        };
        projects.push(project);
        let project = &projects[i];
        // Both sessions in one LING_HOME; each writes a file, so its checkpoints are recorded
        // (a one-shot run looks at its folders only once it writes).
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![(
                "c1",
                "write_file",
                json!({"path": "g.txt", "content": content}),
            )]),
            Reply::text("ok"),
        ]);
        std::fs::write(project.file("f.txt"), content).unwrap();
        let mut cmd = project.command(&server.base_url());
        cmd.env("LING_HOME", home.path()).args([
            "-p",
            "hi",
            "--output-format",
            "json",
            "--permission-mode",
            "accept-edits",
        ]);
        ids.push(session_id(&project::run(cmd)));
    }
    let sessions = home.path().join("sessions");
    let checkpoints = home.path().join("checkpoints");
    // Both used two hours ago (an hour's grace spares what a running session just wrote),
    // the first before the second.
    let now = std::time::SystemTime::now();
    let age = |path: &Path, hours: u64| {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(now - std::time::Duration::from_secs(hours * 3600))
            .unwrap();
    };
    let mut used = 0;
    for entry in walk(&checkpoints) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        used += std::fs::metadata(&entry).unwrap().len();
        let hours = if name.starts_with(&ids[0]) { 3 } else { 2 };
        age(&entry, hours);
    }
    let mut cmd = projects[0].command("http://127.0.0.1:9");
    cmd.env("LING_HOME", home.path()).args([
        "sessions",
        "prune",
        "--json",
        "--max-storage",
        &(used - 1).to_string(),
    ]);
    let out = project::run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    let report = out.json();
    assert_eq!(report["sessions"], json!([ids[0]]));
    assert!(report["blobs_removed"].as_u64().unwrap() >= 1, "{report}");
    assert!(!checkpoints.join(format!("{}.journal", ids[0])).exists());
    assert!(checkpoints.join(format!("{}.journal", ids[1])).exists());
    assert!(sessions.join(format!("{}.jsonl", ids[0])).exists());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_one_shot_run_that_writes_nothing_looks_at_no_folder() {
    let project = Project::new();
    std::fs::write(project.file("f.txt"), "kept\n").unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("c1", "read_file", json!({"path": "f.txt"}))]),
        Reply::text("ok"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "read it"]);
    let out = project::run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    // The negative: the same run writing a file records its checkpoints.
    let checkpoints = project.home.path().join("checkpoints");
    assert!(!checkpoints.exists(), "{:?}", walk(&checkpoints));
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({"path": "g.txt", "content": "new\n"}),
        )]),
        Reply::text("ok"),
    ]);
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "write it", "--permission-mode", "accept-edits"]);
    let out = project::run(cmd);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(checkpoints.exists());
}
