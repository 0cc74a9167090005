//! Path rules for the file tools (`edit_file(src/**)`, `read_file(.env)`) and the protected
//! paths of `docs/tools.md`. Both match the path a call acts on as the tool resolves it
//! (relative to the canonical project root, `..` applied, symlinks followed), so a symlink
//! or `..` cannot dodge a rule.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use crate::tools::paths::{expand_home, resolve_lenient, resolve_under};

/// The file tools that take path rules, and the Claude Code names that map onto them.
pub fn path_rule_tools(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "read_file" => &["read_file"],
        "write_file" | "Write" => &["write_file"],
        "edit_file" => &["edit_file"],
        "grep" | "Grep" => &["grep"],
        "glob" | "Glob" => &["glob"],
        // Claude Code's `Read(...)` covers its search tools, `Edit(...)` every file edit.
        "Read" => &["read_file", "grep", "glob"],
        "Edit" => &["edit_file", "write_file"],
        "MultiEdit" => &["edit_file"],
        // Ling's read_file lists a directory.
        "LS" => &["read_file"],
        _ => return None,
    })
}

/// Directory names under the project root (and `--add-dir` folders) that file edits never
/// change without asking, at any depth (a nested repository's `sub/.git/config` too), compared
/// without case, since on a case-insensitive file system `.GIT/config` is the same file: git's
/// (its hooks and config run at the user's next `git`), Ling's and Claude Code's config.
const PROTECTED_DIRS: &[&str] = &[".git", ".ling", ".claude"];

