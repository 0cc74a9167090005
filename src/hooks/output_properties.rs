//! Properties of output parsing: no exit status or text panics it or decides what the event
//! does not allow, and every shape of JSON output the contract defines is read as written,
//! from stdout or from an HTTP body alike.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

fn event() -> impl Strategy<Value = HookEventName> {
    proptest::sample::select(HookEventName::ALL.to_vec())
}

/// Text a handler may print: anything, something that starts like JSON, a known shape, or
/// text around the length where it is cut.
fn printed() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        r"\s*\{.{0,40}",
        (event(), shape()).prop_map(|(event, shape)| shape.to_json(event).to_string()),
        (TEXT_LIMIT - 2..TEXT_LIMIT + 2).prop_map(|n| "é".repeat(n)),
    ]
}

fn run_result() -> impl Strategy<Value = RunResult> {
    prop_oneof![
        (
            proptest::option::of(prop_oneof![Just(0), Just(2), any::<i32>()]),
            proptest::option::of(1..64i32),
            printed(),
            printed(),
        )
            .prop_map(|(code, signal, stdout, stderr)| RunResult::Exited {
                code,
                signal,
                stdout,
                stderr,
            }),
        (prop_oneof![200..300u16, any::<u16>()], printed())
            .prop_map(|(status, body)| RunResult::Http { status, body }),
        (0..100_000u64).prop_map(|ms| RunResult::TimedOut(Duration::from_millis(ms))),
        ".{0,40}".prop_map(RunResult::Failed),
    ]
}

/// Whether `result` is a failure of the handler rather than something it said.
fn failed(result: &RunResult) -> bool {
    match result {
        RunResult::Exited { code, .. } => !matches!(code, Some(0 | 2)),
        RunResult::Http { status, .. } => !(200..300).contains(status),
        RunResult::TimedOut(_) | RunResult::Failed(_) => true,
    }
}

/// The JSON output of the contract, field by field.
#[derive(Debug, Clone)]
struct Shape {
    proceed: Option<bool>,
    stop_reason: Option<String>,
    system_message: Option<String>,
    decision: Option<&'static str>,
    reason: Option<String>,
    specific: Option<Specific>,
    pretty: bool,
}

#[derive(Debug, Clone)]
struct Specific {
    /// The event it names: none, the event it is printed for, or another one.
    for_event: Option<Option<HookEventName>>,
    context: Option<String>,
    permission: Option<&'static str>,
    permission_reason: Option<String>,
    updated_input: Option<Map<String, Value>>,
}

fn specific() -> impl Strategy<Value = Specific> {
    let input = proptest::collection::btree_map("[a-z_]{1,8}", ".{0,8}", 0..3)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, Value::from(v))).collect());
    (
        proptest::option::of(proptest::option::of(event())),
        proptest::option::of(".{0,20}"),
        proptest::option::of(proptest::sample::select(vec!["allow", "ask", "deny"])),
        proptest::option::of(".{0,20}"),
        proptest::option::of(input),
    )
        .prop_map(
            |(for_event, context, permission, permission_reason, updated_input)| Specific {
                for_event,
                context,
                permission,
                permission_reason,
                updated_input,
            },
        )
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        proptest::option::of(any::<bool>()),
        proptest::option::of(".{0,20}"),
        proptest::option::of(".{0,20}"),
        proptest::option::of(proptest::sample::select(vec!["block", "approve"])),
        proptest::option::of(".{0,20}"),
        proptest::option::of(specific()),
        any::<bool>(),
    )
        .prop_map(
            |(proceed, stop_reason, system_message, decision, reason, specific, pretty)| Shape {
                proceed,
                stop_reason,
                system_message,
                decision,
                reason,
                specific,
                pretty,
            },
        )
}

