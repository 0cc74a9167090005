//! What Ling runs or reads outside the sandbox, in one place: the run's [`Surface`]. Every config
//! file of every source (the user's `LING_HOME`, the project's `.ling/`, `.claude/` and
//! `.mcp.json`, `--settings` and `--mcp-config` files), the files hooks and servers run
//! ([`super::guard`]), the commands, skills and agents and where their links lead, the
//! instruction files, `LING_HOME` as a whole (trust store, credentials, sessions, lock files)
//! and Ling's own programs. The rule it serves: **what Ling runs outside the sandbox is never
//! writable inside it**. So the sandbox's read-only set is derived from it (each member that
//! lies where a sandboxed command could write is a read-only bind there) and so are the paths
//! whose file edits ask in every mode but `bypass` ([`Surface::asked`]). A feature that makes Ling
//! read or run a new file adds it here, and both follow. (Trust's fingerprint covers the
//! project's members: `.ling/`, Claude Code's files, the commands, skills and agents and the code
//! of project hooks and servers, which [`super::ProjectConfig`] reads from the same files.)
//!
//! What is not here but found as the sandbox starts, because it is found by walking the writable
//! folders (`process::sandbox::Scope`): the `.git`, `.ling` and `.claude` of each writable root
//! and the repositories nested in them, and the home directory's dot-entries when home lies in a
//! writable root.

use std::path::{Path, PathBuf};

use crate::config::Paths;
use crate::config::claude::CLAUDE_MCP_FILE;

/// What a member of the surface is: said when a file edit of it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `LING_HOME`: the user's config, trust store, credentials, sessions and lock files.
    LingHome,
    /// A config file or folder (the project's, or one named on the command line).
    Config,
    /// A file a hook or stdio MCP server runs.
    Code,
    /// A command, skill or agent definition (where a linked one leads).
    Extension,
    /// An instruction file of the system prompt (`AGENTS.md`, `CLAUDE.md`, ...).
    Instructions,
    /// Ling's own program or its trampoline.
    Ling,
}

impl Part {
    /// What a protected-path question says the member is.
    pub fn describe(self) -> &'static str {
        match self {
            Self::LingHome => "inside LING_HOME",
            Self::Config => "a config file Ling reads outside the sandbox",
            Self::Code => "a file a hook or MCP server runs outside the sandbox",
            Self::Extension => "a command, skill or agent definition Ling reads",
            Self::Instructions => "an instruction file of the system prompt",
            Self::Ling => "Ling's own program, which runs outside the sandbox",
        }
    }

    /// Whether a file edit of the member asks in every mode but `bypass`. Instruction files do
    /// not: writing `AGENTS.md` is ordinary work (`/init`), asked about as any edit is.
    fn asks(self) -> bool {
        self != Self::Instructions
    }
}

/// One file or folder of the surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// As Ling reads it (absolute; a symlink stays one: the sandbox keeps both the link and
    /// where it leads).
    pub path: PathBuf,
    pub part: Part,
}

/// The run's surface: see the module's documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    members: Vec<Member>,
}

impl Surface {
    /// The members every run has: `LING_HOME`, the project's config folders and Claude Code's
    /// `.mcp.json` (whether or not they exist yet: the sandbox binds what exists, and a file
    /// made later is project config that trust asks about again), Ling's programs.
    pub fn of_run(paths: &Paths) -> Self {
        let mut surface = Self::default();
        surface.add(&paths.home, Part::LingHome);
        let root = &paths.project_root;
        for config in [".ling", ".claude", CLAUDE_MCP_FILE] {
            surface.add(&root.join(config), Part::Config);
        }
        if let Ok(exe) = std::env::current_exe() {
            surface.add(&exe, Part::Ling);
        }
        surface
    }

    /// Adds a member (once).
    pub fn add(&mut self, path: &Path, part: Part) {
        if !self.members.iter().any(|m| m.path == path) {
            self.members.push(Member {
                path: path.to_path_buf(),
                part,
            });
        }
    }

    /// Adds a command, skill or agent definition, unless it lies beneath a config folder
    /// already in the surface (only one whose link leads elsewhere needs its own member).
    pub fn add_extension(&mut self, path: &Path) {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let target = real(path);
        let covered = self
            .members
            .iter()
            .filter(|m| matches!(m.part, Part::Config | Part::LingHome))
            .any(|m| target.starts_with(real(&m.path)));
        if !covered {
            self.add(path, Part::Extension);
        }
    }

    /// Adds every path of `paths` as `part`.
    pub fn extend<'a>(&mut self, paths: impl IntoIterator<Item = &'a PathBuf>, part: Part) {
        for path in paths {
            self.add(path, part);
        }
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// What the sandbox keeps read-only: every member (it binds those that exist and lie
    /// beneath a writable root).
    pub fn read_only(&self) -> Vec<PathBuf> {
        self.members.iter().map(|m| m.path.clone()).collect()
    }

    /// What file edits ask about in every mode but `bypass`, each with what it is.
    pub fn asked(&self) -> Vec<(PathBuf, &'static str)> {
        self.members
            .iter()
            .filter(|m| m.part.asks())
            .map(|m| (m.path.clone(), m.part.describe()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_run_has_ling_home_the_project_config_and_ling_itself() {
        let paths = Paths::with_home(PathBuf::from("/p"), PathBuf::from("/h/.ling"));
        let surface = Surface::of_run(&paths);
        let read_only = surface.read_only();
        for path in ["/h/.ling", "/p/.ling", "/p/.claude", "/p/.mcp.json"] {
            assert!(read_only.contains(&PathBuf::from(path)), "{path}");
        }
        assert!(
            surface.members().iter().any(|m| m.part == Part::Ling),
            "{surface:?}"
        );
    }

    #[test]
    fn instruction_files_are_read_only_but_not_asked_about() {
        let mut surface = Surface::default();
        surface.add(Path::new("/p/AGENTS.md"), Part::Instructions);
        surface.add(Path::new("/p/run.sh"), Part::Code);
        surface.add(Path::new("/p/run.sh"), Part::Config);
        assert_eq!(
            surface.read_only(),
            [PathBuf::from("/p/AGENTS.md"), PathBuf::from("/p/run.sh")]
        );
        assert_eq!(
            surface.asked(),
            [(PathBuf::from("/p/run.sh"), Part::Code.describe())]
        );
    }
}
