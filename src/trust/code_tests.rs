use super::*;
use pretty_assertions::assert_eq;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Self { _dir: dir, root }
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn areas(&self) -> Areas {
        // Only the project: the temp dir holds the project itself in these tests.
        Areas {
            root: self.root.clone(),
            dirs: vec![self.root.clone()],
        }
    }

    fn hook(&self, command: &str) -> Vec<(String, Role)> {
        shown(&hook(command, &self.areas()))
    }

    fn server(&self, command: &str, args: &[&str]) -> Vec<(String, Role)> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        shown(&server(command, &args, &[], &self.root, &self.areas()))
    }
}

fn shown(runs: &Runs) -> Vec<(String, Role)> {
    runs.files
        .iter()
        .map(|f| (f.shown.clone(), f.role))
        .collect()
}

fn s(text: &str, role: Role) -> (String, Role) {
    (text.to_string(), role)
}

#[test]
fn scripts_given_by_path_or_to_an_interpreter_are_found() {
    let p = Project::new();
    p.write("examples/hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    p.write(".claude/hooks/check.py", "print(1)\n");
    assert_eq!(
        p.hook("examples/hooks/guard.sh"),
        [s("examples/hooks/guard.sh", Role::Program)]
    );
    assert_eq!(
        p.hook("python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.py --strict"),
        [s(".claude/hooks/check.py", Role::Script)]
    );
    assert_eq!(
        p.hook("cd src && FOO=1 bash -x ../examples/hooks/guard.sh | tee /dev/null"),
        [s("examples/hooks/guard.sh", Role::Script)]
    );
    assert_eq!(
        p.hook("timeout 5 env A=1 ./examples/hooks/guard.sh"),
        [s("examples/hooks/guard.sh", Role::Program)]
    );
    // Inline code is in the command itself; nothing else runs.
    assert_eq!(p.hook("python3 -c 'print(1)'"), []);
    assert_eq!(p.hook("jq -r .tool_name"), []);
}

#[test]
fn a_shell_script_is_followed_into_what_it_runs_and_sources() {
    let p = Project::new();
    p.write(
        "hooks/main.sh",
        "#!/bin/bash\n. ./hooks/lib.sh\nnode -r ./hooks/pre.js hooks/run.js\n",
    );
    p.write("hooks/lib.sh", "x=1\n");
    p.write("hooks/pre.js", "");
    p.write("hooks/run.js", "");
    assert_eq!(
        p.hook("sh hooks/main.sh"),
        [
            s("hooks/main.sh", Role::Script),
            s("hooks/lib.sh", Role::Script),
            s("hooks/pre.js", Role::Script),
            s("hooks/run.js", Role::Script),
        ]
    );
}

#[test]
fn servers_find_their_program_script_and_preloads() {
    let p = Project::new();
    p.write("target/release/srv", "\x7fELF....");
    assert_eq!(
        p.server("target/release/srv", &["--db", "x.sqlite"]),
        [s("target/release/srv", Role::Program)]
    );
    assert_eq!(
        p.server("node", &["--require=./evil.js", "server.js"]),
        [s("evil.js", Role::Script), s("server.js", Role::Script)]
    );
    let runs = server(
        "python3",
        &["-m".into(), "json.tool".into()],
        &[],
        &p.root,
        &p.areas(),
    );
    assert!(runs.files.is_empty() && !runs.python_script_outside);
    let runs = server(
        "python3",
        &["/usr/lib/x.py".into()],
        &[("NODE_OPTIONS".into(), "--require ./evil.js".into())],
        &p.root,
        &p.areas(),
    );
    assert!(runs.python_script_outside);
    assert_eq!(
        runs.env,
        [EnvVar {
            name: "NODE_OPTIONS".into(),
            value: "--require ./evil.js".into(),
            loads_code: true
        }]
    );
}

#[test]
fn package_runners_and_path_folders_in_the_project_are_watched_even_when_empty() {
    let p = Project::new();
    let files = p.server("npx", &["-y", "@acme/server@1.2.3", "--stdio"]);
    assert_eq!(
        files,
        [
            s("node_modules/@acme/server/package.json", Role::WouldRun),
            s("node_modules/.bin/server", Role::WouldRun),
        ]
    );
    let args: Vec<String> = vec![];
    let runs = server(
        "mytool",
        &args,
        &[("PATH".into(), "bin:/usr/bin:/bin".to_string())],
        &p.root,
        &p.areas(),
    );
    assert_eq!(
        shown(&runs),
        [s("bin/mytool", Role::WouldRun), s("bin", Role::Folder)]
    );
    assert!(runs.env[0].loads_code);
}

#[test]
fn what_cannot_be_known_is_said() {
    let p = Project::new();
    let runs = hook("$RUNNER check", &p.areas());
    assert!(
        runs.unknown.iter().any(|r| r.contains("only known when")),
        "{:?}",
        runs.unknown
    );
    let runs = hook("NODE_OPTIONS='--require ./x.js' node -e 0", &p.areas());
    assert_eq!(runs.env[0].name, "NODE_OPTIONS");
    assert!(runs.env[0].loads_code);
}

#[test]
fn file_states_tell_scripts_from_binaries() {
    let p = Project::new();
    p.write("a.sh", "echo hi\n");
    std::fs::write(p.root.join("b"), b"\x7fELF\x02\x01\x00rest").unwrap();
    match FileState::of(&p.root.join("a.sh")) {
        FileState::Script { text, sha256 } => {
            assert_eq!(text.as_deref(), Some("echo hi\n"));
            assert!(sha256.starts_with("sha256:"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        FileState::of(&p.root.join("b")),
        FileState::Binary { .. }
    ));
    assert_eq!(FileState::of(&p.root.join("c")), FileState::Absent);
    assert!(loads_code("LD_PRELOAD") && loads_code("GIT_SSH_COMMAND"));
    assert!(!loads_code("DEBUG") && !loads_code("LOG_LEVEL"));
}

#[test]
fn project_runners_and_package_runners_are_followed_into_the_script() {
    let p = Project::new();
    p.write("server.py", "");
    p.write("server.ts", "");
    let runs = |command: &str, args: &[&str]| -> Vec<String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        server(command, &args, &[], &p.root, &p.areas())
            .files
            .into_iter()
            .filter(|f| f.role != Role::WouldRun)
            .map(|f| f.shown)
            .collect()
    };
    assert_eq!(
        runs("uv", &["run", "--with", "mcp", "server.py"]),
        ["server.py"]
    );
    assert_eq!(
        runs("poetry", &["run", "python", "server.py"]),
        ["server.py"]
    );
    assert_eq!(runs("npx", &["-y", "tsx", "server.ts"]), ["server.ts"]);
    assert!(runs("uv", &["pip", "install", "x"]).is_empty());
}

#[test]
fn the_settings_env_names_files_and_folders_that_load_code() {
    let p = Project::new();
    p.write("x.so", "");
    std::fs::create_dir_all(p.root.join("bin")).unwrap();
    let env: Vec<(String, String)> = [
        ("LD_PRELOAD", "./x.so"),
        ("BASH_ENV", "./rc"),
        ("NODE_OPTIONS", "--require ./hook.js"),
        ("PATH", "./bin:.::/usr/bin:$PATH"),
        ("PYTHONPATH", "lib/py"),
        ("RUST_LOG", "debug"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let runs = environment(&env, &p.areas());
    assert_eq!(
        shown(&runs),
        [
            s("x.so", Role::Script),
            s("rc", Role::Script),
            s("hook.js", Role::Script),
            s("bin", Role::Folder),
            s("lib/py", Role::Folder),
        ]
    );
    let flagged: Vec<(&str, bool)> = runs
        .env
        .iter()
        .map(|v| (v.name.as_str(), v.loads_code))
        .collect();
    assert_eq!(
        flagged,
        [
            ("LD_PRELOAD", true),
            ("BASH_ENV", true),
            ("NODE_OPTIONS", true),
            ("PATH", true),
            ("PYTHONPATH", true),
            ("RUST_LOG", false)
        ]
    );
    assert_eq!(
        FileState::of(&p.root.join("bin")),
        FileState::Folder { entries: 0 }
    );
}
