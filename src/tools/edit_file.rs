//! `edit_file`: exact string replacement in a file the session has read, written atomically; the
//! user sees a coloured unified diff, the model a short confirmation with context.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::diff::unified_diff;
use super::files::{io_error, mark_read, require_read};
use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args, paths};

/// Lines of the edited file shown around the change in the model's confirmation.
const CONTEXT_LINES: usize = 3;
const MAX_LISTED_LINES: usize = 10;

const DESCRIPTION: &str = "Replaces exact text in a file. `old_string` must match the file \
exactly, including whitespace and indentation (copy it from read_file's output without the line \
number and tab), and must occur exactly once; include a few surrounding lines to make it unique, or \
set `replace_all` to replace every occurrence (e.g. to rename a variable). The file must have been \
read with read_file in this session. To create a file, use write_file.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The file to edit, relative to the project root
    path: String,
    /// The exact text to replace
    old_string: String,
    /// The text to put in its place (must differ from old_string)
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false)
    #[serde(default)]
    replace_all: bool,
}

pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), input)?;
        let (path, shown, old, edit) = prepare(&args, ctx).await?;
        let root = paths::canonical_root(ctx)?;
        ctx.files
            .write_text(&root, &path, &edit.text, &shown)
            .await?;
        mark_read(ctx, &path);
        let content = format!(
            "Edited {shown}: {} replacement{}.\n{}",
            edit.count,
            if edit.count == 1 { "" } else { "s" },
            snippet(
                &edit.text,
                edit.first_line,
                args.new_string.lines().count().max(1)
            )
        );
        Ok(ToolOutput {
            content,
            display: Some(unified_diff(&old, &edit.text, &shown)),
            sandbox_blocked: None,
            ..ToolOutput::default()
        })
    }

    async fn precheck(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let args: Args = parse_args(self.name(), input.clone())?;
        prepare(&args, ctx).await.map(|_| ())
    }

    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Option<String> {
        let args: Args = serde_json::from_value(input.clone()).ok()?;
        let path = paths::resolve(ctx, &args.path).ok()?;
        let shown = paths::display(ctx, &path);
        let root = paths::canonical_root(ctx).ok()?;
        let old = ctx.files.read_text(&root, &path, &shown).await.ok()?;
        let edit = apply(&old, &args, &shown).ok()?;
        Some(unified_diff(&old, &edit.text, &shown))
    }
}

/// Everything of an edit but its write: the checks that refuse it, and the new text.
async fn prepare(
    args: &Args,
    ctx: &ToolContext,
) -> Result<(std::path::PathBuf, String, String, Edit), ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::failed(
            "old_string is empty; give the exact text to replace (to create a file, use write_file)",
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::failed(
            "old_string and new_string are identical, so there is nothing to change",
        ));
    }
    let path = paths::resolve(ctx, &args.path)?;
    let shown = paths::display(ctx, &path);
    match tokio::fs::metadata(&path).await {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::failed(format!(
                "{shown} is a directory, not a file"
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::failed(format!(
                "{shown} does not exist; use write_file to create it (or glob to find the right path)"
            )));
        }
        Err(e) => return Err(io_error("inspect", &shown, &e)),
    }
    require_read(ctx, &path, &shown)?;
    let root = paths::canonical_root(ctx)?;
    let old = ctx.files.read_text(&root, &path, &shown).await?;
    let edit = apply(&old, args, &shown)?;
    Ok((path, shown, old, edit))
}

#[derive(Debug)]
struct Edit {
    text: String,
    count: usize,
    /// The 0-based line where the first replacement starts.
    first_line: usize,
}

fn apply(old: &str, args: &Args, shown: &str) -> Result<Edit, ToolError> {
    // read_file shows CRLF lines without their `\r`, so a multi-line old_string copied from it
    // has bare `\n`; matching with `\r\n` (and writing it) keeps the file's line endings.
    let crlf = old.contains("\r\n") && !args.old_string.contains('\r');
    let with_crlf = |text: &str| {
        if crlf {
            text.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            text.to_string()
        }
    };
    let (find, put) = (with_crlf(&args.old_string), with_crlf(&args.new_string));
    let starts: Vec<usize> = old.match_indices(&find).map(|(i, _)| i).collect();
    match starts.len() {
        0 => return Err(not_found(old, &args.old_string, shown)),
        n if n > 1 && !args.replace_all => {
            let lines: Vec<String> = starts
                .iter()
                .take(MAX_LISTED_LINES)
                .map(|&i| (line_of(old, i) + 1).to_string())
                .collect();
            return Err(ToolError::failed(format!(
                "old_string occurs {n} times in {shown} (at lines {}); include more surrounding \
                 lines to make it unique, or set replace_all to true to replace every occurrence",
                lines.join(", ")
            )));
        }
        _ => {}
    }
    let text = if args.replace_all {
        old.replace(&find, &put)
    } else {
        old.replacen(&find, &put, 1)
    };
    Ok(Edit {
        text,
        count: starts.len(),
        first_line: line_of(old, starts[0]),
    })
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count()
}

