//! The approval question, laid out so the user sees exactly what will run: a framed block with
//! a title (`Run command`, `Edit src/x.rs`, `Create tests/y.py`, `Run outside the sandbox`),
//! the preview (an edit's diff, a new file's lines), a hook's or the sandbox's reason, the whole
//! input whenever the call's one line did not show all of it (a long or multi-line command,
//! every argument of an MCP call) wrapped at word boundaries and never cut, then numbered
//! choices, "always" naming the rule it would add. Its last row says again what is asked and
//! how long the input is, so a command of many lines cannot scroll the question's title away.
//!
//! Every piece comes from outside Ling (the command, the rule, paths, server names, reasons)
//! and is neutralised: a `\r` or cursor code shows as `^M` / `^[[...`; a newline in a piece
//! that is one row (the rule, a reason, a path) shows as `⏎`, and in the input starts a new
//! `│` row. Nothing the model writes can draw a row of the question.
//!
//! The answer is one key ([`read_choice`]): `1`/`y` once, `2`/`a` always, `3`/`n`/Esc no,
//! `4`/`t` say what to do instead. Enter alone, or any other key, approves nothing: the
//! question says so and waits.

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{LocalFlags, SetArg, SpecialCharacterIndices, tcgetattr, tcsetattr};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use unicode_width::UnicodeWidthChar;

use crate::session::ApprovalRequest;
use crate::ui::render::{styled_display, summary_arg};
use crate::ui::safe_text::neutralise;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// The narrowest the block is wrapped to, however narrow the terminal says it is.
const MIN_WIDTH: usize = 24;
/// Starts a row that begins a line of the input (or of the preview, or the reason).
const FIRST: &str = "  │ ";
/// Starts a row that continues the line above (wrapped, not a newline of the input).
const CONTINUED: &str = "  ┊ ";
/// Starts a choice's row.
const CHOICE: &str = "  ├ ";
/// The rule "always" adds is shown up to this many characters.
const RULE_CHARS: usize = 60;
/// How long an Esc waits for the rest of an escape sequence (an arrow key) before it is a
/// lone Esc.
pub(super) const ESC_WAIT: Duration = Duration::from_millis(30);

/// What the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Once,
    Always,
    No,
    Tell,
    /// Ctrl-C, or the turn was interrupted meanwhile.
    Interrupted,
}

/// A piece that is one row: neutralised, newlines and tabs made visible.
pub use crate::ui::safe_text::one_row;

/// The question's title.
pub fn title(request: &ApprovalRequest) -> String {
    let path = request
        .input
        .get("path")
        .and_then(Value::as_str)
        .map(one_row);
    let outside = request.session_rule.is_empty()
        && request
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("the sandbox blocked"));
    match (request.tool.as_str(), path) {
        _ if outside => "Run outside the sandbox".to_string(),
        ("bash", _) => "Run command".to_string(),
        ("edit_file", Some(path)) => format!("Edit {path}"),
        ("write_file", Some(path)) => {
            let new = request
                .preview
                .as_deref()
                .is_some_and(|p| p.starts_with("new file "));
            if new {
                format!("Create {path}")
            } else {
                format!("Overwrite {path}")
            }
        }
        (tool, _) => format!("Use {}", one_row(tool)),
    }
}

/// The whole question for a terminal `width` wide: the framed block and its choices. Its last
/// row ends in `allow?`, where the key is read.
pub fn question(style: Style, request: &ApprovalRequest, width: usize) -> Vec<Term> {
    let width = width.max(MIN_WIDTH);
    let title = title(request);
    let bar = |s: &str| style.dim(s);
    let mut rows = Vec::new();
    let rule = width.saturating_sub(title.chars().count() + 7).clamp(2, 40);
    rows.push(crate::term![
        bar("  ╭─ "),
        style.bold(&title),
        " ",
        bar(&"─".repeat(rule))
    ]);
    if let Some(agent) = &request.agent {
        rows.push(bar(FIRST) + style.yellow("asked by sub-agent ") + Term::plain(&one_row(agent)));
    }
    let mut input_rows = 0;
    if let Some(preview) = &request.preview {
        for line in preview.trim_end().split('\n') {
            rows.push(bar(FIRST) + styled_display(style, line));
        }
    }
    if let Some(block) = whole_input(&request.input, request.preview.is_some()) {
        input_rows = block.split('\n').count();
        rows.extend(wrap_block(style, &block, width));
    } else if request.preview.is_none() {
        let call = crate::ui::render::call_summary(&request.tool, &request.input);
        rows.push(bar(FIRST) + Term::plain(&call));
    }
    if let Some(reason) = &request.reason {
        rows.push(bar(FIRST) + style.yellow(&one_row(reason)));
    }
    for row in choices(style, request) {
        rows.push(bar(CHOICE) + row);
    }
    let lines = if input_rows > 1 {
        format!(" ({input_rows} lines above)")
    } else {
        String::new()
    };
    rows.push(crate::term![
        bar("  ╰─ "),
        style.bold(&title),
        lines,
        ": ",
        style.yellow("allow?"),
        style.dim(" 1-4, Esc: no")
    ]);
    rows
}

