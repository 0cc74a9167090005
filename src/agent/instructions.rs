//! The instruction files of the system prompt: the user's own (`LING_HOME/AGENTS.md`, and
//! `~/.claude/CLAUDE.md` under `claudeCompat`), then the project's from the root down to the
//! working directory, at each level `AGENTS.md`, `LING.md` and `CLAUDE.md` (nearer ones later,
//! so they have the last word). A project file is read only when it is a regular file inside the
//! project root after symlinks (an `AGENTS.md` linked to `~/.ssh/id_rsa` is skipped), a user's
//! file when it is a regular file; each only up to [`INSTRUCTIONS_LIMIT`]. `CLAUDE.md` may import
//! other files with `@path` (relative to the file; Claude Code's syntax): each import must stay
//! inside the same root (the project's, or the user file's folder), at most [`IMPORT_DEPTH`]
//! hops deep and [`IMPORT_LIMIT`] bytes in all per file. What was skipped or cut comes back as a
//! warning.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::config::bounded_read::{BoundedReadError, lossy_text, read_regular};

/// Project instruction files read at each level, in this order.
const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "LING.md"];
/// Claude Code's memory, read after them unless settings `claudeCompat` is false.
pub const CLAUDE_MEMORY: &str = "CLAUDE.md";
/// Claude Code's personal project memory (not committed), read after `CLAUDE.md`.
pub const CLAUDE_LOCAL: &str = "CLAUDE.local.md";
/// The most of one instruction file that goes into the prompt (64 KiB).
pub const INSTRUCTIONS_LIMIT: usize = 64 * 1024;
/// How many `@path` hops a `CLAUDE.md` import may chain (Claude Code's limit).
pub const IMPORT_DEPTH: usize = 5;
/// The most the imports of one `CLAUDE.md` bring in all (64 KiB).
pub const IMPORT_LIMIT: usize = 64 * 1024;

/// One instruction text for the prompt: what it is called there, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instructions {
    /// `AGENTS.md`, `crates/app/AGENTS.md`, `~/.ling/AGENTS.md`, `CLAUDE.md → docs/style.md`.
    pub label: String,
    pub text: String,
    /// The user's own file (or one it imports), not the project's.
    pub user: bool,
    /// The file read.
    pub path: PathBuf,
}

/// Where instruction files come from.
#[derive(Debug, Clone)]
pub struct Sources<'a> {
    pub root: &'a Path,
    /// The working directory: the root or a folder under it.
    pub working_dir: Option<&'a Path>,
    /// The user's own files, in order (each confined to its own folder for imports).
    pub user_files: &'a [PathBuf],
    pub claude_memory: bool,
}

/// Every instruction text, in prompt order, and the warnings.
pub fn collect(sources: &Sources<'_>) -> (Vec<Instructions>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for path in sources.user_files {
        let Some(dir) = path.parent() else { continue };
        let label = shown_user(path);
        let Some(text) = read_file(path, None, &label, &mut warnings) else {
            continue;
        };
        let claude = path.file_name().is_some_and(|n| n == CLAUDE_MEMORY);
        push(&mut out, label.clone(), text.clone(), path);
        if claude {
            imports(path, &text, dir, &label, &mut out, &mut warnings);
        }
    }
    let root = std::fs::canonicalize(sources.root).unwrap_or_else(|_| sources.root.into());
    let claude: &[&str] = match sources.claude_memory {
        true => &[CLAUDE_MEMORY, CLAUDE_LOCAL],
        false => &[],
    };
    for level in levels(&root, sources.working_dir) {
        for name in INSTRUCTION_FILES.into_iter().chain(claude.iter().copied()) {
            let path = level.join(name);
            let label = shown_project(&root, &path);
            let Some(text) = read_file(&path, Some(&root), &label, &mut warnings) else {
                continue;
            };
            push(&mut out, label.clone(), text.clone(), &path);
            if name != INSTRUCTION_FILES[0] && name != INSTRUCTION_FILES[1] {
                imports(&path, &text, &root, &label, &mut out, &mut warnings);
            }
        }
    }
    for path in super::claude_rules::files(&root)
        .into_iter()
        .filter(|_| sources.claude_memory)
    {
        let label = shown_project(&root, &path);
        if let Some(text) = read_file(&path, Some(&root), &label, &mut warnings) {
            push(
                &mut out,
                label,
                super::claude_rules::prompt_text(&text),
                &path,
            );
        }
    }
    (out, warnings)
}

/// The folders from the root down to the working directory (the root alone when the working
/// directory is not under it).
fn levels(root: &Path, working_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut levels = vec![root.to_path_buf()];
    let Some(rest) = working_dir.and_then(|dir| dir.strip_prefix(root).ok()) else {
        return levels;
    };
    let mut at = root.to_path_buf();
    for part in rest.components() {
        at.push(part);
        levels.push(at.clone());
    }
    levels
}

fn push(out: &mut Vec<Instructions>, label: String, text: String, path: &Path) {
    if !text.trim().is_empty() {
        out.push(Instructions {
            user: label.starts_with('~') || label.starts_with('/'),
            label,
            text: text.trim_end().to_string(),
            path: path.to_path_buf(),
        });
    }
}

