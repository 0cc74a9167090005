//! The file doors of issue 18 (secrets by reading, home as the project, `.git` gaps), tried
//! through the real binary with the harness of `sandbox_doors`; and the REPL's question to run
//! a blocked read once outside the sandbox, which calls it a read.

use crate::suite::sandbox_doors::{OFF, User, chown_1000, door, flavours};
use crate::support::mock_openai::{MockServer, Reply};
use crate::support::project;

use serde_json::json;

#[test]
fn credentials_are_hidden_and_a_read_is_reported_blocked() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        std::fs::create_dir_all(d.home(".ssh")).unwrap();
        std::fs::write(d.home(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
        std::fs::write(d.home(".netrc"), "machine x password SECRET-NETRC").unwrap();
        std::fs::create_dir_all(d.home(".config/gh")).unwrap();
        std::fs::write(d.home(".config/gh/hosts.yml"), "oauth_token: SECRET-GH").unwrap();
        std::fs::write(d.home("notes.txt"), "PUBLIC").unwrap();
        std::fs::create_dir_all(d.s.project.home.path().join("credentials")).unwrap();
        std::fs::write(
            d.s.project.home.path().join("credentials/x.json"),
            "SECRET-LING",
        )
        .unwrap();
        if user == User::Uid1000 {
            chown_1000(d.home.path());
            chown_1000(d.s.project.home.path());
        }
        let (_, results) = d.bash(
            &[
                "cat ~/.ssh/id_ed25519",
                "cat ~/.netrc",
                "cat ~/.config/gh/hosts.yml",
                "cat \"$LING_HOME/credentials/x.json\"",
                "ls ~/.ssh",
                "cat ~/notes.txt",
            ],
            &[],
        );
        for result in &results[..5] {
            assert!(
                !result.contains("SECRET"),
                "{user:?} {namespaces}: {result}"
            );
            assert!(
                result.contains("Permission denied"),
                "{user:?} {namespaces}: {result}"
            );
        }
        assert!(
            results[0].contains(&format!(
                "Blocked by the sandbox: reading {}",
                d.home(".ssh")
                    .canonicalize()
                    .unwrap()
                    .join("id_ed25519")
                    .display()
            )) || results[0].contains("Blocked by the sandbox: reading"),
            "{}",
            results[0]
        );
        assert!(results[5].contains("PUBLIC"), "{}", results[5]);
        // allowRead lifts one default; off shows them all.
        d.settings(json!({"sandbox": {"allowRead": ["~/.netrc"]}}));
        let (_, results) = d.bash(&["cat ~/.netrc", "cat ~/.ssh/id_ed25519"], &[]);
        assert!(results[0].contains("SECRET-NETRC"), "{}", results[0]);
        assert!(!results[1].contains("SECRET"), "{}", results[1]);
        let (_, results) = d.bash(&["cat ~/.ssh/id_ed25519"], OFF);
        assert!(results[0].contains("SECRET-KEY"), "{}", results[0]);
    }
}

#[test]
fn home_as_the_project_keeps_its_dotfiles_read_only_and_says_so() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        std::fs::write(d.home(".bashrc"), "# mine\n").unwrap();
        std::fs::create_dir_all(d.home(".config")).unwrap();
        std::fs::create_dir_all(d.home("work")).unwrap();
        if user == User::Uid1000 {
            chown_1000(d.home.path());
        }
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![
                ("c1", "bash", json!({"command": "echo evil >> ~/.bashrc"})),
                (
                    "c2",
                    "bash",
                    json!({"command": "mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys"}),
                ),
                (
                    "c3",
                    "bash",
                    json!({"command": "echo x > ~/.config/autostart && echo wrote"}),
                ),
                (
                    "c4",
                    "bash",
                    json!({"command": "echo fine > ~/work/x.txt && echo ok"}),
                ),
                ("c5", "bash", json!({"command": "echo new > ~/new.txt"})),
            ]),
            Reply::text("done"),
        ]);
        let mut cmd = d.command(&server.base_url(), &["-p", "go"]);
        cmd.current_dir(d.home.path());
        let out = project::run(cmd);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert!(
            out.stderr
                .contains("the project root is your home directory"),
            "{}",
            out.stderr
        );
        assert_eq!(
            std::fs::read_to_string(d.home(".bashrc")).unwrap(),
            "# mine\n"
        );
        assert!(
            !d.home(".ssh/authorized_keys").exists(),
            "{user:?} {namespaces}"
        );
        assert!(
            !d.home(".config/autostart").exists(),
            "{user:?} {namespaces}"
        );
        assert_eq!(
            std::fs::read_to_string(d.home("work/x.txt")).unwrap(),
            "fine\n"
        );
        assert!(!d.home("new.txt").exists(), "{user:?} {namespaces}");
    }
}

