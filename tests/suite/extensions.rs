//! Custom slash commands and skills through the real binary: a command's `$ARGUMENTS`, `$1`,
//! `@file` and `!` lines (the shell line through the permission path: denied in `-p` without a
//! rule), `allowed-tools` narrowing, a project command that tries to take a builtin's name, an
//! untrusted project's commands, skills and agents not loaded (and said once), a command's
//! arguments shell-quoted in its `!` lines, and a skill whose body reaches the model only when
//! it asks. Each with its negative.

use crate::support::{mock_openai, project};

use mock_openai::{MockServer, Recorded, Reply};
use project::{Project, run};
use serde_json::json;

fn user_messages(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

fn tool_results(request: &Recorded) -> Vec<String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

fn tool_description(request: &Recorded, name: &str) -> Option<String> {
    request.body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
        .and_then(|t| t["function"]["description"].as_str().map(str::to_string))
}

const REVIEW: &str = "---\ndescription: Review a file for a concern\nargument-hint: FILE CONCERN\n\
---\nReview $1 for $2.\nAll of it: $ARGUMENTS\nNotes: @notes.txt\n!printf 'SHELL%s' -OUT\n";

fn review_project() -> Project {
    let p = Project::new();
    p.write(".ling/commands/review.md", REVIEW);
    p.write("notes.txt", "NOTES-CONTENT\n");
    p.trust();
    p
}

#[test]
fn a_command_fills_its_arguments_attaches_files_and_inlines_an_allowed_shell_line() {
    let p = review_project();
    let server = MockServer::start_blocking(vec![Reply::text("reviewed")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args([
        "-p",
        "/review src/a.rs \"memory leaks\"",
        "--sandbox",
        "off",
        "--allowed-tools",
        "bash(printf *)",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "reviewed\n");
    let sent = user_messages(&server.requests()[0]).join("\n");
    assert!(sent.contains("Review src/a.rs for memory leaks."), "{sent}");
    assert!(
        sent.contains("All of it: src/a.rs \"memory leaks\""),
        "{sent}"
    );
    assert!(sent.contains("NOTES-CONTENT"), "{sent}");
    assert!(
        sent.contains("$ printf 'SHELL%s' -OUT\nSHELL-OUT"),
        "{sent}"
    );
    // The shell line was shown like any call.
    assert!(
        out.stderr.contains("bash(printf 'SHELL%s' -OUT)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_command_s_shell_line_goes_through_the_permission_check_denied_without_a_rule() {
    let p = review_project();
    let server = MockServer::start_blocking(vec![Reply::text("reviewed")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/review a b", "--sandbox", "off"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sent = user_messages(&server.requests()[0]).join("\n");
    assert!(!sent.contains("SHELL-OUT"), "the denied line ran: {sent}");
    assert!(sent.contains("permission denied"), "{sent}");
    assert!(
        out.stderr.contains("permission denied: bash"),
        "{}",
        out.stderr
    );
}

#[test]
fn allowed_tools_narrow_the_command_s_run_and_the_next_run_has_them_all() {
    let p = Project::new();
    p.write(
        ".ling/commands/look.md",
        "---\nallowed-tools: Read, Grep\n---\nLook around.\n",
    );
    p.trust();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("b", "bash", json!({"command": "ls"}))]),
        Reply::text("looked"),
    ]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/look", "--permission-mode", "bypass"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let requests = server.requests();
    assert_eq!(requests[0].tool_names(), ["read_file", "grep"]);
    let results = tool_results(&requests[1]);
    assert!(
        results[0].starts_with("Error: not allowed: bash is not one of /look's allowed-tools"),
        "{results:?}"
    );
    // A plain prompt afterwards has every tool again.
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "hello"]);
    assert_eq!(run(cmd).code, Some(0));
    assert!(
        server.requests()[0]
            .tool_names()
            .contains(&"bash".to_string())
    );
}

#[test]
fn a_project_command_never_takes_a_builtin_s_name() {
    let p = Project::new();
    p.write(".ling/commands/help.md", "HIJACKED-HELP\n");
    p.write(".ling/commands/fine.md", "FINE-BODY\n");
    p.trust();
    let server = MockServer::start_blocking(vec![Reply::text("a"), Reply::text("b")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/help"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("command /help of ")
            && out.stderr.contains("is one of Ling's own commands"),
        "{}",
        out.stderr
    );
    assert_eq!(user_messages(&server.requests()[0]), ["/help"]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/fine"]);
    assert_eq!(run(cmd).code, Some(0));
    assert_eq!(user_messages(&server.requests()[1]), ["FINE-BODY\n"]);
}

#[test]
fn an_untrusted_project_s_commands_skills_and_agents_are_not_loaded_and_it_says_so_once() {
    let p = Project::new();
    p.write(".claude/commands/deploy.md", "DEPLOY-BODY\n!git push\n");
    p.write(
        ".claude/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF-BODY\n",
    );
    p.write(
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews diffs carefully\n---\nYou review.\n",
    );
    let server = MockServer::start_blocking(vec![Reply::text("a")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/deploy", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.json()["project_trust"], "untrusted");
    let first = &server.requests()[0];
    assert_eq!(user_messages(first), ["/deploy"]);
    assert!(!first.tool_names().contains(&"skill".to_string()));
    let task = tool_description(first, "task").unwrap();
    assert!(!task.contains("reviewer"), "{task}");
    assert_eq!(
        out.stderr.matches("commands, skills and agents").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("run `ling trust`"), "{}", out.stderr);
    // `ling trust` lists what they would do before trusting them.
    let mut cmd = p.command("http://127.0.0.1:9");
    cmd.arg("trust");
    let listed = run(cmd);
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    assert!(
        listed.stdout.contains(
            "command /deploy: DEPLOY-BODY; when you type it, runs `git push` (through the bash \
             tool's checks) (.claude/commands/deploy.md)"
        ),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains("skill pdf: Fill PDF forms"),
        "{}",
        listed.stdout
    );
    assert!(
        listed
            .stdout
            .contains("agent reviewer: Reviews diffs carefully")
    );
    // Trusted, all three load.
    let server = MockServer::start_blocking(vec![Reply::text("a")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/deploy", "--sandbox", "off"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let first = &server.requests()[0];
    assert!(user_messages(first)[0].starts_with("DEPLOY-BODY"));
    assert!(first.tool_names().contains(&"skill".to_string()));
    assert!(
        tool_description(first, "task")
            .unwrap()
            .contains("reviewer: Reviews diffs")
    );
    // Changing a command lapses the trust, like a changed hook.
    p.write(".claude/commands/deploy.md", "CHANGED\n");
    let server = MockServer::start_blocking(vec![Reply::text("a")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/deploy", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.json()["project_trust"], "untrusted");
    assert_eq!(user_messages(&server.requests()[0]), ["/deploy"]);
}

#[test]
fn a_user_command_needs_no_trust() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.path().join("commands/git")).unwrap();
    std::fs::write(
        p.home.path().join("commands/git/summary.md"),
        "---\ndescription: Summarise\n---\nSummarise $ARGUMENTS\n",
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("a")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "/git:summary the log"]);
    assert_eq!(run(cmd).code, Some(0));
    assert_eq!(
        user_messages(&server.requests()[0]),
        ["Summarise the log\n"]
    );
}

#[test]
fn arguments_in_a_commands_shell_lines_are_data_and_in_its_text_as_typed() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.path().join("commands")).unwrap();
    std::fs::write(
        p.home.path().join("commands/say.md"),
        "Said: $ARGUMENTS\n!printf 'ONE[%s]' $1\n!printf 'ALL[%s]' $ARGUMENTS\n",
    )
    .unwrap();
    let server = MockServer::start_blocking(vec![Reply::text("ok")]);
    let mut cmd = p.command(&server.base_url());
    cmd.args([
        "-p",
        "/say \"$(touch one)\" ; touch two",
        "--permission-mode",
        "bypass",
        "--sandbox",
        "off",
    ]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!p.file("one").exists(), "$1 ran as shell syntax");
    assert!(!p.file("two").exists(), "$ARGUMENTS ran as shell syntax");
    let sent = user_messages(&server.requests()[0]).join("\n");
    // The lines ran, each argument one word of data; the text has the arguments as typed.
    assert!(
        sent.contains("Said: \"$(touch one)\" ; touch two\n"),
        "{sent}"
    );
    assert!(sent.contains("ONE[$(touch one)]"), "{sent}");
    assert!(
        sent.contains("ALL[$(touch one)]ALL[;]ALL[touch]ALL[two]"),
        "{sent}"
    );
}

#[test]
fn a_skill_s_body_reaches_the_model_only_when_it_asks_for_it() {
    let p = Project::new();
    p.write(
        ".ling/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF-BODY-MARKER: run scripts/fill.py\n",
    );
    p.write(".ling/skills/pdf/scripts/fill.py", "print('FILL-SCRIPT')\n");
    p.write(
        ".ling/skills/xlsx/SKILL.md",
        "---\nname: xlsx\ndescription: Edit spreadsheets\n---\nXLSX-BODY-MARKER\n",
    );
    p.trust();
    let server = MockServer::start_blocking(vec![
        Reply::tool_calls(vec![("s", "skill", json!({"name": "pdf"}))]),
        Reply::tool_calls(vec![(
            "f",
            "skill",
            json!({"name": "pdf", "file": "scripts/fill.py"}),
        )]),
        Reply::text("filled"),
    ]);
    let mut cmd = p.command(&server.base_url());
    cmd.args(["-p", "fill the form"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let requests = server.requests();
    let first = serde_json::to_string(&requests[0].body).unwrap();
    assert!(!first.contains("PDF-BODY-MARKER") && !first.contains("XLSX-BODY-MARKER"));
    let listing = tool_description(&requests[0], "skill").unwrap();
    assert!(
        listing.contains("- pdf: Fill PDF forms") && listing.contains("- xlsx: Edit spreadsheets"),
        "{listing}"
    );
    let loaded = tool_results(&requests[1]);
    assert!(loaded[0].contains("PDF-BODY-MARKER"), "{loaded:?}");
    assert!(loaded[0].contains("scripts/fill.py"), "{loaded:?}");
    assert!(!loaded[0].contains("XLSX-BODY-MARKER"));
    let file = tool_results(&requests[2]);
    assert_eq!(file[1], "print('FILL-SCRIPT')\n");
}
