//! `@server:uri` mentions in a prompt: each one names an MCP resource whose text is read and
//! attached after the prompt in a `<resource server=".." uri="..">` block, so the model sees it
//! without a tool call. The prompt itself is left as written; a mention of an unknown server or
//! a resource that cannot be read is reported as a warning and left as it is.

use crate::mcp::{McpManager, ServerState};

use super::resources::render_contents;

/// One `@server:uri` in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub server: String,
    pub uri: String,
}

/// The mentions of `text`, each once, in order. A mention starts with `@` at the start of the
/// text or after whitespace or an opening bracket or quote (so e-mail addresses are not
/// mentions), then a server name, `:`, and
/// a URI running to the next whitespace, without trailing sentence punctuation.
pub fn parse_mentions(text: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for word in text.split_whitespace() {
        let word = word.trim_start_matches(['(', '[', '<', '"', '\'']);
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        let server_ok = !server.is_empty()
            && server
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        let uri = trim_trailing(uri);
        if !server_ok || uri.is_empty() {
            continue;
        }
        let mention = Mention {
            server: server.to_string(),
            uri: uri.to_string(),
        };
        if !found.contains(&mention) {
            found.push(mention);
        }
    }
    found
}

/// Drops sentence punctuation after a URI ("see @s:a://b." means `a://b`), and a closing
/// bracket or quote the URI did not open.
fn trim_trailing(uri: &str) -> &str {
    let mut uri = uri;
    loop {
        let before = uri;
        uri = uri.trim_end_matches(['.', ',', ';', ':', '!', '?', '"', '\'']);
        for (open, close) in [('(', ')'), ('[', ']'), ('<', '>')] {
            if uri.ends_with(close) && uri.matches(open).count() < uri.matches(close).count() {
                uri = &uri[..uri.len() - 1];
            }
        }
        if uri == before {
            return uri;
        }
    }
}

/// The `<resource>` block attached for one mention.
pub fn resource_block(mention: &Mention, text: &str) -> String {
    format!(
        "<resource server=\"{}\" uri=\"{}\">\n{}\n</resource>",
        mention.server,
        mention.uri,
        text.trim_end()
    )
}

/// Reads every mentioned resource: the blocks to attach, and a warning per mention that could not
/// be resolved.
pub async fn resolve_mentions(text: &str, manager: &McpManager) -> (Vec<String>, Vec<String>) {
    let mut blocks = Vec::new();
    let mut warnings = Vec::new();
    let mentions = parse_mentions(text);
    if mentions.is_empty() || manager.configs().is_empty() {
        return (blocks, warnings);
    }
    // In the REPL a mentioned server may still be starting: wait for it rather than miss it.
    let starting = manager
        .statuses()
        .iter()
        .any(|s| s.state == ServerState::Starting && mentions.iter().any(|m| m.server == s.name));
    if starting {
        manager.wait_ready().await;
    }
    for mention in mentions {
        let known = manager.statuses().iter().any(|s| s.name == mention.server);
        if !known {
            warnings.push(format!(
                "@{}:{}: there is no MCP server {:?}; the mention was left as it is",
                mention.server, mention.uri, mention.server
            ));
            continue;
        }
        let Some(client) = manager.client(&mention.server) else {
            warnings.push(format!(
                "@{}:{}: MCP server {} is not connected; the mention was left as it is",
                mention.server, mention.uri, mention.server
            ));
            continue;
        };
        match client.read_resource(&mention.uri).await {
            Ok(result) => blocks.push(resource_block(&mention, &render_contents(&result))),
            Err(e) => warnings.push(format!(
                "@{}:{}: reading the resource failed: {e}; the mention was left as it is",
                mention.server, mention.uri
            )),
        }
    }
    (blocks, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn mention(server: &str, uri: &str) -> Mention {
        Mention {
            server: server.into(),
            uri: uri.into(),
        }
    }

    #[test]
    fn finds_mentions_after_whitespace_only() {
        assert_eq!(
            parse_mentions("summarise @everything:demo://resource/static/document/a.md please"),
            vec![mention(
                "everything",
                "demo://resource/static/document/a.md"
            )]
        );
        assert_eq!(
            parse_mentions("@db:sqlite://schema\nand @db:sqlite://schema again"),
            vec![mention("db", "sqlite://schema")]
        );
        assert!(parse_mentions("mail me at me@example.com:80 or x@y:z").is_empty());
        assert!(parse_mentions("@everyone: hello, @: x, @a:").is_empty());
        assert!(parse_mentions("@bad/name:uri").is_empty());
    }

    #[test]
    fn trailing_punctuation_and_unopened_brackets_are_not_part_of_the_uri() {
        assert_eq!(
            parse_mentions("read (@s:file:///a/b.txt)."),
            vec![mention("s", "file:///a/b.txt")]
        );
        assert_eq!(
            parse_mentions("@s:demo://x/(1), then?"),
            vec![mention("s", "demo://x/(1)")]
        );
    }

    #[test]
    fn a_block_names_server_and_uri() {
        assert_eq!(
            resource_block(&mention("s", "a://b"), "text\n"),
            "<resource server=\"s\" uri=\"a://b\">\ntext\n</resource>"
        );
    }
}
