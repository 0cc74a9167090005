//! Structured output: the final answer of a run must be JSON matching a JSON Schema, given
//! by Codex's `--output-schema FILE` or Claude Code's `--json-schema SCHEMA` (and the Agent
//! SDK's `outputFormat`, which arrives as `--json-schema` and in `initialize`'s `jsonSchema`).
//! The schema is told to the model in the system prompt ([`OutputSchema::instruction`]), the
//! answer is checked here ([`OutputSchema::check`]: the subset of JSON Schema that OpenAI's
//! structured outputs accept: `type`, `properties`, `required`, `additionalProperties`, `items`,
//! `enum`, `const`, `anyOf`, string and number bounds), and a mismatch is sent back to the model
//! ([`RETRIES`] times, [`OutputSchema::judge`]) before the run fails with
//! `error_max_structured_output_retries`.

use std::path::Path;

use serde_json::Value;

use super::ending::Ending;
use super::lines::Subtype;
use crate::ui::RunOutcome;

/// How many times an answer that does not match the schema is sent back to the model before
/// the run fails.
pub const RETRIES: u32 = 1;

/// Which flag gave the schema: it names the schema in messages and decides what `result` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Codex's `--output-schema FILE`: the final message becomes the compact JSON.
    Codex,
    /// Claude Code's `--json-schema` (or `initialize`'s `jsonSchema`): `result` keeps the
    /// model's text and `structured_output` carries the value.
    Claude,
}

/// A schema, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    schema: Value,
    origin: Origin,
}

/// What follows an answer: the run's end, or one more prompt.
pub enum Next {
    Done(Ending),
    /// Ask again with this prompt (it says what is wrong).
    Again(String),
}

impl OutputSchema {
    /// The schema of `file` (`--output-schema`), which must hold a JSON object.
    pub fn read(file: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
        Self::parse(&text, Origin::Codex)
    }

    /// The schema given as JSON text (`--json-schema`), which must be an object.
    pub fn from_arg(text: &str) -> Result<Self, String> {
        Self::parse(text, Origin::Claude)
    }

    /// The schema of `initialize`'s `jsonSchema`.
    pub fn from_value(schema: Value) -> Result<Self, String> {
        if !schema.is_object() {
            return Err(format!("a JSON Schema is an object, not {schema}"));
        }
        Ok(Self {
            schema,
            origin: Origin::Claude,
        })
    }

    fn parse(text: &str, origin: Origin) -> Result<Self, String> {
        let schema: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if !schema.is_object() {
            return Err("a JSON Schema is an object ({\"type\": \"object\", ...})".into());
        }
        Ok(Self { schema, origin })
    }

    /// The flag that names the schema in messages.
    fn flag(&self) -> &'static str {
        match self.origin {
            Origin::Codex => "--output-schema",
            Origin::Claude => "--json-schema",
        }
    }

    /// What follows `ending`, the answer after `retries` retries: a failed run stays as it
    /// ended; a matching answer ends the run with its value (`structured_output`); a mismatch
    /// is asked again while retries remain, and ends the run with
    /// `error_max_structured_output_retries` after that.
    pub fn judge(&self, ending: Ending, retries: u32) -> Next {
        if ending.is_error() {
            return Next::Done(ending);
        }
        match self.value(&ending.text) {
            Ok(value) => {
                let text = match self.origin {
                    Origin::Codex => value.to_string(),
                    Origin::Claude => ending.text,
                };
                Next::Done(Ending {
                    text,
                    structured: Some(value),
                    ..ending
                })
            }
            Err(problem) if retries < RETRIES => Next::Again(self.retry_prompt(&problem)),
            Err(problem) => Next::Done(Ending {
                subtype: Subtype::ErrorMaxStructuredOutputRetries,
                text: format!(
                    "the final answer does not match {} after {} attempts: {problem}",
                    self.flag(),
                    retries + 1
                ),
                outcome: RunOutcome::Failed,
                ..ending
            }),
        }
    }

    /// What the system prompt tells the model.
    pub fn instruction(&self) -> String {
        format!(
            "Your final answer must be a single JSON value, with no other text and no code \
             fence, matching this JSON Schema:\n{}",
            self.schema
        )
    }

    /// The answer as compact JSON when it matches (a code fence around it is dropped), else
    /// what is wrong with it.
    pub fn check(&self, answer: &str) -> Result<String, String> {
        self.value(answer).map(|value| value.to_string())
    }

    /// The answer's value when it matches (a code fence around it is dropped), else what is
    /// wrong with it.
    fn value(&self, answer: &str) -> Result<Value, String> {
        let text = unfenced(answer.trim());
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("the answer is not JSON ({e})"))?;
        let mut problems = Vec::new();
        check_value(&self.schema, &value, "$", &mut problems);
        match problems.is_empty() {
            true => Ok(value),
            false => Err(problems.join("; ")),
        }
    }

    /// The prompt that asks again after `problem`.
    pub fn retry_prompt(&self, problem: &str) -> String {
        format!(
            "Your final answer does not match the required JSON Schema: {problem}. Answer again \
             with only the JSON value."
        )
    }
}

