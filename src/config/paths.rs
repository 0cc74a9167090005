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

/// The project root of a run started in `start` (absolute, canonical): the nearest ancestor
/// (`start` included) holding `.git` (a directory, or the file of a worktree); else the nearest
/// holding `.ling` or `.claude`; else `start` itself. A `.ling` that is `home` (`LING_HOME`) and
/// the `.ling` and `.claude` of the user's home directory are the user's own config, never a
/// project's marker.
pub fn find_project_root(start: &Path, home: &Path) -> PathBuf {
    let user_home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| std::fs::canonicalize(&h).unwrap_or_else(|_| PathBuf::from(h)));
    let ling_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    if let Some(dir) = start.ancestors().find(|dir| dir.join(".git").exists()) {
        return dir.to_path_buf();
    }
    let marks = |dir: &Path| {
        if user_home.as_deref() == Some(dir) {
            return false;
        }
        let ling = dir.join(".ling");
        let own = std::fs::canonicalize(&ling).is_ok_and(|l| l == ling_home);
        (ling.is_dir() && !own) || dir.join(".claude").is_dir()
    };
    match start.ancestors().find(|dir| marks(dir)) {
        Some(dir) => dir.to_path_buf(),
        None => start.to_path_buf(),
    }
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

/// Expands `${VAR}` and `${VAR:-default}` from the process environment. An unset variable without
/// a default is an error naming it. `$` not followed by `{` is kept as it is.
pub fn expand_vars(input: &str) -> Result<String, String> {
    expand_vars_with(input, |name| std::env::var(name).ok())
}

/// [`expand_vars`] with a custom lookup (tests, or a server's own `env` layered over the process).
pub fn expand_vars_with(
    input: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed `${{` in {input:?}"));
        };
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        if name.is_empty() {
            return Err(format!("empty variable name in {input:?}"));
        }
        match (
            lookup(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(format!("environment variable {name} is not set")),
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
    fn expands_set_unset_and_defaults() {
        assert_eq!(expand_vars_with("a${SET}b", env), Ok("avalueb".into()));
        assert_eq!(expand_vars_with("${NOPE:-dflt}", env), Ok("dflt".into()));
        assert_eq!(expand_vars_with("${EMPTY:-dflt}", env), Ok("dflt".into()));
        assert_eq!(expand_vars_with("${EMPTY}", env), Ok(String::new()));
        assert_eq!(
            expand_vars_with("$HOME and $", env),
            Ok("$HOME and $".into())
        );
        assert_eq!(
            expand_vars_with("Bearer ${NOPE}", env),
            Err("environment variable NOPE is not set".into())
        );
        assert!(expand_vars_with("${SET", env).is_err());
    }

    #[test]
    fn var_names_are_the_expanded_variables_once_each() {
        assert_eq!(
            var_names("Bearer ${TOKEN} ${HOST:-x} $PLAIN ${TOKEN} ${OPEN"),
            ["TOKEN", "HOST"]
        );
    }
}
