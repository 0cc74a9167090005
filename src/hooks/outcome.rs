//! What running an event's hooks decided ([`HookOutcome`]), and how the effects of several
//! handlers combine: block beats ask beats allow, `updatedInput`s are shallow-merged over the tool
//! input in configuration order, and context, messages and notices are kept in that order.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::hooks::HookEventName;

/// A hook's decision. `Block` is PreToolUse's `deny` and every other event's block (exit 2,
/// `decision:"block"`, a failClosed error); `Ask` and `Allow` exist only for PreToolUse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Block,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Block => "block",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The handler failed (bad exit, crash, unreadable output, HTTP error); the action proceeds.
    Error,
    Timeout,
    Block,
    Ask,
    Allow,
    /// The handler rewrote the tool input.
    Rewrite,
    /// `continue: false`.
    Stop,
    /// Output the event cannot use (a block on a non-blocking event, a decision from an async hook).
    Ignored,
}

/// One thing a handler did that the user should see.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookNotice {
    pub event: HookEventName,
    /// Which handler: `command \`...\`` or `http ...`.
    pub handler: String,
    pub kind: NoticeKind,
    pub message: String,
}

impl std::fmt::Display for HookNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} hook {}: {}", self.event, self.handler, self.message)
    }
}

/// The combined result of one event's hooks. The default is "nothing to do".
///
/// What `Block` means depends on the event: PreToolUse, the tool does not run and `reason` is the
/// tool result; UserPromptSubmit, the prompt is dropped and `reason` shown to the user;
/// PostToolUse, `reason` goes to the model with the tool result; Stop, the agent continues with
/// `reason` as a new user message; PreCompact, compaction does not happen. The other events
/// never block (their attempts are `Ignored` notices).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HookOutcome {
    pub decision: Option<Decision>,
    /// Why: the reasons of the handlers that made the winning decision, one per line.
    pub reason: Option<String>,
    /// PreToolUse: the tool input after every handler's update, when any handler updated it.
    pub updated_input: Option<Value>,
    /// PostToolUse: what the model gets instead of the tool's output (`updatedToolOutput`);
    /// the last handler's in configuration order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<String>,
    /// Context for the model, in configuration order.
    pub additional_context: Vec<String>,
    /// Messages for the user, in configuration order.
    pub system_messages: Vec<String>,
    /// `continue: false`: the agent stops, showing this.
    pub stop: Option<String>,
    pub notices: Vec<HookNotice>,
}

impl HookOutcome {
    pub fn is_blocked(&self) -> bool {
        self.decision == Some(Decision::Block)
    }
}

/// What one handler asked for, before combining.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Effect {
    pub decision: Option<Decision>,
    pub reason: Option<String>,
    pub updated_input: Option<Map<String, Value>>,
    pub updated_output: Option<String>,
    pub context: Option<String>,
    pub system_message: Option<String>,
    pub stop: Option<String>,
    pub notices: Vec<HookNotice>,
}

/// Combines handlers' effects given in configuration order. `tool_input` is the input the
/// updates are merged over (PreToolUse only).
pub(crate) fn combine(tool_input: Option<&Value>, effects: Vec<Effect>) -> HookOutcome {
    let mut outcome = HookOutcome {
        decision: effects.iter().filter_map(|e| e.decision).max(),
        ..HookOutcome::default()
    };
    let reasons: Vec<&str> = effects
        .iter()
        .filter(|e| e.decision.is_some() && e.decision == outcome.decision)
        .filter_map(|e| e.reason.as_deref())
        .collect();
    if !reasons.is_empty() {
        outcome.reason = Some(reasons.join("\n"));
    }
    let mut input = tool_input.cloned();
    for effect in effects {
        if let Some(update) = effect.updated_input {
            let merged = match input.take() {
                Some(Value::Object(mut current)) => {
                    current.extend(update);
                    current
                }
                _ => update,
            };
            input = Some(Value::Object(merged));
            outcome.updated_input = input.clone();
        }
        if effect.updated_output.is_some() {
            outcome.updated_output = effect.updated_output;
        }
        outcome.additional_context.extend(effect.context);
        outcome.system_messages.extend(effect.system_message);
        if outcome.stop.is_none() {
            outcome.stop = effect.stop;
        }
        outcome.notices.extend(effect.notices);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn decided(decision: Decision, reason: &str) -> Effect {
        Effect {
            decision: Some(decision),
            reason: Some(reason.into()),
            ..Effect::default()
        }
    }

    fn update(value: Value) -> Effect {
        Effect {
            updated_input: value.as_object().cloned(),
            ..Effect::default()
        }
    }

    #[test]
    fn block_beats_ask_beats_allow_whatever_the_order() {
        let effects = vec![
            decided(Decision::Allow, "fine"),
            decided(Decision::Block, "no"),
            decided(Decision::Ask, "hm"),
        ];
        let outcome = combine(None, effects);
        assert_eq!(outcome.decision, Some(Decision::Block));
        assert_eq!(outcome.reason.as_deref(), Some("no"));

        let outcome = combine(
            None,
            vec![decided(Decision::Ask, "a"), decided(Decision::Allow, "b")],
        );
        assert_eq!(outcome.decision, Some(Decision::Ask));
        assert_eq!(outcome.reason.as_deref(), Some("a"));

        let outcome = combine(
            None,
            vec![Effect::default(), decided(Decision::Allow, "ok")],
        );
        assert_eq!(outcome.decision, Some(Decision::Allow));
    }

    #[test]
    fn the_reasons_of_every_blocking_handler_are_kept_in_order() {
        let outcome = combine(
            None,
            vec![
                decided(Decision::Block, "first"),
                decided(Decision::Allow, "ignored"),
                decided(Decision::Block, "second"),
            ],
        );
        assert_eq!(outcome.reason.as_deref(), Some("first\nsecond"));
    }

    #[test]
    fn updates_merge_shallowly_in_configuration_order() {
        let input = json!({"command": "ls", "timeout": 5, "cwd": "a"});
        let outcome = combine(
            Some(&input),
            vec![
                update(json!({"command": "ls -la", "cwd": "b"})),
                Effect::default(),
                update(json!({"cwd": "c"})),
            ],
        );
        assert_eq!(
            outcome.updated_input,
            Some(json!({"command": "ls -la", "timeout": 5, "cwd": "c"}))
        );
        let untouched = combine(Some(&input), vec![Effect::default()]);
        assert_eq!(untouched.updated_input, None);
    }

    #[test]
    fn context_messages_and_the_first_stop_keep_configuration_order() {
        let effects = vec![
            Effect {
                context: Some("one".into()),
                system_message: Some("m1".into()),
                ..Effect::default()
            },
            Effect {
                stop: Some("halt A".into()),
                ..Effect::default()
            },
            Effect {
                context: Some("two".into()),
                stop: Some("halt B".into()),
                ..Effect::default()
            },
        ];
        let outcome = combine(None, effects);
        assert_eq!(outcome.additional_context, vec!["one", "two"]);
        assert_eq!(outcome.system_messages, vec!["m1"]);
        assert_eq!(outcome.stop.as_deref(), Some("halt A"));
        assert_eq!(outcome.decision, None);
        assert_eq!(outcome.reason, None);
    }
}
