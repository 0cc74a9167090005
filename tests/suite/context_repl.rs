//! The REPL's context and session commands through a pseudo-terminal: `/context` by part, the
//! footer's percentage, `/compact INSTRUCTIONS` (PreCompact `manual` with
//! `custom_instructions`, the summary request carrying them, the next request starting from the
//! summary), `/resume`'s picker, and a resumed REPL showing the last exchanges.

use crate::support::{mock_openai, project};

use super::context_compaction::{
    hook_events, is_summary_request, log_compaction_hooks, user_settings,
};
use crate::support::repl::{self, Repl};
use mock_openai::{MockServer, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

fn start(project: &Project, server: &MockServer, args: &[&str]) -> Repl {
    let mut all = vec!["--model", "local"];
    all.extend_from_slice(args);
    repl::start(project, server, &all, &[])
}

#[test]
fn context_by_part_the_footer_and_compact_with_instructions() {
    // The first answer is long enough for its summary to be shorter (a compaction that would
    // grow the conversation is refused).
    let first = format!("first answer {}", "with many words of detail ".repeat(40));
    let server = MockServer::start_blocking(vec![
        Reply::text(&first),
        Reply::text("second answer"),
        Reply::text("third answer"),
    ]);
    server.answer_summaries("SUMMARY");
    let project = Project::new();
    user_settings(&project, json!({ "contextWindow": 20000 }));
    log_compaction_hooks(&project);
    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.send_line("first question");
    p.raw("first answer");
    p.raw("% of 20.0k\r\n");
    p.raw("> ");
    p.send_line("second question");
    p.raw("second answer");
    p.raw("> ");
    p.send_line("/context");
    p.raw("of 20000 tokens");
    p.raw("settings contextWindow");
    for part in ["system prompt", "tools", "messages"] {
        p.raw(part);
    }
    p.raw("> ");
    p.send_line("/compact keep the parser notes");
    p.raw("conversation compacted (manual)");
    p.raw("> ");
    p.send_line("third question");
    p.raw("third answer");
    p.raw("> ");
    p.send_line("/exit");
    p.eof();

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    let asked = requests[2].messages()[1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(asked.contains("first question") && asked.contains("keep the parser notes"));
    assert!(
        !asked.contains("second question"),
        "the latest exchange is kept verbatim"
    );
    let sent = requests[3].messages();
    assert!(sent[1]["content"].as_str().unwrap().contains("SUMMARY #1"));
    assert_eq!(
        sent[2..],
        [
            json!({"role": "user", "content": "second question"}),
            json!({"role": "assistant", "content": "second answer"}),
            json!({"role": "user", "content": "third question"}),
        ]
    );
    let pre: Vec<_> = hook_events(&project)
        .into_iter()
        .filter(|e| e["hook_event_name"] == "PreCompact")
        .collect();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "keep the parser notes");
}

/// Records a session of `project` with one `-p` exchange.
fn record(project: &Project, server: &MockServer, prompt: &str) -> String {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", prompt, "--model", "local", "--output-format", "json"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.json()["session_id"].as_str().unwrap().to_string()
}

#[test]
fn resume_picks_a_session_and_a_resumed_repl_shows_the_last_exchanges() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the parser is in src/parse.rs"),
        Reply::text("tests added"),
        Reply::text("back in the old one"),
    ]);
    let project = Project::new();
    let old = record(&project, &server, "where is the parser?");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let new = record(&project, &server, "add tests");

    let mut p = start(&project, &server, &[]);
    p.raw("> ");
    p.send_line("/resume");
    p.raw("[1]");
    p.raw("add tests");
    p.raw("[2]");
    p.raw("where is the parser?");
    p.raw("resume which?");
    p.send_line("2");
    p.raw(&format!("resumed session {old}"));
    p.raw("where is the parser?");
    p.raw("the parser is in src/parse.rs");
    p.raw("> ");
    p.send_line("go on");
    p.raw("back in the old one");
    p.raw("> ");
    p.send_line("/exit");
    p.eof();
    let sent = server.requests().last().unwrap().messages();
    assert_eq!(
        sent[1..],
        [
            json!({"role": "user", "content": "where is the parser?"}),
            json!({"role": "assistant", "content": "the parser is in src/parse.rs"}),
            json!({"role": "user", "content": "go on"}),
        ]
    );

    // `--resume ID` shows where the session was before the first prompt.
    let mut p = start(&project, &server, &["--resume", &new]);
    p.raw(&format!("resumed session {new}"));
    p.raw("add tests");
    p.raw("tests added");
    p.raw("> ");
    p.send_line("/exit");
    p.eof();
}

#[test]
fn resume_without_an_id_opens_the_picker() {
    let server = MockServer::start_blocking(vec![
        Reply::text("the parser is in src/parse.rs"),
        Reply::text("continued"),
    ]);
    let project = Project::new();
    let old = record(&project, &server, "where is the parser?");
    let mut p = start(&project, &server, &["--resume"]);
    let picker = p.raw("resume which?");
    let picker = crate::support::repl::without_escapes(&picker);
    let row = picker
        .lines()
        .find(|l| l.contains("where is the parser?"))
        .unwrap_or_else(|| panic!("{picker}"));
    assert!(
        row.contains("[1]") && row.contains("msgs") && row.contains(" B "),
        "{row}"
    );
    p.send_line("1");
    p.raw(&format!("resumed session {old}"));
    p.raw("the parser is in src/parse.rs");
    p.raw("> ");
    p.send_line("go on");
    p.raw("continued");
    p.raw("> ");
    p.control('d');
    let end = p.eof();
    assert!(
        end.contains(&format!("resume with: ling --resume {old}")),
        "{end}"
    );
    // With -p there is nobody to pick: a usage error that says what to give.
    let mut cmd = project.command(&server.base_url());
    cmd.args(["-p", "x", "--resume"]);
    let out = run(cmd);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--resume needs a session ID"),
        "{}",
        out.stderr
    );
}
