//! Git worktrees for `-w/--worktree [NAME]` and for sub-agents with `isolation: worktree`. The worktree is made under
//! settings `worktreeDir` (relative to the repository's root; default `../REPO-worktrees`, a
//! sibling of the repository, so the main tree's tools never see it and it is not inside the
//! project's protected `.ling`), on a new branch named after it from the current `HEAD`; an
//! existing worktree of that name is entered again (its branch kept). The session's (or the
//! sub-agent's) project root, and with it the sandbox's writable root, is the worktree. At the
//! end [`Worktree::finish`] says what changed and where, and removes the worktree only when
//! nothing changed and the caller allows it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::{Paths, Settings, SettingsOverrides};

/// Why a worktree could not be made or entered.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "-w/--worktree needs a git repository with a commit; {} is not one (run `git init` and commit first)",
        .0.display()
    )]
    NotARepository(PathBuf),
    #[error(
        "worktree name {0:?}: use letters, digits, `.`, `_` and `-` (not starting with `-` or `.`)"
    )]
    BadName(String),
    #[error("{} exists and is not a git worktree; pick another name for -w", .0.display())]
    Occupied(PathBuf),
    #[error("git {args}: {message}")]
    Git { args: String, message: String },
}

/// A session's worktree.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    /// The main repository's root.
    pub repo: PathBuf,
    /// The commit it started from.
    pub base: String,
    /// A WorktreeCreate hook made it (and WorktreeRemove hooks remove it), not git.
    pub by_hook: bool,
}

/// How a worktree's session ended: what to tell the user, and whether it is to go (the
/// caller fires WorktreeRemove then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    pub lines: Vec<String>,
    pub removed: bool,
}

/// What a worktree holds that its start did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// `git status --short` lines: files changed and not committed.
    pub files: Vec<String>,
    /// Commits on its branch since it started.
    pub commits: usize,
}

impl Changes {
    pub fn is_clean(&self) -> bool {
        self.files.is_empty() && self.commits == 0
    }
}

/// The folder worktrees go in when settings `worktreeDir` does not say: `../REPO-worktrees`.
pub fn default_dir(repo: &Path) -> PathBuf {
    let name = repo
        .file_name()
        .map_or_else(|| "repo".into(), |n| n.to_string_lossy().into_owned());
    repo.parent()
        .unwrap_or(repo)
        .join(format!("{name}-worktrees"))
}

fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| WorktreeError::Git {
            args: args.join(" "),
            message: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(WorktreeError::Git {
            args: args.join(" "),
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Settings `worktreeDir` of the project at `paths`, its files as `project` holds them.
pub fn dir_setting(
    paths: &Paths,
    project: &crate::config::ProjectFiles,
    overrides: &SettingsOverrides,
) -> Option<PathBuf> {
    Settings::load(paths, project, overrides)
        .ok()
        .and_then(|s| s.worktree_dir)
}

/// A name for a worktree the user did not name: `ling-` and a short random suffix.
pub fn new_name() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("ling-{}", &id[..8])
}

impl Worktree {
    /// Makes (or enters again) the worktree `name` of the repository at `root`, under `dir`
    /// (`None`: [`default_dir`]; relative: to the repository's root).
    pub fn create(root: &Path, name: &str, dir: Option<&Path>) -> Result<Self, WorktreeError> {
        if !valid_name(name) {
            return Err(WorktreeError::BadName(name.to_string()));
        }
        let not_repo = || WorktreeError::NotARepository(root.to_path_buf());
        let repo =
            PathBuf::from(git(root, &["rev-parse", "--show-toplevel"]).map_err(|_| not_repo())?);
        let base = git(&repo, &["rev-parse", "HEAD"]).map_err(|_| not_repo())?;
        let folder = match dir {
            Some(dir) => repo.join(dir),
            None => default_dir(&repo),
        };
        let path = folder.join(name);
        let worktree = |path: PathBuf, base: String| Self {
            name: name.to_string(),
            path,
            branch: name.to_string(),
            repo: repo.clone(),
            base,
            by_hook: false,
        };
        if path.exists() {
            if !path.join(".git").is_file() {
                return Err(WorktreeError::Occupied(path));
            }
            let path = path.canonicalize().unwrap_or(path);
            // Entered again: what it started from is where its branch left the main line.
            let base = git(&path, &["merge-base", "HEAD", &base]).unwrap_or(base);
            return Ok(worktree(path, base));
        }
        std::fs::create_dir_all(&folder).map_err(|e| WorktreeError::Git {
            args: format!("worktree add (making {})", folder.display()),
            message: e.to_string(),
        })?;
        let target = path.to_string_lossy().into_owned();
        let branch_exists = git(&repo, &["rev-parse", "--verify", "--quiet", name]).is_ok();
        if branch_exists {
            git(&repo, &["worktree", "add", &target, name])?;
        } else {
            git(&repo, &["worktree", "add", "-b", name, &target, "HEAD"])?;
        }
        let path = path.canonicalize().unwrap_or(path);
        Ok(worktree(path, base))
    }

    /// The worktree a WorktreeCreate hook made at `path` (what it printed) for `name`.
    pub fn by_hook(root: &Path, name: &str, path: &str) -> Self {
        let path = PathBuf::from(path.trim());
        let base = git(&path, &["rev-parse", "HEAD"]).unwrap_or_default();
        let branch = git(&path, &["branch", "--show-current"]).unwrap_or_else(|_| name.into());
        Self {
            name: name.to_string(),
            path: path.canonicalize().unwrap_or(path),
            branch,
            repo: root.to_path_buf(),
            base,
            by_hook: true,
        }
    }

    /// What changed in it since it started.
    pub fn changes(&self) -> Changes {
        let files = git(&self.path, &["status", "--short"])
            .map(|out| out.lines().map(str::to_string).collect())
            .unwrap_or_default();
        let range = format!("{}..HEAD", self.base);
        let commits = git(&self.path, &["rev-list", "--count", &range])
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        Changes { files, commits }
    }

    /// Removes it and its branch; refused (by git) when it holds changes.
    pub fn remove(&self) -> Result<(), WorktreeError> {
        let target = self.path.to_string_lossy().into_owned();
        git(&self.repo, &["worktree", "remove", &target])?;
        git(&self.repo, &["branch", "-d", &self.branch])?;
        Ok(())
    }

    /// The end of a session in it: removed when nothing changed and `may_remove` (git's
    /// worktree by git; a hook's by the WorktreeRemove hooks the caller fires), else kept.
    pub fn finish(&self, may_remove: bool) -> Finish {
        let changes = self.changes();
        let at = format!(
            "worktree {} ({}, branch {})",
            self.name,
            self.path.display(),
            self.branch
        );
        let kept = |lines: Vec<String>| Finish {
            lines,
            removed: false,
        };
        if changes.is_clean() {
            if !may_remove {
                return kept(vec![format!(
                    "{at}: nothing changed; kept (-p keeps it; `git worktree remove {}` removes it)",
                    self.path.display()
                )]);
            }
            if self.by_hook {
                return Finish {
                    lines: vec![format!(
                        "{at}: nothing changed; removed by the WorktreeRemove hooks"
                    )],
                    removed: true,
                };
            }
            return match self.remove() {
                Ok(()) => Finish {
                    lines: vec![format!("{at}: nothing changed; removed")],
                    removed: true,
                },
                Err(e) => kept(vec![format!("{at}: nothing changed; kept: {e}")]),
            };
        }
        let mut lines = vec![format!(
            "{at}: kept, with {} changed file(s) not committed and {} commit(s) since it started",
            changes.files.len(),
            changes.commits
        )];
        lines.extend(changes.files.iter().map(|f| format!("  {f}")));
        lines.push(format!(
            "merge it with `git merge {}` in {}; remove it with `git worktree remove {}`",
            self.branch,
            self.repo.display(),
            self.path.display()
        ));
        kept(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_the_default_folder_is_a_sibling() {
        assert!(valid_name("fix-login_2.b"));
        for bad in ["", "-x", ".x", "a/b", "a b", "ä"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(
            default_dir(Path::new("/src/app")),
            PathBuf::from("/src/app-worktrees")
        );
        assert!(new_name().starts_with("ling-"));
    }
}
