//! How the REPL shows a tool's result under its call: the outcome on the call's line (an
//! edit as `+2 −1`, a command as its true line count, taken before any cap), then the first
//! lines of the output and `… +N lines` for the rest. `/expand` prints the whole output.

use crate::ui::render::one_line;
use crate::ui::safe_text::neutralise;
use crate::ui::style::Style;
use crate::ui::term::Term;

/// Lines of a tool's output shown under its call.
pub const PREVIEW_LINES: usize = 5;

/// What one finished call left for the REPL to show.
pub struct Finished<'a> {
    pub name: &'a str,
    pub content: &'a str,
    pub is_error: bool,
    pub display: Option<&'a str>,
    pub total_lines: Option<usize>,
}

impl Finished<'_> {
    /// The lines of output the call really produced (a command's counted before its cap; its
    /// closing `Exit code:` line is not output).
    fn lines(&self) -> usize {
        self.total_lines
            .unwrap_or_else(|| self.content.trim_end().lines().count())
    }

    /// Whether the output is worth a preview: not an error (its line says it), not a file read
    /// (the model's reading, not news), not a change (its diff shows it).
    fn previewed(&self) -> bool {
        !self.is_error && self.display.is_none() && self.name != "read_file" && self.lines() > 0
    }
}

/// The outcome on the call's line: `✗ error`, `✓ +2 −1` for a change, `✓ 12 lines`.
pub fn outcome(style: Style, call: &Finished<'_>) -> Term {
    if call.is_error {
        let flat = neutralise(call.content.trim()).replace('\t', " ");
        return crate::term![style.red("✗"), " ", style.red(&one_line(&flat, 90))];
    }
    let summary = match call.display.and_then(diff_counts) {
        Some((added, removed)) => format!("+{added} −{removed}"),
        None => match (call.lines(), call.total_lines) {
            (0, Some(_)) => "no output".to_string(),
            (1, None) => one_line(&neutralise(call.content.trim()), 80),
            (1, Some(_)) => "1 line".to_string(),
            (n, _) => format!("{n} lines"),
        },
    };
    crate::term![style.green("✓"), " ", style.dim(&summary)]
}

/// Lines added and removed by a unified diff (or a created file's `(+N lines)` note).
pub fn diff_counts(display: &str) -> Option<(usize, usize)> {
    if let Some(rest) = display.split("(+").nth(1)
        && display.starts_with("created ")
    {
        let n = rest.split(' ').next()?.parse().ok()?;
        return Some((n, 0));
    }
    if !display.starts_with("--- ") {
        return None;
    }
    let mut added = 0;
    let mut removed = 0;
    for line in display.lines() {
        if line.starts_with('+') && !line.starts_with("+++") {
            added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            removed += 1;
        }
    }
    Some((added, removed))
}

/// The first [`PREVIEW_LINES`] lines of the output, each cut to `width`, then how many more.
pub fn preview(style: Style, call: &Finished<'_>, width: usize) -> Vec<Term> {
    if !call.previewed() {
        return Vec::new();
    }
    let total = call.lines();
    let mut rows: Vec<Term> = call
        .content
        .lines()
        .take(PREVIEW_LINES.min(total))
        .map(|line| {
            let flat = neutralise(line).replace('\t', "    ");
            crate::term![
                style.dim("  │ "),
                one_line(&flat, width.saturating_sub(5).max(10))
            ]
        })
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
        let mut failed = call("bash", "boom\nmore", None);
        failed.is_error = true;
        assert_eq!(outcome(Style::plain(), &failed).as_str(), "✗ boom…");
        assert!(preview(Style::plain(), &failed, 80).is_empty());
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
