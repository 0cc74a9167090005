//! Between ACP content and Ling's conversation: a `session/prompt`'s content blocks as the
//! prompt text the agent runs (text as it is, a linked file as an `@path` mention the model can
//! read, an embedded file or selection as a tagged block; an image goes as itself,
//! [`prompt_images`]), and a loaded session's history
//! replayed to the editor as the updates it would have seen (`session/load`).

use std::path::Path;

use agent_client_protocol_schema::v1::{
    ContentBlock, EmbeddedResourceResource, SessionUpdate, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::Value;

use super::tool_view::view;
use super::updates::{UpdateSink, chunk};
use crate::llm::Message;

/// The prompt text of `blocks`.
pub(super) fn prompt_text(blocks: &[ContentBlock], root: &Path) -> String {
    let mut text = String::new();
    for block in blocks {
        let piece = match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::ResourceLink(link) => mention(&link.uri, &link.name, root),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    format!(
                        "\n<context ref=\"{}\">\n{}\n</context>\n",
                        r.uri,
                        r.text.trim_end()
                    )
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    format!("[binary resource {} left out: Ling reads text only]", r.uri)
                }
                _ => String::new(),
            },
            // Sent as the image itself ([`prompt_images`]).
            ContentBlock::Image(_) => continue,
            ContentBlock::Audio(_) => "[audio was attached; Ling sends text only]".into(),
            _ => String::new(),
        };
        if !text.is_empty() && !text.ends_with(char::is_whitespace) && !piece.starts_with('\n') {
            text.push(' ');
        }
        text.push_str(&piece);
    }
    text
}

/// The `image` blocks of a prompt, decoded (bytes and a name), for the host to attach; an error
/// (the prompt refused) for one without data or of a type the model APIs do not take.
pub(super) fn prompt_images(blocks: &[ContentBlock]) -> Result<Vec<(Vec<u8>, String)>, String> {
    let mut images = Vec::new();
    for block in blocks {
        let ContentBlock::Image(image) = block else {
            continue;
        };
        let n = images.len() + 1;
        if image.data.is_empty() {
            return Err(format!(
                "image {n} has no data{}: Ling does not fetch images; send the picture in `data`",
                image
                    .uri
                    .as_deref()
                    .map(|uri| format!(" (only the uri {uri})"))
                    .unwrap_or_default()
            ));
        }
        images.push(crate::front::image_blocks::decoded(
            &image.data,
            &image.mime_type,
            n,
        )?);
    }
    Ok(images)
}

/// A linked resource as the model reads it: `@path` (relative to the project when inside it)
/// for a local file, else the URI.
fn mention(uri: &str, name: &str, root: &Path) -> String {
    match uri.strip_prefix("file://") {
        Some(path) => {
            let path = Path::new(path);
            let shown = path.strip_prefix(root).unwrap_or(path);
            format!("@{}", shown.display())
        }
        None => format!("[{name}]({uri})"),
    }
}

/// Sends `history` to the editor as the updates of the turns it holds.
pub(super) fn replay(history: &[Message], sink: &UpdateSink, root: &Path) {
    for message in history {
        match message {
            Message::User { content, .. } => {
                sink.send(SessionUpdate::UserMessageChunk(chunk(content)));
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    sink.send(SessionUpdate::AgentMessageChunk(chunk(text)));
                }
                for call in tool_calls {
                    let input: Value = serde_json::from_str(call.arguments())
                        .unwrap_or_else(|_| Value::String(call.arguments().to_string()));
                    let shown = view(call.name(), &input, root);
                    sink.send(SessionUpdate::ToolCall(
                        ToolCall::new(call.id.clone(), shown.title)
                            .kind(shown.kind)
                            .status(ToolCallStatus::InProgress)
                            .locations(shown.locations)
                            .raw_input(input),
                    ));
                }
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                let status = if content.starts_with("Error: ") {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                sink.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    tool_call_id.clone(),
                    ToolCallUpdateFields::new().status(status).content(vec![
                        agent_client_protocol_schema::v1::ToolCallContent::Content(
                            agent_client_protocol_schema::v1::Content::new(ContentBlock::from(
                                content.clone(),
                            )),
                        ),
                    ]),
                )));
            }
            Message::System { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };
    use pretty_assertions::assert_eq;

    #[test]
    fn image_blocks_are_images_and_one_without_data_is_refused() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is")),
            ContentBlock::Image(ImageContent::new("iVBORw0K", "image/png")),
            ContentBlock::Text(TextContent::new("this?")),
        ];
        assert_eq!(prompt_text(&blocks, Path::new("/p")), "what is this?");
        assert_eq!(
            prompt_images(&blocks),
            Ok(vec![(b"\x89PNG\r\n".to_vec(), "image 1.png".to_string())])
        );
        let linked = [ContentBlock::Image(
            ImageContent::new("", "image/png").uri("https://example.com/a.png".to_string()),
        )];
        let refused = prompt_images(&linked).unwrap_err();
        assert!(refused.contains("Ling does not fetch images"), "{refused}");
    }

    #[test]
    fn blocks_become_one_prompt() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("fix")),
            ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///p/src/a.rs")),
            ContentBlock::Text(TextContent::new("using")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}\n",
                    "file:///p/src/main.rs#L1",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/x")),
        ];
        assert_eq!(
            prompt_text(&blocks, Path::new("/p")),
            "fix @src/a.rs using\n<context ref=\"file:///p/src/main.rs#L1\">\nfn main() {}\n</context>\n[docs](https://example.com/x)"
        );
    }
}
