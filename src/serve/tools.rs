//! What `ling mcp serve` offers, as MCP tool definitions: each builtin tool with a title and the
//! annotations a client decides with (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`), or with `--agent` the one `ling` tool, which runs the whole agent on a
//! prompt and answers with its result.

use serde_json::{Value, json};

use crate::tools::{Tool, ToolKind};

/// The name of the agent tool.
pub const AGENT_TOOL: &str = "ling";

/// The MCP definition of a builtin tool.
/// Whether a builtin tool is served: the file and shell tools are; `task` and `skill` belong to
/// an agent's own turn (a sub-agent, a skill's instructions for the model), which `--agent`
/// offers whole.
pub fn served(name: &str) -> bool {
    name != crate::agent::TASK && name != crate::agent::SKILL
}

pub fn builtin(tool: &dyn Tool) -> Value {
    let (title, destructive, idempotent, open_world) = match tool.name() {
        "read_file" => ("Read a file", false, true, false),
        "grep" => ("Search file contents", false, true, false),
        "glob" => ("Find files by name", false, true, false),
        "write_file" => ("Write a file", true, true, false),
        "edit_file" => ("Edit a file", true, false, false),
        "bash" => ("Run a shell command", true, false, true),
        "web_fetch" => ("Fetch a web page", false, true, true),
        "web_search" => ("Search the web", false, true, true),
        _ => ("", tool.kind() != ToolKind::Read, false, true),
    };
    // Reading the web changes nothing either (though its world is open).
    let read_only = matches!(tool.kind(), ToolKind::Read | ToolKind::Web);
    let title = if title.is_empty() { tool.name() } else { title };
    json!({
        "name": tool.name(),
        "title": title,
        "description": tool.description(),
        "inputSchema": tool.input_schema(),
        "annotations": {
            "title": title,
            "readOnlyHint": read_only,
            "destructiveHint": !read_only && destructive,
            "idempotentHint": read_only || idempotent,
            "openWorldHint": open_world,
        },
    })
}

/// The agent tool's definition.
pub fn agent() -> Value {
    json!({
        "name": AGENT_TOOL,
        "title": "Ling coding agent",
        "description": "Runs Ling, a coding agent, on a task in this project: it reads files, \
            edits them and runs commands (within its permission mode and sandbox) until the task \
            is done, then answers. Give the task in `prompt`. To continue an earlier run with its \
            history, pass the `session_id` that run returned.",
        "inputSchema": {
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
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "session_id": {"type": "string"},
                "result": {"type": "string"},
                "num_turns": {"type": "integer"},
            },
            "required": ["session_id", "result"],
        },
        "annotations": {
            "title": "Ling coding agent",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        },
    })
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
            let def = builtin(tool.as_ref());
            let a = &def["annotations"];
            (
                a["readOnlyHint"].as_bool().unwrap(),
                a["destructiveHint"].as_bool().unwrap(),
                a["openWorldHint"].as_bool().unwrap(),
            )
        };
        for read in ["read_file", "grep", "glob"] {
            assert_eq!(hints(read), (true, false, false), "{read}");
        }
        assert_eq!(hints("write_file"), (false, true, false));
        assert_eq!(hints("edit_file"), (false, true, false));
        assert_eq!(hints("bash"), (false, true, true));
        let names: Vec<String> = registry.names();
        assert_eq!(names.len(), 6, "{names:?}");
    }
}
