//! What a hook is told: the event with its own fields ([`HookInput`]), the session it happens in
//! ([`HookContext`]), and the JSON built from both. Field names are exactly Claude Code's so that
//! existing hook scripts read them unchanged.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::claude;
use crate::config::hooks::{HookDialect, HookEventName};

/// The session a hook runs in. `cwd` is the project root; hooks run there.
#[derive(Debug, Clone)]
pub struct HookContext {
    pub session_id: String,
    /// Ling's transcript; hooks from a Claude Code file get one in Claude's shape beside it
    /// ([`super::transcript`]).
    pub transcript_path: PathBuf,
    pub cwd: PathBuf,
    /// [`crate::config::PermissionMode::hook_name`] of the session's mode.
    pub permission_mode: String,
    /// Inside a subagent: which one (every event's input then says `agent_id` and `agent_type`).
    pub agent: Option<SubagentInfo>,
}

/// A subagent, as its hooks are told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentInfo {
    pub agent_id: String,
    pub agent_type: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HookInput {
    SessionStart {
        /// `startup`, `resume` or `clear`.
        source: String,
    },
    UserPromptSubmit {
        prompt: String,
    },
    PreToolUse {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
    },
    PostToolUse {
        tool_name: String,
        /// The input the tool really ran with (after any hook rewrote it).
        tool_input: Value,
        tool_response: Value,
        tool_use_id: String,
    },
    PostToolUseFailure {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
        error: String,
    },
    Stop {
        stop_hook_active: bool,
        last_assistant_message: String,
    },
    /// A sub-agent starts (Claude Code's contract).
    SubagentStart {
        agent_id: String,
        agent_type: String,
    },
    /// A sub-agent would end its turn: as Stop, for the child; a block sends it back with the
    /// reason.
    SubagentStop {
        stop_hook_active: bool,
        agent_id: String,
        agent_type: String,
        agent_transcript_path: PathBuf,
        last_assistant_message: String,
    },
    /// Ling waits for the user.
    Notification {
        message: String,
        title: Option<String>,
        /// `permission_prompt`, `idle_prompt` or `elicitation_dialog`.
        notification_type: String,
    },
    PreCompact {
        /// `manual` or `auto`.
        trigger: String,
        custom_instructions: String,
    },
    SessionEnd {
        reason: String,
    },
    /// A worktree is wanted: a handler may make it and print its path (Claude Code's contract).
    WorktreeCreate {
        name: String,
    },
    /// A worktree is removed.
    WorktreeRemove {
        worktree_path: PathBuf,
    },
}

impl HookInput {
    pub fn event(&self) -> HookEventName {
        match self {
            Self::SessionStart { .. } => HookEventName::SessionStart,
            Self::UserPromptSubmit { .. } => HookEventName::UserPromptSubmit,
            Self::PreToolUse { .. } => HookEventName::PreToolUse,
            Self::PostToolUse { .. } => HookEventName::PostToolUse,
            Self::PostToolUseFailure { .. } => HookEventName::PostToolUseFailure,
            Self::Stop { .. } => HookEventName::Stop,
            Self::SubagentStart { .. } => HookEventName::SubagentStart,
            Self::SubagentStop { .. } => HookEventName::SubagentStop,
            Self::Notification { .. } => HookEventName::Notification,
            Self::PreCompact { .. } => HookEventName::PreCompact,
            Self::SessionEnd { .. } => HookEventName::SessionEnd,
            Self::WorktreeCreate { .. } => HookEventName::WorktreeCreate,
            Self::WorktreeRemove { .. } => HookEventName::WorktreeRemove,
        }
    }

    /// What matchers are tested against: the tool name, the session source, the trigger, the
    /// subagent's type or the notification's type.
    pub fn match_value(&self) -> Option<&str> {
        match self {
            Self::PreToolUse { tool_name, .. }
            | Self::PostToolUse { tool_name, .. }
            | Self::PostToolUseFailure { tool_name, .. } => Some(tool_name),
            Self::SessionStart { source } => Some(source),
            Self::PreCompact { trigger, .. } => Some(trigger),
            Self::SubagentStart { agent_type, .. } | Self::SubagentStop { agent_type, .. } => {
                Some(agent_type)
            }
            Self::Notification {
                notification_type, ..
            } => Some(notification_type),
            _ => None,
        }
    }

    /// The tool input a PreToolUse hook may rewrite.
    pub fn tool_input(&self) -> Option<&Value> {
        match self {
            Self::PreToolUse { tool_input, .. } => Some(tool_input),
            _ => None,
        }
    }

    /// The tool call of a tool event, which a handler's `if` rule is tested on.
    pub fn tool_call(&self) -> Option<(&str, &Value)> {
        match self {
            Self::PreToolUse {
                tool_name,
                tool_input,
                ..
            }
            | Self::PostToolUse {
                tool_name,
                tool_input,
                ..
            }
            | Self::PostToolUseFailure {
                tool_name,
                tool_input,
                ..
            } => Some((tool_name, tool_input)),
            _ => None,
        }
    }

