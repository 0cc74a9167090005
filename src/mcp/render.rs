//! Turns a `tools/call` result into the text the model reads: text blocks in order,
//! `structuredContent` as JSON when there is no text, one-line placeholders for images and audio,
//! resource links and embedded resources by URI (and text). Output over the cap is cut with a
//! note, and the whole of it saved under `LING_HOME/tool-output/`, whose path the note gives.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::types::CallToolResult;

/// The default cap on what the model reads of one result, in characters: settings'
/// `toolOutputLimit` default, as for the builtin tools.
pub const DEFAULT_OUTPUT_CAP: usize = crate::config::DEFAULT_TOOL_OUTPUT_LIMIT;

/// A result as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedResult {
    pub text: String,
    /// The server set `isError`: the model gets it as a failed call.
    pub is_error: bool,
}

/// Renders `result`. Over `cap` characters, the text is cut and the whole of it written to a new
/// file in `spill_dir`.
pub fn render(result: &CallToolResult, cap: usize, spill_dir: &Path) -> RenderedResult {
    let text = render_text(result);
    RenderedResult {
        text: cap_output(text, cap, spill_dir),
        is_error: result.is_error(),
    }
}

/// The full text of a result, before the cap.
pub fn render_text(result: &CallToolResult) -> String {
    let has_text = result.content.iter().any(|block| block["type"] == "text");
    let mut parts = Vec::new();
    if let Some(structured) = result.structured_content.as_ref().filter(|_| !has_text) {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    parts.extend(result.content.iter().map(render_block));
    if parts.is_empty() {
        return "(no content)".to_string();
    }
    parts.join("\n")
}

fn render_block(block: &Value) -> String {
    let text = |key: &str| block[key].as_str().unwrap_or_default();
    match block["type"].as_str().unwrap_or_default() {
        "text" => text("text").to_string(),
        kind @ ("image" | "audio") => format!(
            "[{kind}: {}, {}]",
            non_empty(text("mimeType"), "unknown type"),
            human_size(base64_len(text("data")))
        ),
        "resource_link" => {
            let mut line = format!("[resource link: {}]", text("uri"));
            for key in ["name", "description"] {
                if !text(key).is_empty() {
                    line.push(' ');
                    line.push_str(text(key));
                }
            }
            line
        }
        "resource" => {
            let resource = &block["resource"];
            let field = |key: &str| resource[key].as_str().unwrap_or_default();
            match resource["text"].as_str() {
                Some(body) => format!("[resource: {}]\n{body}", field("uri")),
                None => format!(
                    "[resource: {}, {}, {}]",
                    field("uri"),
                    non_empty(field("mimeType"), "binary"),
                    human_size(base64_len(field("blob")))
                ),
            }
        }
        _ => block.to_string(),
    }
}

fn non_empty<'a>(text: &'a str, fallback: &'a str) -> &'a str {
    if text.is_empty() { fallback } else { text }
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() * 3 / 4).saturating_sub(padding)
}

fn human_size(bytes: usize) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

/// Cuts `text` to `cap` characters; the note says where the whole of it went.
pub fn cap_output(text: String, cap: usize, spill_dir: &Path) -> String {
    let total = text.chars().count();
    if total <= cap {
        return text;
    }
    let cut: String = text.chars().take(cap).collect();
    let note = match spill(&text, spill_dir) {
        Ok(path) => format!(
            "[output truncated: {cap} of {total} characters shown; the full output is in {}]",
            path.display()
        ),
        Err(e) => format!(
            "[output truncated: {cap} of {total} characters shown; saving the full output \
             failed: {e}]"
        ),
    };
    format!("{cut}\n\n{note}")
}

/// Saves the whole output, owner-only, in `dir`.
fn spill(text: &str, dir: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let path = dir.join(format!("mcp-{stamp}-{}.txt", uuid::Uuid::new_v4().simple()));
    crate::config::private_fs::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn renders_each_content_kind() {
        let r = result(json!({"content":[
            {"type":"text","text":"first"},
            {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
            {"type":"audio","data":"AAAA","mimeType":"audio/wav"},
            {"type":"resource_link","uri":"file:///a.txt","name":"a.txt"},
            {"type":"resource","resource":{"uri":"test://r","text":"body"}},
            {"type":"resource","resource":{"uri":"test://b","blob":"AAAAAA==","mimeType":"application/zip"}},
            {"type":"text","text":"last"}
        ],"structuredContent":{"ignored":true}}));
        let expected = "first\n[image: image/png, 8 bytes]\n[audio: audio/wav, 3 bytes]\n\
            [resource link: file:///a.txt] a.txt\n[resource: test://r]\nbody\n\
            [resource: test://b, application/zip, 4 bytes]\nlast";
        assert_eq!(render(&r, 1000, Path::new("/nonexistent")).text, expected);
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let r = result(json!({"content":[],"structuredContent":{"a":1},"isError":true}));
        let rendered = render(&r, 1000, Path::new("/nonexistent"));
        assert_eq!(rendered.text, "{\n  \"a\": 1\n}");
        assert!(rendered.is_error);
    }

    #[test]
    fn caps_output_and_spills_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let text = "é".repeat(50);
        let r = result(json!({"content":[{"type":"text","text":text}]}));
        let rendered = render(&r, 10, dir.path());
        let (head, note) = rendered.text.split_once("\n\n").unwrap();
        assert_eq!(head, "é".repeat(10));
        let path = note
            .strip_prefix("[output truncated: 10 of 50 characters shown; the full output is in ")
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    }
}
