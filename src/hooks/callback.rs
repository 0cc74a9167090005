//! Hooks that are callbacks of the program driving Ling (the Agent SDK's `hooks` option): its
//! matchers become hook groups in Claude Code's dialect, and a matching handler is a
//! `hook_callback` request with the hook's input, whose answer is read as a command hook's JSON
//! output (`docs/hooks.md`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::output::RunResult;
use crate::config::hooks::{
    DEFAULT_TIMEOUT, HandlerKind, HookDialect, HookEventName, HookGroup, HookHandler, Position,
};
use crate::program::ProgramChannel;

/// Asks the program for callback `id`'s answer to `payload` (the hook input as Claude Code
/// sends it), within `timeout`.
pub(super) async fn run_callback(
    program: Option<&dyn ProgramChannel>,
    id: &str,
    payload: &[u8],
    timeout: Duration,
) -> RunResult {
    let Some(program) = program else {
        return RunResult::Failed("no program is connected to answer the callback".into());
    };
    let input: Value = serde_json::from_slice(payload).unwrap_or(Value::Null);
    let request = json!({
        "subtype": "hook_callback",
        "callback_id": id,
        "input": input,
        "tool_use_id": input.get("tool_use_id").cloned().unwrap_or(Value::Null),
    });
    match tokio::time::timeout(timeout, program.request(request)).await {
        Err(_) => RunResult::TimedOut(timeout),
        Ok(Err(error)) => RunResult::Failed(format!("the program's callback failed: {error}")),
        // The answer is a hook's JSON output, as a command's stdout would hold it.
        Ok(Ok(answer)) => RunResult::Exited {
            code: Some(0),
            signal: None,
            stdout: if answer.is_null() {
                String::new()
            } else {
                answer.to_string()
            },
            stderr: String::new(),
        },
    }
}

/// The hook groups of the program's `hooks` (`{"PreToolUse": [{"matcher": "Write",
/// "hookCallbackIds": ["hook_0"], "timeout": 30}]}`). An event Ling does not run is an error:
/// a guard the program set must never silently not exist.
pub fn program_groups(hooks: &Map<String, Value>) -> Result<Vec<HookGroup>, String> {
    let source = PathBuf::from("(the program's hooks option)");
    let mut groups = Vec::new();
    for (event_name, matchers) in hooks {
        let Some(event) = HookEventName::parse(event_name) else {
            return Err(format!(
                "the hook event {event_name} is not one Ling runs (it runs {})",
                HookEventName::ALL.map(HookEventName::as_str).join(", ")
            ));
        };
        for entry in matchers.as_array().into_iter().flatten() {
            let timeout = entry
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|t| *t > 0.0)
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
            let handlers = entry
                .get("hookCallbackIds")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|id| HookHandler {
                    kind: HandlerKind::Callback { id: id.to_string() },
                    timeout,
                    is_async: false,
                    fail_closed: false,
                    code: None,
                    condition: None,
                    condition_at: Position { line: 0, column: 0 },
                })
                .collect::<Vec<_>>();
            if handlers.is_empty() {
                continue;
            }
            groups.push(HookGroup {
                event,
                matcher: entry
                    .get("matcher")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty() && *m != "*")
                    .map(str::to_string),
                matcher_at: Position { line: 0, column: 0 },
                handlers,
                source: source.clone(),
                dialect: HookDialect::Claude,
            });
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_matchers_become_claude_groups_and_an_unknown_event_is_refused() {
        let hooks = json!({"PreToolUse": [{"matcher": "Write|Edit", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5}]});
        let groups = program_groups(hooks.as_object().unwrap()).unwrap();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].matcher.as_deref(), Some("Write|Edit"));
        assert_eq!(groups[0].handlers.len(), 2);
        assert_eq!(groups[0].handlers[0].timeout, Duration::from_secs(5));
        assert_eq!(groups[0].dialect, HookDialect::Claude);
        let unknown = json!({"PermissionDenied": [{"hookCallbackIds": ["hook_0"]}]});
        assert!(program_groups(unknown.as_object().unwrap()).is_err());
    }
}
