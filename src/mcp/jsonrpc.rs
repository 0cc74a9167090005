//! JSON-RPC 2.0 messages as MCP uses them: requests, notifications, results and errors, with ids
//! that are numbers or strings. No batches (removed in 2025-06-18).

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A request id. `0` is a valid id (the TypeScript SDK uses it for `initialize`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: RequestId,
        result: Value,
    },
    Error {
        /// Missing on parse errors.
        id: Option<RequestId>,
        error: ErrorObject,
    },
}

/// The wire shape, used only to (de)serialize [`Message`].
#[derive(Serialize, Deserialize)]
struct Wire {
    jsonrpc: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    params: Option<Value>,
    /// `"result": null` is a result (of `null`), not a missing one.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ErrorObject>,
}

/// `Some` for a field that is there, even as `null`; with `#[serde(default)]`, `None` only for
/// a field that is missing.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Why a text or value is not a JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all (JSON-RPC's parse error, as opposed to an invalid request).
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("JSON-RPC batches are not supported")]
    Batch,
    #[error("not a JSON-RPC message: {0}")]
    NotJsonRpc(String),
    #[error("unsupported jsonrpc version {0:?}")]
    Version(String),
    #[error("id {0} is not an integer")]
    IdNotInteger(serde_json::Number),
    #[error("invalid id {0}")]
    InvalidId(Value),
    #[error("message is neither a request, a notification nor a response")]
    Shape,
}

impl Message {
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Self::Request {
            id,
            method: method.into(),
            params,
        }
    }

    pub fn notification(method: impl Into<String>, params: Option<Value>) -> Self {
        Self::Notification {
            method: method.into(),
            params,
        }
    }

    pub fn error(id: Option<RequestId>, code: i64, message: impl Into<String>) -> Self {
        Self::Error {
            id,
            error: ErrorObject {
                code,
                message: message.into(),
                data: None,
            },
        }
    }

    /// Parses one message. Anything that is not a JSON-RPC 2.0 object is an error describing it.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ParseError::NotJson(e.to_string()))?;
        Self::from_value(value)
    }

    pub fn from_value(value: Value) -> Result<Self, ParseError> {
        if value.is_array() {
            return Err(ParseError::Batch);
        }
        let wire: Wire =
            serde_json::from_value(value).map_err(|e| ParseError::NotJsonRpc(e.to_string()))?;
        if wire.jsonrpc != "2.0" {
            return Err(ParseError::Version(wire.jsonrpc));
        }
        let id = match wire.id {
            None => None,
            Some(Value::Number(n)) => Some(RequestId::Number(
                n.as_i64().ok_or(ParseError::IdNotInteger(n))?,
            )),
            Some(Value::String(s)) => Some(RequestId::String(s)),
            Some(Value::Null) => None,
            Some(other) => return Err(ParseError::InvalidId(other)),
        };
        match (wire.method, id, wire.result, wire.error) {
            (Some(method), Some(id), None, None) => Ok(Self::Request {
                id,
                method,
                params: wire.params,
            }),
            (Some(method), None, None, None) => Ok(Self::Notification {
                method,
                params: wire.params,
            }),
            (None, Some(id), Some(result), None) => Ok(Self::Response { id, result }),
            (None, id, None, Some(error)) => Ok(Self::Error { id, error }),
            _ => Err(ParseError::Shape),
        }
    }

    pub fn to_value(&self) -> Value {
        let wire = match self.clone() {
            Self::Request { id, method, params } => Wire {
                jsonrpc: "2.0".into(),
                id: Some(id_value(id)),
                method: Some(method),
                params,
                result: None,
                error: None,
            },
            Self::Notification { method, params } => Wire {
                jsonrpc: "2.0".into(),
                id: None,
                method: Some(method),
                params,
                result: None,
                error: None,
            },
            Self::Response { id, result } => Wire {
                jsonrpc: "2.0".into(),
                id: Some(id_value(id)),
                method: None,
                params: None,
                result: Some(result),
                error: None,
            },
            Self::Error { id, error } => Wire {
                jsonrpc: "2.0".into(),
                id: Some(id.map(id_value).unwrap_or(Value::Null)),
                method: None,
                params: None,
                result: None,
                error: Some(error),
            },
        };
        serde_json::to_value(wire).unwrap_or(Value::Null)
    }

    /// Compact JSON on one line (no embedded newlines), as stdio requires.
    pub fn to_line(&self) -> String {
        self.to_value().to_string()
    }
}

