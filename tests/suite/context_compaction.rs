//! Long sessions through the real binary: with a small `contextWindow` the conversation is
//! compacted by itself (PreCompact `auto`, a summary request without tools, SessionStart
//! `compact`), and what the model is sent afterwards is asserted whole: the summary, then the
//! recent messages verbatim, no orphan tool message; the transcript records the compaction and
//! `--continue` goes on from it. Old large tool outputs are elided so that a 40-turn session with
//! 20k-character outputs finishes under a small window.

use crate::support::{hooks_e2e, mock_openai, project};

use mock_openai::{MockServer, Overflow, Recorded, Reply};
use pretty_assertions::assert_eq;
use project::{Output, Project, run};
use serde_json::{Value, json};

/// `~/.ling/settings.json` (applies without trusting the project).
pub fn user_settings(project: &Project, settings: Value) {
    std::fs::write(
        project.home.path().join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
}

/// Settings with this context window and only the tools these runs use offered: the windows
/// are sized for what the conversation holds, so the tools Ling gains over time (their schemas
/// are sent with every request) must not move where compaction starts.
fn small_window(tokens: u64) -> Value {
    json!({
        "contextWindow": tokens,
        "permissions": {"deny": [
            "todo_write", "ask_user", "exit_plan_mode", "bash_output", "kill_shell",
            "web_fetch", "web_search", "task",
        ]},
    })
}

/// User hooks for PreCompact and SessionStart that append their input to `hook-events.jsonl`.
pub fn log_compaction_hooks(project: &Project) {
    let log = project.file("hook-events.jsonl");
    let command = format!("cat >> '{}'; echo >> '{}'", log.display(), log.display());
    let group = json!([{ "hooks": [{ "type": "command", "command": command }] }]);
    let hooks = json!({ "hooks": { "PreCompact": group, "SessionStart": group } });
    std::fs::write(project.home.path().join("hooks.json"), hooks.to_string()).unwrap();
}

pub fn hook_events(project: &Project) -> Vec<Value> {
    let text = std::fs::read_to_string(project.file("hook-events.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `ling -p PROMPT --output-format stream-json --model local [--continue]`.
pub fn run_turn(project: &Project, server: &MockServer, prompt: &str, resume: bool) -> Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args([
        "-p",
        prompt,
        "--output-format",
        "ling-stream-json",
        "--model",
        "local",
    ]);
    if resume {
        cmd.arg("--continue");
    }
    run(cmd)
}

/// A prompt of about `chars` characters of prose, told apart by `n`.
pub fn prompt(n: usize, chars: usize) -> String {
    let mut text = format!("Request {n}: ");
    while text.len() < chars {
        text.push_str("please look at the parser and explain what happens to the tokens. ");
    }
    text
}

pub fn is_summary_request(request: &Recorded) -> bool {
    request.body.get("tools").is_none()
}

/// The `compact` events of a stream-json run.
fn compact_events(out: &Output) -> Vec<Value> {
    out.json_lines()
        .into_iter()
        .filter(|l| l["type"] == "system" && l["subtype"] == "compact")
        .collect()
}

#[test]
fn auto_compaction_sends_the_summary_and_the_recent_messages_verbatim() {
    let replies = (1..=12)
        .map(|n| Reply::text(&format!("answer {n}")))
        .collect();
    let server = MockServer::start_blocking(replies);
    // The runs go on until one compacts: those after it are never asked for.
    server.allow_unasked(11);
    server.answer_summaries("SUMMARY");
    let project = Project::new();
    user_settings(&project, small_window(9000));
    log_compaction_hooks(&project);

    let mut compacted_at = None;
    for n in 1..=12 {
        let out = run_turn(&project, &server, &prompt(n, 3000), n > 1);
        assert_eq!(out.code, Some(0), "run {n}: {}", out.stderr);
        let events = compact_events(&out);
        if !events.is_empty() {
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(events[0]["trigger"], "auto");
            let (pre, post) = (
                events[0]["pre_tokens"].as_u64().unwrap(),
                events[0]["post_tokens"].as_u64().unwrap(),
            );
            assert!(
                pre >= 9000 * 85 / 100 && post < pre * 3 / 4,
                "{pre} -> {post}"
            );
            compacted_at = Some(n);
            break;
        }
    }
    let n = compacted_at.expect("the conversation was never compacted");
    assert!(n > 2, "compacted too early, at run {n}");

    let requests = server.requests();
    let summary_index = requests.iter().position(is_summary_request).unwrap();
    let summaries: Vec<String> = requests
        .iter()
        .filter(|r| is_summary_request(r))
        .map(|r| r.body.to_string().chars().take(300).collect())
        .collect();
    assert_eq!(summaries.len(), 1, "{summaries:#?}");
    // The summary request offers no tools and holds the early conversation.
    let summary = &requests[summary_index];
    let messages = summary.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("summarising a conversation")
    );
    let asked = messages[1]["content"].as_str().unwrap();
    assert!(
        asked.contains("<conversation>") && asked.contains("Request 1: "),
        "{asked}"
    );
    assert!(
        !asked.contains(&format!("Request {n}: ")),
        "the new prompt is kept verbatim"
    );

    // The request before the summary: the whole history, then this run's prompt.
    let before = &requests[summary_index - 1];
    let mut full: Vec<Value> = before.messages()[1..].to_vec();
    full.push(json!({"role": "assistant", "content": format!("answer {}", n - 1)}));
    full.push(json!({"role": "user", "content": prompt(n, 3000)}));
    // The request after: the system prompt, the summary, then a suffix of it verbatim.
    let after = requests[summary_index + 1].messages();
    assert_eq!(after[0]["role"], "system");
    assert_eq!(after[1]["role"], "user");
    let head = after[1]["content"].as_str().unwrap();
    assert!(
        head.starts_with("[This conversation was compacted")
            && head.contains("<summary>\nSUMMARY #1\n</summary>"),
        "{head}"
    );
    let kept = &after[2..];
    assert!(!kept.is_empty() && kept.len() < full.len() - 1, "{kept:?}");
    assert_eq!(
        kept,
        &full[full.len() - kept.len()..],
        "recent messages verbatim"
    );
    assert!(
        after
            .iter()
            .all(|m| m["role"] != "tool" || kept.contains(m))
    );

    // PreCompact (auto, can block) then SessionStart (compact), with the session's fields.
    let events = hook_events(&project);
    let names: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            let which = e["trigger"].as_str().or(e["source"].as_str()).unwrap_or("");
            (e["hook_event_name"].as_str().unwrap_or(""), which)
        })
        .filter(|(_, which)| *which != "startup" && *which != "resume")
        .collect();
    assert_eq!(names, [("PreCompact", "auto"), ("SessionStart", "compact")]);
    let pre = events
        .iter()
        .find(|e| e["hook_event_name"] == "PreCompact")
        .unwrap();
    assert_eq!(pre["custom_instructions"], "");
    assert!(pre["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(pre["transcript_path"].as_str().unwrap().ends_with(".jsonl"));

    // The transcript has the compaction as its own line and the full conversation above it;
    // the next run continues from the compacted state.
    let session = before.messages().len();
    let out = run_turn(&project, &server, "one more", true);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let last = server.requests().last().unwrap().messages();
    assert_eq!(last[1], after[1], "resumed from the summary");
    assert_eq!(last[2..2 + kept.len()], *kept);
    assert_eq!(
        last.last().unwrap(),
        &json!({"role": "user", "content": "one more"})
    );
    let transcripts: Vec<_> = std::fs::read_dir(project.home.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(transcripts.len(), 1);
    let text = std::fs::read_to_string(&transcripts[0]).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compactions: Vec<&Value> = lines.iter().filter(|l| l["type"] == "compaction").collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["trigger"], "auto");
    assert_eq!(
        compactions[0]["messages"].as_array().unwrap()[..],
        after[1..]
    );
    assert!(
        text.contains("Request 1: "),
        "the earlier conversation stays in the file"
    );
    assert!(session > kept.len());
}

#[test]
fn a_summary_request_that_overflows_is_made_in_parts() {
    let replies = (1..=12)
        .map(|n| Reply::text(&format!("answer {n}")))
        .collect();
    let server = MockServer::start_blocking(replies);
    // The runs go on until one compacts: those after it are never asked for.
    server.allow_unasked(11);
    server.answer_summaries("PART SUMMARY");
    server.summary_limit(6_000, Overflow::TooLarge);
    let project = Project::new();
    user_settings(&project, json!({ "contextWindow": 9000 }));
    let mut compacted = false;
    for n in 1..=12 {
        let out = run_turn(&project, &server, &prompt(n, 3000), n > 1);
        assert_eq!(out.code, Some(0), "run {n}: {}", out.stderr);
        if !compact_events(&out).is_empty() {
            compacted = true;
            break;
        }
    }
    assert!(compacted, "never compacted");
    let requests = server.requests();
    let summaries: Vec<&Recorded> = requests.iter().filter(|r| is_summary_request(r)).collect();
    let size = |r: &Recorded| r.body["messages"].to_string().len();
    assert!(
        size(summaries[0]) > 6_000,
        "the first summary request is refused"
    );
    let parts: Vec<&&Recorded> = summaries.iter().filter(|r| size(r) <= 6_000).collect();
    assert!(parts.len() >= 2, "{} parts", parts.len());
    let asked = parts[0].messages()[1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        asked.contains(&format!("(part 1 of {})", parts.len())),
        "{asked}"
    );
    let after = requests.last().unwrap().messages();
    let head = after[1]["content"].as_str().unwrap();
    assert!(
        head.contains(&format!("Part 1 of {}:\nPART SUMMARY #", parts.len())),
        "{head}"
    );
}

#[test]
fn forty_turns_with_large_tool_outputs_finish_under_a_small_window() {
    const TURNS: usize = 40;
    let mut replies: Vec<Reply> = (1..=TURNS)
        .map(|n| {
            let id = format!("call_{n}");
            Reply::tool_calls(vec![(id.as_str(), "read_file", json!({"path": "big.rs"}))])
        })
        .collect();
    replies.push(Reply::text("all forty read"));
    let server = MockServer::start_blocking(replies);
    server.answer_summaries("SUMMARY");
    // What the server holds: about two of the outputs, with everything else.
    server.context_limit(60_000, Overflow::OpenAi);
    let project = Project::new();
    let mut big = String::new();
    for i in 0.. {
        if big.len() >= 20_000 {
            break;
        }
        big.push_str(&format!(
            "fn item_{i}(input: &[u8]) -> Option<u32> {{ input.get({i}).map(|b| u32::from(*b) + {i}) }}\n"
        ));
    }
    project.write("big.rs", &big);
    user_settings(&project, small_window(16000));

    let out = run_turn(&project, &server, "read big.rs forty times", false);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result = out.json_lines().pop().unwrap();
    assert_eq!(result["result"], "all forty read");
    assert_eq!(result["num_turns"], TURNS as u64 + 1);

    let requests = server.requests();
    let main: Vec<&Recorded> = requests.iter().filter(|r| !is_summary_request(r)).collect();
    assert_eq!(main.len(), TURNS + 1, "no request was refused and retried");
    let sizes: Vec<usize> = main
        .iter()
        .map(|r| r.body["messages"].to_string().len())
        .collect();
    assert!(sizes.iter().all(|&s| s <= 60_000), "{sizes:?}");
    // The newest output is always sent whole, older ones as a note.
    for request in &main[1..] {
        let results = hooks_e2e::tool_results(request);
        assert!(
            results.last().unwrap().contains("fn item_0("),
            "the newest output whole"
        );
    }
    let last = hooks_e2e::tool_results(main.last().unwrap());
    assert!(
        last.iter()
            .any(|r| r.starts_with("[output elided to save context: ")),
        "{:?}",
        last.iter().map(|r| r.len()).collect::<Vec<_>>()
    );
    // Never in the transcript: it keeps every output whole.
    let sessions = project.home.path().join("sessions");
    let path = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.matches("fn item_0(").count(), TURNS);
    assert!(!text.contains("output elided"));
}

#[test]
fn a_blocking_pre_compact_hook_stops_the_compaction_and_the_run_goes_on() {
    let replies = (1..=2)
        .map(|n| Reply::text(&format!("answer {n}")))
        .collect();
    let server = MockServer::start_blocking(replies);
    server.answer_summaries("SUMMARY");
    let project = Project::new();
    user_settings(&project, json!({ "contextWindow": 7000 }));
    let command = "cat > /dev/null; echo 'keep everything' >&2; exit 2";
    let group =
        json!([{ "matcher": "auto", "hooks": [{ "type": "command", "command": command }] }]);
    std::fs::write(
        project.home.path().join("hooks.json"),
        json!({ "hooks": { "PreCompact": group } }).to_string(),
    )
    .unwrap();
    for n in 1..=2 {
        let out = run_turn(&project, &server, &prompt(n, 12_000), n > 1);
        assert_eq!(out.code, Some(0), "run {n}: {}", out.stderr);
        assert!(compact_events(&out).is_empty());
        if n == 2 {
            assert!(
                out.stderr.contains("was not compacted (keep everything)"),
                "{}",
                out.stderr
            );
            let hook = out
                .json_lines()
                .into_iter()
                .find(|l| l["type"] == "hook")
                .unwrap();
            assert_eq!(
                (&hook["event"], &hook["decision"]),
                (&json!("PreCompact"), &json!("block"))
            );
        }
    }
    let requests = server.requests();
    assert!(requests.iter().all(|r| !is_summary_request(r)));
    assert_eq!(requests.last().unwrap().messages().len(), 4, "sent whole");
}

/// A summary larger than what it replaces (and than a quarter of the window) is refused: the
/// history is sent whole, a warning says why, and no compaction is recorded. With a short
/// summary the same conversation compacts.
#[test]
fn a_summary_larger_than_what_it_replaces_is_refused() {
    let replies = (1..=3)
        .map(|n| Reply::text(&format!("answer {n}")))
        .collect();
    let server = MockServer::start_blocking(replies);
    server.answer_summaries(&"an enormous summary that says nothing. ".repeat(2_000));
    let project = Project::new();
    user_settings(&project, json!({ "contextWindow": 7000 }));
    for n in 1..=2 {
        let out = run_turn(&project, &server, &prompt(n, 12_000), n > 1);
        assert_eq!(out.code, Some(0), "run {n}: {}", out.stderr);
        assert!(compact_events(&out).is_empty(), "run {n}");
        if n == 2 {
            assert!(
                out.stderr
                    .contains("was not compacted (the model's summary"),
                "{}",
                out.stderr
            );
        }
    }
    let requests = server.requests();
    assert!(
        requests.iter().any(is_summary_request),
        "a summary was asked"
    );
    let last = requests.last().unwrap().messages();
    assert_eq!(last.len(), 4, "sent whole: {last:?}");
    assert!(last.iter().all(|m| !m.to_string().contains("<summary>")));

    server.answer_summaries("SUMMARY");
    let out = run_turn(&project, &server, &prompt(3, 12_000), true);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(compact_events(&out).len(), 1, "{}", out.stderr);
}
