//! OpenAI chat completions, `POST {base_url}/chat/completions`: the API most providers and
//! every local server speak. The request is the history as the API takes it (a message with
//! images as content parts: a user's `image_url` parts, and the images of tool results in a user
//! message after them, since a tool message holds text only); `stream.rs` reads the answer.

mod stream;

pub use stream::ChunkAssembler;

use std::borrow::Cow;

use serde::Serialize;

use super::stream::StreamParser;
use super::types::Message;
use super::wire::{Request, Wire, join};
use crate::media::ImageRef;

#[derive(Debug)]
pub struct ChatCompletions;

/// The request body, field for field as the chat-completions API takes it.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<ChatMessage<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

/// One message of the request: as the history holds it, or with its images as parts.
#[derive(Serialize)]
#[serde(untagged)]
enum ChatMessage<'a> {
    Plain(&'a Message),
    Parts {
        role: &'static str,
        content: Vec<Part>,
    },
    /// A tool message whose images follow in a user message.
    ToolText {
        role: &'static str,
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct ToolJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionJson<'a>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

impl Wire for ChatCompletions {
    fn endpoint(&self, base_url: &str) -> String {
        join(base_url, "/chat/completions")
    }

    fn models_url(&self, base_url: &str) -> String {
        join(base_url, "/models")
    }

    fn body(&self, request: &Request<'_>) -> Result<Vec<u8>, serde_json::Error> {
        let config = request.config;
        let messages = without_reasoning(request.messages);
        let body = ChatRequest {
            model: &config.model,
            messages: chat_messages(&messages),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: request
                .tools
                .iter()
                .map(|tool| ToolJson {
                    kind: "function",
                    function: FunctionJson {
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                    },
                })
                .collect(),
            parallel_tool_calls: (!request.tools.is_empty()).then_some(true),
            max_tokens: request.max_tokens.or(config.max_output_tokens),
            reasoning_effort: config.reasoning_effort.map(|e| e.as_str()),
        };
        serde_json::to_vec(&body)
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(ChunkAssembler::new())
    }
}

/// The history as the API takes it: messages without images as they are; a user's images as
/// parts after its text; the images of a run of tool results in one user message after it.
fn chat_messages(history: &[Message]) -> Vec<ChatMessage<'_>> {
    let mut out = Vec::with_capacity(history.len());
    let mut returned: Vec<&ImageRef> = Vec::new();
    for message in history {
        if !matches!(message, Message::Tool { .. }) && !returned.is_empty() {
            out.push(returned_images(&std::mem::take(&mut returned)));
        }
        match message {
            Message::User { content, images } if !images.is_empty() => {
                let mut parts = vec![Part::Text {
                    text: content.clone(),
                }];
                parts.extend(images.iter().map(image));
                out.push(ChatMessage::Parts {
                    role: "user",
                    content: parts,
                });
            }
            Message::Tool {
                tool_call_id,
                content,
                images,
            } if !images.is_empty() => {
                out.push(ChatMessage::ToolText {
                    role: "tool",
                    tool_call_id,
                    content,
                });
                returned.extend(images);
            }
            other => out.push(ChatMessage::Plain(other)),
        }
    }
    if !returned.is_empty() {
        out.push(returned_images(&returned));
    }
    out
}

/// The user message carrying the images tool results returned.
fn returned_images<'a>(images: &[&ImageRef]) -> ChatMessage<'a> {
    let names: Vec<String> = images.iter().map(|i| i.label()).collect();
    let mut content = vec![Part::Text {
        text: format!(
            "[The image{} returned by the tool calls above: {}]",
            if images.len() == 1 { "" } else { "s" },
            names.join(", ")
        ),
    }];
    content.extend(images.iter().map(|i| image(i)));
    ChatMessage::Parts {
        role: "user",
        content,
    }
}

/// An image part, at the size the API reads; one whose file is gone is said in text.
fn image(image: &ImageRef) -> Part {
    match crate::media::encoded(image, &crate::media::Limits::openai()) {
        Ok(encoded) => Part::ImageUrl {
            image_url: ImageUrl {
                url: encoded.data_url(),
            },
        },
        Err(e) => Part::Text {
            text: format!("[image {} could not be sent: {e}]", image.label()),
        },
    }
}

/// The history without the reasoning items another API left in it (a session recorded with
/// one API and resumed with this one): chat completions has no field for them.
fn without_reasoning(messages: &[Message]) -> Cow<'_, [Message]> {
    let has =
        |m: &Message| matches!(m, Message::Assistant { reasoning, .. } if !reasoning.is_empty());
    if !messages.iter().any(has) {
        return Cow::Borrowed(messages);
    }
    Cow::Owned(
        messages
            .iter()
            .map(|m| match m {
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => Message::assistant(content.clone(), tool_calls.clone()),
                other => other.clone(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::ReasoningItem;

    #[test]
    fn reasoning_of_another_api_is_not_sent() {
        let messages = vec![
            Message::user("hi"),
            Message::Assistant {
                content: Some("hello".into()),
                tool_calls: Vec::new(),
                reasoning: vec![ReasoningItem::RedactedThinking { data: "x".into() }],
            },
        ];
        let config = crate::llm::LlmConfig::new("http://127.0.0.1:1/v1", "m");
        let body = ChatCompletions
            .body(&Request {
                config: &config,
                messages: &messages,
                tools: &[],
                max_tokens: None,
                web_search: false,
            })
            .unwrap_or_default();
        let body = String::from_utf8_lossy(&body);
        assert!(!body.contains("reasoning"), "{body}");
        assert!(
            body.contains(r#"{"role":"assistant","content":"hello"}"#),
            "{body}"
        );
    }

    #[test]
    fn images_go_as_parts_of_user_messages_after_the_tool_results() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = crate::media::ImageStore::new(dir.path().to_path_buf());
        let mut png = Vec::new();
        let written = image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 2))
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png);
        assert!(written.is_ok());
        let Ok(shot) = store.add(&png, "shot.png") else {
            panic!("not stored")
        };
        let messages = vec![
            Message::user_with_images("look", vec![shot.clone()]),
            Message::assistant(
                None,
                vec![
                    crate::llm::ToolCall::new("a", "read_file", "{}"),
                    crate::llm::ToolCall::new("b", "read_file", "{}"),
                ],
            ),
            Message::tool_with_images("a", "an image", vec![shot]),
            Message::tool("b", "text"),
            Message::assistant(Some("seen".into()), Vec::new()),
        ];
        let config = crate::llm::LlmConfig::new("http://127.0.0.1:1/v1", "m");
        let body = ChatCompletions
            .body(&Request {
                config: &config,
                messages: &messages,
                tools: &[],
                max_tokens: None,
                web_search: false,
            })
            .unwrap_or_default();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let sent = &body["messages"];
        assert_eq!(
            sent[0]["content"][0],
            serde_json::json!({"type": "text", "text": "look"})
        );
        assert_eq!(sent[0]["content"][1]["type"], "image_url");
        assert_eq!(
            sent[2],
            serde_json::json!({"role": "tool", "tool_call_id": "a", "content": "an image"})
        );
        assert_eq!(sent[3]["role"], "tool");
        assert_eq!(sent[4]["role"], "user");
        assert_eq!(
            sent[4]["content"][0]["text"],
            "[The image returned by the tool calls above: shot.png (2x2)]"
        );
        assert!(
            sent[4]["content"][1]["image_url"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("data:image/png;base64,"))
        );
        assert_eq!(sent[5]["role"], "assistant");
    }
}
