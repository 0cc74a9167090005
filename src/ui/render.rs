//! How tool calls, hook notices and errors read on the terminal: one compact line per call.
//! Everything here is a [`Term`]: tool names, inputs and outputs are neutralised before styling.

use serde_json::Value;

use super::safe_text::neutralise;
use super::style::Style;
use super::term::Term;

/// Characters of the telling argument shown in a call's line.
const SUMMARY_CHARS: usize = 80;

/// The keys whose value tells most about a call, in order of preference.
const TELLING_KEYS: [&str; 7] = ["command", "path", "pattern", "sql", "uri", "url", "query"];

/// `bash(cargo test)`, `read_file(src/main.rs)`: the tool and its most telling argument, with
/// control characters made visible.
pub fn call_summary(name: &str, input: &Value) -> String {
    format!("{}({})", neutralise(name), summary_arg(input).0)
}

/// The argument shown in a call's line (neutralised, cut to one line) and whether it is all
/// there is to the input: nothing cut, and no other argument left out.
pub fn summary_arg(input: &Value) -> (String, bool) {
    let key = TELLING_KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str));
    let (full, alone) = match (key, input) {
        (Some(text), Value::Object(map)) => (neutralise(text).into_owned(), map.len() == 1),
        (_, Value::Object(map)) if map.is_empty() => (String::new(), true),
        (_, Value::String(raw)) => (neutralise(raw).into_owned(), true),
        (_, other) => (neutralise(&other.to_string()).into_owned(), true),
    };
    let shown = one_line(&full, SUMMARY_CHARS);
    let whole = alone && shown == full;
    (shown, whole)
}

/// The outcome of a call in a few words: the first line of an error, or how much came back.
pub fn outcome_summary(content: &str, is_error: bool) -> String {
    let flat = neutralise(content.trim()).replace('\t', " ");
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

pub fn tool_begin_line(style: Style, name: &str, input: &Value) -> Term {
    crate::term![style.cyan("●"), " ", style.bold(&call_summary(name, input))]
}

pub fn tool_outcome(style: Style, content: &str, is_error: bool) -> Term {
    let summary = outcome_summary(content, is_error);
    if is_error {
        crate::term![style.red("✗"), " ", style.red(&summary)]
    } else {
        crate::term![style.green("✓"), " ", style.dim(&summary)]
    }
}

/// Keeps each tool call on one line: the call is shown when it begins, and its outcome is added
/// to that same line when nothing else was printed in between (else the call is repeated).
#[derive(Default)]
pub struct ToolLines {
    /// The call whose line is still open, waiting for its outcome.
    open: Option<String>,
    begun: std::collections::HashMap<String, Term>,
}

impl ToolLines {
    /// The text that starts a call's line (no newline: the line stays open).
    pub fn begin(&mut self, style: Style, id: &str, name: &str, input: &Value) -> Term {
        let line = tool_begin_line(style, name, input);
        self.begun.insert(id.to_string(), line.clone());
        self.open = Some(id.to_string());
        line
    }

    /// Whether the line of call `id` is still open (its outcome will end it).
    pub fn is_open(&self, id: &str) -> bool {
        self.open.as_deref() == Some(id)
    }

    /// The text that ends a call's line, newline included.
    pub fn end(&mut self, style: Style, id: &str, content: &str, is_error: bool) -> Term {
        self.end_with(id, tool_outcome(style, content, is_error))
    }

    /// [`ToolLines::end`] with the outcome already drawn.
    pub fn end_with(&mut self, id: &str, outcome: Term) -> Term {
        let begun = self.begun.remove(id).unwrap_or_default();
        if self.open.take().as_deref() == Some(id) {
            crate::term!["  ", outcome, "\n"]
        } else {
            crate::term![begun, "  ", outcome, "\n"]
        }
    }

    /// Something else is about to be printed: ends the open line, if any.
    pub fn interrupt(&mut self) -> Option<&'static str> {
        self.open.take().map(|_| "\n")
    }
}