/// The error for an `old_string` that is not in the file, with a hint when it matches once
/// whitespace (indentation, trailing spaces, line endings) is ignored.
fn not_found(text: &str, needle: &str, shown: &str) -> ToolError {
    let mut message = format!("old_string was not found in {shown}.");
    if let Some(line) = whitespace_insensitive_match(text, needle) {
        message.push_str(&format!(
            " A match that differs only in whitespace starts at line {}: copy the text exactly as \
             read_file shows it (same indentation and spacing).",
            line + 1
        ));
    } else {
        message.push_str(" Read the file again with read_file and copy the text exactly.");
    }
    ToolError::failed(message)
}

fn whitespace_insensitive_match(text: &str, needle: &str) -> Option<usize> {
    let trimmed = needle.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Some(at) = text.find(trimmed) {
        return Some(line_of(text, at));
    }
    let want: Vec<&str> = trimmed.lines().map(str::trim).collect();
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    (0..have.len().saturating_sub(want.len() - 1))
        .find(|&start| have[start..start + want.len()] == want[..])
}

/// The new file's lines around the first replacement, numbered like read_file.
fn snippet(text: &str, first_line: usize, changed_lines: usize) -> String {
    let start = first_line.saturating_sub(CONTEXT_LINES);
    let end = first_line + changed_lines + CONTEXT_LINES;
    text.lines()
        .enumerate()
        .skip(start)
        .take(end - start)
        .map(|(i, line)| format!("{:>6}\t{line}\n", i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn args(old: &str, new: &str, all: bool) -> Args {
        Args {
            path: "f".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn a_unique_match_is_replaced() {
        let edit = apply("a\nb\nc\n", &args("b", "B", false), "f").unwrap();
        assert_eq!(
            (edit.text.as_str(), edit.count, edit.first_line),
            ("a\nB\nc\n", 1, 1)
        );
    }

    #[test]
    fn a_multi_line_edit_of_a_crlf_file_keeps_its_line_endings() {
        let edit = apply(
            "alpha\r\nbeta\r\ngamma\r\n",
            &args("alpha\nbeta", "one\ntwo\nthree", false),
            "f",
        )
        .unwrap();
        assert_eq!(edit.text, "one\r\ntwo\r\nthree\r\ngamma\r\n");
        let edit = apply("a\r\nb\r\n", &args("a\r\nb", "c\nd", false), "f").unwrap();
        assert_eq!(edit.text, "c\nd\r\n");
    }

    #[test]
    fn several_matches_need_replace_all() {
        let err = apply("x\nx\n", &args("x", "y", false), "f")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("occurs 2 times") && err.contains("lines 1, 2"),
            "{err}"
        );
        assert!(err.contains("replace_all"), "{err}");
        let edit = apply("x\nx\n", &args("x", "y", true), "f").unwrap();
        assert_eq!((edit.text.as_str(), edit.count), ("y\ny\n", 2));
    }

    #[test]
    fn a_whitespace_only_difference_gets_a_hint() {
        let text = "fn main() {\n    let a = 1;\n    let b = 2;\n}\n";
        let err = apply(text, &args("let a = 1;\nlet b = 2;", "x", false), "f")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("differs only in whitespace starts at line 2"),
            "{err}"
        );
        let err = apply(text, &args("nothing like it", "x", false), "f")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not found") && !err.contains("whitespace"),
            "{err}"
        );
    }

    #[test]
    fn the_snippet_shows_context_around_the_change() {
        let text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        assert_eq!(
            snippet(text, 4, 1),
            "     2\t2\n     3\t3\n     4\t4\n     5\t5\n     6\t6\n     7\t7\n     8\t8\n"
        );
    }
}
