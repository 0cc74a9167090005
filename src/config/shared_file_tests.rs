use super::*;
use pretty_assertions::assert_eq;
use std::sync::{Arc, Barrier, mpsc};

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn wait(ms: u64) -> Options {
    Options {
        private: true,
        wait: Duration::from_millis(ms),
    }
}

/// Adds one to the number in `path`, slowly, as a real update that parses and serializes a
/// large file is slow: without the lock, two of these interleave and one increment is lost.
fn increment(path: &Path) -> Result<u64, ConfigError> {
    update(path, wait(60_000), |text| {
        let now: u64 = text.map_or(0, |t| t.trim().parse().unwrap());
        std::thread::sleep(Duration::from_micros(300));
        Ok((
            Change::Write(format!("{}\n", now + 1).into_bytes()),
            now + 1,
        ))
    })
}

#[test]
fn many_writers_at_once_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("home").join("counter"));
    let (threads, each) = (8, 25);
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..each {
                    increment(&path).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let total = std::fs::read_to_string(&*path).unwrap();
    assert_eq!(total, format!("{}\n", threads * each));
    // Neither the lock file nor a temporary file is left behind.
    assert_eq!(names(path.parent().unwrap()), vec!["counter".to_string()]);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn a_lock_held_too_long_is_an_error_naming_it_and_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trust.json");
    std::fs::write(&path, "old\n").unwrap();
    let (locked, is_locked) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let holder = {
        let path = path.clone();
        std::thread::spawn(move || {
            update(&path, wait(5_000), |_| {
                locked.send(()).unwrap();
                released.recv().unwrap();
                Ok::<_, ConfigError>((Change::Write(b"holder\n".to_vec()), ()))
            })
        })
    };
    is_locked.recv().unwrap();
    let started = Instant::now();
    let err = update(&path, wait(100), |_| -> Result<(Change, ()), ConfigError> {
        panic!("ran without the lock")
    })
    .unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(100));
    let message = err.to_string();
    assert!(
        message.contains(&format!("{}.lock", path.display())),
        "{message}"
    );
    assert!(message.contains("LING_LOCK_TIMEOUT_MS"), "{message}");
    assert!(matches!(err, ConfigError::Busy { waited_ms: 100, .. }));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
    release.send(()).unwrap();
    holder.join().unwrap().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "holder\n");
}

#[test]
fn a_lock_file_left_by_a_crash_holds_nobody_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(dir.path().join("settings.json.lock"), "").unwrap();
    let seen = update(&path, wait(100), |text| {
        Ok::<_, ConfigError>((Change::Write(b"{}\n".to_vec()), text))
    })
    .unwrap();
    assert_eq!(seen, None);
    assert_eq!(names(dir.path()), vec!["settings.json".to_string()]);
}