/// Every instruction file a run may read: the user's, each level's (present now or not) and
/// what their imports bring now. The sandbox keeps those present read-only (`trust::surface`):
/// the system prompt is built again during a session (compaction, a model switch), and what a
/// sandboxed command wrote there would steer every later turn.
pub fn files(sources: &Sources<'_>) -> Vec<PathBuf> {
    let root = std::fs::canonicalize(sources.root).unwrap_or_else(|_| sources.root.into());
    let mut out: Vec<PathBuf> = sources.user_files.to_vec();
    for level in levels(&root, sources.working_dir) {
        out.extend(
            INSTRUCTION_FILES
                .into_iter()
                .chain([CLAUDE_MEMORY, CLAUDE_LOCAL])
                .map(|name| level.join(name)),
        );
    }
    let (found, _) = collect(sources);
    for file in found {
        if !out.contains(&file.path) {
            out.push(file.path);
        }
    }
    out
}

/// The files `text` imports (`@path` words outside code), read after it, depth first, each
/// once, inside `confine`, within [`IMPORT_DEPTH`] and [`IMPORT_LIMIT`].
fn imports(
    file: &Path,
    text: &str,
    confine: &Path,
    label: &str,
    out: &mut Vec<Instructions>,
    warnings: &mut Vec<String>,
) {
    let confine = std::fs::canonicalize(confine).unwrap_or_else(|_| confine.into());
    let mut seen: HashSet<PathBuf> = std::fs::canonicalize(file).into_iter().collect();
    let mut budget = IMPORT_LIMIT;
    let mut stack: Vec<(PathBuf, String, usize, String)> =
        vec![(file.to_path_buf(), text.to_string(), 0, label.to_string())];
    while let Some((from, text, depth, chain)) = stack.pop() {
        let base = from.parent().unwrap_or(&confine).to_path_buf();
        let mut found = Vec::new();
        for word in import_words(&text) {
            let target = base.join(word);
            let shown = format!("{chain} → {word}");
            let Ok(resolved) = std::fs::canonicalize(&target) else {
                warnings.push(format!("{shown} was not imported: there is no such file"));
                continue;
            };
            // A file already in the prompt (the `AGENTS.md` a `CLAUDE.md` of one line `@AGENTS.md`
            // imports) goes in once.
            let already = out
                .iter()
                .any(|i| std::fs::canonicalize(&i.path).is_ok_and(|p| p == resolved));
            if !seen.insert(resolved.clone()) || already {
                continue;
            }
            if depth + 1 > IMPORT_DEPTH {
                warnings.push(format!(
                    "{shown} was not imported: imports go at most {IMPORT_DEPTH} levels deep"
                ));
                continue;
            }
            if !resolved.starts_with(&confine) {
                warnings.push(format!(
                    "{shown} was not imported: it leads to {}, outside {}; imports are read only \
                     from inside it",
                    resolved.display(),
                    confine.display()
                ));
                continue;
            }
            if budget == 0 {
                warnings.push(format!(
                    "{shown} was not imported: the imports of {label} passed {} KiB",
                    IMPORT_LIMIT / 1024
                ));
                continue;
            }
            let Some(mut body) = read_file(&resolved, Some(&confine), &shown, warnings) else {
                continue;
            };
            if body.len() > budget {
                let mut end = budget;
                while !body.is_char_boundary(end) {
                    end -= 1;
                }
                body.truncate(end);
                warnings.push(format!(
                    "{shown} was cut: the imports of {label} may bring {} KiB in all",
                    IMPORT_LIMIT / 1024
                ));
            }
            budget -= body.len();
            push(out, shown.clone(), body.clone(), &resolved);
            found.push((resolved, body, depth + 1, shown));
        }
        // Depth first, in the order written.
        stack.extend(found.into_iter().rev());
    }
}

/// The `@path` words of a text, outside fenced code blocks and code spans: Claude Code's import
/// syntax. A word is an import when it starts with `@` at a word boundary and names a relative
/// path (an e-mail address or `@scope/pkg` mention without a dot or slash is not).
pub fn import_words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        let mut start = None;
        for (i, c) in line.char_indices() {
            if c == '`' {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            let boundary = i == 0 || line[..i].ends_with(char::is_whitespace);
            if c == '@' && boundary {
                start = Some(i + 1);
            } else if c.is_whitespace() {
                start = None;
            }
            if let Some(s) = start {
                let end = line[s..]
                    .find(char::is_whitespace)
                    .map_or(line.len(), |e| s + e);
                let word = line[s..end].trim_end_matches(['.', ',', ';', ':', ')']);
                let pathlike = word.contains('/') || word.contains('.');
                if !word.is_empty() && pathlike && !word.starts_with('/') && !word.starts_with('~')
                {
                    words.push(word);
                }
                start = None;
            }
        }
    }
    words
}