    /// The JSON a handler receives on stdin (or as the POST body). A builtin tool's input
    /// carries Claude Code's field names beside Ling's, and a PostToolUse `tool_response` is
    /// Claude's object for the tool with the text beside it ([`claude`]); `dialect` says whose
    /// spelling `tool_name` has. For a Claude Code file's hooks (`dialect` Claude) `file_path`
    /// is absolute, as Claude Code passes it, and `transcript_path` is the transcript in
    /// Claude's shape ([`super::transcript::claude_path`]).
    pub fn to_json(&self, ctx: &HookContext, dialect: HookDialect) -> Value {
        let transcript = match dialect {
            HookDialect::Claude => super::transcript::claude_path(&ctx.transcript_path),
            HookDialect::Ling => ctx.transcript_path.clone(),
        };
        let mut map = Map::new();
        map.insert("session_id".into(), json!(ctx.session_id));
        map.insert(
            "transcript_path".into(),
            json!(transcript.to_string_lossy()),
        );
        map.insert("cwd".into(), json!(ctx.cwd.to_string_lossy()));
        map.insert("permission_mode".into(), json!(ctx.permission_mode));
        map.insert("hook_event_name".into(), json!(self.event().as_str()));
        if let Some(agent) = &ctx.agent {
            map.insert("agent_id".into(), json!(agent.agent_id));
            map.insert("agent_type".into(), json!(agent.agent_type));
        }
        if let Value::Object(fields) = self.event_fields(ctx, dialect) {
            map.extend(fields);
        }
        Value::Object(map)
    }

    /// The fields of this event, after the common ones.
    fn event_fields(&self, ctx: &HookContext, dialect: HookDialect) -> Value {
        let name = |tool: &str| -> String {
            match (dialect, claude::claude_tool_name(tool)) {
                (HookDialect::Claude, Some(claude)) => claude.to_string(),
                _ => tool.to_string(),
            }
        };
        let input = |tool: &str, input: &Value| sent_input(tool, input, ctx, dialect);
        match self {
            Self::SessionStart { source } => json!({ "source": source }),
            Self::UserPromptSubmit { prompt } => json!({ "prompt": prompt }),
            Self::PreToolUse {
                tool_name,
                tool_input,
                tool_use_id,
            } => json!({
                "tool_name": name(tool_name),
                "tool_input": input(tool_name, tool_input),
                "tool_use_id": tool_use_id,
            }),
            Self::PostToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
            } => json!({
                "tool_name": name(tool_name),
                "tool_input": input(tool_name, tool_input),
                "tool_response": match tool_response {
                    Value::String(text) => claude::tool_response(tool_name, tool_input, text, &ctx.cwd),
                    other => other.clone(),
                },
                "tool_use_id": tool_use_id,
            }),
            Self::PostToolUseFailure {
                tool_name,
                tool_input,
                tool_use_id,
                error,
            } => json!({
                "tool_name": name(tool_name),
                "tool_input": input(tool_name, tool_input),
                "tool_use_id": tool_use_id,
                "error": error,
            }),
            Self::Stop {
                stop_hook_active,
                last_assistant_message,
            } => json!({
                "stop_hook_active": stop_hook_active,
                "last_assistant_message": last_assistant_message,
            }),
            Self::SubagentStart {
                agent_id,
                agent_type,
            } => json!({ "agent_id": agent_id, "agent_type": agent_type }),
            Self::SubagentStop {
                stop_hook_active,
                agent_id,
                agent_type,
                agent_transcript_path,
                last_assistant_message,
            } => json!({
                "stop_hook_active": stop_hook_active,
                "agent_id": agent_id,
                "agent_type": agent_type,
                "agent_transcript_path": match dialect {
                    HookDialect::Claude => super::transcript::claude_path(agent_transcript_path),
                    HookDialect::Ling => agent_transcript_path.clone(),
                }.to_string_lossy(),
                "last_assistant_message": last_assistant_message,
            }),
            Self::Notification {
                message,
                title,
                notification_type,
            } => {
                let mut fields =
                    json!({ "message": message, "notification_type": notification_type });
                if let Some(title) = title {
                    fields["title"] = json!(title);
                }
                fields
            }
            Self::PreCompact {
                trigger,
                custom_instructions,
            } => json!({ "trigger": trigger, "custom_instructions": custom_instructions }),
            Self::SessionEnd { reason } => json!({ "reason": reason }),
            Self::WorktreeCreate { name } => json!({ "name": name }),
            Self::WorktreeRemove { worktree_path } => {
                json!({ "worktree_path": worktree_path.to_string_lossy() })
            }
        }
    }
}

