//! The walk from a command to the files it runs, for `code`: a shell text parsed by
//! `permissions::shell` and each command in it, a program's arguments, what an interpreter or a
//! package runner is given, a shell script followed into the scripts it runs or sources (at
//! most [`MAX_DEPTH`] deep and [`MAX_FILES`] files), and a name looked up in the `PATH`
//! folders. It keeps what it finds in the watched areas, and says why it cannot know the rest.

use std::path::{Path, PathBuf};

use super::{Areas, CodeFile, EnvVar, Role, Runs, TEXT_LIMIT, loads_code, resolved};
use crate::permissions::shell::{self, Word};
use crate::tools::paths::{expand_home, normalize};
use crate::trust::programs::{Interpreter, Launcher, is_shell_script, runner_command};

/// How deep scripts run by scripts are followed.
const MAX_DEPTH: usize = 3;
/// The most files one entry is followed to.
const MAX_FILES: usize = 64;

pub(super) struct Finder<'a> {
    pub(super) areas: &'a Areas,
    pub(super) cwd: PathBuf,
    pub(super) path_var: Option<String>,
    pub(super) runs: Runs,
    pub(super) assignments: Vec<EnvVar>,
}

impl<'a> Finder<'a> {
    pub(super) fn new(areas: &'a Areas, cwd: PathBuf) -> Self {
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
    pub(super) fn file(&mut self, named: &str, role: Role) -> Option<PathBuf> {
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
    pub(super) fn shell_text(&mut self, text: &str, depth: usize) {
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
    pub(super) fn argv(&mut self, argv: &[String], depth: usize) {
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
