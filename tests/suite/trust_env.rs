//! The settings' `env` of a project (here Claude Code's `.claude/settings.json`, applied to
//! every child once trusted), through the real binary as root and as uid 1000: the trust
//! listing shows a loader's variable as code that runs, with the file it names; the trampoline,
//! which runs outside the sandbox, never loads an `LD_PRELOAD` library (a real shared object
//! built here with `cc`, whose constructor writes the name of the program that loaded it into
//! a file outside the sandbox); a sandboxed command cannot rewrite what the variables name; and
//! a program planted in a project `PATH` folder is not what Ling runs for a hook or a server.
//! Each with its negative: the library is loaded by a command run outside the sandbox, other
//! files stay writable, the planted program runs when the folder is used the ordinary way, the
//! server starts from a folder outside the project.

use crate::suite::sandbox_doors::{Door, OFF, User, chown_1000};
use crate::support::{mcp, project};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

const USERS: [User; 2] = [User::Root, User::Uid1000];

/// Builds `dir/x.so`, whose constructor appends the file name of the program loading it to
/// `marker`.
fn marker_library(dir: &Path, marker: &Path) -> PathBuf {
    let source = dir.join("x.c");
    std::fs::write(
        &source,
        r#"#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return;
    exe[n] = 0;
    const char *name = strrchr(exe, '/');
    int fd = open(MARKER, O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd < 0) return;
    dprintf(fd, "%s\n", name ? name + 1 : exe);
    close(fd);
}
"#,
    )
    .unwrap();
    let lib = dir.join("x.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(format!("-DMARKER=\"{}\"", marker.display()))
        .arg(&source)
        .status()
        .expect("cc is needed for this test");
    assert!(status.success());
    std::fs::remove_file(source).unwrap();
    lib
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Files written since the door was made belong to uid 1000 too.
fn hand_over(d: &Door) {
    if d.user == User::Uid1000 {
        for dir in [
            d.s.project.path(),
            d.s.project.home.path(),
            d.s.outside.path(),
        ] {
            chown_1000(dir);
        }
    }
}

/// `ling trust` as the door's user: what it printed.
fn trust(d: &Door) -> String {
    hand_over(d);
    let out = project::run(d.command("http://127.0.0.1:9", &["trust"]));
    assert_eq!(out.code, Some(0), "{:?} {out:?}", d.user);
    out.stdout
}

fn claude_env(d: &Door, env: serde_json::Value) {
    d.s.project
        .write(".claude/settings.json", &json!({ "env": env }).to_string());
}

fn executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn an_ld_preload_of_the_project_is_listed_and_never_loaded_into_the_trampoline() {
    for user in USERS {
        let d = Door::new(user);
        let marker = d.s.outside("loaded");
        marker_library(d.s.project.path(), &marker);
        // The negative of the listing: settings without `env` bring nothing that runs code.
        d.s.project.write(".claude/settings.json", "{}");
        let shown = trust(&d);
        assert!(shown.contains("nothing that runs code"), "{shown}");
        claude_env(&d, json!({"LD_PRELOAD": "./x.so"}));
        // A server of the user's, started outside the sandbox through the trampoline.
        let server = d.s.outside("srv");
        std::fs::copy(mcp::test_server(), &server).unwrap();
        let servers = json!({"mcpServers": {"t": {"command": server}}});
        std::fs::write(
            d.s.project.home.path().join("mcp.json"),
            servers.to_string(),
        )
        .unwrap();
        // A hook of the user's, run in the sandbox through the trampoline.
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "bash",
            "hooks": [{"type": "command", "command": "echo hook >> hook-ran"}]}]}});
        std::fs::write(
            d.s.project.home.path().join("hooks.json"),
            hooks.to_string(),
        )
        .unwrap();
        d.settings(json!({"sandbox": {"hooks": true}}));
        let shown = trust(&d);
        assert!(!shown.contains("nothing that runs code"), "{shown}");
        assert!(
            shown.contains("env: set for every command, hook and MCP server Ling starts"),
            "{shown}"
        );
        assert!(
            shown.contains("env LD_PRELOAD=./x.so  ⚠ loads code or runs programs"),
            "{shown}"
        );
        assert!(shown.contains("runs x.so (binary"), "{shown}");

        let (_, results) = d.bash(&["echo in-sandbox"], &[]);
        assert!(results[0].contains("in-sandbox"), "{results:?}");
        assert_eq!(d.s.project.read("hook-ran"), "hook\n");
        let loaded = read(&marker);
        // The server got the variable (handed over by its trampoline) and loaded the library;
        // nothing of Ling's did, and nothing in the sandbox (the command, the hook) could write
        // the marker.
        assert!(loaded.lines().any(|l| l == "srv"), "{user:?}: {loaded}");
        assert!(
            !loaded.lines().any(|l| l.starts_with("ling")),
            "{user:?}: {loaded}"
        );
        assert_eq!(loaded.lines().collect::<Vec<_>>(), ["srv"], "{user:?}");
        // The negative: run outside the sandbox, the command's own shell loads it, still not
        // the trampoline that starts it.
        let (_, results) = d.bash(&["echo outside"], OFF);
        assert!(results[0].contains("outside"), "{results:?}");
        let loaded = read(&marker);
        assert!(loaded.lines().any(|l| l == "bash"), "{user:?}: {loaded}");
        assert!(
            !loaded.lines().any(|l| l.starts_with("ling")),
            "{user:?}: {loaded}"
        );
    }
}