/// The `tool_input` a handler gets: Ling's fields with Claude's beside; for a Claude Code file's
/// handler, `file_path` absolute (Ling's `path` stays as the model gave it).
pub fn sent_input(tool: &str, input: &Value, ctx: &HookContext, dialect: HookDialect) -> Value {
    let mut sent = claude::with_claude_fields(tool, input);
    if dialect == HookDialect::Claude
        && let Some(Value::String(path)) = sent.get("file_path")
    {
        let absolute = ctx.cwd.join(path).to_string_lossy().into_owned();
        sent["file_path"] = json!(absolute);
    }
    sent
}

/// Why `ling hooks run` cannot make up the event it was asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MadeUpError {
    #[error("unknown hook event `{event}`; valid events are {valid}")]
    UnknownEvent { event: String, valid: String },
    #[error("--input must be a JSON object, not {0}")]
    NotAnObject(Value),
    #[error("{0} needs a tool name: pass --tool NAME")]
    NoToolName(HookEventName),
    #[error("`{key}` must be a string, not {value}")]
    NotAString { key: String, value: Value },
}

/// A made-up event for `ling hooks run EVENT [--tool NAME] [--input JSON]`.
///
/// `input` is an object of the event's own fields (`{"prompt": "..."}`, `{"source": "resume"}`),
/// missing ones defaulted. For the tool events it may instead be the tool input itself
/// (`--tool bash --input '{"command":"rm -rf /"}'`): an object without a `tool_input` key is
/// taken as the tool input. Tool events need a tool name, from `--tool` or `tool_name`.
pub fn made_up_input(
    event: &str,
    tool: Option<&str>,
    input: Option<Value>,
) -> Result<HookInput, MadeUpError> {
    let event = HookEventName::parse(event).ok_or_else(|| MadeUpError::UnknownEvent {
        event: event.to_string(),
        valid: HookEventName::ALL.map(HookEventName::as_str).join(", "),
    })?;
    let (mut fields, tool_name) = made_up_fields(event, tool, input)?;
    let tool_use_id = text(&mut fields, "tool_use_id", "call_ling_hooks_run")?;
    made_up_event(event, &mut fields, tool_name, tool_use_id)
}

/// The fields of `--input` (the tool input wrapped as `tool_input` for a tool event) and the
/// tool's name in Ling's spelling.
fn made_up_fields(
    event: HookEventName,
    tool: Option<&str>,
    input: Option<Value>,
) -> Result<(Map<String, Value>, String), MadeUpError> {
    let mut fields = match input {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => return Err(MadeUpError::NotAnObject(other)),
    };
    let tool_event = matches!(
        event,
        HookEventName::PreToolUse | HookEventName::PostToolUse | HookEventName::PostToolUseFailure
    );
    if tool_event && !fields.contains_key("tool_input") && !fields.is_empty() {
        let tool_input = Value::Object(std::mem::take(&mut fields));
        fields.insert("tool_input".into(), tool_input);
    }
    let tool_name = match tool {
        Some(name) => claude::ling_tool_name(name).unwrap_or(name).to_string(),
        None if tool_event => {
            let name = text(&mut fields, "tool_name", "")?;
            if name.is_empty() {
                return Err(MadeUpError::NoToolName(event));
            }
            name
        }
        None => String::new(),
    };
    Ok((fields, tool_name))
}

