use std::os::unix::fs::PermissionsExt;

use super::*;

/// Every path below `root` with its kind, mode and content (or link target).
fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&path).unwrap())
            };
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), what));
        }
    }
    out.sort();
    out
}

fn open(home: &Path, root: &Path, id: &str) -> Checkpoints {
    Checkpoints::open(OpenOptions {
        dir: home.join("checkpoints"),
        session_id: id.into(),
        roots: vec![root.to_path_buf()],
        excluded: Vec::new(),
        settings: CheckpointSettings::default(),
        eager: true,
    })
}

#[test]
fn a_lazy_store_takes_its_first_look_when_first_needed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    write(&root.join("a.txt"), "one");
    let checkpoints = Checkpoints::open(OpenOptions {
        dir: home.path().join("checkpoints"),
        session_id: "lazy".into(),
        roots: vec![root.clone()],
        excluded: Vec::new(),
        settings: CheckpointSettings::default(),
        eager: false,
    });
    assert!(!checkpoints.looked());
    assert!(
        !home.path().join("checkpoints").exists(),
        "nothing is written before a look"
    );
    let state = checkpoints
        .with_store(|store| store.look(By::Outside))
        .flatten();
    assert!(state.is_some());
    assert!(checkpoints.looked());
}

fn turn(checkpoints: &Checkpoints, prompt: u64) {
    checkpoints.with_store(|store| {
        let state = store.look(By::Outside).unwrap();
        store.write(Record::Turn { prompt, state });
        state
    });
}

fn restore(checkpoints: &Checkpoints, prompt: u64, force: bool) -> RestoreReport {
    checkpoints
        .with_store(|store| restore_in(store, prompt, force, false))
        .unwrap()
        .unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_turn_of_creations_removals_renames_chmods_and_links_is_put_back_exactly() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    write(&root.join("src/a.rs"), "fn a() {}\n");
    write(&root.join("src/deep/b.rs"), "b\n");
    write(&root.join("run.sh"), "#!/bin/sh\n");
    std::fs::create_dir(root.join("empty")).unwrap();
    std::os::unix::fs::symlink("src/a.rs", root.join("link")).unwrap();
    let before = snapshot(&root);

    let checkpoints = open(home.path(), &root, "s1");
    turn(&checkpoints, 100);
    // What a command and an edit do.
    write(&root.join("src/a.rs"), "fn a() { changed }\n");
    std::fs::rename(root.join("src/deep"), root.join("moved")).unwrap();
    std::fs::remove_file(root.join("run.sh")).unwrap();
    std::fs::remove_dir(root.join("empty")).unwrap();
    std::fs::set_permissions(
        root.join("src/a.rs"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("elsewhere", root.join("link")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    write(&root.join("target/debug/out"), "built");
    checkpoints.with_store(|store| store.look(By::Call));
    assert_ne!(snapshot(&root), before);

    let report = restore(&checkpoints, 100, false);
    assert!(report.complete(), "{report:?}");
    assert_eq!(snapshot(&root), before);
    // The journal survives: a new process rewinds from it as well.
    write(&root.join("src/a.rs"), "again\n");
    drop(checkpoints);
    let again = open(home.path(), &root, "s1");
    let report = restore(&again, 100, true);
    assert!(report.complete(), "{report:?}");
    assert_eq!(snapshot(&root), before);
}

#[test]
fn a_file_changed_outside_ling_since_is_kept_unless_forced() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    write(&root.join("mine.txt"), "one\n");
    write(&root.join("yours.txt"), "one\n");
    let checkpoints = open(home.path(), &root, "s2");
    turn(&checkpoints, 7);
    write(&root.join("mine.txt"), "two\n");
    write(&root.join("yours.txt"), "two\n");
    checkpoints.with_store(|store| store.look(By::Call));
    // The user edits one of them after the turn.
    write(&root.join("yours.txt"), "my own words\n");

    let report = restore(&checkpoints, 7, false);
    assert_eq!(
        report.not_restored,
        vec![NotRestored {
            path: root.join("yours.txt"),
            why: Kept::ChangedOutside,
        }]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("mine.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("yours.txt")).unwrap(),
        "my own words\n"
    );
    let forced = restore(&checkpoints, 7, true);
    assert!(forced.complete(), "{forced:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("yours.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn a_file_over_the_size_bound_is_said_and_not_put_back() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    write(&root.join("big.bin"), "0123456789");
    let checkpoints = Checkpoints::open(OpenOptions {
        dir: home.path().join("checkpoints"),
        session_id: "s3".into(),
        roots: vec![root.clone()],
        excluded: Vec::new(),
        settings: CheckpointSettings {
            max_file_size: 4,
            ..CheckpointSettings::default()
        },
        eager: true,
    });
    turn(&checkpoints, 1);
    let warnings = checkpoints.take_warnings();
    assert!(
        warnings.len() == 1 && warnings[0].contains("big.bin (10 B) over checkpoints.maxFileSize"),
        "{warnings:?}"
    );
    write(&root.join("big.bin"), "changed!!!!");
    checkpoints.with_store(|store| store.look(By::Call));
    let report = restore(&checkpoints, 1, false);
    assert_eq!(
        report.not_restored,
        vec![NotRestored {
            path: root.join("big.bin"),
            why: Kept::TooLarge,
        }]
    );
    let tree = checkpoints.with_store(|s| s.tree.clone()).unwrap();
    assert_eq!(tree.get(&root.join("big.bin")).and_then(hash_of), None);
}

#[test]
fn roots_inside_others_and_slash_are_left_out() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    std::fs::create_dir(root.join("inner")).unwrap();
    assert_eq!(
        roots_of(&root, &[root.join("inner"), PathBuf::from("/")]),
        vec![root.clone()]
    );
}
