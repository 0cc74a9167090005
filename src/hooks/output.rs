//! Reads what one handler did, exactly as Claude Code's contract says: exit 0 with stdout that
//! starts with `{` is the JSON output; other exit-0 stdout is context for SessionStart and
//! UserPromptSubmit only; exit 2 blocks with stderr as the reason; any other exit, a crash, a
//! timeout or unreadable JSON is a non-blocking error, unless the handler is `failClosed`. An HTTP
//! 2xx body is read like stdout; any other status is an error.

use std::time::Duration;

use serde_json::{Map, Value};

use super::outcome::{Decision, Effect, HookNotice, NoticeKind};
use crate::config::hooks::HookEventName;

/// The most of one handler's text that is passed on as context or a reason.
const TEXT_LIMIT: usize = 10_000;

/// How a handler ended, before it is interpreted.
#[derive(Debug)]
pub(crate) enum RunResult {
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
        stdout: String,
        stderr: String,
    },
    Http {
        status: u16,
        body: String,
    },
    TimedOut(Duration),
    Failed(String),
}

/// Turns one handler's result into its effect on `event`.
pub(crate) fn interpret(
    event: HookEventName,
    handler: &str,
    fail_closed: bool,
    result: RunResult,
) -> Effect {
    let reader = Reader {
        event,
        handler,
        fail_closed,
        effect: Effect::default(),
    };
    reader.read(result)
}

struct Reader<'a> {
    event: HookEventName,
    handler: &'a str,
    fail_closed: bool,
    effect: Effect,
}

