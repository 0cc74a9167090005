//! The system prompt: the built-in Markdown prompt, facts about the environment, and the
//! instruction files ([`super::instructions`]): the user's own, then the project's from the root
//! down to the working directory.

use std::path::{Path, PathBuf};

#[cfg(test)]
use super::instructions::INSTRUCTIONS_LIMIT;
use super::instructions::{self, Sources};

const BUILTIN: &str = include_str!("../prompts/system.md");

/// How the user changed the prompt on the command line, and where instructions come from.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    /// `--system-prompt`: replaces the built-in prompt.
    pub replace: Option<String>,
    /// `--append-system-prompt`: added at the end.
    pub append: Option<String>,
    /// Leave out `CLAUDE.md` (settings `claudeCompat: false`).
    pub no_claude_memory: bool,
    /// Where the run started, when below the project root: instruction files are read from
    /// the root down to it.
    pub working_dir: Option<PathBuf>,
    /// The user's own instruction files (`LING_HOME/AGENTS.md`, `~/.claude/CLAUDE.md`), read
    /// before the project's.
    pub user_files: Vec<PathBuf>,
}

/// The system prompt, and warnings about instruction files that were skipped or cut.
pub fn build_system_prompt(
    root: &Path,
    model: &str,
    options: &PromptOptions,
) -> (String, Vec<String>) {
    let mut prompt = options
        .replace
        .clone()
        .unwrap_or_else(|| BUILTIN.trim_end().to_string());
    prompt.push_str("\n\n# Environment\n\n");
    prompt.push_str(&format!(
        "- Working directory (project root): {}\n",
        root.display()
    ));
    if let Some(dir) = options.working_dir.as_deref().filter(|d| *d != root)
        && let Ok(below) = dir.strip_prefix(root)
    {
        prompt.push_str(&format!(
            "- The user started Ling in {}/ (paths are still relative to the project root)\n",
            below.display()
        ));
    }
    prompt.push_str(&format!(
        "- Platform: {} ({})\n",
        std::env::consts::OS,
        std::env::consts::ARCH
    ));
    prompt.push_str(&format!(
        "- Today's date: {}\n",
        chrono::Local::now().format("%Y-%m-%d")
    ));
    prompt.push_str(&format!("- Model: {model}\n"));
    if root.join(".git").exists() {
        prompt.push_str("- The project is a git repository.\n");
    }
    let (found, warnings) = instructions::collect(&Sources {
        root,
        working_dir: options.working_dir.as_deref(),
        user_files: &options.user_files,
        claude_memory: !options.no_claude_memory,
    });
    for file in found {
        let whose = if file.user { "User" } else { "Project" };
        prompt.push_str(&format!(
            "\n# {whose} instructions ({})\n\n{}\n",
            file.label, file.text
        ));
    }
    if let Some(extra) = &options.append {
        prompt.push('\n');
        prompt.push_str(extra.trim_end());
        prompt.push('\n');
    }
    (prompt, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_environment_and_project_instructions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Always run `make test`.\n").unwrap();
        let (prompt, warnings) = build_system_prompt(dir.path(), "m1", &PromptOptions::default());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(prompt.starts_with("You are Ling"));
        assert!(prompt.contains(&dir.path().display().to_string()));
        assert!(prompt.contains("# Project instructions (AGENTS.md)\n\nAlways run `make test`."));
        assert!(prompt.contains("- Model: m1"));
    }

    #[test]
    fn claude_md_is_read_after_agents_md_unless_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "agents\n").unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "Use pnpm.\n").unwrap();
        let (prompt, _) = build_system_prompt(dir.path(), "m", &PromptOptions::default());
        let claude = prompt.find("# Project instructions (CLAUDE.md)\n\nUse pnpm.");
        assert!(claude > prompt.find("(AGENTS.md)"), "{prompt}");
        let off = PromptOptions {
            no_claude_memory: true,
            ..PromptOptions::default()
        };
        let (prompt, _) = build_system_prompt(dir.path(), "m", &off);
        assert!(!prompt.contains("CLAUDE.md"), "{prompt}");
    }

    #[test]
    fn replace_and_append() {
        let dir = tempfile::tempdir().unwrap();
        let options = PromptOptions {
            replace: Some("Custom.".into()),
            append: Some("Extra rule.".into()),
            ..PromptOptions::default()
        };
        let (prompt, _) = build_system_prompt(dir.path(), "m", &options);
        assert!(prompt.starts_with("Custom.\n\n# Environment"));
        assert!(prompt.trim_end().ends_with("Extra rule."));
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_symlink_out_of_the_root_is_skipped_with_a_warning() {
        let (root, outside) = (tmp(), tmp());
        let secret = outside.path().join("id_rsa");
        std::fs::write(&secret, "PRIVATE KEY MARKER").unwrap();
        std::os::unix::fs::symlink(&secret, root.path().join("AGENTS.md")).unwrap();
        let (prompt, warnings) = build_system_prompt(root.path(), "m", &PromptOptions::default());
        assert!(!prompt.contains("PRIVATE KEY MARKER"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("AGENTS.md was not read: it leads to ")
                && warnings[0].contains("outside the project root"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_symlink_inside_the_root_is_read() {
        let root = tmp();
        std::fs::create_dir(root.path().join("docs")).unwrap();
        std::fs::write(root.path().join("docs/rules.md"), "Use tabs.").unwrap();
        std::os::unix::fs::symlink("docs/rules.md", root.path().join("LING.md")).unwrap();
        let (prompt, warnings) = build_system_prompt(root.path(), "m", &PromptOptions::default());
        assert!(prompt.contains("# Project instructions (LING.md)\n\nUse tabs."));
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_large_file_is_cut_and_a_fifo_skipped() {
        let root = tmp();
        let big = format!("START{}END", "x".repeat(INSTRUCTIONS_LIMIT));
        std::fs::write(root.path().join("AGENTS.md"), &big).unwrap();
        nix::unistd::mkfifo(&root.path().join("LING.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (prompt, warnings) = build_system_prompt(root.path(), "m", &PromptOptions::default());
        assert!(prompt.contains("START") && !prompt.contains("END"));
        assert_eq!(
            warnings,
            vec![
                "AGENTS.md is larger than 64 KiB; only its first 64 KiB went into the system prompt"
                    .to_string(),
                "LING.md was not read: it is a FIFO (named pipe), not a regular file".to_string(),
            ]
        );
    }
}
