//! What `ling mcp serve` offers, as MCP tool definitions: each builtin tool with a title and the
//! annotations a client decides with (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`), or with `--agent` the one `ling` tool, which runs the whole agent on a
//! prompt and answers with its result.

use serde_json::json;

use super::wire::{Annotations, ToolDef};

use crate::tools::{Tool, ToolKind};

/// The name of the agent tool.
pub const AGENT_TOOL: &str = "ling";

/// Whether a builtin tool is served: the file and shell tools are; `task` and `skill` belong to
/// an agent's own turn (a sub-agent, a skill's instructions for the model), as do the session's
/// own tools (its to-do list, a plan to approve, the model's questions), which `--agent` offers
/// whole.
pub fn served(name: &str) -> bool {
    use crate::session::{ASK_USER, EXIT_PLAN_MODE, SKILL, TASK, TODO_WRITE};
    ![TASK, SKILL, TODO_WRITE, EXIT_PLAN_MODE, ASK_USER].contains(&name)
}

/// The MCP definition of a builtin tool.
pub fn builtin(tool: &dyn Tool) -> ToolDef {
    let (title, destructive, idempotent, open_world) = match tool.name() {
        "read_file" => ("Read a file", false, true, false),
        "grep" => ("Search file contents", false, true, false),
        "glob" => ("Find files by name", false, true, false),
        "write_file" => ("Write a file", true, true, false),
        "edit_file" => ("Edit a file", true, false, false),
        "bash" => ("Run a shell command", true, false, true),
        "web_fetch" => ("Fetch a web page", false, true, true),
        "web_search" => ("Search the web", false, true, true),
        "bash_output" => ("Read a background command's output", false, false, false),
        "kill_shell" => ("End a background command", false, true, false),
        _ => ("", tool.kind() != ToolKind::Read, false, true),
    };
    // Reading the web changes nothing either (though its world is open).
    let read_only = matches!(tool.kind(), ToolKind::Read | ToolKind::Web);
    let title = if title.is_empty() { tool.name() } else { title };
    ToolDef {
        name: tool.name().to_string(),
        title: title.to_string(),
        description: tool.description().to_string(),
        input_schema: tool.input_schema(),
        output_schema: None,
        annotations: Annotations {
            title: title.to_string(),
            read_only_hint: read_only,
            destructive_hint: !read_only && destructive,
            idempotent_hint: read_only || idempotent,
            open_world_hint: open_world,
        },
    }
}

/// The agent tool's definition.
pub fn agent() -> ToolDef {
    const TITLE: &str = "Ling coding agent";
    ToolDef {
        name: AGENT_TOOL.to_string(),
        title: TITLE.to_string(),
        description: "Runs Ling, a coding agent, on a task in this project: it reads files, \
            edits them and runs commands (within its permission mode and sandbox) until the task \
            is done, then answers. Give the task in `prompt`. To continue an earlier run with its \
            history, pass the `session_id` that run returned."
            .to_string(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "The task, as you would ask a developer"},
                "session_id": {
                    "type": "string",
                    "description": "Continue this earlier run (its session_id); omit for a new one",
                },
                "model": {"type": "string", "description": "The model for this run (default: Ling's settings)"},
            },
            "required": ["prompt"],
            "additionalProperties": false,
        }),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "result": {"type": "string"},
                "num_turns": {"type": "integer"},
            },
            "required": ["session_id", "result"],
        })),
        annotations: Annotations {
            title: TITLE.to_string(),
            read_only_hint: false,
            destructive_hint: true,
            idempotent_hint: false,
            open_world_hint: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolRegistry;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_are_read_only_and_changes_destructive() {
        let registry = ToolRegistry::builtins();
        let hints = |name: &str| {
            let tool = registry.get(name).unwrap();
            let a = builtin(tool.as_ref()).annotations;
            (a.read_only_hint, a.destructive_hint, a.open_world_hint)
        };
        // The background commands' handles touch only what the session's own bash started.
        for read in ["read_file", "grep", "glob", "bash_output", "kill_shell"] {
            assert_eq!(hints(read), (true, false, false), "{read}");
        }
        assert_eq!(hints("write_file"), (false, true, false));
        assert_eq!(hints("edit_file"), (false, true, false));
        assert_eq!(hints("bash"), (false, true, true));
        let names: Vec<String> = registry.names();
        assert_eq!(names.len(), 8, "{names:?}");
    }
}
