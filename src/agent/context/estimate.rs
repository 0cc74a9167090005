//! A cheap token estimate, for what the server has not counted yet: about four characters a
//! token for prose, fewer for code and JSON, whose punctuation and short identifiers split into
//! more tokens, and one token per non-ASCII character or so. The error against a real tokenizer
//! is measured by `examples/context-bench` (README "Benchmarks").

use crate::llm::{Message, ToolSpec};

/// Tokens a chat message costs beyond its text (role, separators), as OpenAI counts them.
const MESSAGE_OVERHEAD: u64 = 4;

/// The estimated tokens of `text`.
pub fn text(text: &str) -> u64 {
    let mut word_chars = 0u64;
    let mut symbols = 0u64;
    let mut spaces = 0u64;
    let mut other = 0u64;
    let mut newlines = 0u64;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word_chars += 1;
        } else if c == '\n' {
            newlines += 1;
        } else if c.is_ascii_whitespace() {
            spaces += 1;
        } else if c.is_ascii() {
            symbols += 1;
        } else {
            other += 1;
        }
    }
    // Letters and digits in runs of about four per token; most ASCII symbols are a token of
    // their own or half of one; runs of spaces (indentation) merge; lines are about a token.
    let estimate = word_chars as f64 / 4.2
        + symbols as f64 * 0.6
        + spaces as f64 * 0.15
        + newlines as f64 * 0.6
        + other as f64 * 0.9;
    estimate.ceil() as u64
}

/// The estimated tokens of one message as sent.
pub fn message(message: &Message) -> u64 {
    MESSAGE_OVERHEAD
        + match message {
            Message::System { content } | Message::User { content } => text(content),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.as_deref().map_or(0, text)
                    + tool_calls
                        .iter()
                        .map(|call| 8 + text(call.name()) + text(call.arguments()))
                        .sum::<u64>()
            }
            Message::Tool { content, .. } => 6 + text(content),
        }
}

/// The estimated tokens of messages.
pub fn messages(messages: &[Message]) -> u64 {
    messages.iter().map(message).sum()
}

/// The estimated tokens of the tool definitions offered with a request.
pub fn tools(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|tool| {
            10 + text(&tool.name) + text(&tool.description) + text(&tool.parameters.to_string())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_about_four_characters_a_token_and_code_denser() {
        let prose = "The quick brown fox jumps over the lazy dog while the farmer sleeps soundly. ";
        let prose_tokens = text(&prose.repeat(10));
        // A real tokenizer gives 16 tokens per sentence (o200k), 160 for ten.
        assert!((140..=200).contains(&prose_tokens), "{prose_tokens}");
        let json = r#"{"name":"x","value":[1,2,3],"ok":true}"#;
        let json_tokens = text(json);
        // 20 tokens in o200k.
        assert!((15..=28).contains(&json_tokens), "{json_tokens}");
        assert_eq!(text(""), 0);
    }

    #[test]
    fn a_message_costs_its_text_and_a_little_more() {
        let m = Message::user("hello there");
        assert!(message(&m) > text("hello there"));
        assert_eq!(messages(&[m.clone(), m.clone()]), 2 * message(&m));
    }
}
