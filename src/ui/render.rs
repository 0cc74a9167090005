//! How tool calls, hook notices and errors read on the terminal: one compact line per call.
//! Everything here is a [`Term`]: tool names, inputs and outputs are neutralised before styling.

use serde_json::Value;

use crate::session::HookNotice;

use super::safe_text::neutralise;
use super::style::Style;
use super::term::Term;

/// Characters of the telling argument shown in a call's line.
const SUMMARY_CHARS: usize = 80;

/// The keys whose value tells most about a call, in order of preference (a search shows what
/// it looks for before where).
/// The first of these an input has is its call's argument as the user reads it: `task`'s
/// description, `skill`'s name (never the input's raw JSON when one is there).
const TELLING_KEYS: [&str; 10] = [
    "command",
    "pattern",
    "path",
    "sql",
    "uri",
    "url",
    "query",
    "description",
    "name",
    "file_path",
];

/// `bash(cargo test)`, `read_file(src/main.rs)`: the tool and its most telling argument, with
/// control characters made visible.
pub fn call_summary(name: &str, input: &Value) -> String {
    format!("{}({})", neutralise(name), summary_arg(input).0)
}

/// [`call_summary`] with the argument cut at `max` characters instead (the REPL: what its
/// terminal's width leaves for it), and whether it shows the whole input.
pub fn call_summary_within(name: &str, input: &Value, max: usize) -> (String, bool) {
    let (arg, whole) = summary_arg_within(input, max);
    (format!("{}({arg})", neutralise(name)), whole)
}

/// The argument shown in a call's line (neutralised, cut to one line) and whether it is all
/// there is to the input: nothing cut, and no other argument left out.
pub fn summary_arg(input: &Value) -> (String, bool) {
    summary_arg_within(input, SUMMARY_CHARS)
}

/// [`summary_arg`] cut at `max` characters.
pub fn summary_arg_within(input: &Value, max: usize) -> (String, bool) {
    let key = TELLING_KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str));
    let (full, alone) = match (key, input) {
        (Some(text), Value::Object(map)) => (neutralise(text).into_owned(), map.len() == 1),
        (_, Value::Object(map)) if map.is_empty() => (String::new(), true),
        (_, Value::String(raw)) => (neutralise(raw).into_owned(), true),
        (_, other) => (neutralise(&other.to_string()).into_owned(), true),
    };
    let shown = one_line(&full, max);
    let whole = alone && shown == full;
    (shown, whole)
}

/// What one finished call left to show.
pub struct Finished<'a> {
    pub name: &'a str,
    pub content: &'a str,
    pub is_error: bool,
    pub display: Option<&'a str>,
    pub total_lines: Option<usize>,
}

/// How a call ended, as its line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Done,
    /// A tool error: its first line.
    Error(String),
    /// A command's non-zero exit status.
    Exit(i64),
    /// A command killed by a signal (`SIGKILL`).
    Killed(String),
    /// A command the sandbox stopped: what it was refused.
    Blocked(String),
}

impl Finished<'_> {
    /// How the call ended: a command's `Exit code: N` / `Killed by signal S` line and the
    /// sandbox's note are read from its output.
    pub fn ending(&self) -> Ending {
        if self.is_error {
            let flat = neutralise(self.content.trim()).replace('\t', " ");
            return Ending::Error(flat.lines().next().unwrap_or("").to_string());
        }
        if let Some(at) = self.content.find("\nBlocked by the sandbox: ") {
            let rest = &self.content[at + "\nBlocked by the sandbox: ".len()..];
            let what = rest.split(". The ").next().unwrap_or(rest);
            return Ending::Blocked(neutralise(what).into_owned());
        }
        let last = self.output_end().1;
        if let Some(code) = last.strip_prefix("Exit code: ")
            && let Ok(code) = code.trim().parse::<i64>()
            && code != 0
        {
            return Ending::Exit(code);
        }
        if let Some(signal) = last.strip_prefix("Killed by signal ") {
            return Ending::Killed(neutralise(signal.trim()).into_owned());
        }
        Ending::Done
    }

    /// Whether the call failed (an error, a non-zero exit, a kill, the sandbox).
    pub fn failed(&self) -> bool {
        self.ending() != Ending::Done
    }

    /// The output without a command's closing status line and the sandbox's note, and that
    /// status line (empty when there is none).
    pub fn output_end(&self) -> (&str, &str) {
        let content = match self.content.find("\nBlocked by the sandbox: ") {
            Some(at) => &self.content[..at],
            None => self.content,
        };
        let trimmed = content.trim_end();
        let (body, last) = match trimmed.rsplit_once('\n') {
            Some((body, last)) => (body, last),
            None => ("", trimmed),
        };
        let status = last.starts_with("Exit code: ")
            || last.starts_with("Killed by signal ")
            || last == "Exit status unknown";
        if status { (body, last) } else { (content, "") }
    }

    /// The lines of output the call really produced (a command's counted before its cap; its
    /// closing `Exit code:` line is not output).
    pub fn lines(&self) -> usize {
        self.total_lines.unwrap_or_else(|| {
            let (body, _) = self.output_end();
            let body = body.trim_end();
            if body.is_empty() || body == "(no output)" {
                0
            } else {
                body.lines().count()
            }
        })
    }
}

