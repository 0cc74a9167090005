//! The transcript's tests: repair of dangling calls, finding sessions, torn last lines.

use super::*;
use crate::llm::ToolCall;

fn assistant_calling(ids: &[&str]) -> Message {
    Message::assistant(
        None,
        ids.iter()
            .map(|id| ToolCall::new(*id, "bash", "{}"))
            .collect(),
    )
}

#[test]
fn a_dangling_tool_call_gets_an_interrupted_result() {
    let mut messages = vec![
        Message::user("go"),
        assistant_calling(&["a", "b"]),
        Message::tool("a", "done"),
    ];
    assert_eq!(repair(&mut messages), 1);
    assert_eq!(
        messages,
        vec![
            Message::user("go"),
            assistant_calling(&["a", "b"]),
            Message::tool("a", "done"),
            Message::tool("b", INTERRUPTED_RESULT),
        ]
    );
}

#[test]
fn orphan_and_duplicate_tool_results_are_dropped_and_valid_history_is_kept() {
    let valid = vec![
        Message::user("go"),
        assistant_calling(&["a"]),
        Message::tool("a", "done"),
        Message::assistant(Some("ok".into()), Vec::new()),
    ];
    let mut messages = valid.clone();
    assert_eq!(repair(&mut messages), 0);
    assert_eq!(messages, valid);

    let mut messages = vec![
        Message::tool("x", "orphan"),
        Message::user("go"),
        assistant_calling(&["a"]),
        Message::tool("a", "done"),
        Message::tool("a", "again"),
        Message::tool("z", "stray"),
    ];
    assert_eq!(repair(&mut messages), 0);
    assert_eq!(
        messages,
        vec![
            Message::user("go"),
            assistant_calling(&["a"]),
            Message::tool("a", "done"),
        ]
    );
}

#[test]
fn a_recorded_session_is_found_by_project_and_by_id_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let root = Path::new("/some/project");
    let mut session = Session::new(&sessions, root, "m");
    session.record(&Message::user("hello"));
    session.record(&Message::tool("dangling", "never asked for"));

    let latest = Session::open_latest(&sessions, root).unwrap();
    assert_eq!(latest.session.id, session.id);
    assert_eq!(latest.session.transcript_path, session.transcript_path);
    assert_eq!(latest.messages, vec![Message::user("hello")]);

    let by_prefix = Session::open(&sessions, &session.id[..8]).unwrap();
    assert_eq!(by_prefix.session.id, session.id);

    let other = Session::open_latest(&sessions, Path::new("/elsewhere"));
    assert!(matches!(other, Err(SessionError::NoneForProject { .. })));
    let unknown = Session::open(&sessions, "../etc");
    assert!(matches!(unknown, Err(SessionError::NotFound { .. })));
}

const HEADER: &str =
    r#"{"type":"session","id":"abc","cwd":"/p","created":"2024-01-01T00:00:00Z","model":"m"}"#;
const HI: &str = r#"{"type":"message","message":{"role":"user","content":"hi"}}"#;

/// Resumes `abc` from a transcript holding `text`, records one more message, and returns
/// what was loaded and the file's lines afterwards.
fn resume_and_append(text: &str) -> (Resumed, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abc.jsonl");
    std::fs::write(&path, text).unwrap();
    let mut resumed = Session::open(dir.path(), "abc").unwrap();
    resumed.session.record(&Message::user("after"));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.ends_with('\n'), "{after:?}");
    (resumed, after.lines().map(str::to_string).collect())
}

#[test]
fn a_cut_last_line_is_dropped_before_the_next_append() {
    let torn = format!("{HEADER}\n{HI}\n{{\"type\":\"message\",\"message\":{{\"role\":\"us");
    let (resumed, lines) = resume_and_append(&torn);
    assert_eq!(resumed.messages, vec![Message::user("hi")]);
    assert_eq!(resumed.warnings.len(), 1, "{:?}", resumed.warnings);
    assert!(
        resumed.warnings[0].contains("was cut off")
            && resumed.warnings[0].contains("dropped its 39 bytes"),
        "{:?}",
        resumed.warnings
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(&lines[..2], [HEADER, HI]);
    let last: Line = serde_json::from_str(&lines[2]).unwrap();
    assert!(matches!(last, Line::Message { message, .. } if message == Message::user("after")));
    // Loaded again: everything parses, nothing more to repair.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("abc.jsonl"), lines.join("\n") + "\n").unwrap();
    let again = Session::open(dir.path(), "abc").unwrap();
    assert_eq!(
        again.messages,
        vec![Message::user("hi"), Message::user("after")]
    );
    assert_eq!(again.warnings, Vec::<String>::new());
}

#[test]
fn a_whole_last_record_without_its_line_end_is_kept_and_ended() {
    let (resumed, lines) = resume_and_append(&format!("{HEADER}\n{HI}"));
    assert_eq!(resumed.messages, vec![Message::user("hi")]);
    assert!(
        resumed.warnings.len() == 1 && resumed.warnings[0].contains("added one"),
        "{:?}",
        resumed.warnings
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(&lines[..2], [HEADER, HI]);
}

#[test]
fn a_clean_transcript_is_left_as_it_is() {
    let (resumed, lines) = resume_and_append(&format!("{HEADER}\n{HI}\n"));
    assert_eq!(resumed.warnings, Vec::<String>::new());
    assert_eq!(lines.len(), 3);
}

#[test]
fn corrupt_lines_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abc.jsonl");
    let text = concat!(
        r#"{"type":"session","id":"abc","cwd":"/p","created":"2024-01-01T00:00:00Z","model":"m"}"#,
        "\n{not json\n",
        r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
        "\n",
        r#"{"type":"message","message":{"role":"user","cont"#,
    );
    std::fs::write(&path, text).unwrap();
    let resumed = Session::open(dir.path(), "abc").unwrap();
    assert_eq!(resumed.messages, vec![Message::user("hi")]);
    assert_eq!(resumed.warnings.len(), 2, "{:?}", resumed.warnings);
    assert!(
        resumed.warnings[0].contains("line 2"),
        "{:?}",
        resumed.warnings
    );
}
