//! Custom slash commands, skills and sub-agent definitions: Markdown files with YAML front
//! matter, in Claude Code's layout. Each comes from the project (`.ling/` and, unless
//! `claudeCompat` is off, `.claude/`) or from the user (`LING_HOME/`):
//!
//! - commands: `commands/**/NAME.md` (a subfolder namespaces it: `frontend/review.md` is
//!   `/frontend:review`), front matter `description`, `argument-hint`, `allowed-tools`, `model`;
//! - skills: `skills/NAME/SKILL.md` (the Agent Skills format: `name`, `description`, optional
//!   `allowed-tools`; files beside it);
//! - agents: `agents/NAME.md`, front matter `name`, `description`, `tools`, `model`,
//!   `permissionMode`, `maxTurns`; the body is the agent's system prompt.
//!
//! A project's are project config: loaded only in a trusted project, and part of its trust
//! fingerprint ([`project_manifest`]), so a changed command lapses trust like a changed hook.
//! On a name both define, `.ling/` wins over `.claude/`, and the project over the user. Files
//! are read as `AGENTS.md` is: regular files inside their folder after symlinks, capped.

pub mod frontmatter;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::bounded_read::{lossy_text, read_regular};
use super::{Paths, ProjectFiles};

/// The most of one extension file that is read (64 KiB).
pub const FILE_LIMIT: usize = 64 * 1024;
/// The most extension files one folder may bring; more are left out with a warning.
const MAX_FILES: usize = 1000;
/// The REPL's own commands: no custom command may take one of these names.
pub const RESERVED_COMMANDS: [&str; 24] = [
    "help",
    "tools",
    "hooks",
    "mcp",
    "expand",
    "status",
    "diff",
    "init",
    "cost",
    "mode",
    "permissions",
    "clear",
    "model",
    "compact",
    "context",
    "resume",
    "exit",
    "quit",
    "agents",
    "skills",
    "commands",
    "theme",
    "rewind",
    "fork",
];

/// Where a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Project,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
        }
    }
}

/// A custom slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Without the `/`: `review`, `frontend:review`.
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    /// The tools the command's run may use (a narrowing; `None`: all).
    pub allowed_tools: Option<Vec<String>>,
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
    pub scope: Scope,
}

/// A skill: only its name and description go to the model until it asks for the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub allowed_tools: Option<Vec<String>>,
    /// The skill's folder (its files are beside `SKILL.md`).
    pub dir: PathBuf,
    /// Where the folder led when it was loaded (symlinks resolved): the `skill` tool reads
    /// only there, so a folder swapped for a link elsewhere since is not followed.
    pub resolved: PathBuf,
    pub scope: Scope,
}

/// A sub-agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// The tools it may use, as written (Claude Code's names or Ling's, `mcp__server__tool`);
    /// `None`: all of the parent's.
    pub tools: Option<Vec<String>>,
    /// `inherit`, an alias of settings `modelAliases`, or a model id; `None`: inherit.
    pub model: Option<String>,
    /// `permissionMode` as written; never looser than the parent's mode.
    pub permission_mode: Option<String>,
    pub max_turns: Option<u32>,
    /// `isolation`: `worktree` runs each child in a git worktree of its own.
    pub isolation: Option<String>,
    /// The body: the agent's system prompt.
    pub prompt: String,
    pub path: PathBuf,
    pub scope: Scope,
}

/// Every command, skill and agent of a run.
#[derive(Debug, Clone, Default)]
pub struct Extensions {
    pub commands: Vec<Command>,
    pub skills: Vec<Skill>,
    pub agents: Vec<AgentDef>,
    /// Files that were skipped, names taken twice, one sentence each.
    pub warnings: Vec<String>,
}

impl Extensions {
    /// The file (a command, an agent) or folder (a skill) of every definition loaded: what
    /// Ling reads outside the sandbox for them.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        let commands = self.commands.iter().map(|c| &c.path);
        let skills = self.skills.iter().map(|s| &s.dir);
        commands
            .chain(skills)
            .chain(self.agents.iter().map(|a| &a.path))
    }
}

/// The three kinds, as the folders are named.
const KINDS: [&str; 3] = ["commands", "skills", "agents"];

/// The project folders of extensions, most important first: `.ling/`, then `.claude/`, then
/// `.agents/` (the skills Codex and opencode read).
fn project_dirs(root: &Path, claude: bool) -> Vec<PathBuf> {
    let mut dirs = vec![root.join(".ling")];
    if claude {
        dirs.push(root.join(".claude"));
    }
    dirs.push(root.join(".agents"));
    dirs
}