/// Where paths are resolved: the canonical project root and `LING_HOME`, and what is protected
/// or hidden beneath them.
#[derive(Debug, Clone)]
pub struct Scope {
    root: PathBuf,
    home: PathBuf,
    /// `--add-dir` folders (canonical): their `.git`, `.ling` and `.claude` are protected as
    /// the root's are.
    areas: Vec<PathBuf>,
    /// Files and folders Ling runs or reads outside the sandbox (resolved), with why: edits
    /// beneath them ask too (`trust::surface`).
    outside: Vec<(PathBuf, &'static str)>,
    /// What no sandboxed command may read (resolved): reading it with a file tool asks.
    hidden: Vec<PathBuf>,
}

/// The path a file tool's call acts on.
#[derive(Debug, Clone)]
pub struct Target {
    absolute: PathBuf,
    /// Relative to the root with `/` separators, when inside it (`""` for the root itself).
    relative: Option<String>,
}

/// Why a path is protected: an edit asks (a read, for [`Protected::Hidden`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protected {
    /// Inside a `.git`, `.ling` or `.claude` directory (the name as the rule must spell it).
    Dir(&'static str),
    /// Inside `LING_HOME`.
    Home,
    /// Something Ling runs or reads outside the sandbox; the text says what.
    Outside(&'static str),
    /// Hidden from sandboxed commands (`sandbox.denyRead`): a read of it asks.
    Hidden,
}

impl Scope {
    pub fn new(root: &Path, home: &Path) -> Self {
        Self {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
            home: resolve_lenient(home).unwrap_or_else(|_| home.to_path_buf()),
            areas: Vec::new(),
            outside: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// The same scope around another root (a sub-agent's worktree).
    pub fn moved_to(&mut self, root: &Path) {
        self.root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    }

    /// Also protects the `.git`, `.ling` and `.claude` of these folders (`--add-dir`).
    pub fn protect_areas(&mut self, dirs: &[PathBuf]) {
        self.areas.extend(dirs.iter().map(|d| resolved(d)));
    }

    /// Also protects these files and folders (what Ling runs or reads outside the sandbox).
    pub fn protect_outside(&mut self, paths: &[(PathBuf, &'static str)]) {
        for (path, why) in paths {
            // Both the path as named and where it leads.
            for path in [path.clone(), resolved(path)] {
                if !self.outside.iter().any(|(p, _)| *p == path) {
                    self.outside.push((path, why));
                }
            }
        }
    }

    /// Reads of these (resolved) ask.
    pub fn hide(&mut self, paths: &[PathBuf]) {
        self.hidden.extend(paths.iter().map(|p| resolved(p)));
    }

    /// The path `tool` acts on with `input`: its `path` argument, or the root for `grep` and
    /// `glob` without one. `None` for other tools, or a path that cannot be resolved (the
    /// tool then fails on its own).
    pub fn target(&self, tool: &str, input: &Value) -> Option<Target> {
        path_rule_tools(tool)?;
        let raw = match input.get("path").and_then(Value::as_str) {
            Some(raw) if !raw.trim().is_empty() => raw,
            None if matches!(tool, "grep" | "glob") => ".",
            _ => return None,
        };
        let absolute = resolve_under(&self.root, raw).ok()?;
        Some(self.target_of(absolute))
    }

    /// The target of a call that reads `path` without a `path` argument (a skill's file).
    pub fn target_of(&self, absolute: PathBuf) -> Target {
        let relative = absolute.strip_prefix(&self.root).ok().map(|rel| {
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        });
        Target { absolute, relative }
    }

    /// Whether an edit of `target` must be asked for in every mode but `bypass`.
    pub fn protected(&self, target: &Target) -> Option<Protected> {
        if target.absolute.starts_with(&self.home) {
            return Some(Protected::Home);
        }
        if let Some((_, why)) = self
            .outside
            .iter()
            .find(|(path, _)| target.absolute.starts_with(path))
        {
            return Some(Protected::Outside(why));
        }
        let relative = match &target.relative {
            Some(relative) => Path::new(relative),
            None => self
                .areas
                .iter()
                .find_map(|area| target.absolute.strip_prefix(area).ok())?,
        };
        relative.components().find_map(|component| {
            let component = component.as_os_str().to_string_lossy();
            PROTECTED_DIRS
                .iter()
                .find(|dir| component.eq_ignore_ascii_case(dir))
                .copied()
                .map(Protected::Dir)
        })
    }

    /// Whether reading `target` must be asked for in every mode but `bypass`: it is hidden
    /// from sandboxed commands.
    pub fn hidden(&self, target: &Target) -> Option<Protected> {
        self.hidden
            .iter()
            .any(|h| target.absolute.starts_with(h))
            .then_some(Protected::Hidden)
    }

    /// The path rule that allows `tool` on `target` and nothing wider: the path itself, its
    /// glob characters escaped; absolute outside the root.
    pub fn rule_for(&self, tool: &str, target: &Target) -> String {
        format!("{tool}({})", escape_glob(&self.shown(target)))
    }

    pub fn shown(&self, target: &Target) -> String {
        target
            .relative
            .clone()
            .unwrap_or_else(|| target.absolute.to_string_lossy().into_owned())
    }
}

/// `path` with symlinks resolved as far as it exists.
fn resolved(path: &Path) -> PathBuf {
    resolve_lenient(path).unwrap_or_else(|_| path.to_path_buf())
}

fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A compiled path glob: `*` within a segment, `**` at any depth, relative to the project
/// root unless it starts with `/` or `~/`. A pattern also matches everything under a
/// directory it matches (`edit_file(src)` is `edit_file(src/**)` too).
#[derive(Debug, Clone)]
pub struct PathPattern {
    absolute: bool,
    matcher: GlobMatcher,
    under: GlobMatcher,
    /// The pattern's components before its first glob character.
    literal: Vec<String>,
}

/// Why a rule's path pattern cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("the path pattern is empty; write e.g. `edit_file(src/**)`")]
    Empty,
    #[error("`{text}` is not a valid path glob: {source}")]
    Glob {
        text: String,
        source: globset::Error,
    },
}

impl PathPattern {
    pub fn compile(text: &str, scope: &Scope) -> Result<Self, PatternError> {
        let mut pattern = text.trim().to_string();
        if pattern.is_empty() {
            return Err(PatternError::Empty);
        }
        if let Some(rest) = pattern.strip_prefix("//") {
            // Claude Code's spelling of an absolute path.
            pattern = format!("/{rest}");
        } else if pattern.starts_with("~/") {
            pattern = expand_home(&pattern).to_string_lossy().into_owned();
        }
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest.to_string();
        }
        while pattern.len() > 1 && pattern.ends_with('/') {
            pattern.pop();
        }
        let absolute = pattern.starts_with('/');
        // Symlinks in the literal part resolve like the tools' paths do, so a rule written
        // through a symlink still names the file the tool will touch.
        let (literal, rest) = split_literal(&pattern);
        let base = if absolute {
            PathBuf::from("/")
        } else {
            scope.root.clone()
        };
        let joined = base.join(literal.join("/"));
        let resolved = resolve_lenient(&joined).unwrap_or(joined);
        let (absolute, head) = match resolved.strip_prefix(&scope.root) {
            Ok(rel) if !absolute => (false, rel.to_string_lossy().into_owned()),
            _ => (true, resolved.to_string_lossy().into_owned()),
        };
        let pattern = match (head.is_empty(), rest.is_empty()) {
            (true, _) => rest.clone(),
            (false, true) => head.clone(),
            (false, false) => format!("{}/{rest}", head.trim_end_matches('/')),
        };
        let glob = |p: &str| {
            GlobBuilder::new(p)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|source| PatternError::Glob {
                    text: text.to_string(),
                    source,
                })
        };
        let under = if pattern.is_empty() || pattern == "/" {
            "**".to_string()
        } else {
            format!("{}/**", pattern.trim_end_matches('/'))
        };
        Ok(Self {
            absolute,
            matcher: glob(if pattern.is_empty() { "**" } else { &pattern })?,
            under: glob(&under)?,
            literal: head
                .split('/')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect(),
        })
    }

    pub fn matches(&self, target: &Target) -> bool {
        let path = if self.absolute {
            target.absolute.to_string_lossy().into_owned()
        } else {
            match &target.relative {
                Some(rel) => rel.clone(),
                None => return false,
            }
        };
        self.matcher.is_match(&path) || self.under.is_match(&path)
    }

    /// Whether the pattern names a protected place itself (`edit_file(.ling/hooks.json)`,
    /// `write_file(.git/**)`) rather than reaching it by a wildcard (`write_file(**)`).
    pub fn names(&self, protected: &Protected, scope: &Scope) -> bool {
        match protected {
            Protected::Dir(dir) => self.literal.iter().any(|c| c.eq_ignore_ascii_case(dir)),
            Protected::Home | Protected::Outside(_) | Protected::Hidden => {
                let base = if self.absolute {
                    Path::new("/")
                } else {
                    scope.root.as_path()
                };
                let named = base.join(self.literal.join("/"));
                !self.literal.is_empty()
                    && match protected {
                        Protected::Home => named.starts_with(&scope.home),
                        Protected::Hidden => scope.hidden.iter().any(|h| named.starts_with(h)),
                        _ => scope.outside.iter().any(|(p, _)| named.starts_with(p)),
                    }
            }
        }
    }
}

/// A pattern's leading components without glob characters, and the rest.
fn split_literal(pattern: &str) -> (Vec<&str>, String) {
    let components: Vec<&str> = pattern.split('/').collect();
    let first_glob = components
        .iter()
        .position(|c| c.contains(['*', '?', '[', '{', '\\']))
        .unwrap_or(components.len());
    (
        components[..first_glob].to_vec(),
        components[first_glob..].join("/"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> (tempfile::TempDir, tempfile::TempDir, Scope) {
        let root = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let scope = Scope::new(root.path(), home.path());
        (root, home, scope)
    }

    #[test]
    fn globs_match_the_resolved_path_relative_to_the_root() {
        let (root, _home, scope) = scope();
        std::fs::create_dir_all(root.path().join("src/deep")).unwrap();
        let target = |p: &str| scope.target("edit_file", &json!({"path": p})).unwrap();
        let pattern = |p: &str| PathPattern::compile(p, &scope).unwrap();
        assert!(pattern("src/**").matches(&target("src/deep/a.rs")));
        assert!(pattern("src/*").matches(&target("src/a.rs")));
        assert!(!pattern("src/*.rs").matches(&target("src/deep/a.rs")));
        assert!(pattern("./src").matches(&target("src/deep/a.rs")));
        assert!(pattern("src/**").matches(&target("./x/../src/a.rs")));
        assert!(!pattern("src/**").matches(&target("other/a.rs")));
        let absolute = format!("{}/src/*.rs", scope.root.display());
        assert!(pattern(&absolute).matches(&target("src/a.rs")));
        assert!(matches!(
            PathPattern::compile("src/[", &scope),
            Err(PatternError::Glob { .. })
        ));
        assert!(matches!(
            PathPattern::compile(" ", &scope),
            Err(PatternError::Empty)
        ));
    }

    #[test]
    fn protected_paths_are_found_at_any_depth_and_through_symlinks() {
        let (root, home, scope) = scope();
        std::fs::create_dir_all(root.path().join(".ling")).unwrap();
        std::os::unix::fs::symlink(root.path().join(".ling"), root.path().join("cfg")).unwrap();
        let protected = |p: &str| {
            let t = scope.target("write_file", &json!({"path": p})).unwrap();
            scope.protected(&t)
        };
        assert_eq!(protected(".ling/hooks.json"), Some(Protected::Dir(".ling")));
        assert_eq!(protected("cfg/hooks.json"), Some(Protected::Dir(".ling")));
        assert_eq!(protected("sub/.git/config"), Some(Protected::Dir(".git")));
        assert_eq!(protected(".GIT/config"), Some(Protected::Dir(".git")));
        assert_eq!(protected(".gitignore"), None);
        assert_eq!(protected(".github/workflows/ci.yml"), None);
        let in_home = home.path().join("settings.json");
        assert_eq!(protected(in_home.to_str().unwrap()), Some(Protected::Home));
    }

    #[test]
    fn only_a_pattern_naming_the_protected_place_names_it() {
        let (_root, home, scope) = scope();
        let names = |p: &str, protected: Protected| {
            PathPattern::compile(p, &scope)
                .unwrap()
                .names(&protected, &scope)
        };
        assert!(names(".ling/hooks.json", Protected::Dir(".ling")));
        assert!(names(".git/**", Protected::Dir(".git")));
        assert!(!names("**", Protected::Dir(".git")));
        assert!(!names("*/config", Protected::Dir(".git")));
        let home_rule = format!("{}/**", home.path().display());
        assert!(names(&home_rule, Protected::Home));
        assert!(!names("/**", Protected::Home));
    }

    #[test]
    fn suggested_rules_escape_glob_characters() {
        let (_root, _home, scope) = scope();
        let target = scope
            .target("write_file", &json!({"path": ".ling/a*b.json"}))
            .unwrap();
        let rule = scope.rule_for("write_file", &target);
        assert_eq!(rule, r"write_file(.ling/a\*b.json)");
        let pattern = PathPattern::compile(r".ling/a\*b.json", &scope).unwrap();
        assert!(pattern.matches(&target));
        let other = scope
            .target("write_file", &json!({"path": ".ling/axb.json"}))
            .unwrap();
        assert!(!pattern.matches(&other));
    }
}