#[test]
fn nested_repositories_symlinked_git_and_a_created_git() {
    for (user, namespaces) in flavours() {
        let d = door(user, namespaces);
        let p = &d.s.project;
        p.write(".git/HEAD", "ref: refs/heads/main\n");
        p.write(".git/hooks/.keep", "");
        p.write("vendor/lib/.git/config", "[core]\n");
        p.write("realgit/config", "[core]\n");
        std::fs::create_dir_all(p.file("sub")).unwrap();
        p.write("vendor/lib/file", "");
        std::fs::create_dir_all(p.file("linked")).unwrap();
        std::os::unix::fs::symlink("../realgit", p.file("linked/.git")).unwrap();
        if user == User::Uid1000 {
            chown_1000(p.path());
        }
        let (_, results) = d.bash(
            &[
                "echo '[core] fsmonitor = evil' >> vendor/lib/.git/config",
                "ln -s ../.git/hooks sub/h && echo evil > sub/h/pre-commit",
                "rm linked/.git && mkdir linked/.git && echo evil > linked/.git/config; ls -la linked",
                "echo ok > vendor/lib/file && echo wrote",
            ],
            &[],
        );
        assert_eq!(
            p.read("vendor/lib/.git/config"),
            "[core]\n",
            "{user:?} {namespaces}: {}",
            results[0]
        );
        assert!(!p.file(".git/hooks/pre-commit").exists(), "{}", results[1]);
        assert!(
            results[1].contains(&format!(
                "writing {}",
                p.path()
                    .canonicalize()
                    .unwrap()
                    .join(".git/hooks/pre-commit")
                    .display()
            )),
            "{user:?} {namespaces}: {}",
            results[1]
        );
        // The replaced link is caught: put back and said.
        assert!(
            std::fs::symlink_metadata(p.file("linked/.git"))
                .unwrap()
                .is_symlink(),
            "{}",
            results[2]
        );
        // (Without namespaces the grants keep it from being removed at all.)
        assert!(
            results[2].contains("Blocked by the sandbox: replacing")
                || (!namespaces && results[2].contains("cannot remove 'linked/.git'")),
            "{user:?} {namespaces}: {}",
            results[2]
        );
        assert_eq!(p.read("realgit/config"), "[core]\n");
        assert!(results[3].contains("wrote"), "{}", results[3]);

        // A project without .git: the model makes one that would run code at the user's next
        // `git status`; the result says so.
        let d = door(user, namespaces);
        let (_, results) = d.bash(
            &["git init -q . && git config core.fsmonitor 'touch /tmp/pwned' && echo made"],
            &[],
        );
        assert!(results[0].contains("created .git"), "{}", results[0]);
        assert!(results[0].contains("fsmonitor"), "{}", results[0]);
    }
}

/// The REPL's "run once outside the sandbox" question, as uid 1000: a refused read of a file
/// only root may read is the file's own permissions (no question, never called a write); a
/// read of a hidden key is a read the sandbox blocked, asked as "reading PATH", and run once
/// outside when allowed.
#[test]
fn the_run_once_outside_question_calls_a_read_a_read() {
    let d = door(User::Uid1000, true);
    std::fs::create_dir_all(d.home(".ssh")).unwrap();
    std::fs::write(d.home(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
    chown_1000(d.home.path());
    // Root's own folder, which uid 1000 cannot read with or without a sandbox.
    let locked = d.s.outside("locked");
    std::fs::create_dir_all(&locked).unwrap();
    std::fs::write(locked.join("x"), "ROOTS").unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let key = d.home(".ssh").canonicalize().unwrap().join("id_ed25519");
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![(
            "c1",
            "bash",
            json!({"command": format!("ls {0}; cat {0}/x", locked.display())}),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "bash",
            json!({"command": "cat ~/.ssh/id_ed25519"}),
        )]),
        Reply::text("all read"),
    ]);
    let mut cmd = d.command(&server.base_url(), &[]);
    cmd.env("TERM", "xterm");
    let mut s = rexpect::session::spawn_command(cmd, Some(20_000)).expect("spawn in a pty");
    let expect = |s: &mut rexpect::session::PtySession, text: &str| {
        s.exp_string(text)
            .unwrap_or_else(|e| panic!("expected {text:?} in the REPL output: {e}"))
    };
    expect(&mut s, "> ");
    s.send_line("read them").unwrap();
    let before = expect(
        &mut s,
        &format!("the sandbox blocked reading {}", key.display()),
    );
    assert!(
        !before.contains("the sandbox blocked writing"),
        "a read was asked about as a write: {before}"
    );
    expect(&mut s, "allow?");
    s.send_line("y").unwrap();
    expect(&mut s, "all read");
    expect(&mut s, "> ");
    s.send_line("/exit").unwrap();
    s.exp_eof().unwrap();
    let results = server.requests()[2].messages();
    let result = |id: &str| {
        results
            .iter()
            .find(|m| m["tool_call_id"] == id)
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let refused = result("c1");
    assert!(refused.contains("Permission denied"), "{refused}");
    assert!(!refused.contains("Blocked by the sandbox"), "{refused}");
    // Run once outside, as allowed: the user's own read goes through.
    assert!(result("c2").contains("SECRET-KEY"), "{}", result("c2"));
}
