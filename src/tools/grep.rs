//! `grep`: a regex search over the project with ripgrep's own libraries (`ignore` for the walk,
//! `grep-regex` and `grep-searcher` for matching), respecting `.gitignore`, skipping hidden and
//! binary files, with results sorted by path and capped.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args, paths};

/// Output lines shown in `content` mode, and files in `files` / `count` mode.
pub const MAX_LINES: usize = 500;
pub const MAX_FILES: usize = 100;
/// Matched lines are cut here so a minified file cannot flood the result.
const MAX_LINE_CHARS: usize = 500;

const DESCRIPTION: &str = "Searches file contents with a regular expression (Rust regex syntax, \
like ripgrep: escape literal `(`, `{`, `.` etc.). Searches the project root, or `path` (a folder or \
file). Respects .gitignore and skips hidden and binary files. `glob` filters files (e.g. `*.rs`, \
`src/**/*.ts`). `output`: `content` (default) shows `path:line:text` for matches and `path-line-text` \
for `context` lines around them; `files` lists matching files; `count` gives matches per file. \
Results are sorted by path and capped; narrow the search if it is cut. Use this instead of running \
grep or rg with bash.";

/// `content` (matching lines, default), `files` (matching file paths) or `count` (matches per file)
#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
enum OutputMode {
    #[default]
    Content,
    Files,
    Count,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The regular expression to search for
    pattern: String,
    /// The folder or file to search (default: the project root)
    #[serde(default)]
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.py`
    #[serde(default)]
    glob: Option<String>,
    /// Match case-insensitively (default false)
    #[serde(default)]
    case_insensitive: bool,
    #[serde(default)]
    output: OutputMode,
    /// Lines of context before and after each match (content mode)
    #[serde(default)]
    context: usize,
}

pub struct Grep;

#[async_trait]
impl Tool for Grep {
    fn name(&self) -> &str {
        "grep"
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
        let target = match &args.path {
            Some(p) => paths::resolve(ctx, p)?,
            None => root.clone(),
        };
        if !target.exists() {
            return Err(ToolError::failed(format!(
                "path {} does not exist; use glob to find the right folder",
                paths::display(ctx, &target)
            )));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| ToolError::failed(format!("invalid regex {:?}: {e}", args.pattern)))?;
        let overrides = match &args.glob {
            Some(glob) => {
                let mut builder = OverrideBuilder::new(&target);
                builder
                    .add(glob)
                    .map_err(|e| ToolError::failed(format!("invalid glob {glob:?}: {e}")))?;
                Some(
                    builder
                        .build()
                        .map_err(|e| ToolError::failed(format!("invalid glob {glob:?}: {e}")))?,
                )
            }
            None => None,
        };
        let search = Search {
            matcher,
            mode: args.output,
            context: args.context,
            root,
            hidden: ctx.hidden.clone(),
        };
        let hits = tokio::task::spawn_blocking(move || search.run(&target, overrides))
            .await
            .map_err(|e| ToolError::failed(format!("the search was aborted: {e}")))?;
        Ok(ToolOutput::text(format_hits(hits, &args)))
    }
}

/// What one file contributed.
struct FileHits {
    shown: String,
    /// Formatted output lines (content mode), at most [`MAX_LINES`].
    lines: Vec<String>,
    /// Matching lines, including those not kept.
    matches: usize,
    /// Output lines produced, including those not kept.
    produced: usize,
}

struct Search {
    matcher: RegexMatcher,
    mode: OutputMode,
    context: usize,
    root: PathBuf,
    /// Left out of the walk: what sandboxed commands may not read.
    hidden: Arc<[PathBuf]>,
}

impl Search {
    fn run(&self, target: &Path, overrides: Option<ignore::overrides::Override>) -> Vec<FileHits> {
        let mut walk = WalkBuilder::new(target);
        // Like `rg --no-require-git`: a .gitignore counts even outside a git checkout.
        walk.require_git(false);
        if let Some(overrides) = overrides {
            walk.overrides(overrides);
        }
        let hidden = self.hidden.clone();
        walk.filter_entry(move |e| !super::is_hidden(&hidden, e.path()));
        let results: Arc<Mutex<Vec<FileHits>>> = Arc::default();
        walk.build_parallel().run(|| {
            let results = Arc::clone(&results);
            let mut searcher = self.searcher();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(hits) = self.search_file(&mut searcher, entry.path())
                    && let Ok(mut all) = results.lock()
                {
                    all.push(hits);
                }
                WalkState::Continue
            })
        });
        let mut hits = Arc::try_unwrap(results)
            .ok()
            .and_then(|m| m.into_inner().ok())
            .unwrap_or_default();
        hits.sort_by(|a, b| a.shown.cmp(&b.shown));
        hits
    }

    fn searcher(&self) -> Searcher {
        let context = if self.mode == OutputMode::Content {
            self.context
        } else {
            0
        };
        SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .build()
    }

    fn search_file(&self, searcher: &mut Searcher, path: &Path) -> Option<FileHits> {
        let shown = match path.strip_prefix(&self.root) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        };
        let mut sink = HitSink {
            hits: FileHits {
                shown,
                lines: Vec::new(),
                matches: 0,
                produced: 0,
            },
            mode: self.mode,
            binary: false,
        };
        // An unreadable file is skipped, as rg does (it only warns).
        searcher.search_path(&self.matcher, path, &mut sink).ok()?;
        (sink.hits.matches > 0 && !sink.binary).then_some(sink.hits)
    }
}

struct HitSink {
    hits: FileHits,
    mode: OutputMode,
    binary: bool,
}

impl HitSink {
    fn push(&mut self, sep: char, line_number: Option<u64>, bytes: &[u8]) {
        self.hits.produced += 1;
        if self.hits.lines.len() >= MAX_LINES {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((at, _)) => format!("{}... [line cut]", &text[..at]),
            None => text.to_string(),
        };
        let number = line_number.map(|n| n.to_string()).unwrap_or_default();
        self.hits
            .lines
            .push(format!("{}{sep}{number}{sep}{text}", self.hits.shown));
    }
}

impl Sink for HitSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.mode {
            OutputMode::Files => {
                self.hits.matches += 1;
                // One match is enough to list the file.
                return Ok(false);
            }
            OutputMode::Count => {
                self.hits.matches += mat.lines().count();
            }
            OutputMode::Content => {
                let first = mat.line_number();
                for (i, line) in mat.lines().enumerate() {
                    self.hits.matches += 1;
                    self.push(':', first.map(|n| n + i as u64), line);
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push('-', context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.hits.produced += 1;
        if self.hits.lines.len() < MAX_LINES {
            self.hits.lines.push("--".to_string());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn format_hits(hits: Vec<FileHits>, args: &Args) -> String {
    if hits.is_empty() {
        let place = args.path.as_deref().unwrap_or("the project");
        return format!("No matches for {:?} in {place}.", args.pattern);
    }
    let files = hits.len();
    let matches: usize = hits.iter().map(|h| h.matches).sum();
    let mut out = Vec::new();
    let cut_note = match args.output {
        OutputMode::Files | OutputMode::Count => {
            out.extend(hits.iter().take(MAX_FILES).map(|h| match args.output {
                OutputMode::Count => format!("{}:{}", h.shown, h.matches),
                _ => h.shown.clone(),
            }));
            if args.output == OutputMode::Count {
                out.push(format!("({matches} matching lines in {files} files)"));
            }
            (files > MAX_FILES).then(|| {
                format!(
                    "(showing {MAX_FILES} of {files} files; narrow the search with path or glob)"
                )
            })
        }
        OutputMode::Content => {
            let mut produced = 0;
            for hit in &hits {
                if args.context > 0 && produced > 0 {
                    out.push("--".to_string());
                    produced += 1;
                }
                out.extend(hit.lines.iter().cloned());
                produced += hit.produced;
            }
            (produced > MAX_LINES).then(|| {
                format!(
                    "(showing {MAX_LINES} of {produced} lines; {matches} matching lines in {files} \
                     files; narrow the search with path or glob, or use output=files)"
                )
            })
        }
    };
    out.truncate(MAX_LINES);
    if let Some(note) = cut_note {
        out.push(note);
    }
    out.join("\n")
}
