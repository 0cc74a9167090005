//! An MCP `elicitation/create` request, parsed before any [`super::ClientHandler`] sees it: a
//! URL to visit, or a form whose fields come from the `requestedSchema` (string, number,
//! integer, boolean, single and multiple choice, with titles, descriptions, defaults and bounds);
//! a user's typed answer checked against its field; the "accept with every default" answer of
//! non-interactive runs; and the result sent back.

use serde_json::{Map, Value, json};

/// What a server asks the user.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitRequest {
    /// Form mode. `Err` when the schema asks for something a form cannot (a field of type
    /// `object`, ...): the handler declines it, or answers with the error when someone was to
    /// fill it in.
    Form(Result<Form, FormError>),
    /// URL mode: a page the user should visit (Ling never opens it).
    Url { message: String, url: String },
}

impl ElicitRequest {
    pub fn parse(params: &Value) -> Self {
        if params["mode"].as_str() == Some("url") {
            let text = |key: &str| params[key].as_str().unwrap_or_default().to_string();
            return Self::Url {
                message: text("message"),
                url: text("url"),
            };
        }
        Self::Form(Form::parse(params))
    }

    /// The answer of a non-interactive run with `elicitation: accept-defaults`: accept with
    /// every default filled when the form parses and all its required fields have defaults,
    /// else decline (a URL too: nobody is there to visit it).
    pub fn accept_defaults(&self) -> ElicitAnswer {
        match self {
            Self::Form(Ok(form)) => form
                .defaults()
                .map_or(ElicitAnswer::Decline, ElicitAnswer::Accept),
            Self::Form(Err(_)) | Self::Url { .. } => ElicitAnswer::Decline,
        }
    }

    /// The `elicitation/create` result of `answer` to this request: an accepted URL has no
    /// content.
    pub fn result(&self, answer: &ElicitAnswer) -> Value {
        match (self, answer) {
            (Self::Url { .. }, ElicitAnswer::Accept(_)) => json!({"action": "accept"}),
            _ => answer.to_result(),
        }
    }
}

/// What the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

impl ElicitAnswer {
    /// The `elicitation/create` result of a form.
    pub fn to_result(&self) -> Value {
        match self {
            Self::Accept(content) => json!({"action": "accept", "content": content}),
            Self::Decline => json!({"action": "decline"}),
            Self::Cancel => json!({"action": "cancel"}),
        }
    }
}

/// Why a form's schema cannot be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("requestedSchema.properties is not an object")]
    Properties,
    #[error("field {0:?}: an array field needs enum items")]
    ArrayWithoutChoices(String),
    #[error(
        "field {name:?} has type {kind:?}; forms take string, number, integer, boolean or array \
         of choices"
    )]
    Type { name: String, kind: Option<String> },
}

/// Why a typed answer does not fit its field; the message completes "expected ...".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("at least {0} characters")]
    TooShort(u64),
    #[error("at most {0} characters")]
    TooLong(u64),
    #[error("not a valid {0}")]
    Format(String),
    #[error("a whole number")]
    NotAnInteger,
    #[error("a number")]
    NotANumber,
    /// Outside the field's bounds; carries the field's hint (`integer 1..100`).
    #[error("out of range: {0}")]
    OutOfRange(String),
    #[error("yes or no")]
    NotYesOrNo,
    #[error("{input:?} is not one of {choices}")]
    NotAChoice { input: String, choices: String },
    #[error("choose between {min} and {max} of them")]
    Count { min: u64, max: String },
}

/// A form-mode request.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub message: String,
    pub fields: Vec<FormField>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    pub default: Option<Value>,
}

