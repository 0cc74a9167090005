//! `web_fetch` of a PDF end to end: `ling -p` against the mock model and a local web server.
//! A PDF (by its type, or by its first bytes under a generic type) comes back as its text,
//! marked as outside content and kept in the session's cache; a damaged PDF, one that makes
//! the reader panic, or one without a text layer is a clear tool error and the run goes on; an
//! archive stays refused.

use crate::support::{mock_openai, project, web_server};

use mock_openai::{MockServer, Recorded, Reply};
use project::Project;
use web_server::{Page, WebServer};

use super::web_tools::{fetch_call, ling};

/// The text of the last tool result a request carries (chat completions).
fn tool_result(request: &Recorded) -> String {
    request
        .messages()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// A one-page PDF whose page draws `content` (a content stream) with Helvetica as `/F1`,
/// written by hand with a correct cross-reference table.
fn pdf(content: &str) -> Vec<u8> {
    pdf_with_font(
        content,
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    )
}

/// The same with `font` (a font dictionary) as `/F1`.
fn pdf_with_font(content: &str, font: &str) -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        font.to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        table.push_str(&format!("{offset:010} 00000 n \n"));
    }
    table.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.extend_from_slice(table.as_bytes());
    out
}

const HELLO: &str = "BT /F1 24 Tf 72 720 Td (Hello from a PDF) Tj ET";
const RULES: [&str; 2] = ["--allowed-tools", "WebFetch(domain:localhost)"];

#[test]
fn a_pdf_comes_back_as_its_text_and_is_fetched_once_a_session() {
    let web = WebServer::start();
    web.page("/guide.pdf", Page::new("application/pdf", pdf(HELLO)));
    let url = web.url("localhost", "/guide.pdf");
    // The same URL twice in one session: the second answer comes from the cache.
    let server = MockServer::start_blocking(vec![
        fetch_call(&url),
        fetch_call(&url),
        Reply::text("Done."),
    ]);
    let project = Project::new();
    let out = ling(&project, &server, &[RULES[0], RULES[1], "-p", "read it"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let requests = server.requests();
    for request in &requests[1..] {
        let result = tool_result(request);
        assert!(
            result.starts_with(&format!("Fetched {url} (HTTP 200, application/pdf, "))
                && result.contains("characters of text from PDF)")
                && result.contains("outside content")
                && result.contains(&format!(
                    "<web-content url=\"{url}\">\nHello from a PDF\n</web-content>"
                )),
            "{result}"
        );
    }
    assert_eq!(web.paths(), ["/guide.pdf"]);
    // What the terminal shows is the one summary line, never the text.
    assert!(!out.stdout.contains("Hello from a PDF"), "{}", out.stdout);
}

#[test]
fn a_pdf_under_a_generic_type_is_read_and_an_archive_stays_refused() {
    let web = WebServer::start();
    web.page(
        "/download",
        Page::new("application/octet-stream", pdf(HELLO)),
    );
    web.page(
        "/bundle.zip",
        Page::new("application/zip", b"PK\x03\x04\x14\0\0\0\0\0".to_vec()),
    );
    let server = MockServer::start_blocking(vec![
        fetch_call(&web.url("localhost", "/download")),
        fetch_call(&web.url("localhost", "/bundle.zip")),
        Reply::text("Done."),
    ]);
    let project = Project::new();
    let out = ling(&project, &server, &[RULES[0], RULES[1], "-p", "read them"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let requests = server.requests();
    let pdf = tool_result(&requests[1]);
    assert!(
        pdf.contains("application/octet-stream") && pdf.contains("\nHello from a PDF\n"),
        "{pdf}"
    );
    let zip = tool_result(&requests[2]);
    assert!(
        zip.starts_with("Error: ")
            && zip.contains("is application/zip (10 bytes), which web_fetch cannot turn into text"),
        "{zip}"
    );
}

#[test]
fn a_damaged_odd_or_textless_pdf_is_a_clear_error_and_the_run_goes_on() {
    let web = WebServer::start();
    web.page(
        "/broken.pdf",
        Page::new(
            "application/pdf",
            b"%PDF-1.4\n\x00\xffgarbage, no objects, no xref".to_vec(),
        ),
    );
    // A page that only draws a line: what a scan's text layer looks like when it is missing.
    web.page(
        "/scan.pdf",
        Page::new("application/pdf", pdf("0 0 m 100 100 l S")),
    );
    // A composite font without its descendant fonts makes pdf-extract panic (`expect`): in
    // the reader's own process, which a release build would abort.
    web.page(
        "/odd.pdf",
        Page::new(
            "application/pdf",
            pdf_with_font(HELLO, "<< /Type /Font /Subtype /Type0 /BaseFont /X >>"),
        ),
    );
    let broken = web.url("localhost", "/broken.pdf");
    let scan = web.url("localhost", "/scan.pdf");
    let odd = web.url("localhost", "/odd.pdf");
    let server = MockServer::start_blocking(vec![
        fetch_call(&broken),
        fetch_call(&scan),
        fetch_call(&odd),
        Reply::text("Could not read them."),
    ]);
    let project = Project::new();
    let out = ling(&project, &server, &[RULES[0], RULES[1], "-p", "read them"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("Could not read them."),
        "{}",
        out.stdout
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let requests = server.requests();
    let result = tool_result(&requests[1]);
    assert!(
        result.starts_with(&format!("Error: the PDF at {broken} cannot be read ("))
            && result.contains("it is damaged or uses something the PDF reader does not handle"),
        "{result}"
    );
    let result = tool_result(&requests[2]);
    assert!(
        result.starts_with(&format!(
            "Error: the PDF at {scan} has no text layer (a scan? its pages may be pictures of text)"
        )),
        "{result}"
    );
    let result = tool_result(&requests[3]);
    assert!(
        result.starts_with(&format!(
            "Error: the PDF at {odd} cannot be read (the reader stopped on it"
        )),
        "{result}"
    );
}
