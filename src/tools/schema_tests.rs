//! The schema each builtin tool sends the model, as a whole value: derived from its `Args`, it
//! must stay what OpenAI-compatible servers accept (and what the hand-written schemas said).

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::ToolRegistry;

fn schema(name: &str) -> Value {
    let registry = ToolRegistry::builtins();
    let Some(tool) = registry.get(name) else {
        panic!("no builtin tool {name}");
    };
    tool.input_schema()
}

#[test]
fn read_file_schema() {
    assert_eq!(
        schema("read_file"),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file (or directory) to read, relative to the project root"},
                "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line to start at (default 1)"},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read (default 2000)"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    );
}

#[test]
fn write_file_schema() {
    assert_eq!(
        schema("write_file"),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file to write, relative to the project root"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    );
}

#[test]
fn edit_file_schema() {
    assert_eq!(
        schema("edit_file"),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file to edit, relative to the project root"},
                "old_string": {"type": "string", "description": "The exact text to replace"},
                "new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)"},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)"}
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    );
}

#[test]
fn bash_schema() {
    assert_eq!(
        schema("bash"),
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command to run"},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 600000, "description": "Timeout in milliseconds (default 120000, max 600000)"},
                "description": {"type": "string", "description": "A few words on what the command does (shown to hooks; optional)"},
                "run_in_background": {"type": "boolean", "description": "Run it in the background and return at once with its id (see bash_output, kill_shell)"}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    );
}

#[test]
fn grep_schema() {
    assert_eq!(
        schema("grep"),
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression to search for"},
                "path": {"type": "string", "description": "The folder or file to search (default: the project root)"},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.rs` or `src/**/*.py`"},
                "case_insensitive": {"type": "boolean", "description": "Match case-insensitively (default false)"},
                "output": {"type": "string", "enum": ["content", "files", "count"], "description": "`content` (matching lines, default), `files` (matching file paths) or `count` (matches per file)"},
                "context": {"type": "integer", "minimum": 0, "description": "Lines of context before and after each match (content mode)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    );
}

#[test]
fn glob_schema() {
    assert_eq!(
        schema("glob"),
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob to match, e.g. `**/*.rs`"},
                "path": {"type": "string", "description": "The folder to search (default: the project root)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    );
}
