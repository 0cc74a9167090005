//! Images from each front end reach the model as image parts: in the REPL an `@shot.png`
//! mention and a pasted image path (escaped spaces, a leading `/` that is no command), in
//! stream-json input the Agent SDK's base64 `image` blocks, in ACP prompts `image` blocks (and
//! `initialize` says so). What is not an image is not sent as one: a text `@mention` stays text,
//! a missing or undecodable picture and an image by URL are refused with nothing sent. `/status`
//! says where `web_search` searches, or how to add a provider.

use base64::Engine;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::suite::claude_sdk::sdk;
use crate::support::acp::run as acp_run;
use crate::support::repl::{self, without_escapes};
use crate::support::{mock_images, mock_openai, project};
use mock_openai::{Api, MockServer, Recorded, Reply};
use project::Project;

/// A `width` x `height` PNG.
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The last message of a chat-completions request.
fn last_message(request: &Recorded) -> Value {
    request.messages().last().cloned().unwrap_or_default()
}

/// The sizes of the images in the last message of a chat-completions request.
fn new_images(request: &Recorded) -> Vec<(u32, u32)> {
    let body = json!({"messages": [last_message(request)]});
    mock_images::images(Api::Chat, &body)
        .into_iter()
        .map(|(_, data)| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            let image = image::load_from_memory(&bytes).unwrap();
            (image.width(), image.height())
        })
        .collect()
}

/// The text parts of the last message of a chat-completions request, joined.
fn last_text(request: &Recorded) -> String {
    let message = last_message(request);
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[test]
fn the_repl_attaches_mentioned_and_pasted_images_and_refuses_missing_ones() {
    let server = MockServer::start_blocking(vec![
        Reply::text("a chart"),
        Reply::text("a dialog"),
        Reply::text("a list"),
    ]);
    let project = Project::new();
    std::fs::write(project.file("shot.png"), png(300, 200)).unwrap();
    project.write("notes.txt", "buy milk\n");
    project.write("fake.png", "not a picture");
    let desktop = tempfile::tempdir().unwrap();
    let pasted = desktop.path().join("Screen Shot.png");
    std::fs::write(&pasted, png(40, 30)).unwrap();
    let mut p = repl::start(&project, &server, &[], &[]);
    p.prompt();
    p.send_line("what is in @shot.png?");
    p.expect("[image: shot.png]");
    p.expect("a chart");
    p.prompt();
    // As a terminal pastes a dropped file: its spaces escaped, a `/` that starts no command.
    p.send_line(&pasted.display().to_string().replace(' ', "\\ "));
    p.expect("[image: Screen Shot.png]");
    p.expect("a dialog");
    p.prompt();
    // Refused, with nothing sent: a missing image, a file that is no picture.
    p.send_line("see @missing.png");
    let said = p.expect("> ");
    assert!(
        said.contains("error: @missing.png: there is no such image"),
        "{said}"
    );
    p.send_line("see @fake.png");
    let said = p.expect("> ");
    assert!(
        said.contains("fake.png is not an image the model APIs take"),
        "{said}"
    );
    // A text file's mention stays text; a path in a sentence that names nothing stays prose.
    p.send_line("summarise @notes.txt and /no/such/file.png");
    p.expect("a list");
    p.prompt();
    p.exit();
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "a refused prompt was sent");
    assert_eq!(new_images(&requests[0]), [(300, 200)]);
    assert_eq!(last_text(&requests[0]), "what is in @shot.png?");
    assert_eq!(new_images(&requests[1]), [(40, 30)]);
    assert_eq!(last_text(&requests[1]), "[image: Screen Shot.png]");
    assert_eq!(new_images(&requests[2]), Vec::<(u32, u32)>::new());
    assert_eq!(
        last_text(&requests[2]),
        "summarise @notes.txt and /no/such/file.png\n\n<file path=\"notes.txt\">\nbuy milk\n</file>"
    );
}