/// One choice: the value sent, and the label shown (the value when there is no title).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        format: Option<String>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    Choice(Vec<Choice>),
    MultiChoice {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

impl Form {
    /// Parses `params` of a form-mode request; an error names what is wrong with the schema.
    pub fn parse(params: &Value) -> Result<Self, FormError> {
        let schema = &params["requestedSchema"];
        let properties = match schema.get("properties") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(FormError::Properties),
        };
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(name, property)| {
                Ok(FormField {
                    name: name.clone(),
                    title: text(property, "title"),
                    description: text(property, "description"),
                    kind: field_kind(name, property)?,
                    required: required.contains(&name.as_str()),
                    default: property.get("default").cloned(),
                })
            })
            .collect::<Result<Vec<_>, FormError>>()?;
        Ok(Self {
            message: params["message"].as_str().unwrap_or_default().to_string(),
            fields,
        })
    }

    /// Every field's default, when every required field has one (`None` otherwise).
    pub fn defaults(&self) -> Option<Map<String, Value>> {
        let mut content = Map::new();
        for field in &self.fields {
            match &field.default {
                Some(default) => {
                    content.insert(field.name.clone(), default.clone());
                }
                None if field.required => return None,
                None => {}
            }
        }
        Some(content)
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn field_kind(name: &str, property: &Value) -> Result<FieldKind, FormError> {
    let number = |key: &str| property[key].as_f64();
    let count = |key: &str| property[key].as_u64();
    match property["type"].as_str() {
        Some("string") => match choices(property) {
            Some(choices) => Ok(FieldKind::Choice(choices)),
            None => Ok(FieldKind::Text {
                format: text(property, "format"),
                min_length: count("minLength"),
                max_length: count("maxLength"),
            }),
        },
        Some(kind @ ("number" | "integer")) => Ok(FieldKind::Number {
            integer: kind == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        Some("boolean") => Ok(FieldKind::Boolean),
        Some("array") => match choices(&property["items"]) {
            Some(choices) => Ok(FieldKind::MultiChoice {
                choices,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            }),
            None => Err(FormError::ArrayWithoutChoices(name.to_string())),
        },
        other => Err(FormError::Type {
            name: name.to_string(),
            kind: other.map(str::to_string),
        }),
    }
}

/// `enum` (with the legacy `enumNames` labels), or `oneOf` / `anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema["enum"].as_array() {
        let labels = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_string();
                    let label = labels
                        .and_then(|l| l.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| value.clone(), str::to_string);
                    Some(Choice { value, label })
                })
                .collect(),
        );
    }
    let options = schema["oneOf"]
        .as_array()
        .or_else(|| schema["anyOf"].as_array())?;
    Some(
        options
            .iter()
            .filter_map(|option| {
                let value = option["const"].as_str()?.to_string();
                let label = text(option, "title").unwrap_or_else(|| value.clone());
                Some(Choice { value, label })
            })
            .collect(),
    )
}