fn choices(style: Style, request: &ApprovalRequest) -> Vec<Term> {
    let always = if request.session_rule.is_empty() {
        // The sandbox's question is never remembered.
        "Yes, this time too".to_string()
    } else {
        let rule = one_row(&request.session_rule);
        let short = if rule.chars().count() > RULE_CHARS {
            let mut cut: String = rule.chars().take(RULE_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            rule
        };
        format!("Yes, and always allow {short}")
    };
    [
        ("1", "Yes, once".to_string(), "y"),
        ("2", always, "a"),
        ("3", "No, stop here".to_string(), "n, Esc"),
        ("4", "No, and tell Ling what to do instead".to_string(), "t"),
    ]
    .into_iter()
    .map(|(n, text, key)| {
        crate::term![
            style.bold(&format!("{n}.")),
            " ",
            text,
            " ",
            style.dim(&format!("({key})"))
        ]
    })
    .collect()
}

/// The hint when a key is not a choice.
pub fn not_a_choice(style: Style, key: &str) -> Term {
    crate::term![
        "  ",
        style.yellow(&format!("{key} is not a choice")),
        style.dim(": press 1, 2, 3 or 4 (Esc: no); Enter alone approves nothing")
    ]
}

/// The input to show in full, when the call's line did not: a command as it is; any other
/// input (without a preview of its own) as pretty JSON.
fn whole_input(input: &Value, has_preview: bool) -> Option<String> {
    if let Some(command) = input.get("command").and_then(Value::as_str) {
        return Some(command.to_string());
    }
    if has_preview || summary_arg(input).1 {
        return None;
    }
    serde_json::to_string_pretty(input).ok()
}

/// `text` neutralised and wrapped to `width` columns at word boundaries: each line of it starts
/// with `│`, each row that continues a line too long for the terminal with `┊`. Nothing is cut.
fn wrap_block(style: Style, text: &str, width: usize) -> Vec<Term> {
    let width = width.max(MIN_WIDTH);
    let safe = neutralise(text);
    let mut rows = Vec::new();
    for line in safe.split('\n') {
        for (i, row) in wrap_line(line, width - FIRST.chars().count() - 1)
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { FIRST } else { CONTINUED };
            rows.push(crate::term![style.dim(lead), row]);
        }
    }
    rows
}

