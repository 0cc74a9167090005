//! How the REPL shows a tool's result under its call (the outcome on the call's line is
//! `render::outcome`, shared with `-p`): for a call that worked, the first lines of its output
//! and `… +N lines` for the rest; for one that failed (a non-zero exit, an error, the sandbox),
//! the last lines, where the traceback or `FAILED` is, after `… N lines above`. `/expand` prints
//! the whole output.

use crate::ui::render::{Finished, one_line};
use crate::ui::safe_text::neutralise;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// Lines of a tool's output shown under its call.
pub const PREVIEW_LINES: usize = 5;

/// Whether the output is worth a preview: not a file read (the model's reading, not news), not a
/// change (its diff shows it), not one line the call's line already shows.
fn previewed(call: &Finished<'_>) -> bool {
    let lines = call.lines();
    if call.display.is_some() || call.name == "read_file" || lines == 0 {
        return false;
    }
    if call.is_error {
        return lines > 1;
    }
    call.failed() || !(lines == 1 && call.total_lines.is_none())
}

/// The preview rows: the first [`PREVIEW_LINES`] lines (the last, when the call failed), each
/// cut to `width`, and how many more.
pub fn preview(style: Style, call: &Finished<'_>, width: usize) -> Vec<Term> {
    if !previewed(call) {
        return Vec::new();
    }
    let total = call.lines();
    let (body, _) = call.output_end();
    let row = |line: &str| {
        let flat = neutralise(line).replace('\t', "    ");
        crate::term![
            style.dim("  │ "),
            one_line(&flat, width.saturating_sub(5).max(10))
        ]
    };
    if call.failed() {
        // The end of the output says why: the traceback, the failing test.
        let lines: Vec<&str> = body.trim_end().lines().collect();
        let from = lines.len().saturating_sub(PREVIEW_LINES);
        let mut rows = Vec::new();
        let above = total.saturating_sub(lines.len() - from);
        if above > 0 {
            rows.push(style.dim(&format!(
                "  … {above} lines above (/expand shows the output)"
            )));
        }
        rows.extend(lines[from..].iter().map(|l| row(l)));
        return rows;
    }
    let mut rows: Vec<Term> = body
        .lines()
        .take(PREVIEW_LINES.min(total))
        .map(row)
        .collect();
    let more = total.saturating_sub(rows.len());
    if more > 0 {
        rows.push(style.dim(&format!("  … +{more} lines (/expand shows the output)")));
    }
    rows
}

/// The whole output of a call, for `/expand`.
pub fn whole(content: &str) -> Term {
    Term::plain(content.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::render::outcome;
    use pretty_assertions::assert_eq;

    fn call<'a>(name: &'a str, content: &'a str, total: Option<usize>) -> Finished<'a> {
        Finished {
            name,
            content,
            is_error: false,
            display: None,
            total_lines: total,
        }
    }

    fn shown(rows: Vec<Term>) -> Vec<String> {
        rows.iter().map(|r| r.as_str().to_string()).collect()
    }

    #[test]
    fn a_long_output_shows_its_head_and_its_true_count() {
        let content =
            "1\n2\n3\n4\n5\n6\n\n... [199990 lines cut] ...\n\n199999\n200000\nExit code: 0\n";
        let c = call("bash", content, Some(200_000));
        assert_eq!(outcome(Style::plain(), &c).as_str(), "✓ 200000 lines");
        assert_eq!(
            shown(preview(Style::plain(), &c, 80)),
            vec![
                "  │ 1",
                "  │ 2",
                "  │ 3",
                "  │ 4",
                "  │ 5",
                "  … +199995 lines (/expand shows the output)"
            ]
        );
    }

    #[test]
    fn short_outputs_reads_and_errors_get_no_count_line() {
        let c = call("bash", "a\nb\nExit code: 0\n", Some(2));
        assert_eq!(
            shown(preview(Style::plain(), &c, 80)),
            vec!["  │ a", "  │ b"]
        );
        assert!(preview(Style::plain(), &call("read_file", "x\ny\n", None), 80).is_empty());
        let silent = call("bash", "(no output)\nExit code: 0\n", Some(0));
        assert_eq!(outcome(Style::plain(), &silent).as_str(), "✓ no output");
        assert!(preview(Style::plain(), &silent, 80).is_empty());
        let mut failed = call("bash", "boom", None);
        failed.is_error = true;
        assert_eq!(outcome(Style::plain(), &failed).as_str(), "✗ boom");
        assert!(preview(Style::plain(), &failed, 80).is_empty());
        // One line of output is on the call's line already.
        let one = call("glob", "src/a.rs", None);
        assert_eq!(outcome(Style::plain(), &one).as_str(), "✓ src/a.rs");
        assert!(preview(Style::plain(), &one, 80).is_empty());
    }

    #[test]
    fn a_failure_shows_the_end_of_its_output() {
        let content = "collecting\n1\n2\n3\n4\nTraceback\n  File x\nValueError: bad\nFAILED \
                       test_x\nExit code: 1\n";
        let c = call("bash", content, Some(9));
        assert_eq!(outcome(Style::plain(), &c).as_str(), "✗ exit 1 · 9 lines");
        assert_eq!(
            shown(preview(Style::plain(), &c, 80)),
            vec![
                "  … 4 lines above (/expand shows the output)",
                "  │ 4",
                "  │ Traceback",
                "  │   File x",
                "  │ ValueError: bad",
                "  │ FAILED test_x"
            ]
        );
        let one = call(
            "bash",
            "curl: (6) Could not resolve host\nExit code: 6\n",
            Some(1),
        );
        assert_eq!(
            shown(preview(Style::plain(), &one, 80)),
            vec!["  │ curl: (6) Could not resolve host"]
        );
    }

    #[test]
    fn a_change_is_summarised_by_its_lines_added_and_removed() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n-old\n+new\n+more\n ctx\n";
        let mut c = call("edit_file", "Edited f", None);
        c.display = Some(diff);
        assert_eq!(outcome(Style::plain(), &c).as_str(), "✓ +2 −1");
        assert!(preview(Style::plain(), &c, 80).is_empty());
        c.display = Some("created src/x.rs (+12 lines)");
        assert_eq!(outcome(Style::plain(), &c).as_str(), "✓ +12 −0");
    }

    #[test]
    fn preview_lines_are_neutralised_and_cut_to_the_width() {
        let line = format!("\x1b[2J{}\n", "x".repeat(100));
        let c = call("bash", &line, Some(1));
        let rows = shown(preview(Style::plain(), &c, 40));
        assert_eq!(rows.len(), 1);
        assert!(rows[0].starts_with("  │ ^[[2Jxxx"), "{rows:?}");
        assert!(rows[0].chars().count() <= 41, "{rows:?}");
    }
}
