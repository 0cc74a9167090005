//! The rules on web hosts: the host a `web_fetch` call names (matched by
//! `web_fetch(domain:...)` rules like a path by a path rule), and the rules in force as the
//! fetch needs them ([`HostRules`]) for what it meets after the check: redirects to other hosts,
//! and addresses off the public internet, which only a rule naming the host lets it reach.

use serde_json::Value;

use super::rules::Rule;
use super::{Permissions, PermissionMode};
use crate::web::HostRules;

/// The host of a `web_fetch` call's `url`, lower case; `None` for another tool or a URL without
/// one (the tool then says what is wrong with it).
pub(super) fn fetch_host(tool: &str, input: &Value) -> Option<String> {
    if tool != "web_fetch" {
        return None;
    }
    let url = reqwest::Url::parse(input.get("url")?.as_str()?.trim()).ok()?;
    let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some(host.to_ascii_lowercase())
}

impl Permissions {
    /// What the rules in force say about web hosts: hosts allowed without asking (all of them
    /// in `bypass` mode), hosts denied, hosts named.
    pub fn web_rules(&self) -> HostRules {
        let mut rules = HostRules {
            allow_all: self.mode == PermissionMode::Bypass,
            ..HostRules::default()
        };
        for (_, rule) in &self.allow {
            match rule {
                Rule::Domain(pattern) => rules.allow.push(pattern.clone()),
                _ if rule.names_tool("web_fetch") => rules.allow_all = true,
                _ => {}
            }
        }
        for (_, rule) in &self.deny {
            match rule {
                Rule::Domain(pattern) => rules.deny.push(pattern.clone()),
                _ if rule.names_tool("web_fetch") => rules.deny_all = true,
                _ => {}
            }
        }
        rules
    }
}
