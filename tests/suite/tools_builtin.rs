//! The builtin tools through the public API: `ToolRegistry::builtins()` and `tool.call(json, &ctx)`
//! against temp-dir projects, covering each tool's results and error paths.

use crate::support::process;

use std::path::Path;
use std::time::{Duration, SystemTime};

use ling::tools::{ToolContext, ToolError, ToolKind, ToolOutput, ToolRegistry};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

struct Project {
    dir: tempfile::TempDir,
    ctx: ToolContext,
    tools: ToolRegistry,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path().to_path_buf());
        Self {
            dir,
            ctx,
            tools: ToolRegistry::builtins(),
        }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    async fn call(&self, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
        let tool = self
            .tools
            .get(tool)
            .unwrap_or_else(|| panic!("no tool {tool}"));
        tool.call(input, &self.ctx).await
    }

    async fn ok(&self, tool: &str, input: Value) -> String {
        self.call(tool, input.clone())
            .await
            .unwrap_or_else(|e| panic!("{tool} {input} failed: {e}"))
            .content
    }

    async fn err(&self, tool: &str, input: Value) -> String {
        match self.call(tool, input.clone()).await {
            Ok(out) => panic!("{tool} {input} succeeded: {}", out.content),
            Err(e) => e.to_string(),
        }
    }
}

fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "expected {needle:?} in:\n{haystack}"
    );
}

#[test]
fn the_six_builtins_are_registered_with_kinds_and_schemas() {
    let tools = ToolRegistry::builtins();
    assert_eq!(
        tools.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "bash",
            "grep",
            "glob",
            "bash_output",
            "kill_shell"
        ]
    );
    let kinds: Vec<ToolKind> = tools.iter().map(|t| t.kind()).collect();
    use ToolKind::*;
    // The background commands' handles only touch what the session's bash started.
    assert_eq!(kinds, [Read, Edit, Edit, Execute, Read, Read, Read, Read]);
    for tool in tools.iter() {
        let schema = tool.input_schema();
        assert_eq!(schema["type"], "object", "{}", tool.name());
        for required in schema["required"].as_array().unwrap() {
            let property = &schema["properties"][required.as_str().unwrap()];
            assert!(
                property["description"].is_string(),
                "{} {required}",
                tool.name()
            );
        }
        assert!(
            tool.description().len() > 100,
            "{} needs a real description",
            tool.name()
        );
    }
}

#[tokio::test]
async fn read_file_numbers_lines_and_reports_its_errors() {
    let p = Project::new();
    p.write("src/a.txt", "alpha\nbeta\n");
    assert_eq!(
        p.ok("read_file", json!({"path": "src/a.txt"})).await,
        "     1\talpha\n     2\tbeta\n"
    );
    assert_contains(
        &p.err("read_file", json!({"path": "src/a.txt", "offset": 5}))
            .await,
        "offset 5 is past the end of src/a.txt, which has 2 lines",
    );
    assert_contains(
        &p.err("read_file", json!({"path": "nope.txt"})).await,
        "cannot read nope.txt",
    );
    p.write("img.bin", b"\x89PNG\r\n\x1a\n\0\0\0");
    assert_contains(
        &p.err("read_file", json!({"path": "img.bin"})).await,
        "img.bin is a binary file",
    );
    p.write("empty.txt", "");
    assert_eq!(
        p.ok("read_file", json!({"path": "empty.txt"})).await,
        "empty.txt is empty (0 bytes)."
    );
    assert_contains(
        &p.err("read_file", json!({})).await,
        "invalid arguments for read_file: missing field `path`",
    );
    assert_contains(
        &p.err("read_file", json!({"path": "src/a.txt", "offset": "two"}))
            .await,
        "invalid arguments for read_file",
    );
}

#[tokio::test]
async fn read_file_lists_a_directory_sorted_with_folders_marked() {
    let p = Project::new();
    p.write("d/b.txt", "");
    p.write("d/a.txt", "");
    p.write("d/sub/x", "");
    assert_eq!(
        p.ok("read_file", json!({"path": "d"})).await,
        "d/ is a directory with 3 entries:\na.txt\nb.txt\nsub/\n"
    );
}