/// A tool's display text or preview (an edit's diff, a new file's lines) as this stream shows
/// it: neutralised line by line, diff lines coloured by their first characters (`+` green, `-`
/// red, `@@` cyan).
pub fn styled_display(style: Style, display: &str) -> Term {
    let mut out = Term::new();
    for (i, line) in display.trim_end().split('\n').enumerate() {
        if i > 0 {
            out += "\n";
        }
        out += if line.starts_with("@@") {
            style.cyan(line)
        } else if line.starts_with('+') {
            style.green(line)
        } else if line.starts_with('-') {
            style.red(line)
        } else {
            Term::plain(line)
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_line_is_open_from_its_call_until_its_outcome_or_something_else() {
        let style = Style::plain();
        let mut lines = ToolLines::default();
        lines.begin(style, "a", "bash", &json!({"command": "ls"}));
        assert!(lines.is_open("a"));
        assert!(!lines.is_open("b"));
        lines.end(style, "a", "ok", false);
        assert!(!lines.is_open("a"));
        lines.begin(style, "b", "bash", &json!({"command": "ls"}));
        lines.interrupt();
        assert!(!lines.is_open("b"));
    }

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
    fn summaries_show_control_characters_and_say_when_they_are_not_whole() {
        let attack = json!({"command": "touch PWNED\r\x1b[2Kls"});
        assert_eq!(call_summary("bash", &attack), "bash(touch PWNED^M^[[2Kls)");
        assert_eq!(call_summary("x\x1b]0;t\x07", &json!({})), "x^[]0;t^G()");
        assert!(summary_arg(&attack).1);
        assert!(!summary_arg(&json!({"command": "a".repeat(81)})).1, "cut");
        assert!(!summary_arg(&json!({"command": "a\nb"})).1, "multi-line");
        assert!(
            !summary_arg(&json!({"query": "q", "drop": true})).1,
            "other args"
        );
        assert!(summary_arg(&json!({"command": "a".repeat(80)})).1);
    }

    #[test]
    fn a_call_and_its_outcome_share_one_line_unless_something_came_between() {
        let style = Style::plain();
        let mut lines = ToolLines::default();
        let begin = lines.begin(style, "1", "bash", &json!({"command": "ls"}));
        assert_eq!(begin.as_str(), "● bash(ls)");
        assert_eq!(
            lines.end(style, "1", "a\nb\n", false).as_str(),
            "  ✓ 2 lines\n"
        );

        lines.begin(style, "2", "read_file", &json!({"path": "a"}));
        assert_eq!(lines.interrupt(), Some("\n"));
        assert_eq!(lines.interrupt(), None);
        assert_eq!(
            lines.end(style, "2", "missing", true).as_str(),
            "● read_file(a)  ✗ missing\n"
        );
    }

    #[test]
    fn outcomes_are_short_and_safe() {
        assert_eq!(outcome_summary("one\ntwo\nthree\n", false), "3 lines");
        assert_eq!(outcome_summary("done", false), "done");
        assert_eq!(outcome_summary("no such file\nmore", true), "no such file…");
        assert_eq!(
            outcome_summary("\x1b]52;c;eA==\x07", false),
            "^[]52;c;eA==^G"
        );
    }

    #[test]
    fn displays_are_neutralised_then_coloured_by_line() {
        let diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\x1b[2J\n+new\u{9b}\n ctx";
        assert_eq!(
            styled_display(Style::plain(), diff).as_str(),
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old^[[2J\n+new<U+009B>\n ctx"
        );
        let coloured = styled_display(Style { color: true }, diff);
        assert_eq!(
            coloured.as_str(),
            "\x1b[31m--- a/f\x1b[0m\n\x1b[32m+++ b/f\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\
             \x1b[31m-old^[[2J\x1b[0m\n\x1b[32m+new<U+009B>\x1b[0m\n ctx"
        );
    }
}