/// Cuts one (neutralised) line into rows of at most `width` columns, after a space where one
/// is (a word longer than a row is cut), counting wide characters as two and a tab as the
/// columns to its next stop; an empty line is one empty row. The rows joined are the line.
fn wrap_line(line: &str, width: usize) -> Vec<String> {
    let lead = FIRST.chars().count();
    let mut rows = vec![String::new()];
    let mut column = 0;
    for c in line.chars() {
        let w = match c {
            '\t' => 8 - (lead + column) % 8,
            c => c.width().unwrap_or(0),
        };
        // A space past the end stays on its row (the row's budget keeps a column for it).
        if column + w > width && column > 0 && c != ' ' {
            let row = rows.last_mut().map(std::mem::take).unwrap_or_default();
            // Break after the row's last space, when it has one past its start.
            match row.rfind(' ').filter(|at| *at > 0) {
                Some(at) => {
                    let (head, tail) = row.split_at(at + 1);
                    let tail = tail.to_string();
                    if let Some(last) = rows.last_mut() {
                        *last = head.to_string();
                    }
                    column = tail.chars().map(|c| c.width().unwrap_or(0)).sum();
                    rows.push(tail);
                }
                _ => {
                    if let Some(last) = rows.last_mut() {
                        *last = row;
                    }
                    rows.push(String::new());
                    column = 0;
                }
            }
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        column += w;
    }
    rows
}

/// Reads one choice, key by key, from the terminal (no echo, no line buffering; Ctrl-C still
/// arrives as SIGINT and cancels `cancel`). `hint` is shown when a key is not a choice. Not a
/// terminal: no. With the choice, a key typed right after it that is not its Enter.
pub fn read_choice(
    cancel: Option<&CancellationToken>,
    hint: &dyn Fn(&str),
) -> (Choice, Option<char>) {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return (Choice::No, None);
    }
    let Ok(saved) = tcgetattr(stdin.as_fd()) else {
        return (Choice::No, None);
    };
    let mut raw = saved.clone();
    raw.local_flags
        .remove(LocalFlags::ECHO | LocalFlags::ICANON);
    raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw);
    let choice = loop {
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            break Choice::Interrupted;
        }
        let Some(bytes) = read_some(&stdin, PollTimeout::from(50u16)) else {
            continue;
        };
        if bytes.is_empty() {
            break Choice::No;
        }
        match key_choice(&bytes, &stdin) {
            Ok(choice) => break choice,
            Err(shown) => hint(&shown),
        }
    };
    let next = match choice {
        Choice::Interrupted | Choice::No => None,
        _ => after_choice(&stdin),
    };
    let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
    (choice, next)
}

/// Bytes ready on stdin within `timeout`: `None` when none came, empty at end of input.
pub(super) fn read_some(stdin: &std::io::Stdin, timeout: PollTimeout) -> Option<Vec<u8>> {
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    if !matches!(poll(&mut fds, timeout), Ok(n) if n > 0) {
        return None;
    }
    let mut buf = [0u8; 64];
    match nix::unistd::read(stdin.as_fd(), &mut buf) {
        Ok(n) => Some(buf[..n].to_vec()),
        Err(_) => Some(Vec::new()),
    }
}

/// The choice the keys of one read make (the first key that is a choice; what follows it in
/// the same read, such as the Enter after `y`, is dropped), or how to show the first key that
/// is none.
fn key_choice(bytes: &[u8], stdin: &std::io::Stdin) -> Result<Choice, String> {
    match bytes {
        [0x1b] => {
            // A lone Esc, unless the rest of a sequence (an arrow) follows at once.
            let wait = PollTimeout::try_from(ESC_WAIT).unwrap_or(PollTimeout::ZERO);
            return match read_some(stdin, wait) {
                None => Ok(Choice::No),
                Some(_) => Err("that key".into()),
            };
        }
        [0x1b, ..] => return Err("that key".into()),
        _ => {}
    }
    // Only the first key counts: typed text (`use cargo clean`) must not find an `a` in it.
    let text = String::from_utf8_lossy(bytes);
    let Some(first) = text.chars().next() else {
        return Err("that key".into());
    };
    let mut buf = [0u8; 4];
    match first {
        '\x04' => Ok(Choice::No),
        '\x03' => Ok(Choice::Interrupted),
        c => choice_of(c.encode_utf8(&mut buf).as_bytes()),
    }
}

/// After a choice: the Enter that may follow it (`y⏎`) a moment later is the choice's and is
/// dropped; another key typed at once is returned (the start of the words after `t`).
fn after_choice(stdin: &std::io::Stdin) -> Option<char> {
    let wait = PollTimeout::try_from(ESC_WAIT).unwrap_or(PollTimeout::ZERO);
    let bytes = read_some(stdin, wait)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let text = text.trim_start_matches(['\r', '\n']);
    text.chars().next().filter(|c| !c.is_control())
}

/// Drops the keys typed before the question was shown: only a key pressed while it is on
/// screen answers it (type-ahead starting with `y` must not approve anything).
pub fn forget_typed_ahead() {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = nix::sys::termios::tcflush(stdin.as_fd(), nix::sys::termios::FlushArg::TCIFLUSH);
    }
}

