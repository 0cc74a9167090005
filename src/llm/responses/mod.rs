//! OpenAI Responses, `POST {base_url}/responses`, stateless: `store: false`, the whole history
//! sent each time as input items (`message`, `function_call`, `function_call_output`, and the
//! `reasoning` items of earlier answers with their `encrypted_content`, asked for with
//! `include: ["reasoning.encrypted_content"]`), so no `previous_response_id` is needed and nothing
//! stays on the server. `stream.rs` reads the `response.*` events.

mod stream;

pub use stream::ResponsesParser;

use serde::Serialize;
use serde_json::Value;

use super::stream::StreamParser;
use super::types::{Message, ReasoningItem};
use super::wire::{Request, Wire, join};

#[derive(Debug)]
pub struct Responses;

#[derive(Serialize)]
struct ResponsesRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Vec<Content<'a>>,
    },
    /// Sent without its `id`: with `store: false` the server keeps no item an id could name.
    Reasoning {
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content<'a> {
    InputText {
        text: &'a str,
    },
    OutputText {
        text: &'a str,
    },
    /// An image as a data URL.
    InputImage {
        image_url: String,
        detail: &'static str,
    },
    /// Text made here (about images).
    #[serde(rename = "input_text")]
    OwnedText {
        text: String,
    },
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// A tool offered: one of Ling's, or the API's own (`web_search`, run by the server).
#[derive(Serialize)]
#[serde(untagged)]
enum ToolDef<'a> {
    Function(Tool<'a>),
    Hosted {
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Serialize)]
struct Reasoning {
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<&'static str>,
    summary: &'static str,
}

impl Wire for Responses {
    fn endpoint(&self, base_url: &str) -> String {
        join(base_url, "/responses")
    }

    fn models_url(&self, base_url: &str) -> String {
        join(base_url, "/models")
    }

    fn body(&self, request: &Request<'_>) -> Result<Vec<u8>, serde_json::Error> {
        let config = request.config;
        let (instructions, input) = items(request.messages);
        let reasons = config.reasoning_effort.is_some() || is_reasoning_model(&config.model);
        let has_tools = !request.tools.is_empty() || request.web_search;
        let hosted = request
            .web_search
            .then_some(ToolDef::Hosted { kind: "web_search" });
        let body = ResponsesRequest {
            model: &config.model,
            instructions,
            input,
            tools: request
                .tools
                .iter()
                .map(|tool| {
                    ToolDef::Function(Tool {
                        kind: "function",
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                        strict: false,
                    })
                })
                .chain(hosted)
                .collect(),
            tool_choice: has_tools.then_some("auto"),
            parallel_tool_calls: has_tools.then_some(true),
            stream: true,
            store: false,
            include: if reasons {
                vec!["reasoning.encrypted_content"]
            } else {
                Vec::new()
            },
            reasoning: reasons.then(|| Reasoning {
                effort: config.reasoning_effort.map(|e| e.as_str()),
                summary: "auto",
            }),
            max_output_tokens: request.max_tokens.or(config.max_output_tokens),
        };
        serde_json::to_vec(&body)
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(ResponsesParser::default())
    }
}

/// OpenAI's reasoning models, which take `reasoning` (others refuse it): the o-series,
/// GPT-5 (but not its chat variant), codex models and gpt-oss.
pub fn is_reasoning_model(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or(&model);
    let o_series = name.len() > 1
        && name.starts_with('o')
        && name[1..].starts_with(|c: char| c.is_ascii_digit());
    o_series
        || (name.starts_with("gpt-5") && !name.contains("chat"))
        || name.contains("codex")
        || name.starts_with("gpt-oss")
}

/// The first system message as `instructions`, the rest of the history as input items. The
/// images of tool results go in a user message after the results (a function call's output
/// holds text).
fn items(history: &[Message]) -> (Option<&str>, Vec<Item<'_>>) {
    let mut instructions = None;
    let mut input = Vec::new();
    let mut returned: Vec<&crate::media::ImageRef> = Vec::new();
    for message in history {
        if !matches!(message, Message::Tool { .. }) && !returned.is_empty() {
            input.push(returned_images(&std::mem::take(&mut returned)));
        }
        match message {
            Message::System { content } if instructions.is_none() => {
                instructions = Some(content.as_str());
            }
            Message::System { content } => input.push(Item::Message {
                role: "developer",
                content: vec![Content::InputText { text: content }],
            }),
            Message::User { content, images } => {
                let mut parts = vec![Content::InputText { text: content }];
                parts.extend(images.iter().map(image));
                input.push(Item::Message {
                    role: "user",
                    content: parts,
                });
            }
            Message::Tool {
                tool_call_id,
                content,
                images,
            } => {
                input.push(Item::FunctionCallOutput {
                    call_id: tool_call_id,
                    output: content,
                });
                returned.extend(images);
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                for item in reasoning {
                    if let ReasoningItem::Reasoning {
                        summary,
                        encrypted_content,
                    } = item
                    {
                        input.push(Item::Reasoning {
                            summary: summary
                                .iter()
                                .map(|text| Summary {
                                    kind: "summary_text",
                                    text,
                                })
                                .collect(),
                            encrypted_content: encrypted_content.as_deref(),
                        });
                    }
                }
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    input.push(Item::Message {
                        role: "assistant",
                        content: vec![Content::OutputText { text }],
                    });
                }
                input.extend(tool_calls.iter().map(|call| Item::FunctionCall {
                    call_id: &call.id,
                    name: call.name(),
                    arguments: call.arguments(),
                }));
            }
        }
    }
    if !returned.is_empty() {
        input.push(returned_images(&returned));
    }
    (instructions, input)
}

/// The user message carrying the images tool results returned.
fn returned_images<'a>(images: &[&crate::media::ImageRef]) -> Item<'a> {
    let names: Vec<String> = images.iter().map(|i| i.label()).collect();
    let mut content = vec![Content::OwnedText {
        text: format!(
            "[The image{} returned by the tool calls above: {}]",
            if images.len() == 1 { "" } else { "s" },
            names.join(", ")
        ),
    }];
    content.extend(images.iter().map(|i| image(i)));
    Item::Message {
        role: "user",
        content,
    }
}

/// An image part, at the size the API reads; one whose file is gone is said in text.
fn image<'a>(image: &crate::media::ImageRef) -> Content<'a> {
    match crate::media::encoded(image, &crate::media::Limits::openai()) {
        Ok(encoded) => Content::InputImage {
            image_url: encoded.data_url(),
            detail: "auto",
        },
        Err(e) => Content::OwnedText {
            text: format!("[image {} could not be sent: {e}]", image.label()),
        },
    }
}

#[cfg(test)]
mod tests;
