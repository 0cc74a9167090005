//! Unified diffs of a file change, as the user sees them after `edit_file` and `write_file`.
//! Plain text: the UI neutralises the file's lines and colours them by their `+`/`-`/`@@`.

use similar::{ChangeTag, TextDiff};

/// Diffs shown to the user are cut after this many lines; the whole file is on disk anyway.
pub const MAX_DIFF_LINES: usize = 200;

/// A unified diff (3 lines of context) of `old` → `new`, headed `--- a/PATH` / `+++ b/PATH`.
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    out.push(format!("--- a/{path}"));
    out.push(format!("+++ b/{path}"));
    let mut unified = diff.unified_diff();
    unified.context_radius(3);
    for hunk in unified.iter_hunks() {
        out.push(hunk.header().to_string());
        for change in hunk.iter_changes() {
            let line = change.to_string_lossy();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            let text = match change.tag() {
                ChangeTag::Equal => format!(" {line}"),
                ChangeTag::Delete => format!("-{line}"),
                ChangeTag::Insert => format!("+{line}"),
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
            unified_diff(old, new, "x.txt"),
            "--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = unified_diff("a\n", "a\nb", "f");
        assert!(diff.ends_with("+b\n\\ No newline at end of file"), "{diff}");
    }

    #[test]
    fn counts_added_and_removed_lines() {
        assert_eq!(line_counts("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}
