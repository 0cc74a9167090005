//! Reads Anthropic's typed event stream: `message_start` (the input usage, cache reads and
//! writes), `content_block_start` / `_delta` / `_stop` for `text`, `tool_use` (arguments as
//! `input_json_delta` fragments), `thinking` (`thinking_delta`, `signature_delta`) and
//! `redacted_thinking` blocks, `message_delta` (the stop reason, the output usage so far),
//! `message_stop`, `ping`, and `error` (`overloaded_error` retried like a 529, "prompt is too
//! long" taken for a context overflow). The web search tool's results (`web_search_tool_result`
//! blocks) and the answer's citations (`citations_delta`) become the completion's citations.
//! Event types it does not know are skipped, as the API asks.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::llm::stream::{StreamError, StreamParser, ToolCalls, error_text, parse, server_failure};
use crate::llm::types::{Completion, FinishReason, ReasoningItem, StreamEvent, Usage};

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<RawUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
        /// The sources of a non-streamed answer's text.
        #[serde(default)]
        citations: Vec<Citation>,
    },
    /// The server running its own tool (the web search): its input streams in like a tool
    /// call's, but it is not one of Ling's to run.
    ServerToolUse,
    /// What the server-side web search found.
    WebSearchToolResult {
        #[serde(default)]
        content: Value,
    },
    ToolUse {
        id: String,
        name: String,
        /// Sent whole in a non-streamed answer; `{}` at the start of a streamed one.
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "citations_delta")]
    Citations { citation: Citation },
    #[serde(other)]
    Unknown,
}

/// A page an answer cites (a `web_search_result_location`), or a search result.
#[derive(Debug, Default, Deserialize)]
struct Citation {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Usage as the API counts it: `input_tokens` are those neither read from nor written to the
/// cache. `message_delta` repeats the counts so far (cumulative), each field only when known.
#[derive(Debug, Default, Deserialize)]
struct RawUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

/// A non-streamed answer (the server ignored `stream: true`).
#[derive(Debug, Deserialize)]
struct WholeMessage {
    #[serde(default)]
    content: Vec<BlockStart>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

/// A reasoning block being read.
#[derive(Debug)]
enum Reasoning {
    Thinking { thinking: String, signature: String },
    Redacted(String),
}

#[derive(Debug, Default)]
pub struct MessagesParser {
    content: String,
    reasoning: String,
    calls: ToolCalls,
    /// The thinking blocks by content index.
    blocks: BTreeMap<usize, Reasoning>,
    input: RawUsage,
    stop_reason: Option<String>,
    done: bool,
    shown: bool,
    /// Pages the answer cites, then pages the search found: (title, URL), each URL once.
    cited: Vec<(String, String)>,
    found: Vec<(String, String)>,
    /// The blocks of the server's own tool calls, whose input is not a call of Ling's.
    server_blocks: Vec<usize>,
}

impl MessagesParser {
    fn start(&mut self, index: usize, block: BlockStart, on_event: &mut dyn FnMut(StreamEvent)) {
        match block {
            BlockStart::Text { text, citations } => {
                self.text(text, on_event);
                for citation in citations {
                    self.cite(citation);
                }
            }
            BlockStart::ServerToolUse => self.server_blocks.push(index),
            BlockStart::WebSearchToolResult { content } => {
                for result in content.as_array().into_iter().flatten() {
                    if let Some(url) = result["url"].as_str() {
                        let title = result["title"].as_str().unwrap_or(url);
                        self.found.push((title.to_string(), url.to_string()));
                    }
                }
            }
            BlockStart::ToolUse { id, name, input } => {
                let call = self.calls.get_mut(index);
                call.id = id;
                call.name = name;
                // The input of a non-streamed answer; a stream's starts as `{}` and arrives in
                // fragments.
                if let Some(input) = input.filter(|i| i.as_object().is_none_or(|o| !o.is_empty())) {
                    call.arguments = input.to_string();
                }
                self.shown |= self.calls.announce(index, on_event);
            }
            BlockStart::Thinking {
                thinking,
                signature,
            } => {
                self.think(&thinking, on_event);
                self.blocks.insert(
                    index,
                    Reasoning::Thinking {
                        thinking,
                        signature,
                    },
                );
            }
            BlockStart::RedactedThinking { data } => {
                self.blocks.insert(index, Reasoning::Redacted(data));
            }
            BlockStart::Unknown => {}
        }
    }

    fn delta(&mut self, index: usize, delta: Delta, on_event: &mut dyn FnMut(StreamEvent)) {
        match delta {
            Delta::Text { text } => self.text(text, on_event),
            Delta::InputJson { .. } if self.server_blocks.contains(&index) => {}
            Delta::InputJson { partial_json } => {
                self.calls.get_mut(index).arguments.push_str(&partial_json);
            }
            Delta::Thinking { thinking } => {
                self.think(&thinking, on_event);
                if let Some(Reasoning::Thinking { thinking: all, .. }) = self.blocks.get_mut(&index)
                {
                    all.push_str(&thinking);
                }
            }
            Delta::Signature { signature } => {
                if let Some(Reasoning::Thinking { signature: all, .. }) =
                    self.blocks.get_mut(&index)
                {
                    all.push_str(&signature);
                }
            }
            Delta::Citations { citation } => self.cite(citation),
            Delta::Unknown => {}
        }
    }

