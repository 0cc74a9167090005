//! `/diff`: what this REPL session changed, as a diff. The first time a call of `write_file`
//! or `edit_file` names a file, its content is kept (or that it did not exist); `/diff`
//! compares each kept file with what is on disk now: a summary line per file (`src/x.rs: +3
//! −1`, `new file`, `deleted`), then its diff (a new file's from `/dev/null`). Changes made by
//! commands (`bash`) are not tracked: the `bash` tool does not say which files it touches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tools::diff::unified_diff;
use crate::tools::paths::resolve_under;

/// Files larger than this are not kept (their diff would not be read anyway).
const MAX_TRACKED: u64 = 1024 * 1024;

/// The original content of each file the session changed, by its path under the root.
#[derive(Default)]
pub struct SessionDiff {
    /// `None`: the file did not exist before the session wrote it.
    originals: BTreeMap<String, (PathBuf, Option<String>)>,
    /// A call that may write files (`write_file`, `edit_file`, `bash`) began since the last
    /// [`SessionDiff::take_written`].
    written: bool,
}

impl SessionDiff {
    /// Notes the file a call of `tool` is about to change, unless already noted.
    pub fn before_call(&mut self, root: &Path, tool: &str, input: &Value) {
        if matches!(tool, "write_file" | "edit_file" | "bash") {
            self.written = true;
        }
        if !matches!(tool, "write_file" | "edit_file") {
            return;
        }
        let Some(raw) = input.get("path").and_then(Value::as_str) else {
            return;
        };
        let Ok(root) = std::fs::canonicalize(root) else {
            return;
        };
        let Ok(path) = resolve_under(&root, raw) else {
            return;
        };
        let shown = path
            .strip_prefix(&root)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
        if self.originals.contains_key(&shown) {
            return;
        }
        let original = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_TRACKED => {
                match std::fs::read_to_string(&path) {
                    Ok(text) => Some(text),
                    Err(_) => return,
                }
            }
            Ok(_) => return,
            Err(_) => None,
        };
        self.originals.insert(shown, (path, original));
    }

    /// The session's changes: for each file that differs now, its summary line and its
    /// unified diff (a new file's from `/dev/null`, a deleted one's to it); empty if none.
    pub fn diff(&self) -> Vec<(String, String)> {
        let mut diffs = Vec::new();
        for (shown, (path, original)) in &self.originals {
            let now = std::fs::read_to_string(path).ok();
            if now == *original {
                continue;
            }
            let old = original.as_deref().unwrap_or("");
            let new = now.as_deref().unwrap_or("");
            let mut diff = unified_diff(old, new, shown);
            if original.is_none() {
                diff = diff.replacen(&format!("--- a/{shown}"), "--- /dev/null", 1);
            }
            if now.is_none() {
                diff = diff.replacen(&format!("+++ b/{shown}"), "+++ /dev/null", 1);
            }
            let (added, removed) = crate::ui::render::diff_counts(&diff).unwrap_or((0, 0));
            let what = match (original, &now) {
                (None, _) => format!("new file, +{added}"),
                (_, None) => format!("deleted, −{removed}"),
                _ => format!("+{added} −{removed}"),
            };
            diffs.push((format!("{shown}: {what}"), diff));
        }
        diffs
    }

    /// Whether a call that may write files began since the last time this was asked.
    pub fn take_written(&mut self) -> bool {
        std::mem::take(&mut self.written)
    }

    pub fn clear(&mut self) {
        self.originals.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_is_from_the_first_content_seen_to_now() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let mut diff = SessionDiff::default();
        diff.before_call(dir.path(), "edit_file", &json!({"path": "a.txt"}));
        std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
        // A second call does not move the start.
        diff.before_call(dir.path(), "edit_file", &json!({"path": "a.txt"}));
        diff.before_call(dir.path(), "write_file", &json!({"path": "new.txt"}));
        std::fs::write(dir.path().join("new.txt"), "fresh\n").unwrap();
        diff.before_call(dir.path(), "read_file", &json!({"path": "b.txt"}));
        let diffs = diff.diff();
        let all: String = diffs.iter().map(|(_, d)| d.as_str()).collect();
        assert!(all.contains("-one\n+two"), "{all}");
        assert!(all.contains("--- /dev/null\n+++ b/new.txt"), "{all}");
        assert!(all.contains("+fresh"), "{all}");
        let summaries: Vec<&str> = diffs.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(summaries, vec!["a.txt: +1 −1", "new.txt: new file, +1"]);
        assert!(diff.take_written());
        assert!(!diff.take_written());
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        assert_eq!(diff.diff().len(), 1, "a file back as it was has no diff");
    }
}