impl Reader<'_> {
    fn read(mut self, result: RunResult) -> Effect {
        match result {
            RunResult::Exited {
                code: Some(0),
                stdout,
                ..
            } => self.success(&stdout),
            RunResult::Exited {
                code: Some(2),
                stderr,
                ..
            } => self.exit_two(&stderr),
            RunResult::Exited {
                code,
                signal,
                stderr,
                ..
            } => {
                let how = match (code, signal) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => "ended without a status".to_string(),
                };
                self.failure(NoticeKind::Error, with_detail(how, &stderr));
            }
            RunResult::Http { status, body } if (200..300).contains(&status) => {
                self.success(&body);
            }
            RunResult::Http { status, body } => {
                self.failure(
                    NoticeKind::Error,
                    with_detail(format!("HTTP {status}"), &body),
                );
            }
            RunResult::TimedOut(after) => self.failure(
                NoticeKind::Timeout,
                format!("timed out after {}s and was killed", after.as_secs_f64()),
            ),
            RunResult::Failed(message) => self.failure(NoticeKind::Error, message),
        }
        self.effect
    }

    fn success(&mut self, stdout: &str) {
        let text = stdout.trim();
        if !text.starts_with('{') {
            let plain_is_context = matches!(
                self.event,
                HookEventName::SessionStart
                    | HookEventName::UserPromptSubmit
                    | HookEventName::SubagentStart
                    | HookEventName::WorktreeCreate
            );
            if plain_is_context && !text.is_empty() {
                self.effect.context = Some(cap(text));
            }
            return;
        }
        match serde_json::from_str::<Map<String, Value>>(text) {
            Ok(json) => self.json(&json),
            Err(e) => self.failure(
                NoticeKind::Error,
                format!("printed unreadable JSON on stdout ({e}): {}", excerpt(text)),
            ),
        }
    }

    fn exit_two(&mut self, stderr: &str) {
        let reason = stderr.trim();
        if self.event.can_block() {
            self.decide(Decision::Block, Some(reason));
        } else {
            self.notice(
                NoticeKind::Ignored,
                with_detail(
                    format!("exited with status 2, but {} cannot be blocked", self.event),
                    reason,
                ),
            );
        }
    }

    fn failure(&mut self, kind: NoticeKind, message: String) {
        if self.fail_closed && self.event.can_block() {
            let reason = format!("hook {} failed and is failClosed: {message}", self.handler);
            self.notice(kind, format!("{message} (failClosed: blocking)"));
            self.effect.decision = Some(Decision::Block);
            self.effect.reason = Some(cap(&reason));
        } else {
            self.notice(kind, message);
        }
    }

    fn json(&mut self, json: &Map<String, Value>) {
        let text = |key: &str| json.get(key).and_then(Value::as_str);
        if json.get("continue").and_then(Value::as_bool) == Some(false) {
            let why = text("stopReason")
                .map(str::to_string)
                .unwrap_or_else(|| format!("stopped by hook {}", self.handler));
            self.notice(NoticeKind::Stop, format!("stops the agent: {why}"));
            self.effect.stop = Some(cap(&why));
        }
        if let Some(message) = text("systemMessage") {
            self.effect.system_message = Some(cap(message));
        }
        match text("decision") {
            None => {}
            Some("block") if self.event.can_block() => {
                self.decide(Decision::Block, text("reason"));
            }
            Some("approve") if self.event == HookEventName::PreToolUse => {
                self.decide(Decision::Allow, text("reason"));
            }
            Some("approve") => {}
            Some(other) => self.notice(
                NoticeKind::Ignored,
                format!("decision {other:?} has no effect on {}", self.event),
            ),
        }
        if let Some(specific) = json.get("hookSpecificOutput") {
            self.specific(specific);
        }
    }

    fn specific(&mut self, specific: &Value) {
        let Some(specific) = specific.as_object() else {
            self.notice(
                NoticeKind::Error,
                "hookSpecificOutput must be an object; ignored".into(),
            );
            return;
        };
        let text = |key: &str| specific.get(key).and_then(Value::as_str);
        if let Some(name) = text("hookEventName").filter(|n| *n != self.event.as_str()) {
            self.notice(
                NoticeKind::Ignored,
                format!(
                    "hookSpecificOutput is for {name}, not {}; ignored",
                    self.event
                ),
            );
            return;
        }
        if let Some(context) = text("additionalContext").filter(|c| !c.trim().is_empty()) {
            self.effect.context = Some(cap(context));
        }
        if self.event == HookEventName::PostToolUse {
            self.updated_output(specific);
        }
        if self.event != HookEventName::PreToolUse {
            return;
        }
        let reason = text("permissionDecisionReason");
        match text("permissionDecision") {
            None => {}
            Some("allow") => self.decide(Decision::Allow, reason),
            Some("ask") => self.decide(Decision::Ask, reason),
            Some("deny") => self.decide(Decision::Block, reason),
            Some(other) => self.notice(
                NoticeKind::Ignored,
                format!("permissionDecision {other:?} is not allow, ask or deny; ignored"),
            ),
        }
        match specific.get("updatedInput") {
            None | Some(Value::Null) => {}
            Some(Value::Object(update)) => {
                let keys: Vec<&str> = update.keys().map(String::as_str).collect();
                self.notice(
                    NoticeKind::Rewrite,
                    format!("rewrote the tool input ({})", keys.join(", ")),
                );
                self.effect.updated_input = Some(update.clone());
            }
            Some(_) => self.notice(
                NoticeKind::Error,
                "updatedInput must be an object of tool arguments; ignored".into(),
            ),
        }
    }

    /// PostToolUse's `updatedToolOutput` (or `updatedMCPToolOutput`): the text the model gets
    /// instead of the tool's. A string is that text; Claude's object for a tool gives its
    /// `text`, else Bash's `stdout` (and `stderr`), else MCP's `content` text blocks; anything
    /// else is the JSON itself.
    fn updated_output(&mut self, specific: &Map<String, Value>) {
        let Some(output) = specific
            .get("updatedToolOutput")
            .or_else(|| specific.get("updatedMCPToolOutput"))
            .filter(|v| !v.is_null())
        else {
            return;
        };
        let text = match output {
            Value::String(text) => text.clone(),
            Value::Object(fields) => {
                let field = |key: &str| fields.get(key).and_then(Value::as_str);
                if let Some(text) = field("text") {
                    text.to_string()
                } else if let Some(stdout) = field("stdout") {
                    match field("stderr").filter(|e| !e.is_empty()) {
                        Some(stderr) => format!("{stdout}\n{stderr}"),
                        None => stdout.to_string(),
                    }
                } else if let Some(Value::Array(blocks)) = fields.get("content") {
                    blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n")
                } else {
                    output.to_string()
                }
            }
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        };
        self.notice(
            NoticeKind::Rewrite,
            "replaced the tool output the model reads".into(),
        );
        self.effect.updated_output = Some(cap(&text));
    }

    /// Records a decision; a stronger one already made by the same handler stands.
    fn decide(&mut self, decision: Decision, reason: Option<&str>) {
        if self.effect.decision.is_some_and(|d| d > decision) {
            return;
        }
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        let reason = match (decision, reason) {
            (_, Some(reason)) => Some(cap(reason)),
            (Decision::Block, None) => Some(format!("blocked by hook {}", self.handler)),
            _ => None,
        };
        let (kind, verb) = match decision {
            Decision::Block => (NoticeKind::Block, "blocked"),
            Decision::Ask => (NoticeKind::Ask, "asks for permission"),
            Decision::Allow => (NoticeKind::Allow, "allowed"),
        };
        let message = match &reason {
            Some(reason) => format!("{verb}: {reason}"),
            None => verb.to_string(),
        };
        self.notice(kind, message);
        self.effect.decision = Some(decision);
        self.effect.reason = reason;
    }

    fn notice(&mut self, kind: NoticeKind, message: String) {
        self.effect.notices.push(HookNotice {
            event: self.event,
            handler: self.handler.to_string(),
            kind,
            message,
        });
    }
}

fn with_detail(what: String, detail: &str) -> String {
    let detail = detail.trim();
    if detail.is_empty() {
        what
    } else {
        format!("{what}: {}", excerpt(detail))
    }
}

/// The start of a long text, for a one-line notice.
fn excerpt(text: &str) -> String {
    const LIMIT: usize = 300;
    match text.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn cap(text: &str) -> String {
    match text.char_indices().nth(TEXT_LIMIT) {
        Some((at, _)) => format!(
            "{}\n[cut: hook output over {TEXT_LIMIT} characters]",
            &text[..at]
        ),
        None => text.to_string(),
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "output_properties.rs"]
mod properties;