impl Extensions {
    /// The user's and, in a trusted project, the project's.
    pub fn load(paths: &Paths, project: &ProjectFiles) -> Self {
        let mut out = Self::default();
        let root = project.root().to_path_buf();
        let trusted = project.is_trusted() && !project.is_user_config();
        let mut layers: Vec<(PathBuf, PathBuf, Scope)> = Vec::new();
        if trusted {
            for dir in project_dirs(&root, project.claude().project) {
                layers.push((dir, root.clone(), Scope::Project));
            }
        }
        layers.push((paths.home.clone(), paths.home.clone(), Scope::User));
        // Your own Claude Code folder (settings `claudeCompat.userFiles`).
        let claude_user =
            super::claude::user_dir().filter(|_| paths.user_config && project.claude().user_files);
        layers.extend(claude_user.map(|dir| (dir.clone(), dir, Scope::User)));
        for (dir, confine, scope) in &layers {
            out.load_dir(dir, confine, *scope);
        }
        // Codex's prompts are its commands, named `prompts:NAME` as Codex names them
        // (settings `codexCompat`).
        if let Some(dir) = project.codex().prompts_dir().filter(|_| paths.user_config) {
            for (rel, path, text) in files(&dir, &dir, Kind::Command, &mut out) {
                let name = format!("prompts:{}", rel.trim_end_matches(".md").replace('/', ":"));
                out.add_command(name, &path, &text, Scope::User);
            }
        }
        out
    }

    /// A Claude Code plugin's commands, skills and agents, each named `PLUGIN:name`.
    pub fn add_plugin(&mut self, plugin: &str, root: &Path) {
        let mut own = Self::default();
        own.load_dir(root, root, Scope::User);
        let named = |name: &str| format!("{plugin}:{name}");
        for mut command in own.commands {
            command.name = named(&command.name);
            if !self.commands.iter().any(|c| c.name == command.name) {
                self.commands.push(command);
            }
        }
        for mut skill in own.skills {
            skill.name = named(&skill.name);
            if !self.skills.iter().any(|s| s.name == skill.name) {
                self.skills.push(skill);
            }
        }
        for mut agent in own.agents {
            agent.name = named(&agent.name);
            if !self.agents.iter().any(|a| a.name == agent.name) {
                self.agents.push(agent);
            }
        }
        self.warnings.extend(own.warnings);
    }

    fn load_dir(&mut self, dir: &Path, confine: &Path, scope: Scope) {
        for (rel, path, text) in files(&dir.join("commands"), confine, Kind::Command, self) {
            let name = rel.trim_end_matches(".md").replace('/', ":");
            self.add_command(name, &path, &text, scope);
        }
        for (rel, path, text) in files(&dir.join("skills"), confine, Kind::Skill, self) {
            let folder = rel.trim_end_matches("/SKILL.md").to_string();
            self.add_skill(&folder, &path, &text, scope);
        }
        for (rel, path, text) in files(&dir.join("agents"), confine, Kind::Agent, self) {
            self.add_agent(rel.trim_end_matches(".md"), &path, &text, scope);
        }
    }

    fn taken(&mut self, kind: &str, name: &str, path: &Path, exists: bool) -> bool {
        if exists {
            self.warnings.push(format!(
                "{kind} {name} of {} is not loaded: one of the same name comes first",
                path.display()
            ));
        }
        exists
    }

    fn add_command(&mut self, name: String, path: &Path, text: &str, scope: Scope) {
        if !valid_name(&name) {
            self.warnings.push(format!(
                "command {} is not loaded: a command name has only letters, digits, `-`, `_`, \
                 `.` and `:`",
                path.display()
            ));
            return;
        }
        if RESERVED_COMMANDS.contains(&name.as_str()) {
            self.warnings.push(format!(
                "command /{name} of {} is not loaded: /{name} is one of Ling's own commands, \
                 which a custom command never replaces; rename the file",
                path.display()
            ));
            return;
        }
        let exists = self.commands.iter().any(|c| c.name == name);
        if self.taken("command", &format!("/{name}"), path, exists) {
            return;
        }
        let parsed = frontmatter::parse(text);
        let description = parsed
            .text("description")
            .unwrap_or_else(|| first_line(&parsed.body));
        self.commands.push(Command {
            description,
            argument_hint: parsed.text("argument-hint"),
            allowed_tools: parsed.list("allowed-tools").filter(|t| !t.is_empty()),
            model: parsed.text("model"),
            body: parsed.body,
            path: path.to_path_buf(),
            scope,
            name,
        });
    }

