//! How one of Ling's tool calls shows in an ACP client: its title, its kind (which icon and
//! grouping the editor uses), the files it touches (so the editor can follow along), and for
//! the file-changing tools the change itself as a diff of old and new text.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{Diff, ToolCallContent, ToolCallLocation, ToolKind};
use serde_json::Value;

/// Files larger than this are shown without a diff (the editor would only choke on it).
const MAX_DIFF_BYTES: u64 = 2 << 20;
/// Characters of a command shown in a title.
const TITLE_CHARS: usize = 120;

/// What the client is told about a call when it begins.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CallView {
    pub title: String,
    pub kind: ToolKind,
    pub locations: Vec<ToolCallLocation>,
    /// For `write_file` and `edit_file`: the change, as the editor shows a diff.
    pub diff: Option<Diff>,
}

/// The view of `name(input)` in the project `root`.
pub(super) fn view(name: &str, input: &Value, root: &Path) -> CallView {
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
    let path = input
        .get("path")
        .and_then(Value::as_str)
        .map(|p| absolute(root, p));
    let at = |line: Option<u32>| {
        path.iter()
            .map(|p| ToolCallLocation::new(p.clone()).line(line))
            .collect::<Vec<_>>()
    };
    let shown = input.get("path").and_then(Value::as_str).unwrap_or(".");
    let (title, kind, locations) = match name {
        "read_file" => {
            let offset = input
                .get("offset")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok());
            let title = match offset {
                Some(line) => format!("Read {shown} (from line {line})"),
                None => format!("Read {shown}"),
            };
            (title, ToolKind::Read, at(offset))
        }
        "write_file" => (format!("Write {shown}"), ToolKind::Edit, at(None)),
        "edit_file" => (format!("Edit {shown}"), ToolKind::Edit, at(None)),
        "bash" => (
            format!("`{}`", one_line(text("command"))),
            ToolKind::Execute,
            Vec::new(),
        ),
        "grep" => {
            let within = input.get("path").and_then(Value::as_str);
            let title = match within {
                Some(p) => format!("grep {} in {p}", one_line(text("pattern"))),
                None => format!("grep {}", one_line(text("pattern"))),
            };
            (title, ToolKind::Search, at(None))
        }
        "glob" => (
            format!("glob {}", one_line(text("pattern"))),
            ToolKind::Search,
            Vec::new(),
        ),
        "search_tools" => (
            format!("Search tools: {}", one_line(text("query"))),
            ToolKind::Search,
            Vec::new(),
        ),
        "read_mcp_resource" => (
            format!("Read {}", one_line(text("uri"))),
            ToolKind::Fetch,
            Vec::new(),
        ),
        other => match other
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
        {
            Some((server, tool)) => (format!("{server}: {tool}"), ToolKind::Other, Vec::new()),
            None => (other.to_string(), ToolKind::Other, Vec::new()),
        },
    };
    let diff = match (name, &path) {
        ("write_file" | "edit_file", Some(path)) => change(name, input, path),
        _ => None,
    };
    CallView {
        title,
        kind,
        locations,
        diff,
    }
}

/// The diff content of a view, if it has one.
pub(super) fn diff_content(view: &CallView) -> Vec<ToolCallContent> {
    view.diff
        .iter()
        .map(|d| ToolCallContent::Diff(d.clone()))
        .collect()
}

/// What a file tool call would change, computed from the file on disk and the call's input:
/// `write_file` replaces the text, `edit_file` replaces `old_string` (once, or everywhere with
/// `replace_all`). `None` when the file cannot be read as text or the edit would not apply
/// (the tool then says why).
fn change(name: &str, input: &Value, path: &Path) -> Option<Diff> {
    let old = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_DIFF_BYTES => {
            Some(String::from_utf8(std::fs::read(path).ok()?).ok()?)
        }
        Ok(_) => return None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return None,
    };
    let new = match name {
        "write_file" => input.get("content")?.as_str()?.to_string(),
        _ => {
            let old_text = old.as_deref()?;
            let find = input.get("old_string")?.as_str()?;
            let put = input.get("new_string")?.as_str()?;
            if find.is_empty() || !old_text.contains(find) {
                return None;
            }
            if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                old_text.replace(find, put)
            } else {
                old_text.replacen(find, put, 1)
            }
        }
    };
    Some(Diff::new(path.to_path_buf(), new).old_text(old))
}

/// `path` of a call, absolute (the file tools take paths relative to the project root).
pub(super) fn absolute(root: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

/// The first line of `text`, cut to [`TITLE_CHARS`] characters.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut shown: String = line.chars().take(TITLE_CHARS).collect();
    if shown.len() < line.len() || text.lines().nth(1).is_some() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn each_builtin_has_its_kind_title_and_locations() {
        let root = Path::new("/p");
        let read = view(
            "read_file",
            &json!({"path": "src/a.rs", "offset": 40}),
            root,
        );
        assert_eq!(read.title, "Read src/a.rs (from line 40)");
        assert_eq!(read.kind, ToolKind::Read);
        assert_eq!(
            read.locations,
            [ToolCallLocation::new("/p/src/a.rs").line(40)]
        );
        let bash = view("bash", &json!({"command": "cargo test\necho done"}), root);
        assert_eq!(
            (bash.title.as_str(), bash.kind),
            ("`cargo test…`", ToolKind::Execute)
        );
        assert_eq!(
            view("grep", &json!({"pattern": "fn main", "path": "src"}), root).title,
            "grep fn main in src"
        );
        assert_eq!(
            view("glob", &json!({"pattern": "**/*.rs"}), root).kind,
            ToolKind::Search
        );
        let mcp = view("mcp__files__read_text", &json!({}), root);
        assert_eq!(
            (mcp.title.as_str(), mcp.kind),
            ("files: read_text", ToolKind::Other)
        );
    }

    #[test]
    fn a_file_change_is_a_diff_of_old_and_new_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\ntwo\n").unwrap();
        let edit = view(
            "edit_file",
            &json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
            dir.path(),
        );
        let diff = edit.diff.unwrap();
        assert_eq!(diff.old_text.as_deref(), Some("one\ntwo\ntwo\n"));
        assert_eq!(diff.new_text, "one\n2\ntwo\n");
        let all = view(
            "edit_file",
            &json!({"path": "a.txt", "old_string": "two", "new_string": "2", "replace_all": true}),
            dir.path(),
        );
        assert_eq!(all.diff.unwrap().new_text, "one\n2\n2\n");
        let created = view(
            "write_file",
            &json!({"path": "new.txt", "content": "hi\n"}),
            dir.path(),
        );
        let diff = created.diff.unwrap();
        assert_eq!((diff.old_text, diff.new_text.as_str()), (None, "hi\n"));
        let missing = view(
            "edit_file",
            &json!({"path": "a.txt", "old_string": "zzz", "new_string": "y"}),
            dir.path(),
        );
        assert_eq!(missing.diff, None, "an edit that would fail shows no diff");
    }
}
