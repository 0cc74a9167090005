//! A project's `.claude/rules/*.md` (Claude Code's modular instructions, in subfolders too):
//! each file's text goes into the system prompt after the project's memory files. A rule with
//! `paths:` in its front matter (globs, a list or comma-separated) is path-scoped: it is sent
//! with the globs it is for, so the model applies it to those files only. Read as `CLAUDE.md`
//! is (inside the project root after symlinks, capped), unless `claudeCompat` is off.

use std::path::{Path, PathBuf};

use crate::config::extensions::frontmatter;

/// The folder of the rules, relative to the project root.
pub const RULES_DIR: &str = ".claude/rules";
/// How deep subfolders of the rules folder are read.
const DEPTH: usize = 4;
/// The most rule files read.
const MAX_FILES: usize = 200;

/// The rule files under `root`, sorted by path.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(&root.join(RULES_DIR), 0, &mut found);
    found.sort();
    found.truncate(MAX_FILES);
    found
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() && depth < DEPTH {
            walk(&path, depth + 1, found);
        } else if path.extension().is_some_and(|e| e == "md") {
            found.push(path);
        }
    }
}

/// The text a rule file gives the prompt: its body, after the globs it is for when it has
/// `paths:`.
pub fn prompt_text(text: &str) -> String {
    let parsed = frontmatter::parse(text);
    let globs = parsed.list("paths").unwrap_or_default();
    let body = parsed.body.trim();
    if globs.is_empty() {
        return body.to_string();
    }
    format!(
        "(These rules apply only when working with files matching: {}.)\n\n{body}",
        globs.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_scoped_rule_says_which_files_it_is_for() {
        let text = "---\npaths:\n  - \"src/api/**/*.ts\"\n  - lib/**\n---\n# API\nUse zod.\n";
        assert_eq!(
            prompt_text(text),
            "(These rules apply only when working with files matching: src/api/**/*.ts, \
             lib/**.)\n\n# API\nUse zod."
        );
        assert_eq!(prompt_text("Always test.\n"), "Always test.");
    }
}