/// The outcome on the call's line: `✗ exit 1`, `✗ sandbox: writing /etc/x — /permissions or
/// --sandbox off`, `✗ interrupted by you`, `✗ ERROR`,
/// `✓ +2 −1` for a change, `✓ 12 lines`, `✓ the one line`. The REPL and `-p` say the same.
pub fn outcome(style: Style, call: &Finished<'_>) -> Term {
    let failure = match call.ending() {
        Ending::Done => None,
        // The tool's words for the model; the user reads who did it.
        Ending::Error(first) if first == "interrupted by the user" => {
            Some("interrupted by you".to_string())
        }
        Ending::Error(first) => Some(first),
        Ending::Exit(code) => Some(format!("exit {code}")),
        Ending::Killed(signal) => Some(format!("killed by {signal}")),
        Ending::Blocked(what) => Some(format!("sandbox: {what} — /permissions or --sandbox off")),
    };
    if let Some(text) = failure {
        let mut text = one_line(&text, 90);
        let lines = call.lines();
        if !call.is_error && lines > 0 {
            text.push_str(&format!(" · {}", count(lines)));
        }
        return crate::term![style.red("✗"), " ", style.red(&text)];
    }
    let summary = match call.display.and_then(diff_counts) {
        Some((added, removed)) => format!("+{added} −{removed}"),
        None => match (call.lines(), call.total_lines) {
            (0, _) => "no output".to_string(),
            // One line that is the result (a path, "Edited x", a one-line file).
            (1, None) => one_line(&neutralise(call.output_end().0.trim()), 80),
            (n, _) => count(n),
        },
    };
    crate::term![style.green("✓"), " ", style.dim(&summary)]
}

fn count(lines: usize) -> String {
    if lines == 1 {
        "1 line".to_string()
    } else {
        format!("{lines} lines")
    }
}

/// Lines added and removed by a unified diff (or a created file's `(+N lines)` note).
pub fn diff_counts(display: &str) -> Option<(usize, usize)> {
    crate::tools::diff::display_counts(display)
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

    /// The text that ends a call's line, newline included, with its outcome drawn.
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

/// `12.3k`, `950`, `1.2M`: a token count as the footer and `/cost` show it.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A hook's notice on one line: `PreToolUse hook (bash): block: REASON`.
pub fn hook_line(style: Style, notice: &HookNotice) -> Term {
    let subject = match &notice.tool {
        Some(tool) => format!("{} hook ({tool})", notice.event),
        None => format!("{} hook", notice.event),
    };
    let word = notice.decision.as_str();
    let verdict = if notice.decision.is_alarm() {
        style.red(word)
    } else {
        style.yellow(word)
    };
    crate::term![subject, ": ", verdict, ": ", &notice.message]
}

/// What `usage` cost at `price`, in dollars: cache reads and writes at their own prices where
/// the settings give them, else at the input price.
pub fn cost(usage: crate::llm::Usage, price: crate::config::Price) -> f64 {
    usage.cost(price)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn end(lines: &mut ToolLines, style: Style, id: &str, content: &str, is_error: bool) -> Term {
        let call = Finished {
            name: "x",
            content,
            is_error,
            display: None,
            total_lines: None,
        };
        lines.end_with(id, outcome(style, &call))
    }

    fn said(content: &str, is_error: bool, total_lines: Option<usize>) -> String {
        let call = Finished {
            name: "bash",
            content,
            is_error,
            display: None,
            total_lines,
        };
        outcome(Style::plain(), &call).as_str().to_string()
    }

    #[test]
    fn a_line_is_open_from_its_call_until_its_outcome_or_something_else() {
        let style = Style::plain();
        let mut lines = ToolLines::default();
        lines.begin(style, "a", "bash", &json!({"command": "ls"}));
        assert!(lines.is_open("a"));
        assert!(!lines.is_open("b"));
        end(&mut lines, style, "a", "ok", false);
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
        assert_eq!(
            call_summary("grep", &json!({"path":"src","pattern":"TODO"})),
            "grep(TODO)"
        );
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
            end(&mut lines, style, "1", "a\nb\n", false).as_str(),
            "  ✓ 2 lines\n"
        );

        lines.begin(style, "2", "read_file", &json!({"path": "a"}));
        assert_eq!(lines.interrupt(), Some("\n"));
        assert_eq!(lines.interrupt(), None);
        assert_eq!(
            end(&mut lines, style, "2", "missing", true).as_str(),
            "● read_file(a)  ✗ missing\n"
        );
    }

    #[test]
    fn outcomes_are_short_and_safe() {
        assert_eq!(said("one\ntwo\nthree\n", false, None), "✓ 3 lines");
        assert_eq!(said("done", false, None), "✓ done");
        assert_eq!(said("no such file\nmore", true, None), "✗ no such file");
        assert_eq!(said("\x1b]52;c;eA==\x07", false, None), "✓ ^[]52;c;eA==^G");
    }

    #[test]
    fn a_failed_command_says_so_and_its_status_line_is_not_output() {
        assert_eq!(said("a\nb\nExit code: 0", false, Some(2)), "✓ 2 lines");
        assert_eq!(said("a\nb\nExit code: 0", false, None), "✓ 2 lines");
        assert_eq!(
            said("boom\nExit code: 1", false, Some(1)),
            "✗ exit 1 · 1 line"
        );
        assert_eq!(
            said("(no output)\nExit code: 6", false, Some(0)),
            "✗ exit 6"
        );
        assert_eq!(
            said("x\nKilled by signal SIGKILL", false, Some(1)),
            "✗ killed by SIGKILL · 1 line"
        );
        let blocked = "touch: cannot touch '/etc/x': Permission denied\nExit code: 1\nBlocked by \
                       the sandbox: writing /etc/x. The workspace-write sandbox allows ...";
        assert_eq!(
            said(blocked, false, Some(1)),
            "✗ sandbox: writing /etc/x — /permissions or --sandbox off · 1 line"
        );
        let coloured = outcome(
            Style { color: true },
            &Finished {
                name: "bash",
                content: "Exit code: 1",
                is_error: false,
                display: None,
                total_lines: Some(0),
            },
        );
        assert!(coloured.as_str().contains("\x1b[31m✗"), "{coloured:?}");
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
