//! What an approval question shows, so the user sees exactly what will run: the preview (an
//! edit's diff, a new file's lines), a hook's reason, and the whole input whenever the call's
//! one line did not show all of it (a long or multi-line command, every argument of an MCP
//! call), wrapped at the terminal width and never cut. All of it neutralised: a `\r` or cursor
//! code in a command shows as `^M` / `^[[...`, it cannot redraw the question.

use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use super::render::{styled_display, summary_arg};
use super::safe_text::neutralise;
use super::style::Style;
use super::term::Term;
use crate::agent::ApprovalRequest;

/// The narrowest the input block is wrapped to, however narrow the terminal says it is.
const MIN_WIDTH: usize = 20;
/// Starts a row that begins a line of the input.
const FIRST: &str = "  │ ";
/// Starts a row that continues the line above (wrapped, not a newline of the input).
const CONTINUED: &str = "  ┊ ";

/// The lines shown between the call's own line and the question, for a terminal `width` wide.
pub fn details(style: Style, request: &ApprovalRequest, width: usize) -> Vec<Term> {
    let mut lines = Vec::new();
    if let Some(preview) = &request.preview {
        lines.push(styled_display(style, preview));
    }
    if let Some(reason) = &request.reason {
        lines.push(crate::term!["  ", style.dim(reason)]);
    }
    if let Some(block) = whole_input(&request.input, request.preview.is_some()) {
        lines.extend(wrap_block(style, &block, width));
    }
    lines
}

/// The question itself, naming the rule "always" would add.
pub fn question(style: Style, session_rule: &str) -> Term {
    crate::term![
        "  ",
        style.yellow("allow?"),
        " [y] once  [a] always (",
        session_rule,
        ")  [n] no, stop  [t] tell it what to do instead › "
    ]
}

/// The input to show in full, when the call's line did not: a command as it is; any other
/// input (without a preview of its own) as pretty JSON.
fn whole_input(input: &Value, has_preview: bool) -> Option<String> {
    if let Some(command) = input.get("command").and_then(Value::as_str) {
        let (_, whole) = summary_arg(&serde_json::json!({ "command": command }));
        return (!whole).then(|| command.to_string());
    }
    if has_preview || summary_arg(input).1 {
        return None;
    }
    serde_json::to_string_pretty(input).ok()
}

/// `text` neutralised and wrapped to `width` columns: each line of it starts with `│`, each row
/// that continues a line too long for the terminal with `┊`. Nothing is cut.
fn wrap_block(style: Style, text: &str, width: usize) -> Vec<Term> {
    let width = width.max(MIN_WIDTH);
    let safe = neutralise(text);
    let mut rows = Vec::new();
    for line in safe.split('\n') {
        for (i, row) in wrap_line(line, width - FIRST.chars().count())
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { FIRST } else { CONTINUED };
            rows.push(crate::term![style.dim(lead), row]);
        }
    }
    rows
}

/// Cuts one (neutralised) line into rows of at most `width` columns, counting wide characters
/// as two and a tab as the columns to its next stop; an empty line is one empty row.
fn wrap_line(line: &str, width: usize) -> Vec<String> {
    let lead = FIRST.chars().count();
    let mut rows = vec![String::new()];
    let mut column = 0;
    for c in line.chars() {
        let w = match c {
            '\t' => 8 - (lead + column) % 8,
            c => c.width().unwrap_or(0),
        };
        if column + w > width && column > 0 {
            rows.push(String::new());
            column = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        column += w;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn request(input: Value, preview: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            tool: "bash".into(),
            tool_use_id: "c1".into(),
            input,
            session_rule: "bash(x*)".into(),
            reason: None,
            preview: preview.map(str::to_string),
        }
    }

    fn shown(request: &ApprovalRequest, width: usize) -> Vec<String> {
        details(Style::plain(), request, width)
            .iter()
            .map(|t| t.as_str().to_string())
            .collect()
    }

    #[test]
    fn a_short_command_is_not_repeated_and_a_long_one_is_shown_whole() {
        assert!(shown(&request(json!({"command": "ls"}), None), 80).is_empty());
        let long = format!("echo {} && touch PWNED", "a".repeat(90));
        let rows = shown(&request(json!({"command": long}), None), 50);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(rows[0].starts_with("  │ echo aaa"));
        assert!(rows[1].starts_with("  ┊ "));
        let joined: String = rows.iter().map(|r| &r[FIRST.len()..]).collect();
        assert_eq!(joined, long);
        assert!(rows.iter().all(|r| r.chars().count() <= 50), "{rows:?}");
    }

    #[test]
    fn control_characters_in_a_command_show_and_each_line_is_marked() {
        let attack = "ls\n\x1b[1A\r\x1b[2Ktouch PWNED";
        let rows = shown(&request(json!({"command": attack}), None), 80);
        assert_eq!(rows, vec!["  │ ls", "  │ ^[[1A^M^[[2Ktouch PWNED"]);
    }

    #[test]
    fn other_inputs_are_shown_whole_unless_a_preview_shows_them() {
        let input = json!({"query": "select 1", "database": "prod"});
        let rows = shown(&request(input.clone(), None), 80);
        assert_eq!(
            rows.join("\n"),
            "  │ {\n  │   \"query\": \"select 1\",\n  │   \"database\": \"prod\"\n  │ }"
        );
        let rows = shown(&request(input, Some("+new line")), 80);
        assert_eq!(rows, vec!["+new line"]);
        assert!(shown(&request(json!({"path": "a"}), None), 80).is_empty());
    }

    #[test]
    fn wide_characters_and_tabs_count_as_their_columns() {
        assert_eq!(wrap_line("日本語日本", 6), vec!["日本語", "日本"]);
        assert_eq!(wrap_line("", 6), vec![""]);
        assert_eq!(wrap_line("a\tb", 4), vec!["a\t", "b"]);
    }

    #[test]
    fn the_question_neutralises_the_rule() {
        assert_eq!(
            question(Style::plain(), "bash(ls\r\x1b[2K*)").as_str(),
            "  allow? [y] once  [a] always (bash(ls^M^[[2K*))  [n] no, stop  [t] tell it what \
             to do instead › "
        );
    }
}
