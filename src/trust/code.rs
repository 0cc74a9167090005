//! What a hook or a stdio MCP server runs, found from its command (a hook's by the real bash
//! parse of `permissions::shell`, a server's from its program and arguments): the program file
//! when it is given by path or found in a `PATH` folder Ling watches, the script an interpreter
//! is given (`python3 x.py`, `node x.js`, `bash x.sh`, `node -r ./x`), the files a shell script
//! runs or sources in turn, and the places a package runner (`npx`) or a `PATH` lookup would
//! pick a file up from if one appeared there. Only files in the places a sandboxed command can
//! write ([`Areas`]) count: those are what the trust fingerprint covers, what the sandbox keeps
//! read-only and what is checked again before each run. The environment an entry sets is listed
//! with the variables that load code flagged, and the files and folders they name are found
//! the same way (`code_env.rs`), for an entry's own variables and for the settings' `env` that
//! every child gets ([`environment`]). The walk from a command to its files is
//! `code_finder.rs`.

use std::path::{Path, PathBuf};

#[path = "code_env.rs"]
mod env;
#[path = "code_finder.rs"]
mod finder;

pub use crate::process::code_vars::loads_code;
use crate::tools::paths::normalize;
pub use env::environment;
use finder::Finder;

/// The largest script whose text is kept (for the diff the trust question shows).
pub const TEXT_LIMIT: usize = 64 * 1024;

/// The places a sandboxed command can write: the project root, the temp dir, `/dev/shm` and
/// the sandbox's writable roots. Canonical.
#[derive(Debug, Clone)]
pub struct Areas {
    root: PathBuf,
    dirs: Vec<PathBuf>,
}

impl Areas {
    /// The project root and the temp folders, plus `extra` (the sandbox's writable roots).
    pub fn new(root: &Path, extra: &[PathBuf]) -> Self {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let root = canonical(root);
        let mut dirs = vec![root.clone()];
        for dir in [std::env::temp_dir(), PathBuf::from("/dev/shm")]
            .iter()
            .chain(extra)
        {
            let dir = canonical(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        Self { root, dirs }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a sandboxed command could write `path` (resolved).
    pub fn contains(&self, path: &Path) -> bool {
        self.dirs.iter().any(|d| path.starts_with(d))
    }

    /// Whether `path` is one of the places itself, or holds one: not a folder inside one.
    pub fn is_place(&self, path: &Path) -> bool {
        let path = resolved(&normalize(path));
        self.dirs.iter().any(|d| d.starts_with(&path))
    }

    /// The places, as the process layer keeps a child outside the sandbox from them.
    pub fn writable(&self) -> crate::process::Writable {
        crate::process::Writable::new(self.dirs.clone())
    }

    /// How a path is shown: relative to the root when inside it.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }
}

/// How a file is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Executed as the program.
    Program,
    /// Given to an interpreter, sourced, or preloaded (`node -r`).
    Script,
    /// Nothing is there, but a program would be picked up from there if something appeared
    /// (a `PATH` folder, `node_modules` for `npx`).
    WouldRun,
    /// A folder programs, libraries or modules are looked up in (`PATH=./bin`,
    /// `LD_LIBRARY_PATH`, `PYTHONPATH`): what is in it runs.
    Folder,
}

/// What a file is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    Absent,
    /// A text file: its hash, and its text when at most [`TEXT_LIMIT`] bytes.
    Script {
        sha256: String,
        text: Option<String>,
    },
    /// Not text (an executable built from the project): trust records only that it exists.
    Binary {
        len: u64,
    },
    /// A folder (of programs or libraries): trust records only that it exists; it is read-only
    /// in the sandbox, so only you fill it.
    Folder {
        entries: usize,
    },
}

impl FileState {
    pub fn of(path: &Path) -> Self {
        let Ok(meta) = std::fs::metadata(path) else {
            return Self::Absent;
        };
        if meta.is_dir() {
            let entries = std::fs::read_dir(path).map_or(0, Iterator::count);
            return Self::Folder { entries };
        }
        if !meta.is_file() {
            return Self::Binary { len: meta.len() };
        }
        let mut head = Vec::new();
        let text = std::fs::File::open(path).and_then(|f| {
            use std::io::Read;
            f.take(TEXT_LIMIT as u64 + 1).read_to_end(&mut head)
        });
        let sniff = &head[..head.len().min(8192)];
        let binary = text.is_err()
            || sniff.contains(&0)
            || sniff.starts_with(b"\x7fELF")
            || (head.len() <= TEXT_LIMIT && std::str::from_utf8(&head).is_err());
        if binary {
            return Self::Binary { len: meta.len() };
        }
        let sha256 = if head.len() <= TEXT_LIMIT {
            crate::config::code_check::hash_bytes(&head)
        } else {
            crate::config::code_check::hash_file(path).unwrap_or_default()
        };
        let text = (head.len() <= TEXT_LIMIT)
            .then(|| String::from_utf8(head).ok())
            .flatten();
        Self::Script { sha256, text }
    }

