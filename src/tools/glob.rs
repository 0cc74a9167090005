//! `glob`: files whose path (relative to the search folder) matches a glob pattern, found with the
//! `ignore` walker (so `.gitignore` and hidden files are respected), newest first, capped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use globset::GlobBuilder;
use ignore::WalkBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args, paths};

pub const MAX_RESULTS: usize = 200;

const DESCRIPTION: &str = "Finds files by name with a glob pattern matched against paths \
relative to the search folder (the project root, or `path`): `**/*.rs` finds Rust files at any \
depth, `src/*.toml` only directly in src, `*.md` only at the top level, `**/test_*.{py,rs}` uses \
alternatives. Respects .gitignore and skips hidden files. Returns paths relative to the project \
root, most recently modified first, capped at 200.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The glob to match, e.g. `**/*.rs`
    pattern: String,
    /// The folder to search (default: the project root)
    #[serde(default)]
    path: Option<String>,
}

pub struct Glob;

#[async_trait]
impl Tool for Glob {
    fn name(&self) -> &str {
        "glob"
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
        let root = paths::canonical_root(ctx)?;
        let base = match &args.path {
            Some(p) => paths::resolve(ctx, p)?,
            None => root.clone(),
        };
        if !base.is_dir() {
            return Err(ToolError::failed(format!(
                "path {} is not a folder; give the folder to search in",
                paths::display(ctx, &base)
            )));
        }
        let matcher = GlobBuilder::new(&args.pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::failed(format!("invalid glob {:?}: {e}", args.pattern)))?
            .compile_matcher();
        let hidden = ctx.hidden.clone();
        let found = tokio::task::spawn_blocking(move || find(&base, &root, &matcher, &hidden))
            .await
            .map_err(|e| ToolError::failed(format!("the search was aborted: {e}")))?;
        Ok(ToolOutput::text(format_found(found, &args)))
    }
}

/// Matching files as (path shown, mtime), newest first, ties by path.
fn find(
    base: &Path,
    root: &Path,
    matcher: &globset::GlobMatcher,
    hidden: &Arc<[PathBuf]>,
) -> Vec<(String, SystemTime)> {
    let mut walk = WalkBuilder::new(base);
    walk.require_git(false);
    let hidden = hidden.clone();
    walk.filter_entry(move |e| !super::is_hidden(&hidden, e.path()));
    let mut found: Vec<(String, SystemTime)> = walk
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            e.path()
                .strip_prefix(base)
                .is_ok_and(|rel| matcher.is_match(rel))
        })
        .map(|e| {
            let mtime = e
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            let shown = match e.path().strip_prefix(root) {
                Ok(rel) => rel.display().to_string(),
                Err(_) => e.path().display().to_string(),
            };
            (shown, mtime)
        })
        .collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found
}

fn format_found(found: Vec<(String, SystemTime)>, args: &Args) -> String {
    if found.is_empty() {
        let hint = if args.pattern.contains('/') || args.pattern.starts_with("**") {
            ""
        } else {
            " (a pattern without `/` only matches at the top level; try `**/` in front)"
        };
        return format!("No files match {:?}{hint}.", args.pattern);
    }
    let total = found.len();
    let mut out: Vec<String> = found
        .into_iter()
        .take(MAX_RESULTS)
        .map(|(p, _)| p)
        .collect();
    if total > MAX_RESULTS {
        out.push(format!(
            "(showing the {MAX_RESULTS} newest of {total} files; use a narrower pattern or path)"
        ));
    }
    out.join("\n")
}
