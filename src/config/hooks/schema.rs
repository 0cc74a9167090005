//! The shape of `hooks.json` for its JSON Schema (`docs/schemas/hooks.schema.json`). The file
//! itself is read by the hand-written parser in `mod.rs`, which points at the key of each
//! mistake; these types only describe what that parser accepts (the events come from
//! [`HookEventName::ALL`]), and `tests/schemas.rs` checks sample files against both.
// Described, never built: nothing constructs these types.
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

use super::resolved::HookEventName;

/// `hooks.json`: `{"hooks": {"EVENT": [{"matcher": ..., "hooks": [handler, ...]}]}}`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HooksFile {
    /// Where this file's JSON Schema is, for editors; Ling does not read it.
    #[serde(rename = "$schema")]
    schema: Option<String>,
    hooks: Option<Events>,
}

/// The hook groups of each event, run in this order (user file first, then the project's).
struct Events;

impl JsonSchema for Events {
    fn schema_name() -> Cow<'static, str> {
        "Events".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let groups = generator.subschema_for::<Vec<HookGroup>>().to_value();
        let mut properties = Map::new();
        for event in HookEventName::ALL {
            let mut schema = groups.clone();
            if let Value::Object(fields) = &mut schema {
                fields.insert("description".into(), event_description(event).into());
            }
            properties.insert(event.as_str().into(), schema);
        }
        json_schema!({
            "description": "The hooks of each event, by event name.",
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

fn event_description(event: HookEventName) -> &'static str {
    match event {
        HookEventName::SessionStart => {
            "When a session starts; the matcher tests `source` (startup, resume, clear). Plain \
             stdout or additionalContext becomes context in the system prompt."
        }
        HookEventName::UserPromptSubmit => {
            "Before a prompt goes to the model (`prompt`). Can block it; plain stdout or \
             additionalContext is added to the prompt."
        }
        HookEventName::PreToolUse => {
            "Before any tool runs (builtin or MCP); the matcher tests the tool name. Can block \
             the call, allow it, ask for it, or rewrite its input (updatedInput)."
        }
        HookEventName::PostToolUse => {
            "After a tool succeeded (`tool_response`); the matcher tests the tool name. A block \
             reason or additionalContext is added to the result the model reads."
        }
        HookEventName::PostToolUseFailure => {
            "After a tool failed (`error`); the matcher tests the tool name."
        }
        HookEventName::SubagentStart => {
            "When a sub-agent (a `task` call) starts; the matcher tests its type (`agent_type`). \
             additionalContext goes into the sub-agent's system prompt."
        }
        HookEventName::SubagentStop => {
            "When a sub-agent ends its turn; the matcher tests its type (`agent_type`). Blocks \
             as Stop does: the reason goes to the sub-agent as a new message, and it goes on."
        }
        HookEventName::Stop => {
            "When the model ends its turn. A block sends the reason to the model as a new user \
             message and the agent goes on; `stop_hook_active` is true from the second time. \
             The loop ends when the hooks allow (or after settings maxStopHookBlocks blocks)."
        }
        HookEventName::Notification => {
            "When Ling waits for you (`notification_type`: permission_prompt, idle_prompt, \
             elicitation_dialog); the matcher tests `notification_type`. Runs in the background \
             and cannot block."
        }
        HookEventName::PreCompact => {
            "Before context compaction; the matcher tests `trigger` (manual, auto). Can block \
             the compaction."
        }
        HookEventName::SessionEnd => {
            "When a session ends (`reason`: prompt_input_exit, clear, other)."
        }
        HookEventName::WorktreeCreate => {
            "When a worktree is wanted (`-w`, an agent with `isolation: worktree`; `name`). A \
             handler that prints an absolute path on stdout made the worktree there instead of \
             git; exit 2 (or a failure) refuses it."
        }
        HookEventName::WorktreeRemove => {
            "When a worktree is removed (`worktree_path`), for cleaning up after it. Cannot \
             block."
        }
    }
}

/// One entry of an event: which values it matches and the handlers to run.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct HookGroup {
    /// Omitted, `""` or `"*"` match everything; names of `[A-Za-z0-9_-]` joined by `|` match
    /// exactly; anything else is a regular expression that must match the whole value. Tested
    /// on tool events (the tool name), SessionStart (`source`) and PreCompact (`trigger`).
    matcher: Option<String>,
    /// The handlers, run concurrently. An identical handler listed twice runs once.
    hooks: Vec<Handler>,
}

/// A handler: a command (`"type": "command"`) or an HTTP POST (`"type": "http"`).
#[derive(JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
#[schemars(deny_unknown_fields)]
enum Handler {
    /// Runs `command` with `sh -c` in the project root, the event JSON on stdin.
    Command {
        /// The shell command.
        #[schemars(regex(pattern = r"\S"))]
        command: String,
        #[serde(flatten)]
        common: Common,
    },
    /// POSTs the event JSON to `url`; a 2xx JSON answer is read like a command's stdout.
    Http {
        /// An `http://` or `https://` URL. Redirects are followed only to the same origin.
        #[schemars(regex(pattern = r"^https?://\S"))]
        url: String,
        /// Request headers; values expand `${VAR}` and `${VAR:-default}`.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(flatten)]
        common: Common,
    },
}

/// The fields every handler type has.
#[derive(JsonSchema)]
struct Common {
    /// Seconds before the handler's whole process group is killed (or its request dropped).
    /// Default 60.
    #[schemars(extend("exclusiveMinimum" = 0))]
    timeout: Option<f64>,
    /// Fire and forget: the handler gets the same input but cannot decide anything and never
    /// delays the agent. Default false.
    #[serde(rename = "async", default)]
    is_async: bool,
    /// Turn this handler's own errors and timeouts into a block. Default false.
    #[serde(rename = "failClosed", default)]
    fail_closed: bool,
    /// Tool events only: a permission rule the call must match for this handler to run, e.g.
    /// `Bash(git commit*)` or `Edit(src/**)` (matched as an ask rule is: a bash command matches
    /// when any command in it does).
    #[serde(rename = "if")]
    #[schemars(regex(pattern = r"\S"))]
    condition: Option<String>,
}