impl FormField {
    /// The title, else the name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// What the user is told to type, e.g. `integer 1..100` or `one of: a, b`.
    pub fn hint(&self) -> String {
        let labels = |choices: &[Choice]| {
            choices
                .iter()
                .map(|c| {
                    if c.label == c.value {
                        c.value.clone()
                    } else {
                        format!("{} ({})", c.value, c.label)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let bounds = |min: Option<f64>, max: Option<f64>| match (min, max) {
            (Some(a), Some(b)) => format!(" {a}..{b}"),
            (Some(a), None) => format!(" >= {a}"),
            (None, Some(b)) => format!(" <= {b}"),
            (None, None) => String::new(),
        };
        let hint = match &self.kind {
            FieldKind::Text { format, .. } => match format {
                Some(format) => format!("text ({format})"),
                None => "text".to_string(),
            },
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => format!(
                "{}{}",
                if *integer { "integer" } else { "number" },
                bounds(*minimum, *maximum)
            ),
            FieldKind::Boolean => "yes/no".to_string(),
            FieldKind::Choice(choices) => format!("one of: {}", labels(choices)),
            FieldKind::MultiChoice { choices, .. } => {
                format!("comma-separated, from: {}", labels(choices))
            }
        };
        if self.required {
            format!("{hint}, required")
        } else {
            hint
        }
    }

    /// The default as the user would type it, to pre-fill the input line.
    pub fn default_text(&self) -> Option<String> {
        Some(match self.default.as_ref()? {
            Value::String(s) => s.clone(),
            Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        })
    }

    /// Checks one typed answer (already trimmed, not empty) and converts it to the value sent.
    pub fn parse_input(&self, input: &str) -> Result<Value, InputError> {
        let input = input.trim();
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
            } => {
                let length = input.chars().count() as u64;
                if let Some(min) = min_length.filter(|min| length < *min) {
                    return Err(InputError::TooShort(min));
                }
                if let Some(max) = max_length.filter(|max| length > *max) {
                    return Err(InputError::TooLong(max));
                }
                check_format(format.as_deref(), input)?;
                Ok(Value::String(input.to_string()))
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let value = if *integer {
                    input
                        .parse::<i64>()
                        .map(Value::from)
                        .map_err(|_| InputError::NotAnInteger)?
                } else {
                    let n = input
                        .parse::<f64>()
                        .ok()
                        .filter(|n| n.is_finite())
                        .ok_or(InputError::NotANumber)?;
                    json!(n)
                };
                let n = value.as_f64().unwrap_or_default();
                if minimum.is_some_and(|min| n < min) || maximum.is_some_and(|max| n > max) {
                    return Err(InputError::OutOfRange(self.hint()));
                }
                Ok(value)
            }
            FieldKind::Boolean => match input.to_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Value::Bool(true)),
                "n" | "no" | "false" => Ok(Value::Bool(false)),
                _ => Err(InputError::NotYesOrNo),
            },
            FieldKind::Choice(choices) => pick(choices, input).map(Value::String),
            FieldKind::MultiChoice {
                choices,
                min_items,
                max_items,
            } => {
                let picked = input
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| pick(choices, s))
                    .collect::<Result<Vec<_>, _>>()?;
                let n = picked.len() as u64;
                if min_items.is_some_and(|min| n < min) || max_items.is_some_and(|max| n > max) {
                    return Err(InputError::Count {
                        min: min_items.unwrap_or(0),
                        max: max_items.map_or("any".to_string(), |m| m.to_string()),
                    });
                }
                Ok(json!(picked))
            }
        }
    }
}

/// A choice by its value or its label (case-insensitive).
fn pick(choices: &[Choice], input: &str) -> Result<String, InputError> {
    choices
        .iter()
        .find(|c| c.value == input || c.label.eq_ignore_ascii_case(input))
        .or_else(|| choices.iter().find(|c| c.value.eq_ignore_ascii_case(input)))
        .map(|c| c.value.clone())
        .ok_or_else(|| {
            let values: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
            InputError::NotAChoice {
                input: input.to_string(),
                choices: values.join(", "),
            }
        })
}

