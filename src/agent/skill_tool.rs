//! The `skill` tool: the skills' names and short descriptions are in its description (held to
//! [`LISTING_BUDGET`]), and the model loads a skill's instructions (`SKILL.md`) when the task
//! calls for it, then the files beside it one by one. Reads stay inside the skill's folder and
//! are capped like instruction files. A skill's `allowed-tools` narrow the rest of the run once
//! it is loaded, through the call's line to the agent ([`CallLine`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::call_line::CallLine;
use super::filter::ToolFilter;
use super::listing::within_budget;
use crate::config::bounded_read::{lossy_text, read_regular};
use crate::config::extensions::{FILE_LIMIT, Skill, frontmatter};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const SKILL: &str = "skill";
/// The bytes the skill list may take in the tool's description.
pub const LISTING_BUDGET: usize = 800;
/// How many files of a skill's folder its result names.
const FILES_LISTED: usize = 50;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The skill's name; "list" lists every skill with its description.
    name: String,
    /// A file of the skill's folder to read instead of its SKILL.md (a path relative to it).
    #[serde(default)]
    file: Option<String>,
}

pub struct SkillTool {
    skills: Arc<Vec<Skill>>,
    description: String,
}

impl SkillTool {
    pub fn new(skills: Arc<Vec<Skill>>) -> Self {
        let entries: Vec<(&str, &str)> = skills
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        let listed = within_budget(
            &entries,
            LISTING_BUDGET,
            "call skill with name \"list\" for all",
        );
        let description = format!(
            "Load a skill: instructions for a kind of task, with files beside them. When the \
             task matches a skill, call this with its name first and follow what it says; \
             read its files with `file`. Skills:\n{listed}"
        );
        Self {
            skills,
            description,
        }
    }

    fn find(&self, name: &str) -> Result<&Skill, ToolError> {
        self.skills.iter().find(|s| s.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            ToolError::failed(format!(
                "no skill named {name:?}; the skills are: {}",
                names.join(", ")
            ))
        })
    }
}

/// The file `rel` of `skill`'s folder, resolved, if it is inside the folder as it was loaded.
fn file_of(skill: &Skill, rel: &str) -> Result<PathBuf, ToolError> {
    let dir = std::fs::canonicalize(&skill.dir)
        .map_err(|e| ToolError::failed(format!("the skill's folder cannot be read: {e}")))?;
    if dir != skill.resolved {
        return Err(ToolError::failed(format!(
            "the folder of skill {} now leads to {}, not to {} as when Ling loaded it; it is not \
             read (the user can check it and start Ling again)",
            skill.name,
            dir.display(),
            skill.resolved.display()
        )));
    }
    let path = std::fs::canonicalize(dir.join(rel))
        .map_err(|e| ToolError::failed(format!("{rel} cannot be read: {e}")))?;
    if !path.starts_with(&dir) {
        return Err(ToolError::failed(format!(
            "{rel} is outside the skill's folder; give a path inside it"
        )));
    }
    Ok(path)
}

fn read_in(skill: &Skill, rel: &str) -> Result<String, ToolError> {
    let path = file_of(skill, rel)?;
    match read_regular(&path, FILE_LIMIT) {
        Ok(Some(read)) => Ok(lossy_text(&read.bytes, read.cut)),
        Ok(None) => Err(ToolError::failed(format!("{rel} does not exist"))),
        Err(e) => Err(ToolError::failed(e.to_string())),
    }
}

/// The files of a skill's folder but `SKILL.md`, relative to it, sorted.
fn files_of(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((at, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let here = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            match entry.file_type() {
                Ok(t) if t.is_dir() && !name.starts_with('.') && rel.matches('/').count() < 3 => {
                    stack.push((entry.path(), here))
                }
                Ok(t) if !t.is_dir() && here != "SKILL.md" => out.push(here),
                _ => {}
            }
            if out.len() > FILES_LISTED {
                break;
            }
        }
    }
    out.sort();
    out
}