#[test]
fn status_says_where_web_search_searches_or_how_to_add_a_provider() {
    let server = MockServer::start_blocking(vec![]);
    for (settings, expected) in [
        (
            None,
            "web search   not offered; add a provider in settings webSearch",
        ),
        (
            Some(json!({"webSearch": {"provider": "searxng", "url": "http://127.0.0.1:9"}})),
            "web search   SearXNG at http://127.0.0.1:9",
        ),
    ] {
        let project = Project::new();
        let settings = settings.map(|s| s.to_string());
        let args: Vec<&str> = match &settings {
            Some(s) => vec!["--settings", s],
            None => vec![],
        };
        let mut p = repl::start(&project, &server, &args, &[]);
        p.prompt();
        p.send_line("/status");
        let status = without_escapes(&p.raw("log "));
        assert!(status.contains(expected), "{expected:?} not in {status}");
        p.exit();
    }
}

#[test]
fn the_agent_sdk_s_image_blocks_go_to_the_model_and_a_url_is_refused() {
    let server = MockServer::start_blocking(vec![Reply::text("a red square")]);
    let project = Project::new();
    let image = |source: Value| json!({"type": "image", "source": source});
    let text = |text: &str| json!({"type": "text", "text": text});
    let prompts = json!([
        {"content": [text("what is at this URL?"),
            image(json!({"type": "url", "url": "https://example.com/a.png"}))]},
        {"content": [text("and this?"),
            image(json!({"type": "base64", "media_type": "image/png",
                "data": base64(b"not a picture")}))]},
        {"content": [text("what is this?"),
            image(json!({"type": "base64", "media_type": "image/png",
                "data": base64(&png(64, 48))}))]},
    ]);
    let lines = sdk(
        &project,
        &server,
        json!({"prompts": prompts, "options": {"model": "m1"}}),
    );
    let results: Vec<&Value> = lines
        .iter()
        .filter_map(|l| l.get("message"))
        .filter(|m| m["type"] == "result")
        .collect();
    assert_eq!(results.len(), 3, "{lines:#?}");
    let said = |r: &Value| r.to_string();
    assert_eq!(results[0]["is_error"], true, "{}", said(results[0]));
    assert!(
        said(results[0]).contains("Ling does not fetch images"),
        "{}",
        said(results[0])
    );
    assert_eq!(results[1]["is_error"], true);
    assert!(
        said(results[1]).contains("not an image the model APIs take"),
        "{}",
        said(results[1])
    );
    assert_eq!(results[2]["is_error"], false, "{}", said(results[2]));
    assert_eq!(results[2]["result"], "a red square");
    // Only the last message reached the model, with its picture.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(new_images(&requests[0]), [(64, 48)]);
    assert_eq!(last_text(&requests[0]), "what is this?");
}

#[test]
fn acp_image_blocks_go_to_the_model_and_one_without_data_is_refused() {
    let server = MockServer::start_blocking(vec![Reply::text("a blue square")]);
    let project = Project::new();
    let t = acp_run(
        &project,
        &server.base_url(),
        &[],
        json!({"steps": [
            {"op": "new"},
            {"op": "prompt", "prompt": [
                {"type": "text", "text": "what is at"},
                {"type": "image", "mimeType": "image/png", "data": "",
                    "uri": "https://example.com/a.png"}]},
            {"op": "prompt", "prompt": [
                {"type": "image", "mimeType": "image/png", "data": base64(b"text")}]},
            {"op": "prompt", "prompt": [
                {"type": "text", "text": "what is this?"},
                {"type": "image", "mimeType": "image/png", "data": base64(&png(50, 20))}]},
        ]}),
    );
    assert_eq!(
        t.initialize["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    let reasons = t.stop_reasons();
    assert!(
        reasons[0].contains("Ling does not fetch images"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("not an image the model APIs take"),
        "{reasons:?}"
    );
    assert_eq!(reasons[2], "end_turn");
    assert_eq!(t.answer(), "a blue square");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(new_images(&requests[0]), [(50, 20)]);
    assert_eq!(last_text(&requests[0]), "what is this?");
}