/// The choice of one key that is not Esc.
pub fn choice_of(bytes: &[u8]) -> Result<Choice, String> {
    match bytes {
        b"1" | b"y" | b"Y" => Ok(Choice::Once),
        b"2" | b"a" | b"A" => Ok(Choice::Always),
        b"3" | b"n" | b"N" => Ok(Choice::No),
        b"4" | b"t" | b"T" => Ok(Choice::Tell),
        b"\r" | b"\n" => Err("Enter".into()),
        [0x1b, ..] => Err("that key".into()),
        other => {
            let text = String::from_utf8_lossy(other);
            Err(format!("{:?}", one_row(&text)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn request(input: Value, preview: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            tool: "bash".into(),
            input,
            session_rule: "bash(x*)".into(),
            reason: None,
            preview: preview.map(str::to_string),
            agent: None,
            tool_use_id: "c1".into(),
        }
    }

    fn shown(request: &ApprovalRequest, width: usize) -> Vec<String> {
        question(Style::plain(), request, width)
            .iter()
            .map(|t| t.as_str().to_string())
            .collect()
    }

    /// What the user sees of the three kinds of question, pinned: a change to it shows up in
    /// review.
    #[test]
    fn the_approval_frames_as_the_user_sees_them() {
        let mut edit = request(
            json!({"path": "src/a.rs", "old_string": "x", "new_string": "y"}),
            Some("--- src/a.rs\n+++ src/a.rs\n@@ -1 +1 @@\n-let x = 1;\n+let y = 1;"),
        );
        edit.tool = "edit_file".into();
        edit.session_rule = "edit_file(src/a.rs)".into();
        edit.reason = Some("src/a.rs is outside the accept-edits rules".into());
        let mut mcp = request(json!({"sql": "SELECT 1", "limit": 5}), None);
        mcp.tool = "mcp__db__query".into();
        mcp.session_rule = "mcp__db__query".into();
        let long = request(
            json!({"command": format!("cargo test --workspace {}&& git push", "--features x ".repeat(8))}),
            None,
        );
        let frames: Vec<String> = [edit, mcp, long]
            .iter()
            .map(|r| shown(r, 72).join("\n"))
            .collect();
        insta::assert_snapshot!(frames.join("\n\n"));
    }

    #[test]
    fn the_question_is_a_framed_block_with_a_title_and_numbered_choices() {
        let rows = shown(&request(json!({"command": "ls"}), None), 80);
        assert_eq!(
            rows,
            vec![
                "  ╭─ Run command ────────────────────────────────────────",
                "  │ ls",
                "  ├ 1. Yes, once (y)",
                "  ├ 2. Yes, and always allow bash(x*) (a)",
                "  ├ 3. No, stop here (n, Esc)",
                "  ├ 4. No, and tell Ling what to do instead (t)",
                "  ╰─ Run command: allow? 1-4, Esc: no",
            ]
        );
    }

    #[test]
    fn a_long_command_is_wrapped_at_words_and_shown_whole() {
        let long = format!("echo {} && touch PWNED", "word ".repeat(20));
        let rows = shown(&request(json!({"command": long}), None), 50);
        let input: Vec<&String> = rows
            .iter()
            .filter(|r| r.starts_with(FIRST) || r.starts_with(CONTINUED))
            .collect();
        assert!(input.len() >= 3, "{rows:?}");
        assert!(input[1].starts_with(CONTINUED), "{rows:?}");
        let joined: String = input.iter().map(|r| &r[FIRST.len()..]).collect();
        assert_eq!(joined, long);
        assert!(rows.iter().all(|r| r.chars().count() <= 50), "{rows:?}");
        // Rows break after a space, not inside a word.
        for row in &input[..input.len() - 1] {
            assert!(row.ends_with(' '), "{row:?}");
        }
    }

    #[test]
    fn a_hostile_command_cannot_draw_rows_of_the_question() {
        // Newlines in the rule, a reason and a path cannot make rows; each line of the command
        // is a marked row; escapes show.
        let mut attack = request(
            json!({"command": format!("ls{}\x1b[1A\r\x1b[2Ktouch PWNED", "\n".repeat(40))}),
            None,
        );
        attack.session_rule = "bash(ls)\n\n● bash(ls)\n  allow?".into();
        attack.reason = Some("fine\n● bash(ls)".into());
        let rows = shown(&attack, 80);
        assert!(
            rows.contains(&"  │ ^[[1A^M^[[2Ktouch PWNED".to_string()),
            "{rows:?}"
        );
        for row in &rows {
            assert!(
                ["  │", "  ╭", "  ╰", "  ┊", "  ├"]
                    .iter()
                    .any(|p| row.starts_with(p)),
                "a row not of the block: {row:?}"
            );
            assert!(!row.contains('\x1b') && !row.contains('\r'), "{row:?}");
        }
        assert!(
            rows.iter()
                .any(|r| r.contains("always allow bash(ls)⏎⏎● bash(ls)⏎  allow?")),
            "{rows:?}"
        );
        assert!(
            rows.contains(&"  │ fine⏎● bash(ls)".to_string()),
            "{rows:?}"
        );
        // The last row says what is asked, and that the command is long.
        assert_eq!(
            rows.last().map(String::as_str),
            Some("  ╰─ Run command (41 lines above): allow? 1-4, Esc: no")
        );
        let mut path = request(
            json!({"path": "a\nb\x1b[2J.rs", "old_string": "x"}),
            Some("--- a"),
        );
        path.tool = "edit_file".into();
        assert_eq!(title(&path), "Edit a⏎b^[[2J.rs");
    }

    #[test]
    fn titles_say_what_the_call_does() {
        let mut r = request(
            json!({"path": "src/x.rs", "content": "x"}),
            Some("new file src/x.rs (1 lines, 1 bytes)\n+x"),
        );
        r.tool = "write_file".into();
        assert_eq!(title(&r), "Create src/x.rs");
        r.preview = Some("--- a/src/x.rs".into());
        assert_eq!(title(&r), "Overwrite src/x.rs");
        let mut outside = request(json!({"command": "touch /etc/x"}), None);
        outside.session_rule.clear();
        outside.reason =
            Some("the sandbox blocked writing /etc/x; run it once outside the sandbox?".into());
        assert_eq!(title(&outside), "Run outside the sandbox");
        let rows = shown(&outside, 80);
        assert!(
            rows.contains(&"  ├ 2. Yes, this time too (a)".to_string()),
            "{rows:?}"
        );
    }

    #[test]
    fn other_inputs_are_shown_whole_unless_a_preview_shows_them() {
        let mut r = request(json!({"query": "select 1", "database": "prod"}), None);
        r.tool = "mcp__db__query".into();
        let rows = shown(&r, 80);
        assert_eq!(
            rows[1..5].join("\n"),
            "  │ {\n  │   \"query\": \"select 1\",\n  │   \"database\": \"prod\"\n  │ }"
        );
        let rows = shown(&request(json!({"path": "a"}), Some("+new line")), 80);
        assert_eq!(rows[1], "  │ +new line");
    }

    #[test]
    fn keys_make_choices_and_enter_approves_nothing() {
        assert_eq!(choice_of(b"1"), Ok(Choice::Once));
        assert_eq!(choice_of(b"y"), Ok(Choice::Once));
        assert_eq!(choice_of(b"a"), Ok(Choice::Always));
        assert_eq!(choice_of(b"n"), Ok(Choice::No));
        assert_eq!(choice_of(b"t"), Ok(Choice::Tell));
        assert_eq!(choice_of(b"\r"), Err("Enter".into()));
        assert_eq!(choice_of(b"\x1b[A"), Err("that key".into()));
        assert_eq!(choice_of(b"x"), Err("\"x\"".into()));
    }

    #[test]
    fn wide_characters_and_tabs_count_as_their_columns() {
        assert_eq!(wrap_line("日本語日本", 6), vec!["日本語", "日本"]);
        assert_eq!(wrap_line("", 6), vec![""]);
        assert_eq!(wrap_line("a\tb", 4), vec!["a\t", "b"]);
        assert_eq!(wrap_line("ab cd ef", 5), vec!["ab cd ", "ef"]);
        assert_eq!(wrap_line("abcdefgh", 5), vec!["abcde", "fgh"]);
    }
}
