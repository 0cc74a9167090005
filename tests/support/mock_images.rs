//! What each wire API accepts of images, checked by the mock model on every request: chat
//! completions takes `image_url` parts (a `data:` URL) in user messages only, a tool message's
//! content being text; Anthropic takes `image` blocks (`source.type: base64`, at most 5 MB of
//! base64 and 8000 pixels a side) in user turns, tool results included; the Responses API takes
//! `input_image` parts in user messages, a function call's output being text. Each image must
//! be the format its media type says. A request that breaks a rule is answered 400, as the API
//! would.

use base64::Engine;
use serde_json::Value;

use super::mock_wire::Api;

const MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const ANTHROPIC_MAX_BASE64: usize = 5 * 1024 * 1024;

/// `Ok` if `api` would accept the images of `body`; else what is wrong.
pub fn check_images(api: Api, body: &Value) -> Result<(), String> {
    match api {
        Api::Chat => chat(body),
        Api::Anthropic => anthropic(body),
        Api::Responses => responses(body),
    }
}

/// Every image of a request, as (API, media type, base64): what [`check_images`] accepted.
pub fn images(api: Api, body: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut visit = |part: &Value| match (api, part["type"].as_str()) {
        (Api::Chat, Some("image_url")) => found.extend(data_url(&part["image_url"]["url"])),
        (Api::Responses, Some("input_image")) => found.extend(data_url(&part["image_url"])),
        (Api::Anthropic, Some("image")) => found.push((
            part["source"]["media_type"]
                .as_str()
                .unwrap_or_default()
                .into(),
            part["source"]["data"].as_str().unwrap_or_default().into(),
        )),
        _ => {}
    };
    let list = match api {
        Api::Responses => &body["input"],
        _ => &body["messages"],
    };
    for message in list.as_array().into_iter().flatten() {
        for part in message["content"].as_array().into_iter().flatten() {
            visit(part);
            for inner in part["content"].as_array().into_iter().flatten() {
                visit(inner);
            }
        }
    }
    found
}

fn data_url(url: &Value) -> Option<(String, String)> {
    let rest = url.as_str()?.strip_prefix("data:")?;
    let (media_type, data) = rest.split_once(";base64,")?;
    Some((media_type.to_string(), data.to_string()))
}

/// The media type is one the APIs take, the data decodes and is that format.
fn check_data(media_type: &str, data: &str, at: &str) -> Result<(), String> {
    if !MEDIA_TYPES.contains(&media_type) {
        return Err(format!("{at}: unsupported image media type {media_type:?}"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("{at}: the image data is not valid base64 ({e})"))?;
    let magic = match media_type {
        "image/png" => bytes.starts_with(b"\x89PNG"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF8"),
        _ => bytes.len() > 12 && &bytes[8..12] == b"WEBP",
    };
    if !magic {
        return Err(format!("{at}: the image data is not {media_type}"));
    }
    Ok(())
}

fn chat(body: &Value) -> Result<(), String> {
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = message["role"].as_str().unwrap_or_default();
        let Some(parts) = message["content"].as_array() else {
            continue;
        };
        if role == "tool" {
            return Err(format!(
                "messages[{i}]: a tool message's content must be a string here"
            ));
        }
        for part in parts {
            match part["type"].as_str() {
                Some("text") => {}
                Some("image_url") if role == "user" => {
                    let (media_type, data) = data_url(&part["image_url"]["url"])
                        .ok_or(format!("messages[{i}]: image_url.url is not a data URL"))?;
                    check_data(&media_type, &data, &format!("messages[{i}]"))?;
                }
                other => {
                    return Err(format!(
                        "messages[{i}]: content part {other:?} is not allowed in a {role} message"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn anthropic_image(block: &Value, at: &str) -> Result<(), String> {
    let source = &block["source"];
    if source["type"] != "base64" {
        return Err(format!("{at}: image source type must be base64"));
    }
    let data = source["data"].as_str().unwrap_or_default();
    if data.len() > ANTHROPIC_MAX_BASE64 {
        return Err(format!(
            "{at}: image exceeds 5 MB maximum: {} bytes",
            data.len()
        ));
    }
    check_data(source["media_type"].as_str().unwrap_or_default(), data, at)
}

fn anthropic(body: &Value) -> Result<(), String> {
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = message["role"].as_str().unwrap_or_default();
        for (j, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("messages.{i}.content.{j}");
            match block["type"].as_str() {
                Some("image") if role == "user" => anthropic_image(block, &at)?,
                Some("image") => return Err(format!("{at}: images only in user turns")),
                Some("tool_result") => {
                    let Some(inner) = block["content"].as_array() else {
                        continue;
                    };
                    for (k, part) in inner.iter().enumerate() {
                        let at = format!("{at}.content.{k}");
                        match part["type"].as_str() {
                            Some("text") => {}
                            Some("image") => anthropic_image(part, &at)?,
                            other => return Err(format!("{at}: {other:?} in a tool_result")),
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn responses(body: &Value) -> Result<(), String> {
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        if item["type"] == "function_call_output" && !item["output"].is_string() {
            return Err(format!("input[{i}]: output must be a string here"));
        }
        let role = item["role"].as_str().unwrap_or_default();
        for part in item["content"].as_array().into_iter().flatten() {
            if part["type"] == "input_image" {
                if role != "user" {
                    return Err(format!("input[{i}]: input_image only in user messages"));
                }
                let (media_type, data) = data_url(&part["image_url"])
                    .ok_or(format!("input[{i}]: image_url is not a data URL"))?;
                check_data(&media_type, &data, &format!("input[{i}]"))?;
            }
        }
    }
    Ok(())
}
