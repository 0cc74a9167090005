//! `write_file`: creates or replaces a whole file, atomically, refusing blind overwrites.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::diff::{line_counts, unified_diff};
use super::files::{check_readable, decode_text, io_error, mark_read, read_bytes, require_read};
use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args, paths};

const DESCRIPTION: &str = "Writes a file, replacing it entirely if it exists; parent folders are \
created. `path` is relative to the project root. Overwriting an existing file requires reading it \
with read_file first in this session. Prefer edit_file to change part of an existing file; use \
write_file for new files or complete rewrites.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The file to write, relative to the project root
    path: String,
    /// The complete new content of the file
    content: String,
}

pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
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

    async fn preview(&self, input: &Value, ctx: &ToolContext) -> Option<String> {
        let args: Args = serde_json::from_value(input.clone()).ok()?;
        let path = paths::resolve(ctx, &args.path).ok()?;
        let shown = paths::display(ctx, &path);
        match tokio::fs::metadata(&path).await {
            Ok(meta) => {
                check_readable(&meta, &shown).ok()?;
                let root = paths::canonical_root(ctx).ok()?;
                let old = read_bytes(&root, &path, &shown).await.ok()??;
                let old = decode_text(old, &shown).ok()?;
                Some(unified_diff(&old, &args.content, &shown))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Some(new_file_preview(&shown, &args.content))
            }
            Err(_) => None,
        }
    }

    async fn precheck(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let args: Args = parse_args(self.name(), input.clone())?;
        let path = paths::resolve(ctx, &args.path)?;
        let shown = paths::display(ctx, &path);
        match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => Err(ToolError::failed(format!(
                "{shown} is a directory; give the path of a file inside it"
            ))),
            Ok(meta) => {
                check_readable(&meta, &shown)?;
                require_read(ctx, &path, &shown)
            }
            Err(_) => Ok(()),
        }
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), input)?;
        let path = paths::resolve(ctx, &args.path)?;
        let root = paths::canonical_root(ctx)?;
        let shown = paths::display(ctx, &path);
        let old = match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::failed(format!(
                    "{shown} is a directory; give the path of a file inside it"
                )));
            }
            Ok(meta) => {
                check_readable(&meta, &shown)?;
                require_read(ctx, &path, &shown)?;
                // A binary file being replaced gets a summary instead of a diff.
                read_bytes(&root, &path, &shown)
                    .await?
                    .map(|bytes| decode_text(bytes, &shown).ok())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error("inspect", &shown, &e)),
        };
        ctx.files
            .write_text(&root, &path, &args.content, &shown)
            .await?;
        mark_read(ctx, &path);
        let bytes = args.content.len();
        let lines = args.content.lines().count();
        let (content, display) = match old {
            None => (
                format!("Created {shown} ({bytes} bytes, {lines} lines)."),
                format!("created {shown} (+{lines} lines)"),
            ),
            Some(Some(old)) => {
                let (added, removed) = line_counts(&old, &args.content);
                (
                    format!("Wrote {bytes} bytes to {shown} ({lines} lines; +{added} -{removed})."),
                    unified_diff(&old, &args.content, &shown),
                )
            }
            Some(None) => (
                format!("Wrote {bytes} bytes to {shown} ({lines} lines), replacing a binary file."),
                format!("replaced binary {shown} ({lines} lines)"),
            ),
        };
        Ok(ToolOutput {
            content,
            display: Some(display),
            sandbox_blocked: None,
            ..ToolOutput::default()
        })
    }
}

/// Lines of a new file shown before the user approves its creation.
pub const PREVIEW_LINES: usize = 40;
/// A preview line longer than this many characters is cut (and says by how much).
pub const PREVIEW_LINE_CHARS: usize = 400;

/// What a new file will hold: a header, then its first [`PREVIEW_LINES`] lines as `+` lines (as
/// in a diff from nothing), then how many more there are.
fn new_file_preview(shown: &str, content: &str) -> String {
    let total = content.lines().count();
    let mut out = format!("new file {shown} ({total} lines, {} bytes)", content.len());
    for line in content.lines().take(PREVIEW_LINES) {
        out.push_str("\n+");
        let chars = line.chars().count();
        if chars > PREVIEW_LINE_CHARS {
            out.extend(line.chars().take(PREVIEW_LINE_CHARS));
            out.push_str(&format!(
                "… (+{} more characters)",
                chars - PREVIEW_LINE_CHARS
            ));
        } else {
            out.push_str(line);
        }
    }
    if total > PREVIEW_LINES {
        out.push_str(&format!("\n… +{} more lines", total - PREVIEW_LINES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_new_file_preview_shows_its_first_lines_and_counts_the_rest() {
        assert_eq!(
            new_file_preview("a.txt", "one\ntwo\n"),
            "new file a.txt (2 lines, 8 bytes)\n+one\n+two"
        );
        let long: String = (1..=45).map(|i| format!("line {i}\n")).collect();
        let preview = new_file_preview("b", &long);
        assert!(preview.contains("\n+line 40\n… +5 more lines"), "{preview}");
        assert!(!preview.contains("line 41"), "{preview}");
        let wide = "x".repeat(PREVIEW_LINE_CHARS + 3);
        assert!(
            new_file_preview("c", &wide).ends_with("x… (+3 more characters)"),
            "cut lines say so"
        );
        assert_eq!(new_file_preview("e", ""), "new file e (0 lines, 0 bytes)");
    }
}
