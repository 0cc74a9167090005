//! Claude Code's spelling of Ling's builtin tools, so that hooks written for Claude Code run
//! unchanged: the tool names matchers also accept ([`claude_tool_name`]), the Claude field names
//! a hook's `tool_input` carries beside Ling's ([`with_claude_fields`]), an `updatedInput` in
//! either spelling mapped back to Ling's before the tool runs ([`to_ling_update`]), and the
//! per-tool object PostToolUse hooks get as `tool_response` ([`tool_response`]). MCP tools
//! (`mcp__server__tool`) are spelled the same in both and pass through untouched.

use std::path::Path;

use serde_json::{Map, Value, json};

/// Ling's builtin tools and Claude Code's names for them. `MultiEdit`, `LS`, `NotebookEdit`
/// and the other Claude tools have no Ling counterpart: a matcher naming them is accepted and
/// matches nothing.
pub const TOOL_NAMES: [(&str, &str); 15] = [
    ("bash", "Bash"),
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("edit_file", "Edit"),
    ("grep", "Grep"),
    ("glob", "Glob"),
    ("task", "Task"),
    ("skill", "Skill"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("todo_write", "TodoWrite"),
    ("exit_plan_mode", "ExitPlanMode"),
    ("ask_user", "AskUserQuestion"),
    ("bash_output", "BashOutput"),
    ("kill_shell", "KillShell"),
];

/// Claude Code's name for a Ling builtin tool (`bash` → `Bash`); `None` for every other name.
pub fn claude_tool_name(ling: &str) -> Option<&'static str> {
    TOOL_NAMES
        .iter()
        .find(|(name, _)| *name == ling)
        .map(|(_, claude)| *claude)
}

/// Ling's name for a Claude Code tool name (`Bash` → `bash`); `None` when Ling has no such tool.
pub fn ling_tool_name(claude: &str) -> Option<&'static str> {
    TOOL_NAMES
        .iter()
        .find(|(_, name)| *name == claude)
        .map(|(ling, _)| *ling)
}

/// One field Claude Code spells differently: its name, Ling's, and how a value converts.
struct Alias {
    claude: &'static str,
    ling: &'static str,
    /// Ling's value → Claude's.
    to_claude: fn(&Value) -> Value,
    /// Claude's value → Ling's.
    to_ling: fn(&Value) -> Value,
}

fn same(value: &Value) -> Value {
    value.clone()
}

fn output_to_claude(value: &Value) -> Value {
    match value.as_str() {
        Some("files") => json!("files_with_matches"),
        _ => value.clone(),
    }
}

fn output_to_ling(value: &Value) -> Value {
    match value.as_str() {
        Some("files_with_matches") => json!("files"),
        _ => value.clone(),
    }
}

const PATH: Alias = Alias {
    claude: "file_path",
    ling: "path",
    to_claude: same,
    to_ling: same,
};

fn aliases(tool: &str) -> &'static [Alias] {
    const FILE: &[Alias] = &[PATH];
    const BASH: &[Alias] = &[Alias {
        claude: "timeout",
        ling: "timeout_ms",
        to_claude: same,
        to_ling: same,
    }];
    const GREP: &[Alias] = &[
        Alias {
            claude: "output_mode",
            ling: "output",
            to_claude: output_to_claude,
            to_ling: output_to_ling,
        },
        Alias {
            claude: "-i",
            ling: "case_insensitive",
            to_claude: same,
            to_ling: same,
        },
        Alias {
            claude: "-C",
            ling: "context",
            to_claude: same,
            to_ling: same,
        },
        // Ling's context is symmetric: -A or -B alone become the context on both sides.
        Alias {
            claude: "-A",
            ling: "context",
            to_claude: same,
            to_ling: same,
        },
        Alias {
            claude: "-B",
            ling: "context",
            to_claude: same,
            to_ling: same,
        },
    ];
    // Claude Code names the background command's id by tool.
    const BASH_OUTPUT: &[Alias] = &[Alias {
        claude: "bash_id",
        ling: "id",
        to_claude: same,
        to_ling: same,
    }];
    const KILL_SHELL: &[Alias] = &[Alias {
        claude: "shell_id",
        ling: "id",
        to_claude: same,
        to_ling: same,
    }];
    match tool {
        "read_file" | "write_file" | "edit_file" => FILE,
        "bash" => BASH,
        "bash_output" => BASH_OUTPUT,
        "kill_shell" => KILL_SHELL,
        "grep" => GREP,
        _ => &[],
    }
}

