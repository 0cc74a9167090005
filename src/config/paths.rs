use std::path::{Path, PathBuf};

/// Where Ling reads and writes: the project root and Ling's home (`LING_HOME`, else `~/.ling`),
/// the working directory the run started in (the root or a folder under it), and the further
/// directories `--add-dir` lets the file tools and the sandbox write.
#[derive(Debug, Clone)]
pub struct Paths {
    pub project_root: PathBuf,
    pub home: PathBuf,
    /// Where the run started: the root itself or a folder inside it (instruction files are
    /// read from the root down to it).
    pub working_dir: PathBuf,
    /// `--add-dir` directories, canonical.
    pub add_dirs: Vec<PathBuf>,
    /// Whether the user's own config files (`settings.json`, `hooks.json`, `mcp.json` in the
    /// home) are read: off with `--setting-sources` without `user`.
    pub user_config: bool,
    /// A folder the root search passed over because it belongs to another user: said at start.
    pub passed_over: Option<PassedOver>,
}

impl Paths {
    /// `project_root` must already be absolute (the CLI canonicalizes `-C`).
    pub fn new(project_root: PathBuf) -> Self {
        Self::with_home(project_root, ling_home())
    }

    pub fn with_home(project_root: PathBuf, home: PathBuf) -> Self {
        Self {
            working_dir: project_root.clone(),
            project_root,
            home,
            add_dirs: Vec::new(),
            user_config: true,
            passed_over: None,
        }
    }

    /// The same paths, the run having started in `dir` (under the root).
    pub fn in_working_dir(mut self, dir: PathBuf) -> Self {
        self.working_dir = dir;
        self
    }

    /// The same paths with these `--add-dir` directories.
    pub fn with_add_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.add_dirs = dirs;
        self
    }

    /// A user config file to read, unless the user's config is left out of this run.
    pub fn user_config_file(&self, name: &str) -> Option<PathBuf> {
        self.user_config.then(|| self.user_file(name))
    }

    pub fn project_dir(&self) -> PathBuf {
        self.project_root.join(".ling")
    }

    pub fn project_file(&self, name: &str) -> PathBuf {
        self.project_dir().join(name)
    }

    pub fn user_file(&self, name: &str) -> PathBuf {
        self.home.join(name)
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.home.join("logs")
    }

    pub fn history_file(&self) -> PathBuf {
        self.home.join("history")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.home.join("sessions")
    }

    /// The sessions' checkpoints (`/rewind`): their journals and the blobs they share.
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.home.join("checkpoints")
    }

    /// A path shown to the user: relative to the project root when inside it.
    pub fn display<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, str> {
        match path.strip_prefix(&self.project_root) {
            Ok(rel) if !rel.as_os_str().is_empty() => {
                std::borrow::Cow::Owned(rel.display().to_string())
            }
            _ => path.to_string_lossy(),
        }
    }
}

/// A folder the root search passed over: it holds a project marker but belongs to another user,
/// so its config and instructions are not taken without the user saying so (git refuses such a
/// repository too: `safe.directory`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub dir: PathBuf,
    /// The owner's user id.
    pub owner: u32,
}

impl PassedOver {
    /// The warning a run starts with.
    pub fn warning(&self, root: &Path) -> String {
        format!(
            "{} looks like the project root but belongs to another user (uid {}), so Ling works \
             in {} without its config or instructions; to use it, start Ling in it (cd {0}) or \
             pass -C {0}",
            self.dir.display(),
            self.owner,
            root.display()
        )
    }
}

/// Where the root search ended: the root, and a folder it passed over ([`PassedOver`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootFound {
    pub root: PathBuf,
    pub passed_over: Option<PassedOver>,
}

/// The project root of a run started in `start` (absolute, canonical): the nearest ancestor
/// (`start` included) holding `.git` (a directory, or the file of a worktree); else the nearest
/// holding `.ling` or `.claude`; else `start` itself. A `.ling` that is `home` (`LING_HOME`) and
/// the `.ling` and `.claude` of the user's home directory are the user's own config, never a
/// project's marker. Started inside the home directory, the search never goes above it (a
/// repository there would make home's dotfiles part of the project), and an ancestor above
/// `start` that belongs to another user is passed over ([`PassedOver`]).
pub fn find_project_root(start: &Path, home: &Path) -> PathBuf {
    find_root(start, home).root
}

/// [`find_project_root`], saying which folder it passed over.
pub fn find_root(start: &Path, home: &Path) -> RootFound {
    let user_home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| std::fs::canonicalize(&h).unwrap_or_else(|_| PathBuf::from(h)));
    find_root_as(start, home, user_home.as_deref(), effective_uid())
}

fn find_root_as(start: &Path, home: &Path, user_home: Option<&Path>, uid: u32) -> RootFound {
    let ling_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    // Inside home, the search stops at home itself.
    let ceiling = user_home.filter(|h| start.starts_with(h));
    let candidates: Vec<&Path> = start
        .ancestors()
        .take_while(|dir| ceiling.is_none_or(|h| dir.starts_with(h)))
        .collect();
    let mut passed_over = None;
    let mut ours = |dir: &Path| {
        if dir == start {
            return true;
        }
        match owner(dir) {
            Some(owner) if owner != uid => {
                passed_over.get_or_insert(PassedOver {
                    dir: dir.to_path_buf(),
                    owner,
                });
                false
            }
            _ => true,
        }
    };
    let git = candidates
        .iter()
        .find(|dir| dir.join(".git").exists() && ours(dir));
    let marks = |dir: &Path| {
        if user_home == Some(dir) {
            return false;
        }
        let ling = dir.join(".ling");
        let own = std::fs::canonicalize(&ling).is_ok_and(|l| l == ling_home);
        (ling.is_dir() && !own) || dir.join(".claude").is_dir()
    };
    let root = match git {
        Some(dir) => dir.to_path_buf(),
        None => candidates
            .iter()
            .find(|dir| marks(dir) && ours(dir))
            .map_or_else(|| start.to_path_buf(), |dir| dir.to_path_buf()),
    };
    RootFound { root, passed_over }
}

