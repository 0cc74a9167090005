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
    if is_error {
        return one_line(content, 160);
    }
    let lines = content.lines().count();
    if lines <= 1 {
        one_line(content, 100)
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

pub fn tool_end_line(style: Style, content: &str, is_error: bool) -> String {
    let summary = outcome_summary(content, is_error);
    if is_error {
        format!("  {} {}", style.red("✗"), style.red(&summary))
    } else {
        format!("  {} {}", style.green("✓"), style.dim(&summary))
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
    fn outcomes_are_short() {
        assert_eq!(outcome_summary("one\ntwo\nthree\n", false), "3 lines");
        assert_eq!(outcome_summary("done", false), "done");
        assert_eq!(outcome_summary("no such file\nmore", true), "no such file…");
    }
}
