//! Unified diffs of a file change, as the user sees them after `edit_file` and `write_file`.
//! Plain text: the UI neutralises the file's lines and colours them by their `+`/`-`/`@@`.
//! A diff gets [`DIFF_TIME_LIMIT`] to find the smallest set of changes; past it (a huge file
//! rewritten out of order) the rest is shown as removed and added lines, which is still a correct
//! diff, so an edit never waits unboundedly for its display.

use std::time::{Duration, Instant};

use similar::{ChangeTag, TextDiff};

/// Diffs shown to the user are cut after this many lines; the whole file is on disk anyway.
pub const MAX_DIFF_LINES: usize = 200;

/// How long a diff may search for the smallest set of changes before it settles for a larger one.
pub const DIFF_TIME_LIMIT: Duration = Duration::from_millis(500);

/// The line diff of `old` → `new`, bounded by [`DIFF_TIME_LIMIT`].
fn line_diff<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, str> {
    TextDiff::configure()
        .deadline(Instant::now() + DIFF_TIME_LIMIT)
        .diff_lines(old, new)
}

/// A unified diff (3 lines of context) of `old` → `new`, headed `--- a/PATH` / `+++ b/PATH`.
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    unified_diff_within(old, new, path, MAX_DIFF_LINES)
}

/// [`unified_diff`] cut after `max_lines` lines (the trust question shows a script's change
/// whole: what is not shown could be what runs).
pub fn unified_diff_within(old: &str, new: &str, path: &str, max_lines: usize) -> String {
    let diff = line_diff(old, new);
    let mut out = Vec::new();
    out.push(format!("--- a/{path}"));
    out.push(format!("+++ b/{path}"));
    // Lines past the cut are counted, not built.
    let mut cut = 0;
    let mut push = |line: String| {
        if out.len() < max_lines {
            out.push(line);
        } else {
            cut += 1;
        }
    };
    let mut unified = diff.unified_diff();
    unified.context_radius(3);
    for hunk in unified.iter_hunks() {
        push(hunk.header().to_string());
        for change in hunk.iter_changes() {
            let line = change.to_string_lossy();
            let line = line.strip_suffix('\n').unwrap_or(&line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            let text = match change.tag() {
                ChangeTag::Equal => format!(" {line}"),
                ChangeTag::Delete => format!("-{line}"),
                ChangeTag::Insert => format!("+{line}"),
            };
            push(text);
            if change.missing_newline() {
                push("\\ No newline at end of file".to_string());
            }
        }
    }
    if cut > 0 {
        out.push(format!("... ({cut} more diff lines)"));
    }
    out.join("\n")
}

/// Lines added and removed by a unified diff (or a created file's `(+N lines)` note).
pub fn display_counts(display: &str) -> Option<(usize, usize)> {
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

/// Counts (added, removed) lines of a change, for one-line summaries.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = line_diff(old, new);
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

    #[test]
    fn a_long_diff_is_cut_with_the_rest_counted() {
        let new: String = (0..300).map(|i| format!("{i}\n")).collect();
        let diff = unified_diff("", &new, "f");
        let lines: Vec<&str> = diff.lines().collect();
        // 2 headers, 1 hunk header, 300 added lines: 303, of which 200 are shown.
        assert_eq!(lines.len(), MAX_DIFF_LINES + 1);
        assert_eq!(lines[MAX_DIFF_LINES - 1], "+196");
        assert_eq!(lines[MAX_DIFF_LINES], "... (103 more diff lines)");
    }

    /// Lines from a small alphabet in two unrelated orders: the worst case for finding the
    /// smallest diff (about 11 s here without a deadline in a debug build, 200,000 lines).
    fn shuffled_lines(seed: u64, n: usize) -> String {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n).map(|_| format!("{}\n", rng.u8(0..8))).collect()
    }

    #[test]
    fn a_huge_diff_stops_searching_at_the_time_limit() {
        let old = shuffled_lines(1, 200_000);
        let new = shuffled_lines(2, 200_000);
        let started = Instant::now();
        let (added, removed) = line_counts(&old, &new);
        let diff = unified_diff(&old, &new, "big.txt");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "two diffs took {took:?}");
        assert!(added > 0 && removed > 0 && added <= 200_000 && removed <= 200_000);
        // Still a correct diff, if not the smallest: its sides are the two texts.
        let whole = line_diff(&old, &new);
        let changes: Vec<_> = whole.iter_all_changes().collect();
        let side = |skip: ChangeTag| -> String {
            changes
                .iter()
                .filter(|c| c.tag() != skip)
                .map(|c| c.value())
                .collect()
        };
        assert!(side(ChangeTag::Insert) == old && side(ChangeTag::Delete) == new);
        assert!(
            diff.ends_with("more diff lines)"),
            "{}",
            &diff[diff.len() - 40..]
        );
    }
}
