//! One error and its sources as one line of text, for the HTTP clients' failures (MCP
//! transports and OAuth, HTTP hooks): reqwest's own message is terse ("error sending request");
//! the cause that tells the user something ("Connection refused") is in its sources.

/// `error` and its sources, joined with `": "`; a source whose text is already in the line is
/// left out (reqwest often repeats its inner error). The URLs it quotes are masked.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let part = inner.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = inner.source();
    }
    crate::redact::redact_urls(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct Layer {
        text: &'static str,
        #[source]
        inner: Option<Box<Layer>>,
    }

    fn layers(texts: &[&'static str]) -> Layer {
        let (last, rest) = texts.split_last().unwrap();
        let mut error = Layer {
            text: last,
            inner: None,
        };
        for text in rest.iter().rev() {
            error = Layer {
                text,
                inner: Some(Box::new(error)),
            };
        }
        error
    }

    #[test]
    fn sources_are_joined_once_and_urls_masked() {
        let error = layers(&[
            "error sending request for url (http://u:secret@127.0.0.1:1/mcp?key=k)",
            "client error (Connect)",
            "tcp connect error",
            "client error (Connect)",
            "Connection refused (os error 111)",
        ]);
        let text = error_chain(&error);
        assert!(
            !text.contains("secret") && !text.contains("key=k"),
            "{text}"
        );
        assert!(
            text.ends_with(
                ": client error (Connect): tcp connect error: Connection refused (os error 111)"
            ),
            "{text}"
        );
        assert_eq!(error_chain(&layers(&["alone"])), "alone");
    }
}
