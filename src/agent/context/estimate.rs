//! A cheap token estimate, for what the server has not counted yet: about four characters a
//! token for prose, fewer for code and JSON, whose punctuation and short identifiers split into
//! more tokens, and one token per non-ASCII character or so. The error against a real tokenizer
//! is measured by `examples/context-bench` (README "Benchmarks").

use crate::llm::{Message, ToolSpec};

/// Tokens a chat message costs beyond its text (role, separators), as OpenAI counts them.
const MESSAGE_OVERHEAD: u64 = 4;

/// The estimated tokens of `text`, from its runs of characters as BPE tokenizers split them: a
/// word is a token per five or six letters (short words and identifiers one each); a run of ASCII
/// symbols a token per two (`":`, `->`, `();`); a single space joins the next word, a longer run
/// of spaces (indentation) is one token, and so is each line end; any other character about one.
pub fn text(text: &str) -> u64 {
    #[derive(PartialEq, Clone, Copy)]
    enum Run {
        None,
        Word,
        Symbol,
        Space,
        /// Spaces after a line end: the line end's token takes them.
        Indent,
    }
    let mut tokens = 0.0f64;
    let mut run = Run::None;
    let mut len = 0u32;
    let close = |run: Run, len: u32| match run {
        Run::Word => f64::from(1 + len.saturating_sub(1) / 7),
        // A lone symbol often joins the word after it (`.len`, `(self`).
        Run::Symbol if len == 1 => 0.85,
        Run::Symbol => f64::from(len.div_ceil(2)),
        Run::Space if len > 1 => 1.0,
        Run::Space | Run::None | Run::Indent => 0.0,
    };
    for c in text.chars() {
        let kind = if c.is_ascii_alphanumeric() {
            Run::Word
        } else if c == '\n' {
            tokens += close(run, len);
            run = Run::Indent;
            len = 0;
            tokens += 1.0;
            continue;
        } else if c.is_ascii_whitespace() {
            if run == Run::Indent {
                continue;
            }
            Run::Space
        } else if c.is_ascii() {
            Run::Symbol
        } else {
            tokens += close(run, len);
            run = Run::None;
            len = 0;
            tokens += 1.0;
            continue;
        };
        if kind == run {
            len += 1;
        } else {
            tokens += close(run, len);
            run = kind;
            len = 1;
        }
    }
    tokens += close(run, len);
    tokens.ceil() as u64
}

/// The estimated tokens of one message as sent.
pub fn message(message: &Message) -> u64 {
    MESSAGE_OVERHEAD
        + match message {
            Message::System { content } => text(content),
            Message::User { content, images } => text(content) + self::images(images),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.as_deref().map_or(0, text)
                    + tool_calls
                        .iter()
                        .map(|call| 8 + text(call.name()) + text(call.arguments()))
                        .sum::<u64>()
            }
            Message::Tool {
                content, images, ..
            } => 6 + text(content) + self::images(images),
        }
}

/// The estimated tokens of images: about one per 750 pixels (Anthropic's measure; OpenAI's
/// tiles come near it), at most what the larger of the APIs reads of one.
fn images(images: &[crate::media::ImageRef]) -> u64 {
    images
        .iter()
        .map(|image| (u64::from(image.width) * u64::from(image.height) / 750).clamp(85, 1600))
        .sum()
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
