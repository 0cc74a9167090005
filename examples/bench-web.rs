//! Figures of issue 32 (`scripts/bench-web.sh`):
//!
//! 1. `web_fetch` of a 1 MB HTML page from a server on 127.0.0.1: the fetch (the address check,
//!    the request, the body) and the conversion to Markdown, each the median of RUNS, and what
//!    goes in and comes out (bytes of HTML, characters of Markdown).
//! 2. A 4000 x 3000 screenshot attached with `ling -p -i` on each wire API, against the mock
//!    model of the integration tests: the bytes the image adds to the request (the same prompt
//!    sent with and without it), the size it goes at, and the time `-i` adds to the run.
//!
//! ```text
//! bench-web [all|fetch|image] [LING_BINARY] [RUNS]
//! ```

// The tests' mock model may `expect`, as test code does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/chat_history.rs"]
mod chat_history;
#[path = "../tests/support/mock_http.rs"]
#[allow(dead_code)]
mod mock_http;
#[path = "../tests/support/mock_images.rs"]
#[allow(dead_code)]
mod mock_images;
#[path = "../tests/support/mock_openai.rs"]
#[allow(dead_code)]
mod mock_openai;
#[path = "../tests/support/mock_overflow.rs"]
#[allow(dead_code)]
mod mock_overflow;
#[path = "../tests/support/mock_rules.rs"]
#[allow(dead_code)]
mod mock_rules;
#[path = "../tests/support/mock_wire.rs"]
#[allow(dead_code)]
mod mock_wire;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mock_openai::{Api, MockServer, Reply};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "all".into());
    let ling = PathBuf::from(args.next().unwrap_or_else(|| "target/release/ling".into()));
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    if matches!(what.as_str(), "all" | "fetch") {
        fetch(runs)?;
    }
    if matches!(what.as_str(), "all" | "image") {
        image(&std::fs::canonicalize(&ling).unwrap_or(ling), runs)?;
    }
    Ok(())
}

