//! Anthropic Messages, `POST {base}/v1/messages`: the history as content blocks (`text`,
//! `tool_use`, `tool_result`, and the `thinking` blocks an earlier answer left, sent back
//! unchanged with their signatures), the system prompt and the tools apart, and prompt caching:
//! `cache_control` on the last tool, the system prompt, the last message and the message where
//! the previous request ended, so that each request reads the whole conversation before its newest
//! turn from the cache. `stream.rs` reads the typed event stream.

mod stream;

pub use stream::MessagesParser;

use reqwest::RequestBuilder;
use serde::Serialize;
use serde_json::Value;

use super::stream::StreamParser;
use super::types::{Message, ReasoningItem};
use super::wire::{Request, Wire, join};
use crate::config::ReasoningEffort;
use crate::media::{ImageRef, Limits};

/// The API version every request names (`anthropic-version`).
pub const VERSION: &str = "2023-06-01";

#[derive(Debug)]
pub struct Messages;

#[derive(Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Block<'a>>,
    messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDef<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ToolContent<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource,
    },
    /// Text made here (an image that could not be sent, said instead).
    #[serde(rename = "text")]
    OwnedText {
        text: String,
    },
}

/// A tool result's content: its text, or text and images.
#[derive(Serialize)]
#[serde(untagged)]
enum ToolContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
struct ImageSource {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: String,
    data: String,
}

impl Block<'_> {
    /// Marks the end of a cached prefix here, where a block can carry the mark.
    fn mark(&mut self) -> bool {
        match self {
            Self::Text { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => {
                *cache_control = Some(CacheControl::EPHEMERAL);
                true
            }
            Self::Thinking { .. }
            | Self::RedactedThinking { .. }
            | Self::Image { .. }
            | Self::OwnedText { .. } => false,
        }
    }
}

#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

impl CacheControl {
    const EPHEMERAL: Self = Self { kind: "ephemeral" };
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// A tool offered: one of Ling's, or the API's own web search (run by the server).
#[derive(Serialize)]
#[serde(untagged)]
enum ToolDef<'a> {
    Function(Tool<'a>),
    Server {
        #[serde(rename = "type")]
        kind: &'static str,
        name: &'static str,
        max_uses: u32,
    },
}

/// Searches one web search request may make.
const WEB_SEARCH_MAX_USES: u32 = 5;

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// The least thinking budget the API accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

impl Wire for Messages {
    /// `{base}/v1/messages`, or `{base}/messages` when the base URL already ends in `/v1`
    /// (`ANTHROPIC_BASE_URL` is the server's root, as the SDKs take it).
    fn endpoint(&self, base_url: &str) -> String {
        join(base_url, &format!("{}/messages", version_prefix(base_url)))
    }

    fn models_url(&self, base_url: &str) -> String {
        join(base_url, &format!("{}/models", version_prefix(base_url)))
    }

    fn body(&self, request: &Request<'_>) -> Result<Vec<u8>, serde_json::Error> {
        let config = request.config;
        let max_tokens = request
            .max_tokens
            .or(config.max_output_tokens)
            .unwrap_or_else(|| default_max_tokens(&config.model));
        let (system, messages) = conversation(request.messages);
        let thinking = config
            .reasoning_effort
            .and_then(|effort| thinking_budget(effort, max_tokens))
            .filter(|_| can_think(&messages))
            .map(|budget_tokens| Thinking {
                kind: "enabled",
                budget_tokens,
            });
        let mut tools: Vec<Tool<'_>> = request
            .tools
            .iter()
            .map(|tool| Tool {
                name: &tool.name,
                description: &tool.description,
                input_schema: &tool.parameters,
                cache_control: None,
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last.cache_control = Some(CacheControl::EPHEMERAL);
        }
        let mut tools: Vec<ToolDef<'_>> = tools.into_iter().map(ToolDef::Function).collect();
        if request.web_search {
            tools.push(ToolDef::Server {
                kind: "web_search_20250305",
                name: "web_search",
                max_uses: WEB_SEARCH_MAX_USES,
            });
        }
        let body = MessagesRequest {
            model: &config.model,
            max_tokens,
            system,
            messages,
            tools,
            stream: true,
            thinking,
        };
        serde_json::to_vec(&body)
    }

    fn authorize(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        let request = request.header("anthropic-version", VERSION);
        match key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        Box::new(MessagesParser::default())
    }

    fn needs_key(&self, host: &str) -> bool {
        host == "api.anthropic.com"
    }
}

fn version_prefix(base_url: &str) -> &'static str {
    let path = base_url.split(['?', '#']).next().unwrap_or_default();
    if path.trim_end_matches('/').ends_with("/v1") {
        ""
    } else {
        "/v1"
    }
}

/// `max_tokens` is required: the most the model can write, where the name says which model.
pub fn default_max_tokens(model: &str) -> u32 {
    let model = model.to_ascii_lowercase();
    if !model.contains("claude") || model.contains("claude-3-5") || model.contains("claude-3.5") {
        8192
    } else if model.contains("claude-3-") || model.contains("claude-2") || model.contains("instant")
    {
        4096
    } else {
        32_000
    }
}

/// With thinking on, the API refuses a tool loop whose last answer does not start with its
/// thinking (one made before thinking was on, or left by compaction): that request goes without.
fn can_think(turns: &[Turn<'_>]) -> bool {
    let Some(last) = turns.iter().rev().find(|t| t.role == "assistant") else {
        return true;
    };
    let calls = last
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolUse { .. }));
    let thought = matches!(
        last.content.first(),
        Some(Block::Thinking { .. } | Block::RedactedThinking { .. })
    );
    !calls || thought
}