#[test]
fn a_sandboxed_command_cannot_rewrite_what_the_projects_env_loads() {
    for user in USERS {
        let d = Door::new(user);
        let p = &d.s.project;
        let lib = marker_library(p.path(), &d.s.outside("loaded"));
        p.write("rc", "true\n");
        p.write("hook.js", "\n");
        executable(&p.file("bin/tool"), "#!/bin/sh\necho tool\n");
        claude_env(
            &d,
            json!({
                "LD_PRELOAD": "./x.so",
                "BASH_ENV": "./rc",
                "NODE_OPTIONS": "--require ./hook.js",
                "PATH": "./bin:/usr/local/bin:/usr/bin:/bin",
            }),
        );
        let shown = trust(&d);
        assert!(shown.contains("runs rc (script, 1 line)"), "{shown}");
        assert!(shown.contains("uses bin (a folder of 1 entry;"), "{shown}");
        let lib_bytes = std::fs::read(&lib).unwrap();
        let (_, results) = d.bash(
            &[
                "cp /bin/true x.so",
                "rm -f x.so",
                "echo evil > rc",
                "echo evil > hook.js",
                "printf '#!/bin/sh\\necho planted\\n' > bin/bash",
                "rm bin/tool",
                "mv bin bin.old",
                "echo ok > other.txt && cat other.txt && tool",
            ],
            &[],
        );
        for result in &results[..7] {
            assert!(!result.contains("Exit code: 0"), "{user:?}: {result}");
        }
        assert_eq!(std::fs::read(&lib).unwrap(), lib_bytes);
        assert_eq!(p.read("rc"), "true\n");
        assert_eq!(p.read("hook.js"), "\n");
        assert!(!p.file("bin/bash").exists() && p.file("bin/tool").exists());
        // Other files stay writable, and the sandboxed command uses its PATH.
        assert!(results[7].contains("ok\ntool"), "{user:?}: {}", results[7]);
        // The negative: outside the sandbox the script can be changed, and trust lapses.
        d.bash(&["echo changed >> rc"], OFF);
        assert_eq!(p.read("rc"), "true\nchanged\n");
        let (out, _) = d.bash(&["true"], &[]);
        assert!(
            out.stderr.contains("changed since you trusted it"),
            "{user:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_program_planted_in_a_projects_path_folder_is_not_what_a_hook_runs() {
    for user in USERS {
        let d = Door::new(user);
        let p = &d.s.project;
        let log = d.s.outside("hook.log");
        p.write("bin/README", "tools\n");
        claude_env(&d, json!({"PATH": "./bin:/usr/local/bin:/usr/bin:/bin"}));
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [
            {"type": "command", "command": format!("bash -c 'echo hook >> {}'", log.display())}
        ]}]}});
        p.write(".ling/hooks.json", &hooks.to_string());
        trust(&d);
        // Planted outside the sandbox (the folder is read-only inside): a shell named like the
        // one Ling starts hooks with, and one named like the hook's program.
        let planted = format!(
            "#!/bin/sh\necho planted >> {}\nexec /bin/bash \"$@\"\n",
            log.display()
        );
        executable(&p.file("bin/bash"), &planted);
        executable(&p.file("bin/sh"), &planted);
        // The negative: the folder used the ordinary way runs the planted programs.
        let status = Command::new("/bin/sh")
            .args(["-c", "sh -c 'bash -c true'"])
            .env("PATH", "./bin:/usr/bin:/bin")
            .current_dir(p.path())
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(read(&log), "planted\nplanted\n");
        std::fs::remove_file(&log).unwrap();
        hand_over(&d);
        let (out, _) = d.bash(&["echo x"], &[]);
        assert_eq!(read(&log), "hook\n", "{user:?}: {out:?}");
    }
}

#[test]
fn a_server_found_only_in_a_projects_path_folder_does_not_start() {
    for user in USERS {
        let d = Door::new(user);
        let p = &d.s.project;
        std::fs::create_dir_all(p.file("bin")).unwrap();
        std::fs::copy(mcp::test_server(), p.file("bin/my-server")).unwrap();
        let servers = json!({"mcpServers": {"mine": {"command": "my-server"}}});
        std::fs::write(
            d.s.project.home.path().join("mcp.json"),
            servers.to_string(),
        )
        .unwrap();
        claude_env(&d, json!({"PATH": "./bin:/usr/bin:/bin"}));
        trust(&d);
        let list = |d: &Door| project::run(d.command("http://127.0.0.1:9", &["mcp", "list"]));
        let out = list(&d);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("`my-server` is found only in ./bin, a PATH folder where a sandboxed"),
            "{user:?}: {said}"
        );
        assert!(!said.contains("connected"), "{said}");
        // The negative: the same program in a folder outside the project starts.
        let tools = d.s.outside("tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::copy(mcp::test_server(), tools.join("my-server")).unwrap();
        claude_env(
            &d,
            json!({"PATH": format!("./bin:{}:/usr/bin:/bin", tools.display())}),
        );
        trust(&d);
        let out = list(&d);
        assert!(out.stdout.contains("connected"), "{user:?}: {out:?}");
    }
}
