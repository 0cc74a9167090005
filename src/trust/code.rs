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
//! every child gets ([`environment`]).

use std::path::{Path, PathBuf};

#[path = "code_env.rs"]
mod env;

use super::programs::{Interpreter, Launcher, is_shell_script, runner_command};
use crate::permissions::shell::{self, Word};
pub use crate::process::code_vars::loads_code;
use crate::tools::paths::{expand_home, normalize};
pub use env::environment;

/// The largest script whose text is kept (for the diff the trust question shows).
pub const TEXT_LIMIT: usize = 64 * 1024;
/// How deep scripts run by scripts are followed.
const MAX_DEPTH: usize = 3;
/// The most files one entry is followed to.
const MAX_FILES: usize = 64;

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

struct Finder<'a> {
    areas: &'a Areas,
    cwd: PathBuf,
    path_var: Option<String>,
    runs: Runs,
    assignments: Vec<EnvVar>,
}

impl<'a> Finder<'a> {
    fn new(areas: &'a Areas, cwd: PathBuf) -> Self {
        Self {
            areas,
            cwd,
            path_var: std::env::var("PATH").ok(),
            runs: Runs::default(),
            assignments: Vec::new(),
        }
    }

    fn unknown(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.runs.unknown.contains(&reason) {
            self.runs.unknown.push(reason);
        }
    }

    /// Records `path` (as named) when it lies in a watched area; returns it resolved.
    fn file(&mut self, named: &str, role: Role) -> Option<PathBuf> {
        let joined = self.cwd.join(expand_home(named));
        let normal = normalize(&joined);
        let path = resolved(&normal);
        if !self.areas.contains(&path) && !self.areas.contains(&normal) {
            return None;
        }
        if self.runs.files.len() >= MAX_FILES {
            self.unknown("it runs more files than Ling follows");
            return Some(path);
        }
        if !self.runs.files.iter().any(|f| f.path == path) {
            let shown = self.areas.shown(&path);
            let plain = self.areas.shown(&normal);
            let differs = normal != path;
            self.runs.files.push(CodeFile {
                named: differs.then_some(plain),
                named_path: differs.then(|| normal.clone()),
                shown,
                path: path.clone(),
                role,
            });
        }
        Some(path)
    }

    /// Shell text: every simple command it runs, as the permission rules see them.
    fn shell_text(&mut self, text: &str, depth: usize) {
        let analysis = shell::analyze(text);
        if let Some(error) = &analysis.error {
            self.unknown(format!("the command does not parse as bash ({error})"));
        }
        // What the entry's own command hides is said; inside a script that is followed (and
        // fingerprinted whole), only a program only known when it runs is (below).
        for reason in analysis.opaque.iter().filter(|_| depth == 0) {
            // `source`/`.` of a literal file is followed below; what else is opaque stays so.
            if !reason.starts_with("`source`") && !reason.starts_with("`.`") {
                self.unknown(reason.clone());
            }
        }
        for command in &analysis.commands {
            self.command(command, depth);
        }
    }

    fn command(&mut self, command: &shell::Command, depth: usize) {
        for assignment in &command.assignments {
            if let Some((name, value)) = assignment.text.split_once('=') {
                let name = name.trim_end_matches('+').to_string();
                if depth == 0 && !self.assignments.iter().any(|a| a.name == name) {
                    self.assignments.push(EnvVar {
                        loads_code: loads_code(&name),
                        name,
                        value: value.to_string(),
                    });
                }
            }
        }
        let Some(program) = &command.program else {
            return;
        };
        let Some(first) = program.lit() else {
            self.unknown(format!(
                "the program `{}` is only known when it runs",
                program.text
            ));
            return;
        };
        let mut argv = vec![first.to_string()];
        for word in &command.words[1..] {
            argv.push(word_text(word));
        }
        match command.words[0].lit() {
            // Later commands run there (as far as a list goes: a subshell's `cd` is taken too).
            Some("cd" | "pushd") => match command.words.get(1) {
                Some(dir) if dir.lit().is_some() => self.cwd = normalize(&self.cwd.join(&dir.text)),
                Some(dir) => self.unknown(format!(
                    "it changes folder to `{}`, only known when it runs",
                    dir.text
                )),
                None => {}
            },
            Some("source" | ".") => {
                if let Some(file) = argv.get(1).filter(|f| !f.contains('$')) {
                    let file = file.clone();
                    if let Some(path) = self.file(&file, Role::Script) {
                        self.follow_shell(&path, depth);
                    }
                }
            }
            _ => self.argv(&argv, depth),
        }
        for inner in &command.inner {
            // Inner commands (a wrapper's) are already in the analysis' flat list when they
            // came from shell text; words of a wrapper (`env X=1 ./run.sh`) are followed here.
            self.command(&inner.command, depth);
        }
    }

    /// A program and its arguments, as `execve` gets them.
    fn argv(&mut self, argv: &[String], depth: usize) {
        let Some(program) = argv.first() else { return };
        let name = program.rsplit('/').next().unwrap_or(program).to_string();
        let file = if program.contains('/') {
            self.file(program, Role::Program)
        } else {
            self.in_path(program)
        };
        if let Some(path) = &file
            && depth < MAX_DEPTH
            && is_shell_script(path)
        {
            self.follow_shell(path, depth);
        }
        let args = &argv[1..];
        self.interpreter(&name, args, depth);
    }