/// The thinking budget of an effort, leaving room for the answer within `max_tokens`.
fn thinking_budget(effort: ReasoningEffort, max_tokens: u32) -> Option<u32> {
    let wanted = match effort {
        ReasoningEffort::Minimal => return None,
        ReasoningEffort::Low => 4096,
        ReasoningEffort::Medium => 10_000,
        ReasoningEffort::High => 24_000,
    };
    let budget = wanted.min(max_tokens.saturating_sub(MIN_THINKING_BUDGET));
    (budget >= MIN_THINKING_BUDGET).then_some(budget)
}

/// The system prompt and the turns, with the cache marks. Consecutive messages of one role
/// become one turn (tool results, then a user's words, are one user turn); empty text is left
/// out, as the API refuses it.
fn conversation(history: &[Message]) -> (Vec<Block<'_>>, Vec<Turn<'_>>) {
    let mut system = Vec::new();
    let mut turns: Vec<Turn<'_>> = Vec::new();
    for message in history {
        match message {
            Message::System { content } if !content.is_empty() => system.push(Block::Text {
                text: content,
                cache_control: None,
            }),
            Message::System { .. } => {}
            Message::User { content, images } => {
                // Images first: the API's advice for a question about them.
                let mut blocks: Vec<Block<'_>> = images.iter().map(image).collect();
                blocks.extend(text(content));
                push(&mut turns, "user", blocks);
            }
            Message::Tool {
                tool_call_id,
                content,
                images,
            } => {
                let content = if images.is_empty() {
                    ToolContent::Text(content)
                } else {
                    let mut blocks = text(content);
                    blocks.extend(images.iter().map(image));
                    ToolContent::Blocks(blocks)
                };
                push(
                    &mut turns,
                    "user",
                    vec![Block::ToolResult {
                        tool_use_id: tool_call_id,
                        content,
                        cache_control: None,
                    }],
                );
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                let mut blocks: Vec<Block<'_>> = reasoning.iter().filter_map(thinking).collect();
                if let Some(content) = content {
                    blocks.extend(text(content));
                }
                blocks.extend(tool_calls.iter().map(|call| Block::ToolUse {
                    id: &call.id,
                    name: call.name(),
                    input: arguments_object(call.arguments()),
                    cache_control: None,
                }));
                push(&mut turns, "assistant", blocks);
            }
        }
    }
    if let Some(last) = system.last_mut() {
        last.mark();
    }
    mark_cache_points(&mut turns);
    (system, turns)
}

/// Adds blocks to the conversation: to the last turn when it has the same role.
fn push<'a>(turns: &mut Vec<Turn<'a>>, role: &'static str, blocks: Vec<Block<'a>>) {
    if blocks.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => turns.push(Turn {
            role,
            content: blocks,
        }),
    }
}

/// The newest turn, and the user turn before it (where the previous request ended, so it is in
/// the cache even when more than the API's 20-block look-back was added since).
fn mark_cache_points(turns: &mut [Turn<'_>]) {
    let users: Vec<usize> = turns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == "user")
        .map(|(i, _)| i)
        .rev()
        .take(2)
        .collect();
    let last = turns.len().checked_sub(1);
    let mut points: Vec<usize> = last.into_iter().collect();
    points.extend(users.iter().copied().filter(|i| Some(*i) != last).take(1));
    for index in points {
        if let Some(block) = turns[index].content.iter_mut().rev().find(|b| b.can_mark()) {
            block.mark();
        }
    }
}

impl Block<'_> {
    fn can_mark(&self) -> bool {
        !matches!(
            self,
            Self::Thinking { .. }
                | Self::RedactedThinking { .. }
                | Self::Image { .. }
                | Self::OwnedText { .. }
        )
    }
}

/// An image block, at the size the API reads; one whose file is gone is said in text.
fn image<'a>(image: &ImageRef) -> Block<'a> {
    match crate::media::encoded(image, &Limits::anthropic()) {
        Ok(encoded) => Block::Image {
            source: ImageSource {
                kind: "base64",
                media_type: encoded.media_type,
                data: encoded.base64,
            },
        },
        Err(e) => Block::OwnedText {
            text: format!("[image {} could not be sent: {e}]", image.label()),
        },
    }
}

fn text(content: &str) -> Vec<Block<'_>> {
    if content.trim().is_empty() {
        Vec::new()
    } else {
        vec![Block::Text {
            text: content,
            cache_control: None,
        }]
    }
}

fn thinking(item: &ReasoningItem) -> Option<Block<'_>> {
    match item {
        ReasoningItem::Thinking {
            thinking,
            signature,
        } => Some(Block::Thinking {
            thinking,
            signature,
        }),
        ReasoningItem::RedactedThinking { data } => Some(Block::RedactedThinking { data }),
        // Another API's reasoning (a resumed session) means nothing here.
        ReasoningItem::Reasoning { .. } => None,
    }
}

/// `tool_use.input` must be an object: the model's arguments, or (when they were not JSON) an
/// empty one; the tool's error about them is in the tool result that follows.
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}

#[cfg(test)]
mod tests;
