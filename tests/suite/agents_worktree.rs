//! `-w/--worktree` through the real binary, as root and as uid 1000: the session works in a
//! new git worktree on its own branch (under settings `worktreeDir`), its edit lands in the
//! worktree only, a write to the main checkout is refused by the sandbox (whose writable root
//! is the worktree), and at the end Ling says what changed and where and keeps the worktree
//! (`-p` always keeps it; a clean one says so). The negative: with the sandbox off the same
//! write reaches the main checkout.

use crate::suite::sandbox_doors::{Door, OFF, User, chown_1000};

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "safe.directory=*",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A project that is a git repository with one commit, worktrees going under the home.
fn repo(user: User) -> Door {
    let door = Door::new(user);
    let root = door.s.project.path();
    git(root, &["init", "-q"]);
    door.s.project.write("a.txt", "main\n");
    git(root, &["add", "a.txt"]);
    git(root, &["commit", "-qm", "start"]);
    std::fs::create_dir_all(door.home("wts")).unwrap();
    if user == User::Uid1000 {
        chown_1000(root);
        chown_1000(&door.home("wts"));
    }
    door.settings(serde_json::json!({"worktreeDir": door.home("wts")}));
    door
}

fn edit_in_worktree(user: User) {
    let door = repo(user);
    let main = door.s.project.file("a.txt");
    let to_main = format!("echo from-worktree > {} && echo wrote", main.display());
    let (out, results) = door.bash(
        &[
            "echo worktree > a.txt && pwd",
            &to_main,
            "echo 'gitdir: /tmp' > .git && echo wrote-git",
        ],
        &["-w", "feat"],
    );
    let tree = door.home("wts").join("feat");
    let tree = tree.canonicalize().unwrap();
    assert_eq!(
        results[0].lines().next().unwrap(),
        tree.display().to_string()
    );
    assert_eq!(
        std::fs::read_to_string(tree.join("a.txt")).unwrap(),
        "worktree\n"
    );
    assert_eq!(
        std::fs::read_to_string(&main).unwrap(),
        "main\n",
        "{results:?}"
    );
    assert!(
        results[1].contains("Permission denied") || results[1].contains("Read-only"),
        "{results:?}"
    );
    assert!(!results[1].contains("wrote"), "{results:?}");
    // Its `.git` file (which names its git directory in the main repository) stays protected.
    assert!(!results[2].contains("wrote-git"), "{results:?}");
    assert!(
        std::fs::read_to_string(tree.join(".git"))
            .unwrap()
            .contains("worktrees/feat")
    );
    // Its own branch, and the end says what changed and where.
    assert_eq!(git(&tree, &["branch", "--show-current"]), "feat");
    assert!(
        out.stderr
            .contains(&format!("working in worktree feat at {}", tree.display())),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("kept, with 1 changed file(s) not committed and 0 commit(s)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(" M a.txt"), "{}", out.stderr);
    assert!(out.stderr.contains("git merge feat"), "{}", out.stderr);
}

#[test]
fn a_worktree_sessions_edit_lands_in_its_worktree_only_as_root() {
    edit_in_worktree(User::Root);
}

#[test]
fn a_worktree_sessions_edit_lands_in_its_worktree_only_as_uid_1000() {
    edit_in_worktree(User::Uid1000);
}

#[test]
fn without_the_sandbox_the_same_write_reaches_the_main_checkout() {
    let door = repo(User::Root);
    let main = door.s.project.file("a.txt");
    let to_main = format!("echo from-worktree > {}", main.display());
    let mut args = vec!["-w", "feat"];
    args.extend(OFF);
    door.bash(&[&to_main], &args);
    assert_eq!(std::fs::read_to_string(&main).unwrap(), "from-worktree\n");
}

#[test]
fn a_clean_worktree_is_kept_by_p_and_entered_again_by_name() {
    let door = repo(User::Root);
    let (out, _) = door.bash(&["true"], &["-w", "idle"]);
    assert!(
        out.stderr.contains("nothing changed; kept (-p keeps it"),
        "{}",
        out.stderr
    );
    // The same name again: the same worktree, not an error.
    let (out, results) = door.bash(&["pwd"], &["-w", "idle"]);
    let tree = door.home("wts").join("idle").canonicalize().unwrap();
    assert_eq!(
        results[0].lines().next().unwrap(),
        tree.display().to_string(),
        "{out:?}"
    );
    // Not a repository: said, exit 2.
    let plain = Door::new(User::Root);
    let out =
        crate::support::project::run(plain.command("http://127.0.0.1:9", &["-w", "x", "-p", "hi"]));
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("needs a git repository"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_child_with_isolation_worktree_edits_its_own_worktree_only() {
    use crate::support::mock_openai::{MockServer, Reply};
    use serde_json::json;
    let door = repo(User::Root);
    door.s.project.write(
        ".ling/agents/iso.md",
        "---\nname: iso\ndescription: works apart\nisolation: worktree\n---\nYou work apart.\n",
    );
    git(door.s.project.path(), &["add", "."]);
    git(door.s.project.path(), &["commit", "-qm", "agent"]);
    door.s.project.trust();
    let main = door.s.project.file("a.txt");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({"description": "edit apart", "prompt": "ISO-CHILD: edit a.txt",
                   "subagent_type": "iso"}),
        )]),
        Reply::text("parent done"),
    ]);
    let to_main = format!("echo from-child > {} && echo wrote", main.display());
    server.script_for(
        "ISO-CHILD",
        vec![
            Reply::tool_calls(vec![
                ("b1", "bash", json!({"command": "echo iso > a.txt && pwd"})),
                ("b2", "bash", json!({"command": to_main})),
            ]),
            Reply::text("edited apart"),
        ],
    );
    let out = crate::support::project::run(door.command(&server.base_url(), &["-p", "ISO-PARENT"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&main).unwrap(), "main\n");
    let trees: Vec<_> = std::fs::read_dir(door.home("wts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(trees.len(), 1, "{trees:?}");
    let tree = trees[0].canonicalize().unwrap();
    assert!(
        tree.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("agent-a")
    );
    assert_eq!(
        std::fs::read_to_string(tree.join("a.txt")).unwrap(),
        "iso\n"
    );
    let child = server.requests_for("ISO-CHILD");
    let results: Vec<String> = child[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        results[0].starts_with(&tree.display().to_string()),
        "{results:?}"
    );
    assert!(!results[1].contains("wrote"), "{results:?}");
    // The parent reads what changed and where.
    let parent = server.requests_for("ISO-PARENT");
    let result = parent[1].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.starts_with("edited apart"), "{result}");
    assert!(
        result.contains(&format!("({}, branch agent-a", tree.display())),
        "{result}"
    );
    assert!(result.contains("kept, with 1 changed file(s)"), "{result}");
}

#[test]
fn worktree_hooks_make_and_remove_a_childs_worktree_with_claudes_contract() {
    use crate::support::mock_openai::{MockServer, Reply};
    use serde_json::{Value, json};
    let door = repo(User::Root);
    let root = door.s.project.path().to_path_buf();
    door.s.project.write(
        ".ling/agents/iso.md",
        "---\nname: iso\ndescription: works apart\nisolation: worktree\n---\nYou work apart.\n",
    );
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "agent"]);
    door.s.project.trust();
    let h = door.home("hooked-area");
    std::fs::create_dir_all(&h).unwrap();
    let tree = h.join("hooked");
    let create = format!(
        "cat > {h}/create.json; git -C {root} worktree add -q -b hooked {tree} HEAD >&2; echo {tree}",
        h = h.display(),
        root = root.display(),
        tree = tree.display()
    );
    let remove = format!(
        "cat > {h}/remove.json; git -C {root} worktree remove {tree}",
        h = h.display(),
        root = root.display(),
        tree = tree.display()
    );
    let command = |c: &str| json!([{"hooks": [{"type": "command", "command": c}]}]);
    std::fs::write(
        door.s.project.home.path().join("hooks.json"),
        json!({"hooks": {"WorktreeCreate": command(&create), "WorktreeRemove": command(&remove)}})
            .to_string(),
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "t1",
            "task",
            json!({"description": "look apart", "prompt": "ISO-CHILD: where are you",
                   "subagent_type": "iso"}),
        )]),
        Reply::text("parent done"),
    ]);
    server.script_for(
        "ISO-CHILD",
        vec![
            Reply::tool_calls(vec![("b1", "bash", json!({"command": "pwd"}))]),
            Reply::text("looked only"),
        ],
    );
    let out = crate::support::project::run(door.command(&server.base_url(), &["-p", "ISO-PARENT"]));
    assert_eq!(out.code, Some(0), "{out:?}");
    let created: Value =
        serde_json::from_str(&std::fs::read_to_string(h.join("create.json")).unwrap()).unwrap();
    assert_eq!(created["hook_event_name"], "WorktreeCreate");
    let name = created["name"].as_str().unwrap();
    assert!(name.starts_with("agent-a"), "{created}");
    // The child worked where the hook said, and git made nothing under worktreeDir.
    let child = server.requests_for("ISO-CHILD");
    let pwd = child[1].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(pwd.starts_with(&tree.display().to_string()), "{pwd}");
    assert_eq!(std::fs::read_dir(door.home("wts")).unwrap().count(), 0);
    // Clean at the end: the WorktreeRemove hook was told its path, and removed it.
    let removed: Value =
        serde_json::from_str(&std::fs::read_to_string(h.join("remove.json")).unwrap()).unwrap();
    assert_eq!(removed["hook_event_name"], "WorktreeRemove");
    assert_eq!(removed["worktree_path"], tree.display().to_string());
    assert!(!tree.exists());
    let parent = server.requests_for("ISO-PARENT");
    let result = parent[1].messages().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("nothing changed; removed by the WorktreeRemove hooks"),
        "{result}"
    );
}
