//! Images to the model on each wire API: `read_file` of a picture and `-i FILE` in a `-p` run
//! go as the API's image parts (chat completions: `image_url` parts in a user message, after the
//! tool results since a tool message holds text; Anthropic: `image` blocks, in the tool result
//! too; Responses: `input_image`), downscaled to what each API reads; the transcript keeps a
//! reference to a private file in `LING_HOME/images`, and `--resume` sends the image again; a
//! model that refuses images is named in the error.

use std::os::unix::fs::PermissionsExt;

use crate::support::{mock_images, mock_openai, project};
use base64::Engine;

use mock_openai::{Api, MockServer, Recorded, Reply};
use pretty_assertions::assert_eq;
use project::{Project, run};
use serde_json::json;

const APIS: [(&str, Api); 3] = [
    ("chat", Api::Chat),
    ("anthropic", Api::Anthropic),
    ("responses", Api::Responses),
];

/// A `width` x `height` PNG screenshot-like picture.
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        if x % 50 == 0 || y % 40 == 0 {
            image::Rgb([0, 0, 0])
        } else {
            image::Rgb([240, 240, (x % 256) as u8])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn ling(project: &Project, server: &MockServer, api: &str, args: &[&str]) -> project::Output {
    let mut cmd = project.command(&server.base_url());
    cmd.args(["--api", api, "--model", "test-model", "--base-url"])
        .arg(server.base_url())
        .args(args);
    run(cmd)
}

/// The images of a request, each as its size in pixels.
fn sizes(api: Api, request: &Recorded) -> Vec<(u32, u32)> {
    mock_images::images(api, &request.body)
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

#[test]
fn read_file_of_a_picture_sends_it_in_each_api_s_shape_and_size() {
    for (name, api) in APIS {
        let project = Project::new();
        std::fs::write(project.file("shot.png"), png(4000, 3000)).unwrap();
        let server = MockServer::start_blocking(vec![
            Reply::tool_calls(vec![("call_1", "read_file", json!({"path": "shot.png"}))]),
            Reply::text("A grid."),
        ]);
        let out = ling(&project, &server, name, &["-p", "what is in shot.png?"]);
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        let requests = server.requests();
        let expected = if api == Api::Anthropic {
            (1238, 928)
        } else {
            (1024, 768)
        };
        assert_eq!(sizes(api, &requests[1]), [expected], "{name}");
        let body = &requests[1].body;
        match api {
            Api::Chat => {
                let messages = body["messages"].as_array().unwrap();
                let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
                assert!(
                    messages[tool]["content"]
                        .as_str()
                        .unwrap()
                        .contains("shot.png is an image")
                );
                let next = &messages[tool + 1];
                assert_eq!(next["role"], "user", "{name}");
                assert_eq!(next["content"][1]["type"], "image_url", "{name}");
            }
            Api::Anthropic => {
                let last = body["messages"].as_array().unwrap().last().unwrap();
                let result = &last["content"][0];
                assert_eq!(result["type"], "tool_result");
                assert_eq!(result["content"][1]["type"], "image", "{name}");
                assert_eq!(result["content"][1]["source"]["media_type"], "image/png");
            }
            Api::Responses => {
                let input = body["input"].as_array().unwrap();
                let output = input
                    .iter()
                    .position(|i| i["type"] == "function_call_output")
                    .unwrap();
                assert_eq!(input[output + 1]["role"], "user", "{name}");
                assert_eq!(input[output + 1]["content"][1]["type"], "input_image");
            }
        }
        // Kept once, owner-only; the transcript holds a reference, not the picture.
        let kept: Vec<_> = std::fs::read_dir(project.home.path().join("images"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(!kept.is_empty());
        for file in &kept {
            let mode = std::fs::metadata(file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
        let sessions = project.home.path().join("sessions");
        let transcript = std::fs::read_dir(&sessions)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let text = std::fs::read_to_string(transcript).unwrap();
        assert!(
            text.len() < 8000,
            "{name}: the transcript is {} bytes",
            text.len()
        );
        assert!(text.contains("\"images\":[{\"path\":"), "{text}");
    }
}

#[test]
fn an_image_attached_with_dash_i_goes_with_the_prompt_and_again_on_resume() {
    for (name, api) in APIS {
        let project = Project::new();
        std::fs::write(project.file("ui.png"), png(300, 200)).unwrap();
        let server = MockServer::start_blocking(vec![Reply::text("A button.")]);
        let out = ling(
            &project,
            &server,
            name,
            &[
                "-i",
                "ui.png",
                "--output-format",
                "json",
                "-p",
                "what is this?",
            ],
        );
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        assert_eq!(sizes(api, &server.requests()[0]), [(300, 200)], "{name}");
        let session = out.json()["session_id"].as_str().unwrap().to_string();
        // The picture is gone from the project: the kept copy is what is sent.
        std::fs::remove_file(project.file("ui.png")).unwrap();
        let server = MockServer::start_blocking(vec![Reply::text("Still a button.")]);
        let out = ling(
            &project,
            &server,
            name,
            &["--resume", &session, "-p", "and now?"],
        );
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        assert_eq!(sizes(api, &server.requests()[0]), [(300, 200)], "{name}");
    }
}

#[test]
fn dash_i_refuses_what_is_not_an_image() {
    let project = Project::new();
    project.write("notes.txt", "text");
    let server = MockServer::start_blocking(vec![]);
    let out = ling(
        &project,
        &server,
        "chat",
        &["-i", "notes.txt", "-p", "look"],
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--image notes.txt: notes.txt is not an image the model APIs take"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_model_that_refuses_images_is_named_in_the_error() {
    let project = Project::new();
    std::fs::write(project.file("ui.png"), png(30, 20)).unwrap();
    let server = MockServer::start_blocking(vec![
        Reply::status(400).message("image input is not supported by this model"),
    ]);
    let out = ling(&project, &server, "chat", &["-i", "ui.png", "-p", "look"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the model test-model refused the image(s) in the conversation"),
        "{}",
        out.stderr
    );
    // The same error without images is the server's own.
    let server = MockServer::start_blocking(vec![
        Reply::status(400).message("image input is not supported by this model"),
    ]);
    let out = ling(&project, &server, "chat", &["-p", "look"]);
    assert_eq!(out.code, Some(1));
    assert!(!out.stderr.contains("refused the image"), "{}", out.stderr);
}