    /// What the trust fingerprint takes of it: a script's hash, a binary's existence.
    pub fn fingerprint(&self) -> String {
        match self {
            Self::Absent => "absent".into(),
            Self::Script { sha256, .. } => sha256.clone(),
            Self::Binary { .. } => "binary".into(),
            Self::Folder { .. } => "folder".into(),
        }
    }
}

/// One file an entry runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeFile {
    /// Resolved: absolute, symlinks of its existing part resolved.
    pub path: PathBuf,
    /// Relative to the project root when inside it.
    pub shown: String,
    /// The path as the command names it, when that differs from where it resolves (a
    /// symlink on the way), as shown and as an absolute path.
    pub named: Option<String>,
    pub named_path: Option<PathBuf>,
    pub role: Role,
}

/// One variable an entry sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    /// As written (`${VAR}` unexpanded).
    pub value: String,
    /// The variable makes programs load code or run other programs.
    pub loads_code: bool,
}

/// What one hook or server runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    /// The folder it runs in, resolved.
    pub cwd: PathBuf,
    pub env: Vec<EnvVar>,
    /// Files in the watched areas, in the order found.
    pub files: Vec<CodeFile>,
    /// Why part of what it runs cannot be known from its command.
    pub unknown: Vec<String>,
    /// It starts Python on a script outside the watched areas (so Ling leaves that script's
    /// folder on Python's path: `PYTHONSAFEPATH` is not set).
    pub python_script_outside: bool,
}

/// What a command hook runs: `command` is run by `sh -c` in the project root, with
/// `$CLAUDE_PROJECT_DIR` and `$LING_PROJECT_DIR` set to it.
pub fn hook(command: &str, areas: &Areas) -> Runs {
    let root = areas.root().to_path_buf();
    let mut finder = Finder::new(areas, root.clone());
    finder.shell_text(&with_project_dir(command, &root), 0);
    let assignments = std::mem::take(&mut finder.assignments);
    for var in &assignments {
        finder.env_files(&var.name, &var.value);
    }
    finder.runs.env = assignments;
    finder.runs.cwd = root;
    finder.runs
}

/// What a stdio server runs: `command` with `args` in `cwd`, with `env` set (values as
/// written; `${VAR}`s are expanded from Ling's environment to find files).
pub fn server(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    areas: &Areas,
) -> Runs {
    let cwd = resolved(cwd);
    let mut finder = Finder::new(areas, cwd.clone());
    finder.path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| expanded(v, areas.root()))
        .or_else(|| std::env::var("PATH").ok());
    let argv: Vec<String> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(|arg| expanded(arg, areas.root()))
        .collect();
    finder.argv(&argv, 0);
    for (name, value) in env {
        finder.env_files(name, &expanded(value, areas.root()));
    }
    finder.runs.env = env
        .iter()
        .map(|(name, value)| EnvVar {
            loads_code: loads_code(name),
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    finder.runs.cwd = cwd;
    finder.runs
}

/// `${VAR}` expanded as the server's entry is (to find the file): `${LING_PROJECT_DIR}` is the
/// project `root`, the others come from Ling's environment; as written where it cannot be.
pub fn expanded(text: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    let lookup = |name: &str| match name {
        crate::config::mcp::PROJECT_DIR_VAR => Some(root.to_string()),
        _ => std::env::var(name).ok(),
    };
    crate::config::expand_vars_with(text, lookup).unwrap_or_else(|_| text.to_string())
}

/// `$CLAUDE_PROJECT_DIR` and `$LING_PROJECT_DIR` (bare or braced, quoted or not) replaced by
/// the root, as the hook's shell would expand them; left alone when the root holds a
/// character that means something inside double quotes.
fn with_project_dir(command: &str, root: &Path) -> String {
    let Some(root) = root.to_str() else {
        return command.to_string();
    };
    if root.contains(['"', '$', '`', '\\', '\'']) {
        return command.to_string();
    }
    let mut out = command.to_string();
    for name in ["CLAUDE_PROJECT_DIR", "LING_PROJECT_DIR"] {
        out = out
            .replace(&format!("${{{name}}}"), root)
            .replace(&format!("${name}"), root);
    }
    out
}

/// The path with the symlinks of its existing part resolved.
fn resolved(path: &Path) -> PathBuf {
    crate::tools::paths::resolve_lenient(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[path = "code_tests.rs"]
mod tests;
