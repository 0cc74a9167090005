//! The `skill` tool: the skills' names and short descriptions are in its description (held to
//! [`LISTING_BUDGET`]), and the model loads a skill's instructions (`SKILL.md`) when the task
//! calls for it, then the files beside it one by one. Reads stay inside the skill's folder and
//! are capped like instruction files.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

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

fn read_in(dir: &Path, rel: &str) -> Result<String, ToolError> {
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| ToolError::failed(format!("the skill's folder cannot be read: {e}")))?;
    let path = std::fs::canonicalize(dir.join(rel))
        .map_err(|e| ToolError::failed(format!("{rel} cannot be read: {e}")))?;
    if !path.starts_with(&dir) {
        return Err(ToolError::failed(format!(
            "{rel} is outside the skill's folder; give a path inside it"
        )));
    }
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

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
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
            return read_in(&skill.dir, file).map(ToolOutput::text);
        }
        let text = read_in(&skill.dir, "SKILL.md")?;
        let body = frontmatter::parse(&text).body;
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
        }
        Ok(ToolOutput::text(out))
    }
}
