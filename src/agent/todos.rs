//! The `todo_write` tool (Claude Code's `TodoWrite`): the model keeps a visible to-do list by
//! writing the whole list each time, items of `content`, `status` (`pending`, `in_progress`,
//! `completed`) and `activeForm` (what the spinner says while the item runs). The list lives
//! in the session ([`crate::agent::Session::set_todos`]): recorded in the transcript so
//! `--resume` brings it back, kept through a compaction (it is not part of the history, and the
//! summary carries it), and sent to the front ends as [`AgentEvent::Todos`] over the call's
//! line to the agent ([`CallLine`]).
//!
//! [`AgentEvent::Todos`]: super::AgentEvent::Todos

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

pub use super::asks::{Todo, TodoStatus};
use super::call_line::CallLine;
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, args_schema, parse_args};

pub const TODO_WRITE: &str = "todo_write";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// The whole updated list; it replaces the previous one (an empty list clears it).
    todos: Vec<Todo>,
}

/// The list as the user reads it, one item a row: `☑ Read the code`, `▸ Running the tests`.
pub fn render_todos(todos: &[Todo]) -> String {
    todos
        .iter()
        .map(|t| match t.status {
            TodoStatus::InProgress => format!("{} {}", t.status.mark(), t.doing()),
            _ => format!("{} {}", t.status.mark(), t.content),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One row for under the spinner: the item in progress and how many are done; `None` when the
/// list is empty.
pub fn todo_summary(todos: &[Todo]) -> Option<String> {
    if todos.is_empty() {
        return None;
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let count = format!("{done}/{} done", todos.len());
    Some(
        match todos.iter().find(|t| t.status == TodoStatus::InProgress) {
            Some(now) => format!(
                "{} {} ({count})",
                TodoStatus::InProgress.mark(),
                now.doing()
            ),
            None => format!("to-do list: {count}"),
        },
    )
}

/// Why a list is refused, or `None`.
fn invalid(todos: &[Todo]) -> Option<String> {
    let empty: Vec<String> = todos
        .iter()
        .enumerate()
        .filter(|(_, t)| t.content.trim().is_empty())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    (!empty.is_empty()).then(|| {
        format!(
            "item(s) {} have no content; give each item its task in `content` (and an \
             `activeForm` such as \"Running the tests\")",
            empty.join(", ")
        )
    })
}

pub struct TodoWrite;

#[async_trait]
impl Tool for TodoWrite {
    fn name(&self) -> &str {
        TODO_WRITE
    }

    fn description(&self) -> &str {
        "Write the session's to-do list (the user sees it). Use it for work of three steps or \
         more: list the steps, mark one `in_progress` when you start it and `completed` as soon \
         as it is done, add steps you discover. Each call replaces the whole list."
    }

    fn input_schema(&self) -> Value {
        args_schema::<Args>()
    }

    fn kind(&self) -> ToolKind {
        // It changes nothing outside the session: no question, in every mode.
        ToolKind::Read
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(TODO_WRITE, input)?;
        if let Some(why) = invalid(&args.todos) {
            return Err(ToolError::failed(why));
        }
        let Some(line) = CallLine::of(ctx) else {
            return Err(ToolError::failed("todo_write runs only inside an agent"));
        };
        line.todos(args.todos.clone());
        let pending = args
            .todos
            .iter()
            .filter(|t| t.status != TodoStatus::Completed)
            .count();
        let content = format!(
            "The to-do list is updated ({} items, {pending} not done). Keep it current: mark \
             each item in_progress when you start it and completed as soon as it is done.",
            args.todos.len()
        );
        let mut output = ToolOutput::text(content);
        output.display = (!args.todos.is_empty()).then(|| render_todos(&args.todos));
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn todo(content: &str, status: TodoStatus, active: &str) -> Todo {
        Todo {
            content: content.into(),
            status,
            active_form: active.into(),
        }
    }

    #[test]
    fn the_list_reads_in_claude_s_shape_and_renders_by_status() {
        let list: Vec<Todo> = serde_json::from_value(serde_json::json!([
            {"content": "Read", "status": "completed", "activeForm": "Reading"},
            {"content": "Test", "status": "in_progress", "activeForm": "Testing"},
            {"content": "Ship", "status": "pending"}
        ]))
        .unwrap();
        assert_eq!(list[2], todo("Ship", TodoStatus::Pending, ""));
        assert_eq!(render_todos(&list), "☑ Read\n▸ Testing\n☐ Ship");
        assert_eq!(todo_summary(&list).as_deref(), Some("▸ Testing (1/3 done)"));
        assert_eq!(todo_summary(&[]), None);
    }

    #[test]
    fn an_item_without_content_is_refused() {
        assert_eq!(invalid(&[todo("a", TodoStatus::Pending, "")]), None);
        let why = invalid(&[
            todo("a", TodoStatus::Pending, ""),
            todo(" ", TodoStatus::Pending, ""),
        ]);
        assert!(why.is_some_and(|w| w.starts_with("item(s) 2 have no content")));
    }
}