#[test]
fn a_failed_or_keeping_update_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(&path, "before\n").unwrap();
    let err = update(&path, wait(100), |_| -> Result<(Change, ()), ConfigError> {
        Err(ConfigError::Other("no".into()))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "no");
    let kept = update(&path, wait(100), |text| {
        Ok::<_, ConfigError>((Change::Keep, text))
    })
    .unwrap();
    assert_eq!(kept.as_deref(), Some("before\n"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "before\n");
    assert_eq!(names(dir.path()), vec!["mcp.json".to_string()]);
    update(&path, wait(100), |_| {
        Ok::<_, ConfigError>((Change::Remove, ()))
    })
    .unwrap();
    update(&path, wait(100), |_| {
        Ok::<_, ConfigError>((Change::Remove, ()))
    })
    .unwrap();
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

#[test]
fn a_project_file_keeps_its_mode_and_a_private_one_is_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(".ling").join("settings.json");
    let write = |options, path: &Path| {
        update(path, options, |_| {
            Ok::<_, ConfigError>((Change::Write(b"{}\n".to_vec()), ()))
        })
        .unwrap();
    };
    write(Options::project(), &project);
    std::fs::set_permissions(&project, std::fs::Permissions::from_mode(0o640)).unwrap();
    write(Options::project(), &project);
    assert_eq!(mode(&project), 0o640);
    let home = dir.path().join("home");
    let private = home.join("settings.json");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(&private, "{}").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
    write(Options::private(), &private);
    assert_eq!((mode(&private), mode(&home)), (0o600, 0o700));
}

#[test]
fn a_json_object_is_edited_as_it_is_on_disk_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let add = |key: &str| {
        update_json_object(&path, wait(100), "expected an object", |object| {
            let fresh = object.insert(key.into(), Value::Bool(true)).is_none();
            Ok((fresh, fresh))
        })
    };
    assert!(add("a").unwrap());
    // Written by someone else in between: kept.
    std::fs::write(&path, r#"{"a": true, "other": 1}"#).unwrap();
    assert!(add("b").unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        serde_json::json!({"a": true, "other": 1, "b": true})
    );
    // Nothing to change: not rewritten.
    std::fs::write(&path, r#"{"a":true}"#).unwrap();
    assert!(!add("a").unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), r#"{"a":true}"#);
    std::fs::write(&path, "[1]").unwrap();
    assert_eq!(
        add("a").unwrap_err().to_string(),
        format!("{}: expected an object", path.display())
    );
    std::fs::write(&path, "{\n  nope").unwrap();
    let err = add("a").unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:2:", path.display())), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  nope");
}

#[test]
fn the_wait_comes_from_the_environment() {
    assert_eq!(wait_from(Some("250".into())), Duration::from_millis(250));
    assert_eq!(wait_from(Some(" 0 ".into())), Duration::ZERO);
    assert_eq!(wait_from(Some("soon".into())), DEFAULT_LOCK_WAIT);
    assert_eq!(wait_from(None), DEFAULT_LOCK_WAIT);
    assert_eq!(wait_from(Some(String::new())), DEFAULT_LOCK_WAIT);
    assert!(Options::private().private);
    assert_eq!(Options::owner_only(false), Options::project());
}

#[test]
fn a_whole_file_is_written_or_removed_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials").join("x.json");
    std::fs::create_dir(path.parent().unwrap()).unwrap();
    // Not UTF-8: an update could not read it, but it can still be replaced or removed.
    std::fs::write(&path, [0xff, 0xfe]).unwrap();
    assert!(
        update(&path, wait(100), |_| Ok::<_, ConfigError>((
            Change::Keep,
            ()
        )))
        .is_err()
    );
    write(&path, wait(100), b"{}").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"{}");
    assert_eq!(mode(&path), 0o600);
    std::fs::write(&path, [0xff]).unwrap();
    assert!(remove(&path, wait(100)).unwrap());
    assert!(!remove(&path, wait(100)).unwrap());
    assert_eq!(names(path.parent().unwrap()), Vec::<String>::new());
}

#[test]
fn a_lock_file_that_is_a_symlink_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    let lock = dir.path().join("mcp.json.lock");
    let planted = elsewhere.path().join("planted");
    // Dangling: the link names a file that does not exist (yet); and one that does.
    for exists in [false, true] {
        if exists {
            std::fs::write(&planted, "theirs\n").unwrap();
        }
        let _ = std::fs::remove_file(&lock);
        std::os::unix::fs::symlink(&planted, &lock).unwrap();
        let err = update(&path, wait(100), |_| {
            Ok::<_, ConfigError>((Change::Write(b"{}\n".to_vec()), ()))
        })
        .unwrap_err();
        assert!(matches!(err, ConfigError::LockIsLink { .. }), "{err}");
        let message = err.to_string();
        assert!(
            message.contains(&format!("rm {}", lock.display())),
            "{message}"
        );
        assert!(!path.exists(), "the file was written");
        assert_eq!(
            std::fs::read_to_string(&planted).ok(),
            exists.then(|| "theirs\n".to_string())
        );
        assert!(std::fs::symlink_metadata(&lock).unwrap().is_symlink());
    }
    // Deleted as the message says, the update goes through.
    std::fs::remove_file(&lock).unwrap();
    update(&path, wait(100), |_| {
        Ok::<_, ConfigError>((Change::Write(b"{}\n".to_vec()), ()))
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
}

#[test]
fn a_read_only_file_is_never_replaced_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{}\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let change = |change: Change| {
        update(&path, wait(100), move |_| {
            Ok::<_, ConfigError>((change, ()))
        })
    };
    for refused in [Change::Write(b"{\"x\": 1}\n".to_vec()), Change::Remove] {
        let err = change(refused).unwrap_err();
        assert!(
            matches!(err, ConfigError::ReadOnly { mode: 0o444, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("chmod u+w"), "{err}");
    }
    let err = write(&path, wait(100), b"x").unwrap_err();
    assert!(matches!(err, ConfigError::ReadOnly { .. }), "{err:?}");
    // Reading it and keeping it is fine.
    change(Change::Keep).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    assert_eq!(mode(&path), 0o444);
    assert_eq!(names(dir.path()), vec!["settings.json".to_string()]);
    // Writable again, as the message says: the update goes through.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    change(Change::Write(b"{\"x\": 1}\n".to_vec())).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"x\": 1}\n");
}
