//! Keeps secrets out of what `ling mcp get` and `list` show: a value written with `${VAR}` is
//! shown as written (its expansion is often a token), URLs lose their userinfo and query values,
//! and error text gets the same treatment, since errors quote commands, arguments and URLs.

use std::sync::LazyLock;

use regex::Regex;

use crate::config::mcp::{RawMcpFile, RawServer, ServerConfig};
use crate::config::{expand_vars, read_json_file};

/// `${VAR}` and `${VAR:-default}`.
static VARIABLE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\$\{[^}]*\}").ok());
/// Shorter expansions are not scrubbed from error text: they would match everywhere.
const MIN_SECRET: usize = 3;
/// What a hidden value is shown as.
pub const MASK: &str = "***";

/// The secrets of one server's config, and the entry as written.
#[derive(Debug, Default)]
pub struct Redactor {
    raw: Option<RawServer>,
    /// (expanded text, what to show instead), longest first.
    secrets: Vec<(String, String)>,
}

impl Redactor {
    /// Re-reads the entry from the file the config came from, for its `${VAR}` templates.
    pub fn for_config(config: &ServerConfig) -> Self {
        let raw = read_json_file::<RawMcpFile>(&config.source)
            .ok()
            .flatten()
            .and_then(|file| {
                let mut servers = file.mcp_servers.0;
                let index = servers.iter().position(|(name, _)| *name == config.name)?;
                Some(servers.swap_remove(index).1)
            });
        let mut secrets = Vec::new();
        if let Some(raw) = &raw {
            let written = raw
                .command
                .iter()
                .chain(raw.args.iter().flatten())
                .chain(raw.cwd.iter())
                .chain(raw.url.iter())
                .chain(raw.env.iter().flat_map(|m| m.values()))
                .chain(raw.headers.iter().flat_map(|m| m.values()));
            for text in written {
                for variable in variables(text) {
                    if let Ok(value) = expand_vars(variable) {
                        secrets.push((value, variable.to_string()));
                    }
                }
            }
            for value in raw.headers.iter().flat_map(|m| m.values()) {
                secrets.push((expand_vars(value).unwrap_or_default(), MASK.to_string()));
            }
        }
        secrets.retain(|(secret, _)| secret.len() >= MIN_SECRET);
        secrets.sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
        Self { raw, secrets }
    }

    /// The entry as written, when it could be read again.
    pub fn raw(&self) -> Option<&RawServer> {
        self.raw.as_ref()
    }

    /// `text` with every expanded secret replaced by its `${VAR}` and URLs redacted.
    pub fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (secret, shown) in &self.secrets {
            text = text.replace(secret.as_str(), shown);
        }
        redact_urls(&text)
    }
}

/// The value to show for one config value: as written when it used a variable, else as resolved.
pub fn shown<'a>(written: Option<&'a str>, resolved: &'a str) -> &'a str {
    match written {
        Some(written) if !variables(written).is_empty() => written,
        _ => resolved,
    }
}

fn variables(text: &str) -> Vec<&str> {
    match VARIABLE.as_ref() {
        Some(re) => re.find_iter(text).map(|m| m.as_str()).collect(),
        None => Vec::new(),
    }
}

/// Every URL in `text` without its userinfo (`user:pw@` becomes `***@`) and with its query
/// values masked (`?api_key=x` becomes `?api_key=***`).
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme = rest[..at]
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
            .count();
        out.push_str(&rest[..at - scheme]);
        let url = &rest[at - scheme..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | ']'))
            .unwrap_or(url.len());
        // Punctuation right after a URL ends the sentence, not the URL.
        let end = url[..end].trim_end_matches(['.', ',', ':', ';']).len();
        out.push_str(&redact_url(&url[..end], scheme + 3));
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

/// One URL; its authority starts at byte `start`.
fn redact_url(url: &str, start: usize) -> String {
    let (before, fragment) = url.split_at(url.find('#').unwrap_or(url.len()));
    let (before, query) = match before.find('?') {
        Some(q) => (&before[..q], Some(&before[q + 1..])),
        None => (before, None),
    };
    let authority_end = before[start..]
        .find('/')
        .map_or(before.len(), |i| start + i);
    let mut out = before[..start].to_string();
    let authority = &before[start..authority_end];
    match authority.rfind('@') {
        Some(at) => out.push_str(&format!("{MASK}{}", &authority[at..])),
        None => out.push_str(authority),
    }
    out.push_str(&before[authority_end..]);
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if !value.is_empty() => format!("{key}={MASK}"),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out.push_str(fragment);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn urls_lose_userinfo_and_query_values() {
        assert_eq!(
            redact_urls("cannot connect (http://user:pw@127.0.0.1:9/mcp?api_key=abc&x=&y#top): no"),
            "cannot connect (http://***@127.0.0.1:9/mcp?api_key=***&x=&y#top): no"
        );
        assert_eq!(
            redact_urls("at https://u@example.com/a?k=v: refused, b://c@d."),
            "at https://***@example.com/a?k=***: refused, b://***@d."
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }

    #[test]
    fn templates_are_shown_as_written() {
        assert_eq!(shown(Some("${TOKEN}"), "hunter2"), "${TOKEN}");
        assert_eq!(shown(Some("plain"), "plain"), "plain");
        assert_eq!(shown(None, "resolved"), "resolved");
    }
}