/// The owner of `dir`.
fn owner(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| m.uid())
}

/// The user id this process acts as.
fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `LING_HOME`, else `~/.ling`.
pub fn ling_home() -> PathBuf {
    if let Some(home) = std::env::var_os("LING_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => PathBuf::from(home).join(".ling"),
        None => PathBuf::from(".ling"),
    }
}

/// Why a `${VAR}` in a config value cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("unclosed `${{` in {0:?}")]
    Unclosed(String),
    #[error("empty variable name in {0:?}")]
    EmptyName(String),
    #[error("environment variable {0} is not set")]
    Unset(String),
}

/// Expands `${VAR}` and `${VAR:-default}` from the process environment. An unset variable without
/// a default is an error naming it. `$` not followed by `{` is kept as it is.
pub fn expand_vars(input: &str) -> Result<String, ExpandError> {
    expand_vars_with(input, |name| std::env::var(name).ok())
}

/// [`expand_vars`] with a custom lookup (tests, or a server's own `env` layered over the process).
pub fn expand_vars_with(
    input: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed(input.to_string()));
        };
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(ExpandError::EmptyName(input.to_string()));
        }
        match (
            lookup(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ExpandError::Unset(name.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The names of the variables `${VAR}` and `${VAR:-default}` in `input` would expand, in order,
/// each once: what a config would read from the environment.
pub fn var_names(input: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let body = &after[..end];
        let name = body.split_once(":-").map_or(body, |(name, _)| name);
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &after[end + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SET" => Some("value".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn the_root_is_the_nearest_git_then_ling_or_claude_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let home = top.join("ling-home");
        let deep = top.join("repo/a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            find_project_root(&deep, &home),
            deep,
            "no marker: the start"
        );
        std::fs::create_dir_all(top.join("repo/a/.claude")).unwrap();
        assert_eq!(find_project_root(&deep, &home), top.join("repo/a"));
        std::fs::create_dir_all(top.join("repo/.git")).unwrap();
        assert_eq!(
            find_project_root(&deep, &home),
            top.join("repo"),
            ".git wins"
        );
        // `.ling` that is LING_HOME marks nothing.
        let other = top.join("other/x");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::create_dir_all(top.join("other/.ling")).unwrap();
        assert_eq!(find_project_root(&other, &home), top.join("other"));
        assert_eq!(find_project_root(&other, &top.join("other/.ling")), other);
    }

    #[test]
    fn the_search_stops_at_home_and_passes_over_another_users_folder() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let ling_home = top.join("ling-home");
        let home = top.join("home/me");
        let deep = home.join("src/x");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(top.join("home/.git")).unwrap();
        let uid = std::fs::metadata(&top).unwrap().uid();
        let found = find_root_as(&deep, &ling_home, Some(&home), uid);
        assert_eq!(found.root, deep, "a repository above home is not the root");
        std::fs::create_dir_all(home.join(".git")).unwrap();
        assert_eq!(find_root_as(&deep, &ling_home, Some(&home), uid).root, home);
        // Outside home: the repository above is taken when it is ours, passed over when not.
        let outside = top.join("home/other");
        std::fs::create_dir_all(&outside).unwrap();
        assert_eq!(
            find_root_as(&outside, &ling_home, Some(&home), uid),
            RootFound {
                root: top.join("home"),
                passed_over: None
            }
        );
        let found = find_root_as(&outside, &ling_home, Some(&home), uid + 1);
        assert_eq!(found.root, outside);
        assert_eq!(
            found.passed_over,
            Some(PassedOver {
                dir: top.join("home"),
                owner: uid
            })
        );
        // Started in it, the folder is the root whoever owns it.
        assert_eq!(
            find_root_as(&top.join("home"), &ling_home, Some(&home), uid + 1).root,
            top.join("home")
        );
    }

    #[test]
    fn expands_set_unset_and_defaults() {
        assert_eq!(expand_vars_with("a${SET}b", env), Ok("avalueb".into()));
        assert_eq!(expand_vars_with("${NOPE:-dflt}", env), Ok("dflt".into()));
        assert_eq!(expand_vars_with("${EMPTY:-dflt}", env), Ok("dflt".into()));
        assert_eq!(expand_vars_with("${EMPTY}", env), Ok(String::new()));
        assert_eq!(
            expand_vars_with("$HOME and $", env),
            Ok("$HOME and $".into())
        );
        let unset = expand_vars_with("Bearer ${NOPE}", env);
        assert_eq!(unset, Err(ExpandError::Unset("NOPE".into())));
        assert_eq!(
            unset.unwrap_err().to_string(),
            "environment variable NOPE is not set"
        );
        assert_eq!(
            expand_vars_with("${SET", env),
            Err(ExpandError::Unclosed("${SET".into()))
        );
    }

    #[test]
    fn var_names_are_the_expanded_variables_once_each() {
        assert_eq!(
            var_names("Bearer ${TOKEN} ${HOST:-x} $PLAIN ${TOKEN} ${OPEN"),
            ["TOKEN", "HOST"]
        );
    }
}
