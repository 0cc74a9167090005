//! `read_file`: a text file as numbered lines (`cat -n` style), a directory's entries, or a
//! picture (PNG, JPEG, GIF, WebP) as an image the model looks at.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::files::{check_readable, io_error, mark_read, read_bytes};
use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args, paths};

pub const DEFAULT_LIMIT: usize = 2000;
/// Longer lines (minified code, data) are cut so one line cannot flood the context.
pub const MAX_LINE_CHARS: usize = 2000;
const MAX_DIR_ENTRIES: usize = 1000;

const DESCRIPTION: &str = "Reads a file from the local filesystem. `path` is relative to the \
project root (or absolute inside it). Returns up to `limit` lines (default 2000) starting at line \
`offset` (1-based), numbered like `cat -n`: the line number, a tab, then the line. The number and tab \
are not part of the file: leave them out of edit_file's old_string. Lines over 2000 characters are \
cut. For a large file, read it in parts with offset and limit. An image file (PNG, JPEG, GIF, \
WebP) is shown to you as the image. Other binary files are refused. A directory path lists its \
entries (folders end with `/`). Read a file before editing or overwriting it.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The file (or directory) to read, relative to the project root
    path: String,
    /// The 1-based line to start at (default 1)
    #[serde(default)]
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to read (default 2000)
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(self.name(), input)?;
        let path = paths::resolve_readable(ctx, &args.path)?;
        let shown = paths::display(ctx, &path);
        let meta = tokio::fs::metadata(&path)
            .await
            .map_err(|e| io_error("read", &shown, &e))?;
        if meta.is_dir() {
            return list_dir(&path, &shown).await.map(ToolOutput::text);
        }
        check_readable(&meta, &shown)?;
        // Reached beneath the root without following a link that appeared since the check.
        let root = paths::canonical_root(ctx)?;
        if let Some(store) = &ctx.images
            && crate::media::has_image_extension(&path)
        {
            return read_image(store, &root, &path, &shown, ctx).await;
        }
        let text = ctx.files.read_text(&root, &path, &shown).await?;
        mark_read(ctx, &path);
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        numbered(&text, &shown, offset, limit).map(ToolOutput::text)
    }
}

/// A picture, kept in the image store and returned as an image; a file named like one that is
/// not one is read as any other file would be (and refused if binary).
async fn read_image(
    store: &crate::media::ImageStore,
    root: &std::path::Path,
    path: &std::path::Path,
    shown: &str,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let Some(bytes) = read_bytes(root, path, shown).await? else {
        return Err(io_error(
            "read",
            shown,
            &std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    };
    let (store, name, size) = (store.clone(), shown.to_string(), bytes.len());
    let image = tokio::task::spawn_blocking(move || store.add(&bytes, &name))
        .await
        .map_err(|e| ToolError::failed(format!("reading the image was aborted: {e}")))?
        .map_err(|e| ToolError::failed(e.to_string()))?;
    mark_read(ctx, path);
    Ok(ToolOutput {
        content: format!(
            "{shown} is an image ({} bytes; {}x{} pixels as kept, smaller if the model's API \
             reads less); it is attached for you to look at.",
            size, image.width, image.height
        ),
        display: Some(format!("image, {}x{}", image.width, image.height)),
        images: vec![image],
        ..ToolOutput::default()
    })
}

/// Formats lines `offset..offset+limit` of `text` like `cat -n`, with a note when more remain.
fn numbered(text: &str, shown: &str, offset: usize, limit: usize) -> Result<String, ToolError> {
    if text.is_empty() {
        return Ok(format!("{shown} is empty (0 bytes)."));
    }
    let total = text.lines().count();
    if offset > total {
        return Err(ToolError::failed(format!(
            "offset {offset} is past the end of {shown}, which has {total} line{}; use an offset \
             from 1 to {total}",
            plural(total)
        )));
    }
    let mut out = String::new();
    let mut last = offset - 1;
    for (index, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        last = index + 1;
        out.push_str(&format!("{last:>6}\t{}\n", cut_line(line)));
    }
    if last < total {
        out.push_str(&format!(
            "\n(showing lines {offset}-{last} of {total}; read more with offset={})\n",
            last + 1
        ));
    }
    Ok(out)
}

fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.into(),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            format!("{}... [line cut: {rest} more characters]", &line[..at]).into()
        }
    }
}

async fn list_dir(path: &std::path::Path, shown: &str) -> Result<String, ToolError> {
    let mut dir = tokio::fs::read_dir(path)
        .await
        .map_err(|e| io_error("list", shown, &e))?;
    let mut names = Vec::new();
    while let Some(entry) = dir
        .next_entry()
        .await
        .map_err(|e| io_error("list", shown, &e))?
    {
        let mut name = entry.file_name().to_string_lossy().into_owned();
        // `metadata` follows symlinks, so a link to a folder is listed as a folder.
        if tokio::fs::metadata(entry.path())
            .await
            .is_ok_and(|m| m.is_dir())
        {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    if names.is_empty() {
        return Ok(format!("{shown}/ is an empty directory."));
    }
    let total = names.len();
    let mut out = format!(
        "{shown}/ is a directory with {total} entr{}:\n",
        if total == 1 { "y" } else { "ies" }
    );
    for name in names.iter().take(MAX_DIR_ENTRIES) {
        out.push_str(name);
        out.push('\n');
    }
    if total > MAX_DIR_ENTRIES {
        out.push_str(&format!(
            "... and {} more (use glob to search it)\n",
            total - MAX_DIR_ENTRIES
        ));
    }
    Ok(out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lines_are_numbered_like_cat_n() {
        assert_eq!(
            numbered("a\nb\n", "f", 1, 2000).unwrap(),
            "     1\ta\n     2\tb\n"
        );
    }

    #[test]
    fn offset_and_limit_pick_a_window_and_say_what_remains() {
        let text = "1\n2\n3\n4\n5\n";
        assert_eq!(
            numbered(text, "f", 2, 2).unwrap(),
            "     2\t2\n     3\t3\n\n(showing lines 2-3 of 5; read more with offset=4)\n"
        );
    }

    #[test]
    fn offset_past_the_end_says_how_many_lines_there_are() {
        let err = numbered("a\nb\n", "f", 9, 10).unwrap_err().to_string();
        assert!(
            err.contains("offset 9 is past the end of f, which has 2 lines"),
            "{err}"
        );
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let line = "x".repeat(MAX_LINE_CHARS + 5);
        let out = numbered(&line, "f", 1, 10).unwrap();
        assert!(
            out.ends_with("... [line cut: 5 more characters]\n"),
            "{out}"
        );
        assert_eq!(out.matches('x').count(), MAX_LINE_CHARS);
    }

    #[test]
    fn empty_file_says_so() {
        assert_eq!(numbered("", "f", 1, 10).unwrap(), "f is empty (0 bytes).");
    }
}