/// `text` without a Markdown code fence around it.
fn unfenced(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn check_value(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let fits = any.iter().any(|s| {
            let mut inner = Vec::new();
            check_value(s, value, at, &mut inner);
            inner.is_empty()
        });
        if !fits {
            problems.push(format!("{at} matches none of anyOf"));
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
        problems.push(format!("{at} is not of type {}", types.join(" or ")));
        return;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        problems.push(format!(
            "{at} is not one of {}",
            Value::from(options.clone())
        ));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        problems.push(format!("{at} is not {expected}"));
    }
    match value {
        Value::Object(map) => check_object(schema, map, at, problems),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_value(item_schema, item, &format!("{at}[{i}]"), problems);
                }
            }
            bound(
                schema,
                "minItems",
                "maxItems",
                items.len(),
                at,
                "items",
                problems,
            );
        }
        Value::String(text) => {
            let chars = text.chars().count();
            bound(
                schema,
                "minLength",
                "maxLength",
                chars,
                at,
                "characters",
                problems,
            );
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or_default();
            if schema
                .get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|m| n < m)
                || schema
                    .get("maximum")
                    .and_then(Value::as_f64)
                    .is_some_and(|m| n > m)
            {
                problems.push(format!("{at} is out of range"));
            }
        }
        _ => {}
    }
}

fn check_object(
    schema: &serde_json::Map<String, Value>,
    map: &serde_json::Map<String, Value>,
    at: &str,
    problems: &mut Vec<String>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(name) {
            problems.push(format!("{at} lacks the required property `{name}`"));
        }
    }
    for (name, item) in map {
        let path = format!("{at}.{name}");
        match (
            properties.and_then(|p| p.get(name)),
            schema.get("additionalProperties"),
        ) {
            (Some(property), _) => check_value(property, item, &path, problems),
            (None, Some(Value::Bool(false))) => {
                problems.push(format!(
                    "{at} has a property `{name}` the schema does not allow"
                ));
            }
            (None, Some(extra @ Value::Object(_))) => check_value(extra, item, &path, problems),
            (None, _) => {}
        }
    }
}

fn bound(
    schema: &serde_json::Map<String, Value>,
    min: &str,
    max: &str,
    len: usize,
    at: &str,
    what: &str,
    problems: &mut Vec<String>,
) {
    let len = len as u64;
    if let Some(m) = schema.get(min).and_then(Value::as_u64).filter(|m| len < *m) {
        problems.push(format!("{at} has fewer than {m} {what}"));
    }
    if let Some(m) = schema.get(max).and_then(Value::as_u64).filter(|m| len > *m) {
        problems.push(format!("{at} has more than {m} {what}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> OutputSchema {
        OutputSchema {
            schema: value,
            origin: Origin::Codex,
        }
    }

    #[test]
    fn an_answer_is_checked_against_the_schema() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "fail"]},
                "count": {"type": "integer", "minimum": 0},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["status", "count"],
            "additionalProperties": false
        }));
        assert_eq!(
            s.check("```json\n{\"status\": \"ok\", \"count\": 2}\n```"),
            Ok(r#"{"status":"ok","count":2}"#.to_string())
        );
        let err = s
            .check(r#"{"status": "maybe", "tags": [1], "x": 1}"#)
            .unwrap_err();
        for part in [
            "lacks the required property `count`",
            "$.status is not one of",
            "$.tags[0] is not of type string",
            "property `x` the schema does not allow",
        ] {
            assert!(err.contains(part), "{err}");
        }
        assert!(s.check("done!").unwrap_err().contains("not JSON"));
        assert!(s.check(r#"{"status":"ok","count":-1}"#).is_err());
        let nullable = schema(json!({"type": ["string", "null"]}));
        assert!(nullable.check("null").is_ok());
        assert!(nullable.check("3").is_err());
    }

    #[test]
    fn judge_asks_again_then_gives_up_and_keeps_the_text_for_claude() {
        let answer = |text: &str| Ending {
            subtype: Subtype::Success,
            text: text.into(),
            outcome: RunOutcome::Success,
            num_turns: 1,
            goal: None,
            structured: None,
        };
        let claude = OutputSchema::from_arg(r#"{"type": "object", "required": ["a"]}"#).unwrap();
        let Next::Done(done) = claude.judge(answer("{\"a\": 1}"), 0) else {
            panic!("a matching answer ends the run");
        };
        assert_eq!(done.text, "{\"a\": 1}");
        assert_eq!(done.structured, Some(serde_json::json!({"a": 1})));
        let Next::Again(prompt) = claude.judge(answer("{}"), 0) else {
            panic!("a mismatch is asked again");
        };
        assert!(
            prompt.contains("lacks the required property `a`"),
            "{prompt}"
        );
        let Next::Done(failed) = claude.judge(answer("{}"), RETRIES) else {
            panic!("the last mismatch ends the run");
        };
        assert_eq!(failed.subtype, Subtype::ErrorMaxStructuredOutputRetries);
        assert_eq!(failed.outcome, RunOutcome::Failed);
        assert!(failed.text.contains("--json-schema"), "{}", failed.text);
        let codex = schema(serde_json::json!({"type": "object"}));
        let Next::Done(done) = codex.judge(answer("{\"a\": 1}"), 0) else {
            panic!("a matching answer ends the run");
        };
        assert_eq!(done.text, r#"{"a":1}"#);
        assert!(OutputSchema::from_arg("[1]").is_err());
        assert!(OutputSchema::from_value(serde_json::json!("object")).is_err());
    }
}
