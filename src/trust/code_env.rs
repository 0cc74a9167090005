//! The files and folders that environment variables make programs load, for `code`: an
//! entry's own variables (a server's `env`, a hook command's `NAME=value`) and the settings'
//! `env`, which every command, hook and server gets ([`environment`]). `BASH_ENV`/`ENV` name a
//! script a shell sources, `LD_PRELOAD`/`LD_AUDIT` libraries loaded into every program,
//! `NODE_OPTIONS`' `--require`/`--import` a module node loads first; `PATH`,
//! `LD_LIBRARY_PATH`, `PYTHONPATH`, `NODE_PATH`, `PERL5LIB` and `RUBYLIB` folders whatever is in
//! them is run or loaded from.

use super::{Areas, EnvVar, Finder, Role, Runs, loads_code};

/// Variables whose value is a list of folders code is looked up in.
const FOLDER_LISTS: &[&str] = &[
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "NODE_PATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
];

/// What the settings' `env` (as written, in the project root) makes every child load: each
/// variable, those that load code flagged, and the files and folders they name where a
/// sandboxed command can write.
pub fn environment(env: &[(String, String)], areas: &Areas) -> Runs {
    let root = areas.root().to_path_buf();
    let mut finder = Finder::new(areas, root.clone());
    for (name, value) in env {
        finder.env_files(name, value);
    }
    finder.runs.env = env
        .iter()
        .map(|(name, value)| EnvVar {
            loads_code: loads_code(name),
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    finder.runs.cwd = root;
    finder.runs
}

impl Finder<'_> {
    /// The files and folders a variable makes programs load, relative to the entry's folder.
    /// A value only known when it runs (`$VAR`) names nothing that can be found.
    pub(super) fn env_files(&mut self, name: &str, value: &str) {
        match name {
            "BASH_ENV" | "ENV" | "PYTHONSTARTUP" if !value.contains('$') => {
                self.file(value, Role::Script);
            }
            "LD_PRELOAD" | "LD_AUDIT" => {
                // A bare name is looked up in the system's library folders.
                for lib in value.split([':', ' ']).filter(|l| l.contains('/')) {
                    self.file(lib, Role::Script);
                }
            }
            "NODE_OPTIONS" => self.node_options(value),
            _ if FOLDER_LISTS.contains(&name) => {
                for dir in value
                    .split(':')
                    .filter(|d| !d.is_empty() && !d.contains('$'))
                {
                    // The working folder itself, or a place as a whole (`PATH=.`), is not one
                    // folder to keep read-only; outside the sandbox it is left out of `PATH`.
                    let path = self.cwd.join(dir);
                    if self.areas.is_place(&path) {
                        continue;
                    }
                    self.file(dir, Role::Folder);
                }
            }
            _ => {}
        }
    }

    /// `--require`, `-r`, `--import` and `--loader` of `NODE_OPTIONS`, given by path.
    fn node_options(&mut self, value: &str) {
        let words: Vec<&str> = value.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let (flag, inline) = match words[i].split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None => (words[i], None),
            };
            if matches!(
                flag,
                "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
            ) {
                let value = inline.or_else(|| {
                    i += 1;
                    words.get(i).copied()
                });
                if let Some(value) = value.filter(|v| v.starts_with('.') || v.starts_with('/')) {
                    self.file(value, Role::Script);
                }
            }
            i += 1;
        }
    }
}
