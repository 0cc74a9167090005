//! A fetched body as text the model can read: HTML as Markdown (htmd: headings, lists, code
//! blocks, links, tables; scripts, styles and other parts nobody reads left out), Markdown,
//! plain text, JSON, XML and other text as they are. Anything else is refused with what to do
//! instead; images and PDFs are the caller's (images go to the model as images, a PDF's text
//! is read by `tools::pdf_text`).

use super::WebError;

/// Tags whose content is never text a reader sees.
const SKIPPED_TAGS: [&str; 11] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "head", "button",
];

/// A body as text, and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    pub text: String,
    /// `markdown from HTML`, `text`...
    pub how: &'static str,
    /// The page's `<title>`, for HTML.
    pub title: Option<String>,
}

/// `body` (of media type `content_type`, from `url`) as text.
pub fn to_text(body: &[u8], content_type: &str, url: &str) -> Result<Converted, WebError> {
    let html = matches!(content_type, "text/html" | "application/xhtml+xml")
        || (content_type.is_empty() && looks_like_html(body));
    if html {
        let page = String::from_utf8_lossy(body);
        return Ok(Converted {
            text: html_to_markdown(&page),
            how: "Markdown from HTML",
            title: title(&page),
        });
    }
    if is_text(content_type) || (content_type.is_empty() && !looks_binary(body)) {
        return Ok(Converted {
            text: String::from_utf8_lossy(body).into_owned(),
            how: "text",
            title: None,
        });
    }
    Err(WebError::Binary {
        url: crate::redact::url(url),
        kind: if content_type.is_empty() {
            "binary data".to_string()
        } else {
            content_type.to_string()
        },
        size: body.len(),
    })
}

/// HTML as Markdown; on a converter failure, the HTML's text without its tags.
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    match converter.convert(html) {
        Ok(markdown) => tidy(&markdown),
        Err(_) => tidy(&strip_tags(html)),
    }
}

/// Runs of blank lines as one, trailing blanks gone.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// The text of the first `<title>`, if any.
fn title(html: &str) -> Option<String> {
    let lower = html.get(..html.len().min(64 * 1024))?.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let end = open_end + lower[open_end..].find("</title")?;
    let text = html.get(open_end..end)?;
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then(|| decode_entities(&text))
}

fn decode_entities(text: &str) -> String {
    text.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

fn is_text(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || content_type.ends_with("+json")
        || content_type.ends_with("+xml")
        || matches!(
            content_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-sh"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
        )
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

fn looks_binary(body: &[u8]) -> bool {
    body[..body.len().min(8192)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn html_becomes_markdown_without_scripts_or_styles() {
        let html = r#"<!doctype html><html><head><title>The  Guide &amp; More</title>
            <style>body { color: red }</style><script>alert("x")</script></head>
            <body><h1>Migrating</h1><p>Read <a href="https://example.com/a">this</a> first.</p>
            <ul><li>one</li><li>two</li></ul>
            <pre><code class="language-rust">fn main() {}</code></pre>
            <table><thead><tr><th>key</th><th>value</th></tr></thead>
            <tbody><tr><td>a</td><td>1</td></tr></tbody></table>
            <noscript>enable JS</noscript></body></html>"#;
        let converted = to_text(html.as_bytes(), "text/html", "https://example.com").unwrap();
        assert_eq!(converted.title.as_deref(), Some("The Guide & More"));
        let text = converted.text;
        assert!(text.starts_with("# Migrating"), "{text}");
        assert!(
            text.contains("Read [this](https://example.com/a) first."),
            "{text}"
        );
        assert!(text.contains("*   one\n*   two"), "{text}");
        assert!(text.contains("```rust\nfn main() {}\n```"), "{text}");
        assert!(
            text.contains("| key | value |") && text.contains("| a   | 1     |"),
            "{text}"
        );
        for gone in ["alert", "color: red", "enable JS", "The  Guide"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }

    #[test]
    fn text_stays_text_and_binary_is_refused() {
        let json = to_text(br#"{"a":1}"#, "application/json", "https://x.test").unwrap();
        assert_eq!((json.text.as_str(), json.how), (r#"{"a":1}"#, "text"));
        let sniffed = to_text(b"<!DOCTYPE html><p>hi</p>", "", "https://x.test").unwrap();
        assert_eq!(sniffed.text, "hi");
        let error = to_text(
            b"\0\x01\x02",
            "application/octet-stream",
            "https://x.test/f",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "https://x.test/f is application/octet-stream (3 bytes), which web_fetch cannot \
             turn into text; download it with bash (`curl -o FILE URL`) and use a tool that \
             reads it"
        );
    }
}