/// The skill is loaded: its `allowed-tools` narrow the rest of the run (the `skill` tool stays,
/// to read the skill's files).
fn narrow(skill: &Skill, tools: &[String], ctx: &ToolContext) {
    let Some(line) = CallLine::of(ctx) else {
        return;
    };
    let mut entries = tools.to_vec();
    entries.push(SKILL.to_string());
    let origin = format!("the {} skill's allowed-tools", skill.name);
    line.narrow(ToolFilter::new(&entries, origin));
}

#[async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &str {
        SKILL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn reads_file(&self, input: &Value) -> Option<PathBuf> {
        let args: Args = serde_json::from_value(input.clone()).ok()?;
        let skill = self.skills.iter().find(|s| s.name == args.name)?;
        // Where it would read now; a folder swapped since fails the call itself.
        let dir = std::fs::canonicalize(&skill.dir).ok()?;
        let rel = args.file.as_deref().unwrap_or("SKILL.md");
        std::fs::canonicalize(dir.join(rel)).ok()
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(SKILL, input)?;
        if args.name == "list" && self.skills.iter().all(|s| s.name != "list") {
            let all: Vec<String> = self
                .skills
                .iter()
                .map(|s| format!("- {}: {}", s.name, s.description))
                .collect();
            return Ok(ToolOutput::text(all.join("\n")));
        }
        let skill = self.find(&args.name)?;
        if let Some(file) = &args.file {
            return read_in(skill, file).map(ToolOutput::text);
        }
        let text = read_in(skill, "SKILL.md")?;
        let body = crate::config::extensions::substitute_session(
            &frontmatter::parse(&text).body,
            &ctx.session_id,
            &ctx.root,
        );
        let mut out = format!(
            "# Skill {} ({})\n\n{}\n",
            skill.name,
            skill.dir.display(),
            body.trim_end()
        );
        let files = files_of(&skill.dir);
        if !files.is_empty() {
            out.push_str(&format!(
                "\nFiles of this skill (read one with skill name={:?} file=PATH): {}\n",
                skill.name,
                files.join(", ")
            ));
        }
        if let Some(tools) = &skill.allowed_tools {
            out.push_str(&format!(
                "\nWhile this skill is in use (until the end of this turn) the tools are \
                 limited to: {}\n",
                tools.join(", ")
            ));
            narrow(skill, tools, ctx);
        }
        Ok(ToolOutput::text(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::extensions::Scope;
    use serde_json::json;

    fn skill(dir: &Path) -> Skill {
        Skill {
            name: "pdf".into(),
            description: "PDFs".into(),
            allowed_tools: None,
            dir: dir.to_path_buf(),
            resolved: dir.canonicalize().unwrap(),
            scope: Scope::Project,
        }
    }

    #[tokio::test]
    async fn a_skill_folder_swapped_for_a_link_since_it_was_loaded_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skills/pdf");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\ndescription: PDFs\n---\nUse pdftotext.\n",
        )
        .unwrap();
        let secret = tmp.path().join("home/.ssh");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("id_ed25519"), "SECRET").unwrap();
        std::fs::write(secret.join("SKILL.md"), "SECRET-SKILL").unwrap();
        let tool = SkillTool::new(Arc::new(vec![skill(&dir)]));
        let ctx = ToolContext::new(tmp.path().to_path_buf());
        let loaded = tool.call(json!({"name": "pdf"}), &ctx).await.unwrap();
        assert!(loaded.content.contains("Use pdftotext."), "{loaded:?}");
        assert_eq!(
            tool.reads_file(&json!({"name": "pdf"})),
            Some(dir.join("SKILL.md").canonicalize().unwrap())
        );
        // Swapped for a link to the secrets: neither the body nor a file is read.
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&secret, &dir).unwrap();
        for input in [
            json!({"name": "pdf"}),
            json!({"name": "pdf", "file": "id_ed25519"}),
        ] {
            let err = tool.call(input, &ctx).await.unwrap_err().to_string();
            assert!(err.contains("now leads to"), "{err}");
            assert!(!err.contains("SECRET"), "{err}");
        }
        // Where it would read is what the permission check sees (a hidden path there asks).
        assert_eq!(
            tool.reads_file(&json!({"name": "pdf", "file": "id_ed25519"})),
            Some(secret.join("id_ed25519").canonicalize().unwrap())
        );
    }
}
