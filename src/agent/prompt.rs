//! The system prompt: the built-in Markdown prompt, facts about the environment, and the project's
//! own instructions (`AGENTS.md`, `LING.md`) when present.

use std::path::Path;

const BUILTIN: &str = include_str!("../prompts/system.md");

/// Project instruction files read from the project root, in this order.
const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "LING.md"];

/// How the user changed the prompt on the command line.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    /// `--system-prompt`: replaces the built-in prompt.
    pub replace: Option<String>,
    /// `--append-system-prompt`: added at the end.
    pub append: Option<String>,
}

pub fn build_system_prompt(root: &Path, model: &str, options: &PromptOptions) -> String {
    let mut prompt = options
        .replace
        .clone()
        .unwrap_or_else(|| BUILTIN.trim_end().to_string());
    prompt.push_str("\n\n# Environment\n\n");
    prompt.push_str(&format!(
        "- Working directory (project root): {}\n",
        root.display()
    ));
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
    for name in INSTRUCTION_FILES {
        if let Ok(text) = std::fs::read_to_string(root.join(name)) {
            if !text.trim().is_empty() {
                prompt.push_str(&format!(
                    "\n# Project instructions ({name})\n\n{}\n",
                    text.trim_end()
                ));
            }
        }
    }
    if let Some(extra) = &options.append {
        prompt.push('\n');
        prompt.push_str(extra.trim_end());
        prompt.push('\n');
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_environment_and_project_instructions() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("AGENTS.md"), "Always run `make test`.\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let prompt = build_system_prompt(dir.path(), "m1", &PromptOptions::default());
        assert!(prompt.starts_with("You are Ling"));
        assert!(prompt.contains(&dir.path().display().to_string()));
        assert!(prompt.contains("# Project instructions (AGENTS.md)\n\nAlways run `make test`."));
        assert!(prompt.contains("- Model: m1"));
    }

    #[test]
    fn replace_and_append() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let options = PromptOptions {
            replace: Some("Custom.".into()),
            append: Some("Extra rule.".into()),
        };
        let prompt = build_system_prompt(dir.path(), "m", &options);
        assert!(prompt.starts_with("Custom.\n\n# Environment"));
        assert!(prompt.trim_end().ends_with("Extra rule."));
    }
}