    fn add_skill(&mut self, folder: &str, path: &Path, text: &str, scope: Scope) {
        let parsed = frontmatter::parse(text);
        let name = parsed.text("name").unwrap_or_else(|| folder.to_string());
        let Some(description) = parsed.text("description") else {
            self.warnings.push(format!(
                "skill {} is not loaded: its front matter has no `description` (the model picks \
                 a skill by it)",
                path.display()
            ));
            return;
        };
        if !valid_name(&name) {
            self.warnings.push(format!(
                "skill {} is not loaded: its name {name:?} may have only letters, digits, `-`, \
                 `_` and `.`",
                path.display()
            ));
            return;
        }
        let exists = self.skills.iter().any(|s| s.name == name);
        if self.taken("skill", &name, path, exists) {
            return;
        }
        self.skills.push(Skill {
            name,
            description,
            allowed_tools: parsed.list("allowed-tools").filter(|t| !t.is_empty()),
            dir: path.parent().unwrap_or(path).to_path_buf(),
            resolved: path
                .parent()
                .and_then(|dir| std::fs::canonicalize(dir).ok())
                .unwrap_or_else(|| path.to_path_buf()),
            scope,
        });
    }

    fn add_agent(&mut self, stem: &str, path: &Path, text: &str, scope: Scope) {
        let parsed = frontmatter::parse(text);
        let name = parsed.text("name").unwrap_or_else(|| stem.to_string());
        let Some(description) = parsed.text("description") else {
            self.warnings.push(format!(
                "agent {} is not loaded: its front matter has no `description` (the model picks \
                 an agent by it)",
                path.display()
            ));
            return;
        };
        if !valid_name(&name) || name.contains(':') {
            self.warnings.push(format!(
                "agent {} is not loaded: its name {name:?} may have only letters, digits, `-`, \
                 `_` and `.`",
                path.display()
            ));
            return;
        }
        let exists = self.agents.iter().any(|a| a.name == name);
        if self.taken("agent", &name, path, exists) {
            return;
        }
        self.agents.push(AgentDef {
            name,
            description,
            tools: parsed.list("tools"),
            model: parsed.text("model"),
            permission_mode: parsed.text("permissionMode"),
            max_turns: parsed.text("maxTurns").and_then(|t| t.trim().parse().ok()),
            isolation: parsed.text("isolation"),
            prompt: parsed.body.trim().to_string(),
            path: path.to_path_buf(),
            scope,
        });
    }

    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    pub fn agent(&self, name: &str) -> Option<&AgentDef> {
        self.agents.iter().find(|a| a.name == name)
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with([':', '.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The first non-empty line of a body, as a command's description when it gives none.
fn first_line(body: &str) -> String {
    let line = body.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or("").trim_start_matches('#').trim();
    line.chars().take(100).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Command,
    Skill,
    Agent,
}

/// The extension files of one kind's folder: (path relative to it with `/`, path, text),
/// sorted. Commands are searched to a few folders deep, skills are `NAME/SKILL.md`, agents
/// `*.md` in the folder itself. Folders that are symlinks are not entered; a file must resolve
/// inside `confine`, be regular and is capped at [`FILE_LIMIT`].
fn files(
    dir: &Path,
    confine: &Path,
    kind: Kind,
    out: &mut Extensions,
) -> Vec<(String, PathBuf, String)> {
    let confine = std::fs::canonicalize(confine).unwrap_or_else(|_| confine.to_path_buf());
    let mut found = Vec::new();
    let depth = match kind {
        Kind::Command => 4,
        Kind::Skill => 1,
        Kind::Agent => 0,
    };
    walk(dir, "", depth, kind, &mut found);
    found.sort();
    if found.len() > MAX_FILES {
        out.warnings.push(format!(
            "{} holds more than {MAX_FILES} files; only the first {MAX_FILES} are loaded",
            dir.display()
        ));
        found.truncate(MAX_FILES);
    }
    let mut read = Vec::new();
    for rel in found {
        let path = dir.join(&rel);
        let Ok(resolved) = std::fs::canonicalize(&path) else {
            continue;
        };
        if !resolved.starts_with(&confine) {
            out.warnings.push(format!(
                "{} is not loaded: it leads to {}, outside {}",
                path.display(),
                resolved.display(),
                confine.display()
            ));
            continue;
        }
        match read_regular(&resolved, FILE_LIMIT) {
            Ok(Some(bytes)) => read.push((rel, path, lossy_text(&bytes.bytes, bytes.cut))),
            Ok(None) => {}
            Err(e) => out
                .warnings
                .push(format!("{} is not loaded: {e}", path.display())),
        }
    }
    read
}

fn walk(dir: &Path, rel: &str, depth: usize, kind: Kind, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let here = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let Ok(meta) = entry.metadata() else { continue };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        match kind {
            Kind::Skill if is_dir && depth > 0 && dir.join(&name).join("SKILL.md").exists() => {
                found.push(format!("{here}/SKILL.md"));
            }
            Kind::Skill if is_dir => {}
            _ if is_dir && depth > 0 => walk(&dir.join(&name), &here, depth - 1, kind, found),
            Kind::Command | Kind::Agent if !meta.is_dir() && name.ends_with(".md") => {
                found.push(here)
            }
            _ => {}
        }
    }
}

/// One project extension file as the trust fingerprint and `trust.json` keep it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Relative to the project root: `.claude/commands/review.md`.
    pub path: String,
    pub text: String,
}

/// Every extension file of the project, as one JSON text (sorted; each file capped), or
/// `None` when it has none: what trust fingerprints beside `.ling/settings.json` and the rest.
pub fn project_manifest(root: &Path, claude: bool) -> Option<String> {
    let mut ignored = Extensions::default();
    let mut entries = Vec::new();
    for dir in project_dirs(root, claude) {
        for (kind, kind_name) in [Kind::Command, Kind::Skill, Kind::Agent]
            .into_iter()
            .zip(KINDS)
        {
            let folder = dir.join(kind_name);
            for (_, path, text) in files(&folder, root, kind, &mut ignored) {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                entries.push(ManifestEntry {
                    path: rel.to_string_lossy().into_owned(),
                    text,
                });
            }
        }
    }
    if entries.is_empty() {
        return None;
    }
    serde_json::to_string(&entries).ok()
}

/// What a manifest brings, for the trust question: (kind, name, what it does), each in words.
pub fn describe_manifest(text: &str) -> Result<Vec<(&'static str, String, String)>, String> {
    let entries: Vec<ManifestEntry> =
        serde_json::from_str(text).map_err(|e| format!("unreadable manifest: {e}"))?;
    let mut out = Vec::new();
    for entry in entries {
        let parsed = frontmatter::parse(&entry.text);
        let path = Path::new(&entry.path);
        let parts: Vec<&str> = entry.path.split('/').collect();
        let kind = parts.get(1).copied().unwrap_or_default();
        let description = parsed.text("description").unwrap_or_default();
        let (kind, name, mut detail) = match kind {
            "commands" => {
                let rel = parts[2..].join("/");
                let name = format!("/{}", rel.trim_end_matches(".md").replace('/', ":"));
                let description = if description.is_empty() {
                    first_line(&parsed.body)
                } else {
                    description
                };
                ("command", name, description)
            }
            "skills" => {
                let folder = parts.get(2).copied().unwrap_or_default();
                let name = parsed.text("name").unwrap_or_else(|| folder.to_string());
                ("skill", name, description)
            }
            _ => {
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let name = parsed.text("name").unwrap_or_else(|| stem.to_string());
                let mut detail = description;
                if let Some(tools) = parsed.text("tools") {
                    detail.push_str(&format!("; tools: {tools}"));
                }
                if let Some(model) = parsed.text("model") {
                    detail.push_str(&format!("; model: {model}"));
                }
                ("agent", name, detail)
            }
        };
        let shell: Vec<String> = shell_lines(&parsed.body)
            .into_iter()
            .map(str::to_string)
            .collect();
        if !shell.is_empty() {
            detail.push_str(&format!(
                "; when you type it, runs `{}` (through the bash tool's checks)",
                shell.join("`, `")
            ));
        }
        out.push((kind, name, format!("{detail} ({})", entry.path)));
    }
    Ok(out)
}

/// `${CLAUDE_SESSION_ID}` and `${CLAUDE_PROJECT_DIR}` (and Ling's `${LING_SESSION_ID}`,
/// `${LING_PROJECT_DIR}`) in a command's or a skill's body, as Claude Code substitutes them.
pub fn substitute_session(body: &str, session_id: &str, project_dir: &Path) -> String {
    let dir = project_dir.to_string_lossy();
    body.replace("${CLAUDE_SESSION_ID}", session_id)
        .replace("${LING_SESSION_ID}", session_id)
        .replace("${CLAUDE_PROJECT_DIR}", &dir)
        .replace("${LING_PROJECT_DIR}", &dir)
}

/// The shell commands of a command body: lines starting with `!` and `` !`cmd` `` spans.
pub fn shell_lines(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(command) = trimmed.strip_prefix('!') {
            let command = command.trim();
            let command = command
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .unwrap_or(command);
            if !command.is_empty() {
                out.push(command);
            }
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("!`") {
            let after = &rest[start + 2..];
            let Some(end) = after.find('`') else { break };
            if !after[..end].trim().is_empty() {
                out.push(after[..end].trim());
            }
            rest = &after[end + 1..];
        }
    }
    out
}

#[cfg(test)]
mod tests;
