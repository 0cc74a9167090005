//! `sampling/createMessage`: a server asks the client's model for an answer. The request is
//! parsed here into a [`SamplingRequest`] (each message's content as text, media named by a
//! placeholder) before any [`super::ClientHandler`] sees it, and the handler's
//! [`SamplingResult`] is written back in the protocol's shape.

use serde_json::{Value, json};

/// The JSON-RPC code MCP uses for a sampling request the user (or the policy) rejected.
pub const SAMPLING_REFUSED: i64 = -1;

/// Who said a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One message of the conversation, its content blocks joined as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingMessage {
    pub role: Role,
    pub text: String,
}

/// One sampling request, as shown to the user and sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingRequest {
    pub system_prompt: Option<String>,
    pub messages: Vec<SamplingMessage>,
    pub max_tokens: Option<u32>,
}

/// What is wrong with a request's params (answered with `-32602`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SamplingError {
    #[error("sampling/createMessage needs \"messages\"")]
    NoMessages,
    #[error("message role {0:?} is not user or assistant")]
    Role(Option<String>),
}

impl SamplingRequest {
    pub fn parse(params: &Value) -> Result<Self, SamplingError> {
        let list = params["messages"]
            .as_array()
            .ok_or(SamplingError::NoMessages)?;
        let mut messages = Vec::with_capacity(list.len());
        for message in list {
            let role = match message["role"].as_str() {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                other => return Err(SamplingError::Role(other.map(str::to_string))),
            };
            let blocks = match &message["content"] {
                Value::Array(blocks) => blocks.clone(),
                block => vec![block.clone()],
            };
            let text: Vec<String> = blocks.iter().map(block_text).collect();
            messages.push(SamplingMessage {
                role,
                text: text.join("\n"),
            });
        }
        Ok(Self {
            system_prompt: params["systemPrompt"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            messages,
            max_tokens: params["maxTokens"]
                .as_u64()
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        })
    }
}

/// A content block's text; media the model API here cannot take become a placeholder.
fn block_text(block: &Value) -> String {
    match block["type"].as_str() {
        Some("text") => block["text"].as_str().unwrap_or_default().to_string(),
        Some(kind) => format!(
            "[{kind} {} omitted]",
            block["mimeType"].as_str().unwrap_or("content")
        ),
        None => String::new(),
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingResult {
    pub text: String,
    /// The model that answered.
    pub model: String,
    pub stop_reason: StopReason,
}

impl SamplingResult {
    /// The `sampling/createMessage` result: `{role, content, model, stopReason}`.
    pub fn to_value(&self) -> Value {
        let stop_reason = match self.stop_reason {
            StopReason::EndTurn => "endTurn",
            StopReason::MaxTokens => "maxTokens",
        };
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": self.text},
            "model": self.model,
            "stopReason": stop_reason,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_messages_with_their_blocks_as_text() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"},
                                                   {"type": "image", "mimeType": "image/png"}]}
            ],
            "systemPrompt": "be brief", "maxTokens": 100
        });
        assert_eq!(
            SamplingRequest::parse(&params).unwrap(),
            SamplingRequest {
                system_prompt: Some("be brief".into()),
                messages: vec![
                    SamplingMessage {
                        role: Role::User,
                        text: "hi".into()
                    },
                    SamplingMessage {
                        role: Role::Assistant,
                        text: "hello\n[image image/png omitted]".into()
                    },
                ],
                max_tokens: Some(100),
            }
        );
    }

    #[test]
    fn says_what_is_wrong_with_a_request() {
        assert_eq!(
            SamplingRequest::parse(&json!({"q": "why"})),
            Err(SamplingError::NoMessages)
        );
        let bad = SamplingRequest::parse(&json!({"messages": [{"role": "x"}]})).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "message role Some(\"x\") is not user or assistant"
        );
    }

    #[test]
    fn writes_the_result_in_the_protocols_shape() {
        let result = SamplingResult {
            text: "4".into(),
            model: "m".into(),
            stop_reason: StopReason::MaxTokens,
        };
        assert_eq!(
            result.to_value().to_string(),
            r#"{"role":"assistant","content":{"type":"text","text":"4"},"model":"m","stopReason":"maxTokens"}"#
        );
    }
}