/// Claude-only fields Ling sends that have no Ling argument: dropped from an `updatedInput`.
fn sent_only(tool: &str) -> &'static [&'static str] {
    match tool {
        "grep" => &["-n"],
        _ => &[],
    }
}

/// `input` (Ling's, as the tool will get it) with Claude Code's field names added beside
/// Ling's: `file_path` beside `path`; Grep's `output_mode`, `-i`, `-n`, `-A`, `-B`, `-C` beside
/// `output`, `case_insensitive` and `context` (their effective values, defaults included);
/// Bash's `timeout` beside `timeout_ms`; BashOutput's `bash_id` and KillShell's `shell_id`
/// beside `id`. Other tools' input is returned as it is.
pub fn with_claude_fields(tool: &str, input: &Value) -> Value {
    let Value::Object(fields) = input else {
        return input.clone();
    };
    let mut out = fields.clone();
    for alias in aliases(tool) {
        if let Some(value) = fields.get(alias.ling) {
            out.entry(alias.claude)
                .or_insert_with(|| (alias.to_claude)(value));
        }
    }
    if tool == "grep" {
        let output = fields.get("output").and_then(Value::as_str);
        let output = output.unwrap_or("content");
        out.entry("output_mode")
            .or_insert_with(|| output_to_claude(&json!(output)));
        let insensitive = fields.get("case_insensitive").cloned();
        out.entry("-i")
            .or_insert_with(|| insensitive.unwrap_or(json!(false)));
        let context = fields.get("context").cloned().unwrap_or(json!(0));
        for key in ["-A", "-B", "-C"] {
            out.entry(key).or_insert_with(|| context.clone());
        }
        // Ling's content output always numbers its lines.
        out.entry("-n").or_insert(json!(output == "content"));
    }
    Value::Object(out)
}

/// A hook's `updatedInput` in Ling's names. `sent` is the `tool_input` the hook was given
/// (with Claude's fields, from [`with_claude_fields`]). A Claude-named field the hook changed
/// wins over its Ling twin; one it only echoed back leaves the Ling field as it is. Claude-only
/// fields Ling sent (Grep's `-n`) are dropped, so a hook that returns the whole object it got
/// does not trip the tool's unknown-argument check.
pub fn to_ling_update(
    tool: &str,
    sent: &Value,
    mut update: Map<String, Value>,
) -> Map<String, Value> {
    for alias in aliases(tool) {
        let Some(value) = update.remove(alias.claude) else {
            continue;
        };
        let changed = sent.get(alias.claude) != Some(&value);
        if changed || !update.contains_key(alias.ling) {
            update.insert(alias.ling.to_string(), (alias.to_ling)(&value));
        }
    }
    for key in sent_only(tool) {
        update.remove(*key);
    }
    update
}