fn id_value(id: RequestId) -> Value {
    match id {
        RequestId::Number(n) => Value::from(n),
        RequestId::String(s) => Value::from(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_each_kind() {
        for text in [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}"#,
        ] {
            let msg = Message::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back: Value = serde_json::from_str(&msg.to_line()).unwrap_or_default();
            let orig: Value = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(back, orig);
        }
    }

    #[test]
    fn rejects_what_is_not_json_rpc() {
        assert!(Message::parse("hello").is_err());
        assert!(Message::parse("[]").is_err());
        assert!(Message::parse(r#"{"jsonrpc":"1.0","method":"x"}"#).is_err());
        assert!(Message::from_value(json!({"jsonrpc":"2.0","id":1})).is_err());
    }
}

/// Properties: no text or JSON value panics the parser, and every message Ling can write is
/// one line that parses back to itself.
#[cfg(test)]
pub(crate) mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Any JSON value. Numbers are integers or quarters, which print and parse back exactly.
    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-4000i32..4000).prop_map(|q| Value::from(f64::from(q) / 4.0)),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::vec((".{0,6}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    fn id() -> impl Strategy<Value = RequestId> {
        prop_oneof![
            any::<i64>().prop_map(RequestId::Number),
            ".{0,8}".prop_map(RequestId::String),
        ]
    }

    /// Structured parameters, as JSON-RPC requires (or none).
    fn params() -> impl Strategy<Value = Option<Value>> {
        proptest::option::of(
            json().prop_filter("params are structured", |v| v.is_object() || v.is_array()),
        )
    }

    /// Any message Ling could send or receive.
    pub(crate) fn message() -> impl Strategy<Value = Message> {
        let error = (
            any::<i64>(),
            ".{0,12}",
            proptest::option::of(json().prop_filter("data is a value", |v| !v.is_null())),
        )
            .prop_map(|(code, message, data)| ErrorObject {
                code,
                message,
                data,
            });
        prop_oneof![
            (id(), ".{0,12}", params()).prop_map(|(id, method, params)| Message::Request {
                id,
                method,
                params
            }),
            (".{0,12}", params())
                .prop_map(|(method, params)| Message::Notification { method, params }),
            (id(), prop_oneof![1 => Just(Value::Null), 4 => json()])
                .prop_map(|(id, result)| Message::Response { id, result }),
            (proptest::option::of(id()), error)
                .prop_map(|(id, error)| Message::Error { id, error }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_text_parses_or_is_an_error(text in prop_oneof![
            ".{0,64}",
            r#"\{("jsonrpc"|"id"|"method"|"result"|"error"|"params"|:|,|"2.0"|null|[0-9]|\{|\}|\[|\])*\}"#,
        ]) {
            let _ = Message::parse(&text);
        }

        #[test]
        fn any_json_value_parses_or_is_an_error(mut value in json(), jsonrpc in any::<bool>()) {
            if let (true, Value::Object(map)) = (jsonrpc, &mut value) {
                map.insert("jsonrpc".into(), "2.0".into());
            }
            let _ = Message::from_value(value);
        }

        #[test]
        fn every_message_is_one_line_that_parses_back_to_itself(message in message()) {
            let line = message.to_line();
            prop_assert!(!line.contains('\n'), "{}", line);
            prop_assert_eq!(Message::parse(&line), Ok(message));
        }
    }

    #[test]
    fn a_null_result_is_a_response() {
        assert_eq!(
            Message::parse(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Ok(Message::Response {
                id: RequestId::Number(1),
                result: Value::Null
            })
        );
    }
}
