//! Unified diffs of a file change, as the user sees them after `edit_file` and `write_file`:
//! coloured for a terminal, plain for `NO_COLOR` or a pipe.

use similar::{ChangeTag, TextDiff};

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Diffs shown to the user are cut after this many lines; the whole file is on disk anyway.
pub const MAX_DIFF_LINES: usize = 200;

/// A unified diff (3 lines of context) of `old` → `new`, headed `--- a/PATH` / `+++ b/PATH`.
/// With `color`, added lines are green, removed lines red and hunk headers cyan.
pub fn unified_diff(old: &str, new: &str, path: &str, color: bool) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    let paint = |code: &str, text: String| {
        if color {
            format!("{code}{text}{RESET}")
        } else {
            text
        }
    };
    out.push(paint(RED, format!("--- a/{path}")));
    out.push(paint(GREEN, format!("+++ b/{path}")));
    let mut unified = diff.unified_diff();
    unified.context_radius(3);
    for hunk in unified.iter_hunks() {
        out.push(paint(CYAN, hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let line = change.to_string_lossy();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            let text = match change.tag() {
                ChangeTag::Equal => format!(" {line}"),
                ChangeTag::Delete => paint(RED, format!("-{line}")),
                ChangeTag::Insert => paint(GREEN, format!("+{line}")),
            };
            out.push(text);
            if change.missing_newline() {
                out.push("\\ No newline at end of file".to_string());
            }
        }
    }
    if out.len() > MAX_DIFF_LINES {
        let cut = out.len() - MAX_DIFF_LINES;
        out.truncate(MAX_DIFF_LINES);
        out.push(format!("... ({cut} more diff lines)"));
    }
    out.join("\n")
}

/// Removes ANSI colour sequences, so a UI holding a coloured `display` can print it plain.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI sequences end at the first byte in '@'..='~'.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Counts (added, removed) lines of a change, for one-line summaries.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = TextDiff::from_lines(old, new);
    diff.iter_all_changes()
        .fold((0, 0), |(add, del), c| match c.tag() {
            ChangeTag::Insert => (add + 1, del),
            ChangeTag::Delete => (add, del + 1),
            ChangeTag::Equal => (add, del),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn plain_diff_has_headers_hunks_and_markers() {
        let old = "a\nb\nc\n";
        let new = "a\nB\nc\n";
        assert_eq!(
            unified_diff(old, new, "x.txt", false),
            "--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"
        );
    }

    #[test]
    fn coloured_diff_strips_back_to_the_plain_one() {
        let old = "one\ntwo\n";
        let new = "one\n2\nthree";
        let coloured = unified_diff(old, new, "f", true);
        assert!(coloured.contains("\x1b[32m+2\x1b[0m"), "{coloured:?}");
        assert!(coloured.contains("\x1b[31m-two\x1b[0m"), "{coloured:?}");
        assert_eq!(strip_ansi(&coloured), unified_diff(old, new, "f", false));
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = unified_diff("a\n", "a\nb", "f", false);
        assert!(diff.ends_with("+b\n\\ No newline at end of file"), "{diff}");
    }

    #[test]
    fn counts_added_and_removed_lines() {
        assert_eq!(line_counts("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}
