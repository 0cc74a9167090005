//! Reads the Responses API's `response.*` events: `output_item.added` / `.done` for messages,
//! function calls and reasoning items (the reasoning's `encrypted_content` kept to send back),
//! `output_text.delta` and `refusal.delta` (text), `function_call_arguments.delta` / `.done`,
//! `reasoning_summary_text.delta` and `reasoning_text.delta` (shown dimmed), and the end:
//! `response.completed` (with the usage, cached and reasoning tokens included),
//! `response.incomplete` (the output limit or the content filter), `response.failed` and
//! `error` (a context overflow, an overload to retry, or an error). The `url_citation`
//! annotations of a message (the `web_search` tool's sources) become the completion's
//! citations. The stream has no `[DONE]`; one from a proxy is taken as the end too.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use serde_json::Value;

use crate::llm::stream::{
    StreamError, StreamParser, ToolCalls, error_text, finish_with_calls, parse, server_failure,
};
use crate::llm::types::{Completion, FinishReason, ReasoningItem, StreamEvent, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: usize,
        item: Item,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: usize,
        item: Item,
    },
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta {
        #[serde(default)]
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        output_index: usize,
        arguments: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    SummaryPart {
        #[serde(default)]
        output_index: usize,
    },
    #[serde(
        rename = "response.reasoning_summary_text.delta",
        alias = "response.reasoning_text.delta"
    )]
    ReasoningDelta {
        #[serde(default)]
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.completed")]
    Completed { response: Response },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: Response },
    #[serde(rename = "response.failed")]
    Failed { response: Response },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item {
    Message {
        #[serde(default)]
        content: Vec<Part>,
    },
    FunctionCall {
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        summary: Vec<Part>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

/// A part of a message (`output_text`, `refusal`) or of a reasoning summary (`summary_text`).
#[derive(Debug, Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    /// A message's `url_citation`s (and other annotations, skipped).
    #[serde(default)]
    annotations: Vec<Annotation>,
}

#[derive(Debug, Deserialize)]
struct Annotation {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

impl Part {
    fn text(&self) -> &str {
        self.text
            .as_deref()
            .or(self.refusal.as_deref())
            .unwrap_or_default()
    }
}

#[derive(Debug, Default, Deserialize)]
struct Response {
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    incomplete_details: Option<Incomplete>,
    #[serde(default)]
    error: Option<Value>,
    /// The items of a non-streamed answer.
    #[serde(default)]
    output: Vec<Item>,
}

#[derive(Debug, Deserialize)]
struct Incomplete {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Debug, Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Debug, Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

#[derive(Debug, Default)]
pub struct ResponsesParser {
    content: String,
    reasoning: String,
    calls: ToolCalls,
    /// Reasoning items by output index, as they were done.
    items: BTreeMap<usize, ReasoningItem>,
    /// Output items whose text arrived in deltas (so `output_item.done` does not add it again).
    streamed: HashSet<usize>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
    shown: bool,
    /// The pages the answer cites: (title, URL), each URL once.
    citations: Vec<(String, String)>,
}

impl ResponsesParser {
    fn text(&mut self, index: usize, text: &str, on_event: &mut dyn FnMut(StreamEvent)) {
        if !text.is_empty() {
            self.streamed.insert(index);
            self.content.push_str(text);
            self.shown = true;
            on_event(StreamEvent::TextDelta(text.to_string()));
        }
    }

    fn think(&mut self, index: usize, text: &str, on_event: &mut dyn FnMut(StreamEvent)) {
        if !text.is_empty() {
            self.streamed.insert(index);
            self.reasoning.push_str(text);
            self.shown = true;
            on_event(StreamEvent::ReasoningDelta(text.to_string()));
        }
    }

    fn added(&mut self, index: usize, item: Item, on_event: &mut dyn FnMut(StreamEvent)) {
        if let Item::FunctionCall {
            call_id,
            name,
            arguments,
        } = item
        {
            let call = self.calls.get_mut(index);
            call.id = call_id;
            call.name = name;
            call.arguments = arguments;
            self.shown |= self.calls.announce(index, on_event);
        }
    }

    fn done_item(&mut self, index: usize, item: Item, on_event: &mut dyn FnMut(StreamEvent)) {
        match item {
            Item::Message { content } => {
                for annotation in content.iter().flat_map(|p| &p.annotations) {
                    if let (true, Some(url)) = (annotation.kind == "url_citation", &annotation.url)
                        && !self.citations.iter().any(|(_, u)| u == url)
                    {
                        let title = annotation.title.clone().unwrap_or_else(|| url.clone());
                        self.citations.push((title, url.clone()));
                    }
                }
                // A server that sends the message whole, without deltas.
                if !self.streamed.contains(&index) {
                    let text: String = content.iter().map(Part::text).collect();
                    self.text(index, &text, on_event);
                }
            }
            Item::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let call = self.calls.get_mut(index);
                if !call_id.is_empty() {
                    call.id = call_id;
                }
                if !name.is_empty() {
                    call.name = name;
                }
                // The whole arguments, however their fragments went.
                if !arguments.is_empty() {
                    call.arguments = arguments;
                }
                self.shown |= self.calls.announce(index, on_event);
            }
            Item::Reasoning {
                summary,
                encrypted_content,
            } => {
                let summary: Vec<String> = summary.iter().map(|p| p.text().to_string()).collect();
                if !self.streamed.contains(&index) {
                    self.think(index, &summary.join("\n\n"), on_event);
                }
                self.items.insert(
                    index,
                    ReasoningItem::Reasoning {
                        summary,
                        encrypted_content,
                    },
                );
            }
            Item::Unknown => {}
        }
    }

    fn end(&mut self, response: Response, finish: FinishReason) {
        self.usage = response.usage.map(|u| Usage {
            prompt_tokens: u.input_tokens,
            completion_tokens: u.output_tokens,
            cache_read_tokens: u.input_tokens_details.map_or(0, |d| d.cached_tokens),
            reasoning_tokens: u.output_tokens_details.map_or(0, |d| d.reasoning_tokens),
            ..Usage::default()
        });
        self.finish = Some(finish);
        self.done = true;
    }
}

/// What a failure reported in the stream means: a context overflow, a passing overload, or an
/// error.
fn failure(code: Option<&str>, message: String) -> StreamError {
    let code = code.unwrap_or_default();
    let overloaded = matches!(
        code,
        "server_error" | "rate_limit_exceeded" | "server_is_overloaded" | "slow_down"
    );
    server_failure(overloaded, code == "context_length_exceeded", message)
}

impl StreamParser for ResponsesParser {
    fn push(
        &mut self,
        data: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        let data = data.trim();
        if self.done || data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        match parse::<Event>(data)? {
            Event::ItemAdded { output_index, item } => self.added(output_index, item, on_event),
            Event::ItemDone { output_index, item } => self.done_item(output_index, item, on_event),
            Event::TextDelta {
                output_index,
                delta,
            } => self.text(output_index, &delta, on_event),
            Event::ArgumentsDelta {
                output_index,
                delta,
            } => self.calls.get_mut(output_index).arguments.push_str(&delta),
            Event::ArgumentsDone {
                output_index,
                arguments,
            } => self.calls.get_mut(output_index).arguments = arguments,
            Event::SummaryPart { output_index } => {
                // Parts of one summary are paragraphs.
                if self.streamed.contains(&output_index) {
                    self.think(output_index, "\n\n", on_event);
                }
            }
            Event::ReasoningDelta {
                output_index,
                delta,
            } => self.think(output_index, &delta, on_event),
            Event::Completed { response } => self.end(response, FinishReason::Stop),
            Event::Incomplete { response } => {
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .and_then(|d| d.reason.clone());
                let finish = match reason.as_deref() {
                    Some("content_filter") => FinishReason::ContentFilter,
                    Some("max_output_tokens") => FinishReason::Length,
                    _ => FinishReason::Other,
                };
                self.end(response, finish);
            }
            Event::Failed { response } => {
                let error = response.error.unwrap_or(Value::Null);
                return Err(failure(error["code"].as_str(), error_text(&error)));
            }
            Event::Error { code, message } => {
                let message = message.unwrap_or_else(|| "error".to_string());
                return Err(failure(code.as_deref(), message));
            }
            Event::Unknown => {}
        }
        Ok(())
    }

    fn push_whole(
        &mut self,
        body: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        let mut response: Response = parse(body)?;
        if let Some(error) = response.error.take().filter(|e| !e.is_null()) {
            return Err(failure(error["code"].as_str(), error_text(&error)));
        }
        for (index, item) in std::mem::take(&mut response.output).into_iter().enumerate() {
            self.done_item(index, item, on_event);
        }
        self.end(response, FinishReason::Stop);
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn has_shown_output(&self) -> bool {
        self.shown
    }

    fn finish(
        self: Box<Self>,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Completion, StreamError> {
        if !self.done {
            return Err(StreamError::Cut);
        }
        let mut this = *self;
        this.calls.announce_before(usize::MAX, on_event);
        let tool_calls = this.calls.into_calls();
        let finish_reason = finish_with_calls(this.finish, !tool_calls.is_empty());
        Ok(Completion {
            content: this.content,
            reasoning: this.reasoning,
            tool_calls,
            finish_reason,
            usage: this.usage,
            reasoning_items: this.items.into_values().collect(),
            citations: this.citations,
        })
    }
}