/// One instruction file's text, if it may be read: inside `confine` (when given) after
/// symlinks, a regular file, capped; a warning says why not, or that it was cut.
fn read_file(
    path: &Path,
    confine: Option<&Path>,
    label: &str,
    warnings: &mut Vec<String>,
) -> Option<String> {
    // Missing (or a dangling symlink): nothing to say.
    let resolved = std::fs::canonicalize(path).ok()?;
    if let Some(root) = confine
        && !resolved.starts_with(root)
    {
        warnings.push(format!(
            "{label} was not read: it leads to {}, outside the project root; project \
             instructions are read only from inside the project",
            resolved.display()
        ));
        return None;
    }
    match read_regular(&resolved, INSTRUCTIONS_LIMIT) {
        Ok(Some(read)) => {
            if read.cut {
                warnings.push(format!(
                    "{label} is larger than {} KiB; only its first {} KiB went into the system \
                     prompt",
                    INSTRUCTIONS_LIMIT / 1024,
                    INSTRUCTIONS_LIMIT / 1024
                ));
            }
            Some(lossy_text(&read.bytes, read.cut))
        }
        Ok(None) => None,
        Err(BoundedReadError::NotRegular { kind, .. }) => {
            warnings.push(format!(
                "{label} was not read: it is {kind}, not a regular file"
            ));
            None
        }
        Err(e) => {
            warnings.push(format!("{label} was not read: {e}"));
            None
        }
    }
}

fn shown_project(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// A user file as the prompt names it: `~/...` when under the home directory.
fn shown_user(path: &Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn at_root(root: &Path) -> Sources<'_> {
        Sources {
            root,
            working_dir: None,
            user_files: &[],
            claude_memory: true,
        }
    }

    fn labels(found: &[Instructions]) -> Vec<&str> {
        found.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn files_are_read_from_the_root_down_to_the_working_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        write(&root.join("AGENTS.md"), "top");
        write(&root.join("crates/app/AGENTS.md"), "near");
        write(&root.join("crates/app/CLAUDE.md"), "claude near");
        write(&root.join("other/AGENTS.md"), "elsewhere");
        let user = root.join("home/AGENTS.md");
        write(&user, "mine");
        let working = root.join("crates/app");
        let sources = Sources {
            root: &root,
            working_dir: Some(&working),
            user_files: std::slice::from_ref(&user),
            claude_memory: true,
        };
        let (found, warnings) = collect(&sources);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            labels(&found)[1..],
            ["AGENTS.md", "crates/app/AGENTS.md", "crates/app/CLAUDE.md"]
        );
        assert_eq!(found[0].text, "mine");
        let no_claude = Sources {
            claude_memory: false,
            ..sources
        };
        let (found, _) = collect(&no_claude);
        assert!(!labels(&found).contains(&"crates/app/CLAUDE.md"));
    }

    #[test]
    fn claude_md_imports_are_followed_inside_the_root_only_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(&outside.path().join("secret.md"), "SECRET");
        write(
            &root.join("CLAUDE.md"),
            "See @docs/style.md and @docs/style.md, not `@docs/code.md`, mail a@b.c\n\
             ```\n@docs/fenced.md\n```\n",
        );
        write(&root.join("docs/style.md"), "style @deep/one.md");
        write(&root.join("docs/deep/one.md"), "one");
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("docs/leak.md"))
            .unwrap();
        write(
            &root.join("LING.md"),
            "@docs/leak.md is not imported from LING.md",
        );
        let (found, warnings) = collect(&at_root(&root));
        assert_eq!(
            labels(&found),
            [
                "LING.md",
                "CLAUDE.md",
                "CLAUDE.md → docs/style.md",
                "CLAUDE.md → docs/style.md → deep/one.md"
            ]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        write(&root.join("CLAUDE.md"), "@docs/leak.md");
        let (found, warnings) = collect(&at_root(&root));
        assert!(found.iter().all(|i| !i.text.contains("SECRET")));
        assert!(warnings[0].contains("outside"), "{warnings:?}");
    }

    #[test]
    fn an_import_chain_stops_at_the_depth_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        write(&root.join("CLAUDE.md"), "@f1.md");
        for i in 1..=7 {
            write(
                &root.join(format!("f{i}.md")),
                &format!("level {i} @f{}.md", i + 1),
            );
        }
        let (found, warnings) = collect(&at_root(&root));
        assert_eq!(found.len(), 1 + IMPORT_DEPTH);
        assert!(
            warnings.iter().any(|w| w.contains("levels deep")),
            "{warnings:?}"
        );
    }

    #[test]
    fn import_words_skip_code_and_addresses() {
        assert_eq!(
            import_words("use @a/b.md and `@c.md`; @README.md. me@x.org @user /@x.md"),
            ["a/b.md", "README.md"]
        );
    }

    #[test]
    fn a_claude_md_that_imports_agents_md_does_not_send_it_twice() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("AGENTS.md"), "Use pnpm.");
        write(&root.join("CLAUDE.md"), "@AGENTS.md");
        let (found, warnings) = collect(&at_root(root));
        let agents: Vec<&Instructions> = found.iter().filter(|i| i.text == "Use pnpm.").collect();
        assert_eq!(agents.len(), 1, "{found:#?}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