/// What a PostToolUse hook gets as `tool_response`: for a builtin tool, Claude Code's object for
/// that tool (`filePath` and `success` for file edits, `stdout`/`stderr`/`interrupted` for bash,
/// `file.filePath`/`file.content` for reads, `filenames` for searches) with `text`, the result
/// the model gets, beside it; for any other tool the text itself.
pub fn tool_response(tool: &str, input: &Value, text: &str, cwd: &Path) -> Value {
    let arg = |key: &str| input.get(key).cloned().unwrap_or(Value::Null);
    let file_path = || match input.get("path").and_then(Value::as_str) {
        Some(path) => json!(cwd.join(path).to_string_lossy()),
        None => Value::Null,
    };
    let lines = || -> Vec<&str> { text.lines().filter(|l| !l.trim().is_empty()).collect() };
    let mut response = match tool {
        "write_file" => json!({
            "type": "update",
            "filePath": file_path(),
            "content": arg("content"),
            "success": true,
        }),
        "edit_file" => json!({
            "filePath": file_path(),
            "oldString": arg("old_string"),
            "newString": arg("new_string"),
            "replaceAll": input.get("replace_all").cloned().unwrap_or(json!(false)),
            "success": true,
        }),
        "read_file" => json!({
            "type": "text",
            "file": { "filePath": file_path(), "content": text },
        }),
        "bash" => {
            // Ling reads stdout and stderr through one pipe, in the order they were written.
            let (output, status) = match text.trim_end().rsplit_once('\n') {
                Some((output, last)) if last.starts_with("Exit code: ") => (output, Some(last)),
                _ => (text, None),
            };
            let code = status
                .and_then(|s| s.strip_prefix("Exit code: "))
                .and_then(|c| c.trim().parse::<i64>().ok());
            json!({
                "stdout": output,
                "stderr": "",
                "interrupted": false,
                "isImage": false,
                "exitCode": code,
            })
        }
        "grep" => {
            let mode = output_to_claude(&json!(
                input
                    .get("output")
                    .and_then(Value::as_str)
                    .unwrap_or("content")
            ));
            let mut value = json!({ "mode": mode, "content": text });
            if mode == "files_with_matches" {
                let names = lines();
                value["numFiles"] = json!(names.len());
                value["filenames"] = json!(names);
            }
            value
        }
        "glob" => {
            let names = lines();
            json!({ "numFiles": names.len(), "filenames": names, "truncated": false })
        }
        "web_fetch" => json!({ "url": arg("url"), "result": text }),
        "web_search" => json!({ "query": arg("query"), "results": text }),
        _ => return Value::String(text.to_string()),
    };
    response["text"] = json!(text);
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_map_both_ways() {
        assert_eq!(claude_tool_name("edit_file"), Some("Edit"));
        assert_eq!(claude_tool_name("mcp__db__q"), None);
        assert_eq!(ling_tool_name("Bash"), Some("bash"));
        assert_eq!(ling_tool_name("MultiEdit"), None);
    }

    #[test]
    fn tool_input_carries_both_spellings() {
        let input = with_claude_fields("write_file", &json!({"path": "a.txt", "content": "x"}));
        assert_eq!(
            input,
            json!({"path": "a.txt", "file_path": "a.txt", "content": "x"})
        );
        let grep = with_claude_fields("grep", &json!({"pattern": "x", "output": "files"}));
        assert_eq!(grep["output_mode"], json!("files_with_matches"));
        assert_eq!(grep["-i"], json!(false));
        assert_eq!(grep["-C"], json!(0));
        assert_eq!(grep["-n"], json!(false));
        let bash = with_claude_fields("bash", &json!({"command": "ls", "timeout_ms": 5}));
        assert_eq!(bash["timeout"], json!(5));
        let mcp = json!({"path": "x"});
        assert_eq!(with_claude_fields("mcp__fs__read", &mcp), mcp);
    }

    #[test]
    fn an_update_in_either_spelling_reaches_the_tool_in_lings() {
        let sent = with_claude_fields("write_file", &json!({"path": "a", "content": "x"}));
        let obj = |v: Value| v.as_object().cloned().unwrap_or_default();
        // Claude's name only.
        assert_eq!(
            to_ling_update("write_file", &sent, obj(json!({"file_path": "b"}))),
            obj(json!({"path": "b"}))
        );
        // The whole object back with Claude's field changed: Claude's wins.
        let mut whole = sent.clone();
        whole["file_path"] = json!("c");
        assert_eq!(
            to_ling_update("write_file", &sent, obj(whole)),
            obj(json!({"path": "c", "content": "x"}))
        );
        // With Ling's changed: Ling's stays.
        let mut whole = sent.clone();
        whole["path"] = json!("d");
        assert_eq!(
            to_ling_update("write_file", &sent, obj(whole)),
            obj(json!({"path": "d", "content": "x"}))
        );
        let grep = with_claude_fields("grep", &json!({"pattern": "x"}));
        let back = to_ling_update(
            "grep",
            &grep,
            obj(
                json!({"pattern": "y", "output_mode": "files_with_matches", "-i": true, "-n": true}),
            ),
        );
        assert_eq!(
            back,
            obj(json!({"pattern": "y", "output": "files", "case_insensitive": true}))
        );
    }

    #[test]
    fn responses_have_claudes_shape_and_the_text() {
        let cwd = Path::new("/p");
        let bash = tool_response(
            "bash",
            &json!({"command": "ls"}),
            "a\nb\nExit code: 0\n",
            cwd,
        );
        assert_eq!(bash["stdout"], json!("a\nb"));
        assert_eq!(bash["exitCode"], json!(0));
        assert_eq!(bash["interrupted"], json!(false));
        assert_eq!(bash["text"], json!("a\nb\nExit code: 0\n"));
        let write = tool_response("write_file", &json!({"path": "x.txt"}), "wrote", cwd);
        assert_eq!(write["filePath"], json!("/p/x.txt"));
        assert_eq!(write["success"], json!(true));
        let glob = tool_response("glob", &json!({"pattern": "*"}), "a.rs\nb.rs\n", cwd);
        assert_eq!(glob["filenames"], json!(["a.rs", "b.rs"]));
        assert_eq!(tool_response("mcp__x__y", &json!({}), "t", cwd), json!("t"));
    }
}
