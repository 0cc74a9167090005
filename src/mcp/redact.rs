//! Keeps secrets out of what `ling mcp get`, `list` and `call` show: a value written with
//! `${VAR}` is shown as written (its expansion is often a token), and error text gets the same
//! treatment, since errors quote commands, arguments and URLs. URL masking and the secrets every
//! output hides are `crate::redact`'s.

use std::sync::LazyLock;

use regex::Regex;

use crate::config::mcp::{RawMcpFile, RawServer, ServerConfig};
use crate::config::{expand_vars, read_json_file};
use crate::redact::{self, MASK};

/// `${VAR}` and `${VAR:-default}`.
static VARIABLE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\$\{[^}]*\}").ok());
/// Shorter expansions are not scrubbed from error text: they would match everywhere.
const MIN_SECRET: usize = 3;

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

    /// `text` with every expanded secret replaced by its `${VAR}`, then [`redact::scrub`]bed.
    pub fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (secret, shown) in &self.secrets {
            text = text.replace(secret.as_str(), shown);
        }
        redact::scrub(&text)
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn templates_are_shown_as_written() {
        assert_eq!(shown(Some("${TOKEN}"), "hunter2"), "${TOKEN}");
        assert_eq!(shown(Some("plain"), "plain"), "plain");
        assert_eq!(shown(None, "resolved"), "resolved");
    }
}