/// About 1 MB of documentation-like HTML: sections with headings, paragraphs with links and
/// inline code, lists, code blocks, tables, and the scripts and styles a real page carries.
fn page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>The Guide</title><style>body{font:14px sans-serif}\
         </style><script>window.analytics = {track: function () {}};</script></head><body>",
    );
    let mut n = 0;
    while html.len() < 1_000_000 {
        n += 1;
        html.push_str(&format!(
            "<h2 id=\"s{n}\">Section {n}</h2><p>Call <code>client.fetch({n})</code> to read \
             <a href=\"https://example.com/docs/{n}\">the page {n}</a>; it returns a \
             <em>future</em> that resolves once the body is read, or an error when the \
             connection fails.</p><ul><li>first point of {n}</li><li>second, with \
             <strong>weight</strong></li><li>third</li></ul><pre><code class=\"language-rust\">\
             let answer = client.fetch({n}).await?;\nprintln!(\"{{answer}}\");</code></pre>\
             <table><tr><th>option</th><th>default</th></tr><tr><td>timeout</td><td>{n} s</td>\
             </tr><tr><td>retries</td><td>3</td></tr></table><script>track({n});</script>"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// Serves `body` as text/html to every connection, on a thread of its own.
fn serve(body: String) -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \
                 {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    Ok(port)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn fetch(runs: usize) -> Result<()> {
    let html = page();
    let port = serve(html.clone())?;
    let url = format!("http://127.0.0.1:{port}/guide");
    let rules = ling::web::HostRules {
        allow: vec!["127.0.0.1".into()],
        ..Default::default()
    };
    let options = ling::web::FetchOptions {
        max_bytes: 10 << 20,
        timeout: Duration::from_secs(30),
        head: false,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let (mut fetching, mut converting) = (Vec::new(), Vec::new());
    let mut out = None;
    for _ in 0..runs {
        let began = Instant::now();
        let fetched = runtime
            .block_on(ling::web::fetch(&url, &rules, &options))
            .context("fetch")?;
        fetching.push(began.elapsed());
        let began = Instant::now();
        let converted = ling::web::to_text(&fetched.body, &fetched.content_type, &fetched.url)?;
        converting.push(began.elapsed());
        out = Some((fetched.body.len(), converted));
    }
    let Some((bytes, converted)) = out else {
        return Ok(());
    };
    let (fetch, convert) = (median(fetching), median(converting));
    println!("## web_fetch of a 1 MB HTML page (127.0.0.1, median of {runs})\n");
    println!("| | |\n|---|---|");
    println!("| HTML fetched | {bytes} bytes |");
    println!(
        "| Markdown | {} characters ({} bytes), {:.0}% of the HTML |",
        converted.text.chars().count(),
        converted.text.len(),
        converted.text.len() as f64 * 100.0 / bytes as f64
    );
    println!("| fetch | {:.1} ms |", fetch.as_secs_f64() * 1000.0);
    println!(
        "| HTML → Markdown | {:.1} ms |",
        convert.as_secs_f64() * 1000.0
    );
    println!(
        "| total | {:.1} ms |\n",
        (fetch + convert).as_secs_f64() * 1000.0
    );
    Ok(())
}

/// A 4000 x 3000 screenshot of an application: flat panels, a sidebar, lines of "text".
fn screenshot() -> Result<Vec<u8>> {
    let image = image::RgbImage::from_fn(4000, 3000, |x, y| {
        let in_sidebar = x < 600;
        let in_toolbar = y < 120;
        let text_row = (y % 48) < 14 && (x % 9) < 6 && (x / 180) % 5 != 4;
        if in_toolbar {
            image::Rgb([45, 45, 48])
        } else if in_sidebar {
            if text_row && x > 40 && x < 520 {
                image::Rgb([210, 210, 210])
            } else {
                image::Rgb([37, 37, 38])
            }
        } else if text_row && x > 680 && x < 3800 && y > 200 {
            image::Rgb([30, 30, 30])
        } else {
            image::Rgb([255, 255, 255])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)?;
    Ok(out)
}

/// One run's request: its bytes, the run's time, its images (media type, base64).
type Sent = (usize, Duration, Vec<(String, String)>);

fn image(ling: &Path, runs: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("ling-bench-web-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("project"))?;
    let shot = screenshot()?;
    std::fs::write(dir.join("project/shot.png"), &shot)?;
    println!(
        "## A 4000 x 3000 screenshot (PNG, {} bytes) with `ling -p -i`, median of {runs}\n",
        shot.len()
    );
    println!(
        "| API | sent as | image bytes in the request | of which base64 | time -i adds |\n|---|---|---|---|---|"
    );
    for (name, api) in [
        ("chat", Api::Chat),
        ("anthropic", Api::Anthropic),
        ("responses", Api::Responses),
    ] {
        let run = |with: bool, home: &Path| -> Result<Sent> {
            let server = MockServer::start_blocking(vec![Reply::text("ok")]);
            let mut cmd = Command::new(ling);
            cmd.current_dir(dir.join("project"))
                .env("LING_HOME", home)
                .env("NO_COLOR", "1")
                .env_remove("LING_LOG")
                .args(["--api", name, "--base-url", &server.base_url()])
                .args(["--model", "bench-model", "-p", "what is on the screen?"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if with {
                cmd.args(["-i", "shot.png"]);
            }
            let began = Instant::now();
            let status = cmd.status()?;
            let took = began.elapsed();
            anyhow::ensure!(status.success(), "ling failed: {status}");
            let request = server.requests().remove(0);
            let images = mock_images::images(api, &request.body);
            Ok((request.body.to_string().len(), took, images))
        };
        let (mut with, mut without) = (Vec::new(), Vec::new());
        let mut sizes = (0, 0, Vec::new());
        for n in 0..runs {
            // A fresh LING_HOME each time: the image is prepared, not found made.
            let home = dir.join(format!("home-{name}-{n}"));
            let (bytes, took, images) = run(true, &home)?;
            with.push(took);
            let (plain, took, _) = run(false, &home)?;
            without.push(took);
            sizes = (bytes, plain, images);
        }
        let (bytes, plain, images) = sizes;
        let (kind, data) = images.first().cloned().unwrap_or_default();
        let decoded = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &data)?;
        let picture = image::load_from_memory(&decoded)?;
        let added = median(with).saturating_sub(median(without));
        println!(
            "| {name} | {}x{} {kind} | {} | {} | {:.0} ms |",
            picture.width(),
            picture.height(),
            bytes - plain,
            data.len(),
            added.as_secs_f64() * 1000.0
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