    fn cite(&mut self, citation: Citation) {
        if let Some(url) = citation.url
            && !self.cited.iter().any(|(_, u)| *u == url)
        {
            self.cited
                .push((citation.title.unwrap_or_else(|| url.clone()), url));
        }
    }

    fn text(&mut self, text: String, on_event: &mut dyn FnMut(StreamEvent)) {
        if !text.is_empty() {
            self.content.push_str(&text);
            self.shown = true;
            on_event(StreamEvent::TextDelta(text));
        }
    }

    fn think(&mut self, text: &str, on_event: &mut dyn FnMut(StreamEvent)) {
        if !text.is_empty() {
            self.reasoning.push_str(text);
            self.shown = true;
            on_event(StreamEvent::ReasoningDelta(text.to_string()));
        }
    }

    fn count(&mut self, usage: RawUsage) {
        let merge = |mine: &mut Option<u64>, theirs: Option<u64>| {
            if theirs.is_some() {
                *mine = theirs;
            }
        };
        merge(&mut self.input.input_tokens, usage.input_tokens);
        merge(&mut self.input.output_tokens, usage.output_tokens);
        merge(
            &mut self.input.cache_creation_input_tokens,
            usage.cache_creation_input_tokens,
        );
        merge(
            &mut self.input.cache_read_input_tokens,
            usage.cache_read_input_tokens,
        );
    }

    fn usage(&self) -> Option<Usage> {
        let u = &self.input;
        if u.input_tokens.is_none() && u.output_tokens.is_none() {
            return None;
        }
        let read = u.cache_read_input_tokens.unwrap_or(0);
        let write = u.cache_creation_input_tokens.unwrap_or(0);
        Some(Usage {
            prompt_tokens: u.input_tokens.unwrap_or(0) + read + write,
            completion_tokens: u.output_tokens.unwrap_or(0),
            cache_read_tokens: read,
            cache_write_tokens: write,
            reasoning_tokens: 0,
        })
    }
}

/// An `error` event (or an error body): what it means for the request.
pub fn stream_error(error: &Value) -> StreamError {
    let overloaded = matches!(
        error["type"].as_str().unwrap_or_default(),
        "overloaded_error" | "api_error" | "rate_limit_error"
    );
    server_failure(overloaded, false, error_text(error))
}

impl StreamParser for MessagesParser {
    fn push(
        &mut self,
        data: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        let data = data.trim();
        if self.done || data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        match parse::<Event>(data)? {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.count(usage);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.start(index, content_block, on_event),
            Event::ContentBlockDelta { index, delta } => self.delta(index, delta, on_event),
            Event::Ping | Event::Unknown => {}
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    self.count(usage);
                }
            }
            Event::MessageStop => self.done = true,
            Event::Error { error } => return Err(stream_error(&error)),
        }
        Ok(())
    }

    fn push_whole(
        &mut self,
        body: &str,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamError> {
        let value: Value = parse(body)?;
        if value["type"] == "error" {
            return Err(stream_error(&value["error"]));
        }
        let message: WholeMessage = parse(body)?;
        for (index, block) in message.content.into_iter().enumerate() {
            self.start(index, block, on_event);
        }
        self.stop_reason = message.stop_reason;
        if let Some(usage) = message.usage {
            self.count(usage);
        }
        self.done = true;
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
        if !self.done && self.stop_reason.is_none() {
            return Err(StreamError::Cut);
        }
        let mut this = *self;
        this.calls.announce_before(usize::MAX, on_event);
        let usage = this.usage();
        let mut tool_calls = this.calls.into_calls();
        for call in &mut tool_calls {
            // A tool without parameters streams no fragment at all.
            if call.function.arguments.trim().is_empty() {
                call.function.arguments = "{}".to_string();
            }
        }
        let finish_reason = match this.stop_reason.as_deref() {
            _ if !tool_calls.is_empty() => FinishReason::ToolCalls,
            Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some("end_turn" | "stop_sequence" | "pause_turn") => FinishReason::Stop,
            _ => FinishReason::Other,
        };
        let reasoning_items = this
            .blocks
            .into_values()
            .map(|block| match block {
                Reasoning::Thinking {
                    thinking,
                    signature,
                } => ReasoningItem::Thinking {
                    thinking,
                    signature,
                },
                Reasoning::Redacted(data) => ReasoningItem::RedactedThinking { data },
            })
            .collect();
        let mut citations = this.cited;
        for (title, url) in this.found {
            if !citations.iter().any(|(_, u)| *u == url) {
                citations.push((title, url));
            }
        }
        Ok(Completion {
            content: this.content,
            reasoning: this.reasoning,
            tool_calls,
            finish_reason,
            usage,
            reasoning_items,
            citations,
        })
    }
}
