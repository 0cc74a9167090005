//! How tool calls, hook notices and errors read on the terminal: one compact line per call.

use serde_json::Value;

use super::style::Style;

/// `bash(cargo test)`, `read_file(src/main.rs)`: the tool and its most telling argument.
pub fn call_summary(name: &str, input: &Value) -> String {
    let key = ["command", "path", "pattern", "sql", "uri", "url", "query"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str));
    let arg = match key {
        Some(text) => one_line(text, 80),
        None => match input {
            Value::Object(map) if map.is_empty() => String::new(),
            Value::String(raw) => one_line(raw, 80),
            other => one_line(&other.to_string(), 80),
        },
    };
    format!("{name}({arg})")
}

/// The outcome of a call in a few words: the first line of an error, or how much came back.
pub fn outcome_summary(content: &str, is_error: bool) -> String {
    let flat = content.trim().replace('\t', " ");
    if is_error {
        return one_line(&flat, 90);
    }
    let lines = content.lines().count();
    if lines <= 1 {
        one_line(&flat, 80)
    } else {
        format!("{lines} lines")
    }
}

/// The first line of `text`, cut to `max` characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let more_lines = text.trim_end().contains('\n');
    let mut out: String = first.chars().take(max).collect();
    if first.chars().count() > max || more_lines {
        out.push('…');
    }
    out
}

pub fn tool_begin_line(style: Style, name: &str, input: &Value) -> String {
    format!(
        "{} {}",
        style.cyan("●"),
        style.bold(&call_summary(name, input))
    )
}

pub fn tool_outcome(style: Style, content: &str, is_error: bool) -> String {
    let summary = outcome_summary(content, is_error);
    if is_error {
        format!("{} {}", style.red("✗"), style.red(&summary))
    } else {
        format!("{} {}", style.green("✓"), style.dim(&summary))
    }
}

/// Keeps each tool call on one line: the call is shown when it begins, and its outcome is added
/// to that same line when nothing else was printed in between (else the call is repeated).
#[derive(Default)]
pub struct ToolLines {
    /// The call whose line is still open, waiting for its outcome.
    open: Option<String>,
    begun: std::collections::HashMap<String, String>,
}

impl ToolLines {
    /// The text that starts a call's line (no newline: the line stays open).
    pub fn begin(&mut self, style: Style, id: &str, name: &str, input: &Value) -> String {
        let line = tool_begin_line(style, name, input);
        self.begun.insert(id.to_string(), line.clone());
        self.open = Some(id.to_string());
        line
    }

    /// The text that ends a call's line, newline included.
    pub fn end(&mut self, style: Style, id: &str, content: &str, is_error: bool) -> String {
        let outcome = tool_outcome(style, content, is_error);
        let begun = self.begun.remove(id).unwrap_or_default();
        if self.open.take().as_deref() == Some(id) {
            format!("  {outcome}\n")
        } else {
            format!("{begun}  {outcome}\n")
        }
    }

    /// Something else is about to be printed: ends the open line, if any.
    pub fn interrupt(&mut self) -> Option<&'static str> {
        self.open.take().map(|_| "\n")
    }
}

/// A tool's display text (an edit's coloured diff) as this stream can show it.
pub fn styled_display(style: Style, display: &str) -> String {
    let text = display.trim_end();
    if style.color {
        text.to_string()
    } else {
        crate::tools::diff::strip_ansi(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_pick_the_telling_argument() {
        assert_eq!(
            call_summary("bash", &json!({"command":"ls -la"})),
            "bash(ls -la)"
        );
        assert_eq!(
            call_summary("read_file", &json!({"path":"a.rs","limit":3})),
            "read_file(a.rs)"
        );
        assert_eq!(call_summary("x", &json!({})), "x()");
        assert_eq!(call_summary("bash", &json!({"command":"a\nb"})), "bash(a…)");
    }

    #[test]
    fn a_call_and_its_outcome_share_one_line_unless_something_came_between() {
        let style = Style::plain();
        let mut lines = ToolLines::default();
        let begin = lines.begin(style, "1", "bash", &json!({"command": "ls"}));
        assert_eq!(begin, "● bash(ls)");
        assert_eq!(lines.end(style, "1", "a\nb\n", false), "  ✓ 2 lines\n");

        lines.begin(style, "2", "read_file", &json!({"path": "a"}));
        assert_eq!(lines.interrupt(), Some("\n"));
        assert_eq!(lines.interrupt(), None);
        assert_eq!(
            lines.end(style, "2", "missing", true),
            "● read_file(a)  ✗ missing\n"
        );
    }

    #[test]
    fn outcomes_are_short() {
        assert_eq!(outcome_summary("one\ntwo\nthree\n", false), "3 lines");
        assert_eq!(outcome_summary("done", false), "done");
        assert_eq!(outcome_summary("no such file\nmore", true), "no such file…");
    }
}