impl Shape {
    fn to_json(&self, event: HookEventName) -> Value {
        let mut out = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                out.insert(key.into(), value);
            }
        };
        put("continue", self.proceed.map(Value::from));
        put("stopReason", self.stop_reason.clone().map(Value::from));
        put(
            "systemMessage",
            self.system_message.clone().map(Value::from),
        );
        put("decision", self.decision.map(Value::from));
        put("reason", self.reason.clone().map(Value::from));
        if let Some(s) = &self.specific {
            let mut specific = json!({});
            let name = s.for_event.map(|named| named.unwrap_or(event).as_str());
            for (key, value) in [
                ("hookEventName", name.map(Value::from)),
                ("additionalContext", s.context.clone().map(Value::from)),
                ("permissionDecision", s.permission.map(Value::from)),
                (
                    "permissionDecisionReason",
                    s.permission_reason.clone().map(Value::from),
                ),
                ("updatedInput", s.updated_input.clone().map(Value::Object)),
            ] {
                if let Some(value) = value {
                    specific[key] = value;
                }
            }
            put("hookSpecificOutput", Some(specific));
        }
        Value::Object(out)
    }

    fn printed(&self, event: HookEventName) -> String {
        let json = self.to_json(event);
        match self.pretty {
            true => format!(
                "\n  {}\n",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            ),
            false => json.to_string(),
        }
    }

    /// What the contract says this output does on `event`.
    fn expected(&self, event: HookEventName) -> Effect {
        let specific = self.specific.as_ref().filter(|s| {
            s.for_event
                .is_none_or(|named| named.is_none_or(|e| e == event))
        });
        let pre_tool = event == HookEventName::PreToolUse;
        let mut decisions = Vec::new();
        match self.decision {
            Some("block") if event.can_block() => decisions.push(Decision::Block),
            Some("approve") if pre_tool => decisions.push(Decision::Allow),
            _ => {}
        }
        match specific.and_then(|s| s.permission).filter(|_| pre_tool) {
            Some("allow") => decisions.push(Decision::Allow),
            Some("ask") => decisions.push(Decision::Ask),
            Some("deny") => decisions.push(Decision::Block),
            _ => {}
        }
        let stop = match self.proceed {
            Some(false) => Some(
                self.stop_reason
                    .clone()
                    .unwrap_or_else(|| "stopped by hook command `h`".into()),
            ),
            _ => None,
        };
        Effect {
            decision: decisions.into_iter().max(),
            updated_output: None,
            updated_input: specific
                .and_then(|s| s.updated_input.clone())
                .filter(|_| pre_tool),
            context: specific
                .and_then(|s| s.context.clone())
                .filter(|c| !c.trim().is_empty()),
            system_message: self.system_message.clone(),
            stop,
            // Reasons and notices are checked on their own.
            reason: None,
            notices: Vec::new(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_result_decides_only_what_its_event_allows(
        event in event(),
        fail_closed in any::<bool>(),
        result in run_result(),
    ) {
        let handler_failed = failed(&result);
        let effect = interpret(event, "command `h`", fail_closed, result);
        if let Some(decision) = effect.decision {
            prop_assert!(event.can_block(), "{event} cannot decide {decision:?}");
            prop_assert!(decision == Decision::Block || event == HookEventName::PreToolUse);
            if decision == Decision::Block {
                prop_assert!(effect.reason.as_ref().is_some_and(|r| !r.trim().is_empty()));
            }
        }
        prop_assert!(effect.updated_input.is_none() || event == HookEventName::PreToolUse);
        if handler_failed {
            let blocks = fail_closed && event.can_block();
            prop_assert_eq!(effect.decision, blocks.then_some(Decision::Block));
            prop_assert_eq!(effect.notices.len(), 1);
        }
        let cut_note = "\n[cut: hook output over 10000 characters]".chars().count();
        for text in [&effect.reason, &effect.context, &effect.system_message, &effect.stop] {
            let chars = text.as_deref().map_or(0, |t| t.chars().count());
            prop_assert!(chars <= TEXT_LIMIT + cut_note, "{chars} characters passed on");
        }
    }

    #[test]
    fn every_json_shape_is_read_as_written_from_stdout_or_http(
        event in event(),
        shape in shape(),
        status in 200..300u16,
    ) {
        let text = shape.printed(event);
        let from_stdout = interpret(event, "command `h`", false, RunResult::Exited {
            code: Some(0),
            signal: None,
            stdout: text.clone(),
            stderr: String::new(),
        });
        let from_http = interpret(event, "command `h`", false, RunResult::Http { status, body: text });
        prop_assert_eq!(&from_stdout, &from_http);
        let errors: Vec<&HookNotice> =
            from_stdout.notices.iter().filter(|n| n.kind == NoticeKind::Error).collect();
        prop_assert!(errors.is_empty(), "{errors:?}");
        let seen = Effect { reason: None, notices: Vec::new(), ..from_stdout };
        prop_assert_eq!(seen, shape.expected(event));
    }
}