    /// A bare program name looked up in `PATH`: a folder of it in a watched area is where a
    /// program of that name would be picked up from, whether or not one is there now.
    fn in_path(&mut self, name: &str) -> Option<PathBuf> {
        if matches!(name, "source" | "." | "exec" | "command" | "builtin" | "cd") {
            return None;
        }
        let path_var = self.path_var.clone().unwrap_or_default();
        for dir in path_var.split(':') {
            let dir = if dir.is_empty() { "." } else { dir };
            let candidate = self.cwd.join(dir).join(name);
            let exists = std::fs::metadata(&candidate).is_ok_and(|m| m.is_file());
            let watched = self.areas.contains(&resolved(&normalize(&candidate)));
            if watched {
                let role = if exists {
                    Role::Program
                } else {
                    Role::WouldRun
                };
                let shown = candidate.display().to_string();
                let found = self.file(&shown, role);
                if exists {
                    return found;
                }
            } else if exists {
                return None;
            }
        }
        None
    }

    fn follow_shell(&mut self, path: &Path, depth: usize) {
        if depth + 1 > MAX_DEPTH {
            self.unknown("scripts run by scripts are followed only three deep");
            return;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        if text.len() > TEXT_LIMIT {
            self.unknown(format!(
                "{} is too long to follow what it runs",
                self.areas.shown(path)
            ));
            return;
        }
        self.shell_text(&text, depth + 1);
    }

    /// The script an interpreter is given, and the code files its options name.
    fn interpreter(&mut self, name: &str, args: &[String], depth: usize) {
        let Some(kind) = Interpreter::of(name) else {
            if let Some(launcher) = Launcher::of(name, args) {
                self.launcher(launcher, args, depth);
            } else if let Some(rest) = runner_command(name, args) {
                // `uv run server.py`, `poetry run python x.py`: the command they run.
                let mut argv = rest.to_vec();
                if argv.first().is_some_and(|a| a.ends_with(".py")) {
                    argv.insert(0, "python3".into());
                }
                if depth < MAX_DEPTH {
                    self.argv(&argv, depth + 1);
                }
            }
            return;
        };
        let mut i = 0;
        if matches!(kind, Interpreter::Deno | Interpreter::Bun)
            && args.first().is_some_and(|a| a == "run")
        {
            i = 1;
        }
        while i < args.len() {
            let arg = &args[i];
            let (flag, inline_value) = match arg.split_once('=') {
                Some((f, v)) if arg.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            if arg == "--" {
                i += 1;
                break;
            }
            if !arg.starts_with('-') || arg == "-" {
                break;
            }
            let value = |i: &mut usize| {
                inline_value.clone().or_else(|| {
                    *i += 1;
                    args.get(*i).cloned()
                })
            };
            if kind.inline(flag) {
                // The code is the argument itself: the command shows it.
                if kind == Interpreter::Shell
                    && let Some(text) = value(&mut i)
                    && depth < MAX_DEPTH
                {
                    self.shell_text(&text, depth + 1);
                }
                return;
            }
            if kind.module(flag) {
                // `python -m mod`: a module found on Python's path (PYTHONSAFEPATH keeps the
                // working folder off it).
                return;
            }
            if kind.code_value(flag) {
                if let Some(value) = value(&mut i)
                    && (value.starts_with('.') || value.starts_with('/'))
                {
                    self.file(&value, Role::Script);
                }
            } else if kind.takes_value(flag) {
                value(&mut i);
            }
            i += 1;
        }
        let Some(script) = args.get(i) else { return };
        if script.contains('$') {
            self.unknown(format!("the script `{script}` is only known when it runs"));
            return;
        }
        let path = self.file(script, Role::Script);
        if kind == Interpreter::Python && path.is_none() {
            self.runs.python_script_outside = true;
        }
        if kind == Interpreter::Shell
            && let Some(path) = path
        {
            self.follow_shell(&path, depth);
        }
    }

    /// `npx PKG`, `npm exec PKG`, `pnpm dlx PKG`, `bunx PKG`, `yarn dlx PKG`: they run a package
    /// the project has installed before fetching one, so the places it would be found are
    /// watched (present or not).
    fn launcher(&mut self, launcher: Launcher, args: &[String], depth: usize) {
        let Some(at) = args
            .iter()
            .skip(launcher.skip)
            .position(|a| !a.starts_with('-'))
            .map(|p| p + launcher.skip)
        else {
            return;
        };
        let package = &args[at];
        let name = match package.rsplit_once('@') {
            Some((name, _)) if !name.is_empty() => name,
            _ => package.as_str(),
        };
        let bin = name.rsplit('/').next().unwrap_or(name).to_string();
        let mut dir = Some(self.cwd.clone());
        while let Some(at) = dir {
            if !self.areas.contains(&at) {
                break;
            }
            for candidate in [
                at.join("node_modules").join(name).join("package.json"),
                at.join("node_modules/.bin").join(&bin),
            ] {
                let role = if candidate.exists() {
                    Role::Script
                } else {
                    Role::WouldRun
                };
                self.file(&candidate.display().to_string(), role);
            }
            dir = at.parent().map(Path::to_path_buf);
        }
        // What the package is given: a script for `npx tsx server.ts`.
        self.interpreter(&bin, &args[at + 1..], depth);
    }
}

/// A word's text for finding files: the literal value, or its source when dynamic.
fn word_text(word: &Word) -> String {
    word.text.clone()
}

#[cfg(test)]
#[path = "code_tests.rs"]
mod tests;
