//! What a run that cannot ask is told of an untrusted project: the one line on what was
//! skipped and how to use it, and the servers and hook files that `ling mcp` and `ling hooks`
//! show as untrusted.

use super::listing::{FileListing, Item};
use super::{EXTENSIONS, ProjectConfig, TrustStatus, shown_name};
use crate::config::Paths;
use crate::config::claude::{CLAUDE_PROJECT_FILES, CLAUDE_SETTINGS_FILES};
use crate::config::mcp::{MCP_FILE, parse_mcp_text, transport_kind};

impl ProjectConfig {
    /// The one line a run that cannot ask prints about an untrusted project: what was skipped
    /// and how to use it. `None` unless the project is untrusted.
    pub fn skipped_notice(&self, paths: &Paths) -> Option<String> {
        if self.status != TrustStatus::Untrusted {
            return None;
        }
        let listing = self.listing(paths);
        let mut skipped = Vec::new();
        let order = ["hooks.json", "mcp.json", "settings.json"]
            .into_iter()
            .chain(CLAUDE_PROJECT_FILES)
            .chain([EXTENSIONS]);
        for name in order {
            let Some(file) = listing.files.iter().find(|f| f.name == name) else {
                continue;
            };
            let what = match (name, &file.items) {
                ("settings.json", _) => "except permissions.deny".to_string(),
                (_, Err(_)) => "invalid".to_string(),
                ("hooks.json", Ok(items)) => count(items.len(), "hook", "hooks"),
                ("mcp.json" | CLAUDE_MCP, Ok(items)) => count(items.len(), "server", "servers"),
                (_, Ok(items)) => count(items.len(), "item", "items"),
            };
            skipped.push(format!("{} ({what})", shown_name(name)));
        }
        let skipped = match skipped.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => return None,
        };
        let why = if self.changed_since_trusted() {
            "this project's config changed since you trusted it"
        } else {
            "this project is not trusted"
        };
        Some(format!(
            "{why}; skipped {skipped}; run `ling trust` to use them"
        ))
    }

    /// The servers of an untrusted project's `mcp.json`, as (name, transport), for `ling mcp`
    /// to show as `untrusted`. Empty when trusted or when the file does not parse.
    pub fn untrusted_servers(&self) -> Vec<(String, &'static str)> {
        if self.status != TrustStatus::Untrusted {
            return Vec::new();
        }
        let mut servers: Vec<(String, &'static str)> = Vec::new();
        for file in [MCP_FILE, CLAUDE_MCP] {
            let Some((path, text)) = self.any_text(file) else {
                continue;
            };
            let Ok(raw) = parse_mcp_text(path, text, &mut Vec::new()) else {
                continue;
            };
            for (name, server) in raw.mcp_servers.0 {
                if let Ok(kind) = transport_kind(&name, &server)
                    && !servers.iter().any(|(seen, _)| *seen == name)
                {
                    servers.push((name, kind));
                }
            }
        }
        servers
    }

    /// The hook files of an untrusted project that exist, each shown (`.ling/hooks.json`,
    /// `.claude/settings.json`) with its number of hooks. Empty when trusted.
    pub fn untrusted_hooks(&self, paths: &Paths) -> Vec<(String, usize)> {
        if self.status != TrustStatus::Untrusted {
            return Vec::new();
        }
        let listing = self.listing(paths);
        let hooks = |f: &FileListing| {
            f.items.as_ref().map_or(0, |items| {
                items
                    .iter()
                    .filter(|i| matches!(i, Item::Hook { .. }))
                    .count()
            })
        };
        listing
            .files
            .iter()
            .filter(|f| f.name == "hooks.json" || CLAUDE_SETTINGS_FILES.contains(&f.name))
            .map(|f| (shown_name(f.name), hooks(f)))
            .filter(|(name, n)| *n > 0 || name == ".ling/hooks.json")
            .collect()
    }
}

const CLAUDE_MCP: &str = CLAUDE_PROJECT_FILES[2];

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