#[tokio::test]
async fn file_tools_refuse_paths_outside_the_root() {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(outside.path(), p.path("escape")).unwrap();
    let outside_file = outside.path().join("secret").display().to_string();
    for (tool, args) in [
        ("read_file", json!({"path": "../x"})),
        ("read_file", json!({"path": outside_file})),
        ("read_file", json!({"path": "escape/secret"})),
        (
            "write_file",
            json!({"path": "escape/new.txt", "content": "x"}),
        ),
        (
            "edit_file",
            json!({"path": "sub/../../x", "old_string": "a", "new_string": "b"}),
        ),
        ("grep", json!({"pattern": "s", "path": "escape"})),
        ("glob", json!({"pattern": "*", "path": ".."})),
    ] {
        let err = p.err(tool, args).await;
        assert_contains(&err, "is outside the project root");
    }
    assert!(!outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn write_file_creates_and_refuses_blind_overwrites() {
    let p = Project::new();
    let out = p
        .call(
            "write_file",
            json!({"path": "new/dir/f.txt", "content": "one\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "Created new/dir/f.txt (4 bytes, 1 lines).");
    assert_eq!(
        std::fs::read_to_string(p.path("new/dir/f.txt")).unwrap(),
        "one\n"
    );
    // Written by this session, so it counts as read.
    p.ok(
        "write_file",
        json!({"path": "new/dir/f.txt", "content": "two\n"}),
    )
    .await;

    p.write("old.txt", "mine\n");
    let err = p
        .err("write_file", json!({"path": "old.txt", "content": "x"}))
        .await;
    assert_contains(
        &err,
        "old.txt already exists and has not been read in this session; call read_file on it first",
    );
    assert_eq!(
        std::fs::read_to_string(p.path("old.txt")).unwrap(),
        "mine\n"
    );
    p.ok("read_file", json!({"path": "old.txt"})).await;
    let out = p
        .call(
            "write_file",
            json!({"path": "old.txt", "content": "yours\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "Wrote 6 bytes to old.txt (1 lines; +1 -1).");
    let display = out.display.unwrap();
    assert_contains(&display, "-mine\n+yours");
    assert_contains(
        &p.err("write_file", json!({"path": "new"})).await,
        "missing field `content`",
    );
    assert_contains(
        &p.err("write_file", json!({"path": "new", "content": "x"}))
            .await,
        "new is a directory",
    );
}

#[tokio::test]
async fn edit_file_replaces_exactly_and_explains_failures() {
    let p = Project::new();
    p.write("m.rs", "fn a() {}\nfn b() {}\nfn b() {}\n");
    let edit = |old: &str, new: &str| json!({"path": "m.rs", "old_string": old, "new_string": new});
    assert_contains(
        &p.err("edit_file", edit("fn a", "fn z")).await,
        "call read_file on it first",
    );
    p.ok("read_file", json!({"path": "m.rs"})).await;

    let out = p.call("edit_file", edit("fn a", "fn z")).await.unwrap();
    assert_eq!(
        out.content,
        "Edited m.rs: 1 replacement.\n     1\tfn z() {}\n     2\tfn b() {}\n     3\tfn b() {}\n"
    );
    let display = out.display.unwrap();
    assert_contains(&display, "\n-fn a() {}\n+fn z() {}");

    assert_contains(
        &p.err("edit_file", edit("fn b", "fn y")).await,
        "occurs 2 times in m.rs (at lines 2, 3)",
    );
    assert_contains(
        &p.err("edit_file", edit("fn q", "fn y")).await,
        "old_string was not found in m.rs",
    );
    assert_contains(
        &p.err("edit_file", edit("  fn z() {}", "x")).await,
        "differs only in whitespace starts at line 1",
    );
    assert_contains(&p.err("edit_file", edit("fn b", "fn b")).await, "identical");
    assert_contains(
        &p.err("edit_file", json!({"path": "m.rs", "old_string": "x"}))
            .await,
        "missing field `new_string`",
    );
    assert_contains(
        &p.err("edit_file", edit("", "x")).await,
        "old_string is empty",
    );
    assert_contains(
        &p.err(
            "edit_file",
            json!({"path": "gone.rs", "old_string": "a", "new_string": "b"}),
        )
        .await,
        "gone.rs does not exist; use write_file",
    );

    let all =
        json!({"path": "m.rs", "old_string": "fn b", "new_string": "fn y", "replace_all": true});
    assert_contains(
        &p.ok("edit_file", all).await,
        "Edited m.rs: 2 replacements.",
    );
    assert_eq!(
        std::fs::read_to_string(p.path("m.rs")).unwrap(),
        "fn z() {}\nfn y() {}\nfn y() {}\n"
    );
}

#[tokio::test]
async fn bash_reports_exit_codes_and_keeps_stream_order() {
    let p = Project::new();
    assert_eq!(
        p.ok("bash", json!({"command": "pwd; exit 7"}))
            .await
            .lines()
            .last(),
        Some("Exit code: 7")
    );
    let pwd = p.ok("bash", json!({"command": "pwd"})).await;
    assert_eq!(
        pwd,
        format!(
            "{}\nExit code: 0",
            std::fs::canonicalize(p.dir.path()).unwrap().display()
        )
    );
    let out = p
        .ok(
            "bash",
            json!({"command": "echo out1; echo err1 >&2; echo out2; echo err2 >&2"}),
        )
        .await;
    assert_eq!(out, "out1\nerr1\nout2\nerr2\nExit code: 0");
    assert_eq!(
        p.ok("bash", json!({"command": "cat"})).await,
        "(no output)\nExit code: 0"
    );
    // A misspelt argument is named, with the ones the tool takes.
    assert_contains(
        &p.err("bash", json!({"cmd": "ls"})).await,
        "unknown field `cmd`, expected one of `command`, `timeout_ms`, `description`",
    );
    assert_contains(
        &p.err("bash", json!({"timeout_ms": 5})).await,
        "missing field `command`",
    );
}

#[tokio::test]
async fn bash_output_is_capped_keeping_head_and_tail() {
    let p = Project::new();
    let out = p.ok("bash", json!({"command": "seq 1 200000"})).await;
    assert!(out.starts_with("1\n2\n3\n"), "{}", &out[..50]);
    assert!(
        out.ends_with("199999\n200000\nExit code: 0"),
        "{}",
        &out[out.len() - 50..]
    );
    assert_contains(&out, "of output cut] ...");
    assert!(out.len() < 31_000, "{}", out.len());
}

fn pid_alive(pid: &str) -> bool {
    process::alive(pid.parse().unwrap_or_else(|_| panic!("not a pid: {pid:?}")))
}

async fn wait_for_pid(pidfile: &Path) -> String {
    for _ in 0..200 {
        if let Ok(pid) = std::fs::read_to_string(pidfile)
            && !pid.trim().is_empty()
        {
            return pid.trim().to_string();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command never wrote {}", pidfile.display());
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_process_group() {
    let p = Project::new();
    let started = std::time::Instant::now();
    let err = p
        .err(
            "bash",
            json!({"command": "echo before; sleep 300 & echo $! > pid; wait", "timeout_ms": 700}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_contains(&err, "command timed out after 700 ms");
    assert_contains(&err, "set timeout_ms (up to 600000)");
    assert_contains(&err, "Output before the timeout:\nbefore");
    let pid = wait_for_pid(&p.path("pid")).await;
    assert!(
        !pid_alive(&pid),
        "background sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn bash_cancel_interrupts_and_kills_a_background_grandchild() {
    let p = Project::new();
    let tool = p.tools.get("bash").unwrap().clone();
    let ctx = p.ctx.clone();
    let call = tokio::spawn(async move {
        tool.call(json!({"command": "sleep 300 & echo $! > pid; wait"}), &ctx)
            .await
    });
    let pid = wait_for_pid(&p.path("pid")).await;
    assert!(pid_alive(&pid));
    p.ctx.cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, Err(ToolError::Interrupted));
    assert!(
        !pid_alive(&pid),
        "background sleep {pid} survived the cancel"
    );
}

fn grep_project() -> Project {
    let p = Project::new();
    p.write(".gitignore", "ignored/\n*.log\n");
    p.write("src/b.rs", "fn main() {\n    let needle = 1;\n}\n");
    p.write(
        "src/a.rs",
        "// Needle here\nfn a() {}\nlet x = 2;\nneedle again\n",
    );
    p.write("ignored/c.rs", "needle\n");
    p.write("debug.log", "needle\n");
    p.write(".hidden/d.rs", "needle\n");
    p.write("data.bin", b"needle\0\0binary");
    p
}

#[tokio::test]
async fn grep_respects_gitignore_and_formats_like_rg() {
    let p = grep_project();
    assert_eq!(
        p.ok("grep", json!({"pattern": "needle"})).await,
        "src/a.rs:4:needle again\nsrc/b.rs:2:    let needle = 1;"
    );
    assert_eq!(
        p.ok(
            "grep",
            json!({"pattern": "needle", "case_insensitive": true, "output": "files"})
        )
        .await,
        "src/a.rs\nsrc/b.rs"
    );
    assert_eq!(
        p.ok("grep", json!({"pattern": "(?i)needle", "output": "count"}))
            .await,
        "src/a.rs:2\nsrc/b.rs:1\n(3 matching lines in 2 files)"
    );
    assert_eq!(
        p.ok(
            "grep",
            json!({"pattern": "Needle|let x", "context": 1, "path": "src", "glob": "a.*"})
        )
        .await,
        "src/a.rs:1:// Needle here\nsrc/a.rs-2-fn a() {}\nsrc/a.rs:3:let x = 2;\nsrc/a.rs-4-needle again"
    );
    assert_eq!(
        p.ok(
            "grep",
            json!({"pattern": "^fn|^need", "context": 0, "glob": "*.rs"})
        )
        .await,
        "src/a.rs:2:fn a() {}\nsrc/a.rs:4:needle again\nsrc/b.rs:1:fn main() {"
    );
    assert_eq!(
        p.ok("grep", json!({"pattern": "zzz"})).await,
        "No matches for \"zzz\" in the project."
    );
}

#[tokio::test]
async fn grep_separates_context_groups() {
    let p = Project::new();
    p.write("f.txt", "hit\n1\n2\n3\n4\nhit\n");
    p.write("g.txt", "x\nhit\n");
    assert_eq!(
        p.ok("grep", json!({"pattern": "hit", "context": 1})).await,
        "f.txt:1:hit\nf.txt-2-1\n--\nf.txt-5-4\nf.txt:6:hit\n--\ng.txt-1-x\ng.txt:2:hit"
    );
}

#[tokio::test]
async fn grep_errors_name_the_problem() {
    let p = grep_project();
    let err = p.err("grep", json!({"pattern": "fn ("})).await;
    assert_contains(&err, "invalid regex \"fn (\"");
    assert_contains(&err, "unclosed group");
    assert_contains(
        &p.err("grep", json!({"pattern": "x", "path": "nowhere"}))
            .await,
        "path nowhere does not exist",
    );
    assert_contains(
        &p.err("grep", json!({"pattern": "x", "output": "lines"}))
            .await,
        "unknown variant `lines`",
    );
}

#[tokio::test]
async fn grep_caps_results_with_a_note() {
    let p = Project::new();
    p.write("many.txt", "match\n".repeat(600));
    let out = p.ok("grep", json!({"pattern": "match"})).await;
    assert_eq!(out.lines().count(), 501);
    assert_contains(
        &out,
        "(showing 500 of 600 lines; 600 matching lines in 1 files",
    );
}

#[tokio::test]
async fn glob_lists_matches_newest_first() {
    let p = Project::new();
    p.write(".gitignore", "target/\n");
    let now = SystemTime::now();
    for (i, name) in [
        "src/old.rs",
        "src/mid.rs",
        "src/deep/new.rs",
        "Cargo.toml",
        "target/x.rs",
    ]
    .iter()
    .enumerate()
    {
        p.write(name, "");
        let file = std::fs::File::options()
            .write(true)
            .open(p.path(name))
            .unwrap();
        file.set_modified(now - Duration::from_secs(1000 - i as u64 * 100))
            .unwrap();
    }
    assert_eq!(
        p.ok("glob", json!({"pattern": "**/*.rs"})).await,
        "src/deep/new.rs\nsrc/mid.rs\nsrc/old.rs"
    );
    assert_eq!(
        p.ok("glob", json!({"pattern": "*.rs", "path": "src"}))
            .await,
        "src/mid.rs\nsrc/old.rs"
    );
    assert_eq!(
        p.ok("glob", json!({"pattern": "*.toml"})).await,
        "Cargo.toml"
    );
    assert_contains(
        &p.ok("glob", json!({"pattern": "*.rs"})).await,
        "No files match \"*.rs\" (a pattern without `/`",
    );
    assert_contains(
        &p.err("glob", json!({"pattern": "a[b"})).await,
        "invalid glob \"a[b\"",
    );
    assert_contains(
        &p.err("glob", json!({"pattern": "*", "path": "Cargo.toml"}))
            .await,
        "is not a folder",
    );
}