/// The event's input from its fields, each missing one defaulted.
fn made_up_event(
    event: HookEventName,
    fields: &mut Map<String, Value>,
    tool_name: String,
    tool_use_id: String,
) -> Result<HookInput, MadeUpError> {
    let made = match event {
        HookEventName::SessionStart => HookInput::SessionStart {
            source: text(fields, "source", "startup")?,
        },
        HookEventName::UserPromptSubmit => HookInput::UserPromptSubmit {
            prompt: text(fields, "prompt", "")?,
        },
        HookEventName::PreToolUse => HookInput::PreToolUse {
            tool_name,
            tool_input: take_value(fields, "tool_input"),
            tool_use_id,
        },
        HookEventName::PostToolUse => HookInput::PostToolUse {
            tool_name,
            tool_input: take_value(fields, "tool_input"),
            tool_response: fields.remove("tool_response").unwrap_or(json!("")),
            tool_use_id,
        },
        HookEventName::PostToolUseFailure => HookInput::PostToolUseFailure {
            tool_input: take_value(fields, "tool_input"),
            error: text(fields, "error", "the tool failed")?,
            tool_name,
            tool_use_id,
        },
        HookEventName::Stop => HookInput::Stop {
            stop_hook_active: fields
                .remove("stop_hook_active")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            last_assistant_message: text(fields, "last_assistant_message", "")?,
        },
        HookEventName::SubagentStart => HookInput::SubagentStart {
            agent_id: text(fields, "agent_id", "agent_ling_hooks_run")?,
            agent_type: text(fields, "agent_type", "general-purpose")?,
        },
        HookEventName::SubagentStop => HookInput::SubagentStop {
            stop_hook_active: fields
                .remove("stop_hook_active")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            agent_id: text(fields, "agent_id", "agent_ling_hooks_run")?,
            agent_type: text(fields, "agent_type", "general-purpose")?,
            agent_transcript_path: PathBuf::from(text(fields, "agent_transcript_path", "")?),
            last_assistant_message: text(fields, "last_assistant_message", "")?,
        },
        HookEventName::Notification => HookInput::Notification {
            message: text(fields, "message", "Ling needs your attention")?,
            title: fields
                .remove("title")
                .and_then(|v| v.as_str().map(str::to_string)),
            notification_type: text(fields, "notification_type", "idle_prompt")?,
        },
        HookEventName::PreCompact => HookInput::PreCompact {
            trigger: text(fields, "trigger", "manual")?,
            custom_instructions: text(fields, "custom_instructions", "")?,
        },
        HookEventName::SessionEnd => HookInput::SessionEnd {
            reason: text(fields, "reason", "other")?,
        },
        HookEventName::WorktreeCreate => HookInput::WorktreeCreate {
            name: text(fields, "name", "ling-hooks-run")?,
        },
        HookEventName::WorktreeRemove => HookInput::WorktreeRemove {
            worktree_path: PathBuf::from(text(fields, "worktree_path", "")?),
        },
    };
    Ok(made)
}

fn text(fields: &mut Map<String, Value>, key: &str, default: &str) -> Result<String, MadeUpError> {
    match fields.remove(key) {
        None => Ok(default.to_string()),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(MadeUpError::NotAString {
            key: key.to_string(),
            value: other,
        }),
    }
}

fn take_value(fields: &mut Map<String, Value>, key: &str) -> Value {
    fields.remove(key).unwrap_or_else(|| json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ctx() -> HookContext {
        HookContext {
            session_id: "s1".into(),
            transcript_path: PathBuf::from("/tmp/t.jsonl"),
            cwd: PathBuf::from("/proj"),
            permission_mode: "default".into(),
            agent: None,
        }
    }

    #[test]
    fn input_json_has_the_common_and_the_event_fields() {
        let input = HookInput::PreToolUse {
            tool_name: "bash".into(),
            tool_input: json!({"command": "ls"}),
            tool_use_id: "call_1".into(),
        };
        assert_eq!(
            input.to_json(&ctx(), HookDialect::Ling),
            json!({
                "session_id": "s1",
                "transcript_path": "/tmp/t.jsonl",
                "cwd": "/proj",
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "bash",
                "tool_input": {"command": "ls"},
                "tool_use_id": "call_1",
            })
        );
        let claude = input.to_json(&ctx(), HookDialect::Claude);
        assert_eq!(claude["tool_name"], json!("Bash"));
        let stop = HookInput::Stop {
            stop_hook_active: true,
            last_assistant_message: "done".into(),
        };
        let json = stop.to_json(&ctx(), HookDialect::Claude);
        assert_eq!(json["stop_hook_active"], json!(true));
        assert_eq!(json["last_assistant_message"], json!("done"));
        assert_eq!(json["hook_event_name"], json!("Stop"));
    }

    #[test]
    fn made_up_tool_input_may_be_given_bare_or_as_fields() {
        let bare = made_up_input("PreToolUse", Some("bash"), Some(json!({"command": "ls"})));
        let fields = made_up_input(
            "PreToolUse",
            None,
            Some(json!({"tool_name": "bash", "tool_input": {"command": "ls"}})),
        );
        let expected = HookInput::PreToolUse {
            tool_name: "bash".into(),
            tool_input: json!({"command": "ls"}),
            tool_use_id: "call_ling_hooks_run".into(),
        };
        assert_eq!(bare, Ok(expected.clone()));
        assert_eq!(fields, Ok(expected));
    }

    #[test]
    fn made_up_input_explains_what_is_wrong() {
        let err = made_up_input("PreTool", None, None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("valid events are SessionStart"), "{err}");
        let err = made_up_input("PreToolUse", None, None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("--tool"), "{err}");
        let err = made_up_input("UserPromptSubmit", None, Some(json!([1])))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("JSON object"), "{err}");
        assert_eq!(
            made_up_input("Stop", None, Some(json!({"last_assistant_message": 1}))),
            Err(MadeUpError::NotAString {
                key: "last_assistant_message".into(),
                value: json!(1)
            })
        );
        assert_eq!(
            made_up_input("UserPromptSubmit", None, Some(json!({"prompt": "hi"}))),
            Ok(HookInput::UserPromptSubmit {
                prompt: "hi".into()
            })
        );
    }
}