/// The formats a form may name; a light check, the server validates for real.
fn check_format(format: Option<&str>, input: &str) -> Result<(), InputError> {
    let ok = match format {
        Some("email") => input
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && host.contains('.')),
        Some("uri") => input
            .split_once(':')
            .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        Some("date") => {
            input.len() == 10 && chrono::NaiveDate::parse_from_str(input, "%Y-%m-%d").is_ok()
        }
        Some("date-time") => chrono::DateTime::parse_from_rfc3339(input).is_ok(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(InputError::Format(format.unwrap_or("value").to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn params(properties: Value, required: Value) -> Value {
        json!({"message": "m", "requestedSchema": {
            "type": "object", "properties": properties, "required": required}})
    }

    fn field(property: Value, required: bool) -> FormField {
        let required = if required { json!(["f"]) } else { json!([]) };
        let form = Form::parse(&params(json!({ "f": property }), required)).unwrap();
        form.fields[0].clone()
    }

    #[test]
    fn accepts_with_defaults_only_when_every_required_field_has_one() {
        let all = params(
            json!({"name": {"type": "string", "default": "John Doe"},
                   "age": {"type": "integer", "default": 30},
                   "verified": {"type": "boolean", "default": true},
                   "note": {"type": "string"}}),
            json!([]),
        );
        let accept_defaults = |params: &Value| ElicitRequest::parse(params).accept_defaults();
        assert_eq!(
            accept_defaults(&all).to_result(),
            json!({"action": "accept", "content": {"name": "John Doe", "age": 30, "verified": true}})
        );
        let missing = params(
            json!({"name": {"type": "string"}, "age": {"type": "integer", "default": 30}}),
            json!(["name"]),
        );
        assert_eq!(accept_defaults(&missing), ElicitAnswer::Decline);
        let bad = params(json!({"x": {"type": "object"}}), json!([]));
        assert_eq!(accept_defaults(&bad), ElicitAnswer::Decline);
        let url = json!({"mode": "url", "url": "https://example.com", "message": "m"});
        assert_eq!(accept_defaults(&url), ElicitAnswer::Decline);
    }

    #[test]
    fn parses_the_mode_and_says_why_a_schema_cannot_be_asked() {
        let url =
            ElicitRequest::parse(&json!({"mode": "url", "url": "https://e.com", "message": "m"}));
        assert_eq!(
            url,
            ElicitRequest::Url {
                message: "m".into(),
                url: "https://e.com".into()
            }
        );
        let accepted = ElicitAnswer::Accept(Map::new());
        assert_eq!(url.result(&accepted), json!({"action": "accept"}));
        let form = ElicitRequest::parse(&params(json!({}), json!([])));
        assert_eq!(
            form.result(&accepted),
            json!({"action": "accept", "content": {}})
        );
        let object = ElicitRequest::parse(&params(json!({"x": {"type": "object"}}), json!([])));
        let ElicitRequest::Form(Err(why)) = object else {
            panic!("{object:?}")
        };
        assert_eq!(
            why.to_string(),
            "field \"x\" has type Some(\"object\"); forms take string, number, integer, boolean or \
             array of choices"
        );
    }

    #[test]
    fn numbers_are_typed_and_bounded() {
        let integer = field(
            json!({"type": "integer", "minimum": 1, "maximum": 100}),
            true,
        );
        assert_eq!(integer.parse_input("42"), Ok(json!(42)));
        assert!(integer.parse_input("4.5").is_err());
        assert!(integer.parse_input("101").is_err());
        assert_eq!(integer.hint(), "integer 1..100, required");
        let number = field(json!({"type": "number", "default": 2.75}), false);
        assert_eq!(number.parse_input("2.5"), Ok(json!(2.5)));
        assert!(number.parse_input("abc").is_err());
        assert_eq!(number.default_text().as_deref(), Some("2.75"));
    }

    #[test]
    fn booleans_and_text_formats_are_checked() {
        let boolean = field(json!({"type": "boolean", "default": false}), false);
        assert_eq!(boolean.parse_input("Yes"), Ok(json!(true)));
        assert!(boolean.parse_input("maybe").is_err());
        assert_eq!(boolean.default_text().as_deref(), Some("no"));
        let email = field(json!({"type": "string", "format": "email"}), false);
        assert!(email.parse_input("a@b.org").is_ok());
        assert!(email.parse_input("nobody").is_err());
        let date = field(json!({"type": "string", "format": "date"}), false);
        assert!(date.parse_input("2024-02-29").is_ok());
        assert!(date.parse_input("2023-02-29").is_err());
        let short = field(json!({"type": "string", "maxLength": 3}), false);
        assert!(short.parse_input("abcd").is_err());
    }

    #[test]
    fn choices_take_values_or_labels() {
        let titled = field(
            json!({"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"},
                                                {"const": "hero-2", "title": "Green Lantern"}]}),
            false,
        );
        assert_eq!(titled.parse_input("hero-2"), Ok(json!("hero-2")));
        assert_eq!(titled.parse_input("superman"), Ok(json!("hero-1")));
        assert!(titled.parse_input("Batman").is_err());
        let legacy = field(
            json!({"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]}),
            false,
        );
        assert_eq!(legacy.parse_input("dogs"), Ok(json!("pet-2")));
        let multi = field(
            json!({"type": "array", "minItems": 1, "maxItems": 2,
                   "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
                   "default": ["Guitar"]}),
            false,
        );
        assert_eq!(
            multi.parse_input("piano, Drums"),
            Ok(json!(["Piano", "Drums"]))
        );
        assert!(multi.parse_input("Guitar, Piano, Drums").is_err());
        assert_eq!(multi.default_text().as_deref(), Some("Guitar"));
    }
}
