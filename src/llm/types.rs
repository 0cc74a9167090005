use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::media::ImageRef;

/// One chat message, serialized exactly as the chat-completions API takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
        /// Images the user attached, kept by reference (`LING_HOME/images`): each wire API
        /// sends them as its image parts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRef>,
    },
    Assistant {
        /// `null` when the message only calls tools.
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// What the model's reasoning left to be sent back with this message (Anthropic's signed
        /// `thinking` blocks, the Responses API's encrypted `reasoning` items); never shown, and
        /// never sent to a chat-completions server.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<ReasoningItem>,
    },
    Tool {
        tool_call_id: String,
        content: String,
        /// Images the tool returned (`read_file` of a picture). Anthropic takes them in the tool
        /// result; chat completions and Responses in a user message after the results, since
        /// their tool messages hold text only.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageRef>,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
            images: Vec::new(),
        }
    }

    /// A user's message with images attached.
    pub fn user_with_images(content: impl Into<String>, images: Vec<ImageRef>) -> Self {
        Self::User {
            content: content.into(),
            images,
        }
    }

    /// An answer of the model: its text (if any) and its tool calls, without reasoning items.
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant {
            content,
            tool_calls,
            reasoning: Vec::new(),
        }
    }

    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::tool_with_images(tool_call_id, content, Vec::new())
    }

    /// A tool's result with the images it returned.
    pub fn tool_with_images(
        tool_call_id: impl Into<String>,
        content: impl Into<String>,
        images: Vec<ImageRef>,
    ) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            images,
        }
    }

    /// The images this message carries.
    pub fn images(&self) -> &[ImageRef] {
        match self {
            Self::User { images, .. } | Self::Tool { images, .. } => images,
            Self::System { .. } | Self::Assistant { .. } => &[],
        }
    }
}

/// Reasoning a model left to be sent back on the next request, exactly as it came: a provider
/// verifies it (a signature, an encryption) and refuses a request whose reasoning was altered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningItem {
    /// An Anthropic `thinking` block: the text shown dimmed, and the signature that vouches for it.
    Thinking { thinking: String, signature: String },
    /// An Anthropic `redacted_thinking` block: encrypted, nothing to show.
    RedactedThinking { data: String },
    /// A Responses API `reasoning` item: its summary, and the encrypted reasoning itself
    /// (`include: ["reasoning.encrypted_content"]`, so that nothing needs to be stored server-side).
    Reasoning {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

/// A tool call as the API carries it: `{"id","type":"function","function":{"name","arguments"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The raw JSON text the model produced; it may be malformed.
    pub arguments: String,
}

fn function_type() -> String {
    "function".to_string()
}

impl ToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }

    pub fn name(&self) -> &str {
        &self.function.name
    }

    pub fn arguments(&self) -> &str {
        &self.function.arguments
    }
}

/// A tool offered to the model, sent as `{"type":"function","function":{...}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    /// A value this client does not know, or none given before `[DONE]`.
    Other,
}

/// The tokens of one request (or a sum of them), as the server counted. The cache and reasoning
/// figures are parts of the two totals, and are left out of the JSON outputs when 0, so that a
/// server that reports none of them gives the same output as before they existed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token of the request, those read from or written to a prompt cache included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those read from the provider's prompt cache (Anthropic's
    /// `cache_read_input_tokens`, OpenAI's `cached_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens`, those written to the prompt cache (Anthropic's
    /// `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Of `completion_tokens`, those the model spent reasoning.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// What these tokens cost at `price`, in US dollars: cache reads and writes at their own
    /// prices where it gives them, else at the input price.
    pub fn cost(&self, price: crate::config::Price) -> f64 {
        let read = price.cache_read_per_m_tok.unwrap_or(price.input_per_m_tok);
        let write = price.cache_write_per_m_tok.unwrap_or(price.input_per_m_tok);
        let plain = self
            .prompt_tokens
            .saturating_sub(self.cache_read_tokens + self.cache_write_tokens);
        (plain as f64 * price.input_per_m_tok
            + self.cache_read_tokens as f64 * read
            + self.cache_write_tokens as f64 * write
            + self.completion_tokens as f64 * price.output_per_m_tok)
            / 1e6
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// A count with no cache or reasoning figures.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            ..Self::default()
        }
    }

    /// What was added since `earlier` (a total taken before).
    pub fn since(self, earlier: Self) -> Self {
        Self {
            prompt_tokens: self.prompt_tokens.saturating_sub(earlier.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(earlier.completion_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_sub(earlier.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(earlier.cache_write_tokens),
            reasoning_tokens: self
                .reasoning_tokens
                .saturating_sub(earlier.reasoning_tokens),
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// What the client reports while a response streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible answer text.
    TextDelta(String),
    /// Reasoning text (`reasoning_content`, a `thinking` block, a reasoning summary): shown
    /// dimmed; what must go back to the model goes in [`Completion::reasoning_items`].
    ReasoningDelta(String),
    /// The model has begun a tool call (its name is known); arguments are still streaming.
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// The request is being retried after a failure that happened before anything was shown.
    Retrying {
        /// The number of this retry: 1 for the first, at most `LlmConfig::max_retries`.
        attempt: u32,
        /// The wait before it.
        delay_ms: u64,
        /// A one-line summary of the failure.
        reason: String,
    },
}

/// A whole model response, assembled from the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub content: String,
    pub reasoning: String,
    /// In `index` order.
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Option<Usage>,
    /// Reasoning to send back with this answer (empty for chat completions).
    pub reasoning_items: Vec<ReasoningItem>,
    /// The pages the API's own web search found, those the answer cites first: (title, URL).
    pub citations: Vec<(String, String)>,
}
