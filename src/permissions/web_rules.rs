//! The rules on web hosts: the host a `web_fetch` call names (matched by
//! `web_fetch(domain:...)` rules like a path by a path rule), and the rules in force as the
//! fetch needs them ([`HostRules`]) for what it meets after the check: redirects to other hosts,
//! and addresses off the public internet, which only a rule naming the host lets it reach.

use serde_json::Value;

use super::rules::Rule;
use super::{PermissionMode, Permissions};
use crate::web::HostRules;

/// The host of a `web_fetch` call's `url`, lower case; `None` for another tool or a URL without
/// one (the tool then says what is wrong with it).
pub(super) fn fetch_host(tool: &str, input: &Value) -> Option<String> {
    if tool != "web_fetch" {
        return None;
    }
    let url = reqwest::Url::parse(input.get("url")?.as_str()?.trim()).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::config::Paths;
    use crate::permissions::Check;
    use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

    struct Web(&'static str);

    #[async_trait::async_trait]
    impl Tool for Web {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn kind(&self) -> ToolKind {
            ToolKind::Web
        }
        async fn call(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::default())
        }
    }

    const FETCH: Web = Web("web_fetch");
    const SEARCH: Web = Web("web_search");

    fn perms(mode: PermissionMode, allow: &[&str], deny: &[&str]) -> Permissions {
        let paths = Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into());
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Permissions::new(mode, &strings(allow), &strings(deny), &paths).unwrap()
    }

    fn fetch(p: &Permissions, url: &str) -> &'static str {
        match p.check(&FETCH, &json!({ "url": url })) {
            Check::Allow => "allow",
            Check::Ask { .. } => "ask",
            Check::Deny { .. } => "deny",
        }
    }

    #[test]
    fn domain_rules_allow_and_deny_fetches_by_host() {
        let p = perms(
            PermissionMode::Default,
            &["WebFetch(domain:docs.rs)", "web_fetch(domain:*.python.org)"],
            &["WebFetch(domain:evil.test)"],
        );
        assert_eq!(fetch(&p, "https://docs.rs/serde"), "allow");
        assert_eq!(fetch(&p, "https://DOCS.rs:443/x?y"), "allow");
        assert_eq!(fetch(&p, "https://docs.python.org/3/"), "allow");
        assert_eq!(fetch(&p, "https://api.docs.rs/"), "ask");
        assert_eq!(fetch(&p, "https://example.com/"), "ask");
        assert_eq!(fetch(&p, "http://evil.test/"), "deny");
        assert_eq!(fetch(&p, "not a url"), "ask");
        assert!(p.ignored_rules().is_empty(), "{:?}", p.ignored_rules());
        assert_eq!(
            p.session_rule_for(&FETCH, &json!({"url": "https://example.com/a"})),
            "web_fetch(domain:example.com)"
        );
        let rules = p.web_rules();
        assert!(rules.names("docs.rs") && rules.allows("www.python.org"));
        assert!(!rules.allows("example.com") && rules.denies("evil.test"));
    }

    #[test]
    fn the_web_asks_in_every_mode_but_bypass_unless_a_rule_allows() {
        use PermissionMode::*;
        for (mode, expected) in [
            (Default, "ask"),
            (AcceptEdits, "ask"),
            (Plan, "ask"),
            (DontAsk, "ask"),
            (Bypass, "allow"),
        ] {
            let p = perms(mode, &[], &[]);
            assert_eq!(fetch(&p, "https://example.com/"), expected, "{mode:?}");
        }
        let bypass = perms(Bypass, &[], &["WebFetch(domain:example.com)"]);
        assert_eq!(fetch(&bypass, "https://example.com/"), "deny");
        assert!(bypass.web_rules().allow_all && !bypass.web_rules().names("x.test"));
        let all = perms(Default, &["WebFetch", "WebSearch"], &[]);
        assert_eq!(fetch(&all, "https://anything.test/"), "allow");
        assert_eq!(all.check(&SEARCH, &json!({"query": "q"})), Check::Allow);
        let none = perms(Default, &[], &["WebSearch"]);
        assert!(matches!(
            none.check(&SEARCH, &json!({"query": "q"})),
            Check::Deny { .. }
        ));
        assert!(none.web_rules() == HostRules::default());
    }

    #[test]
    fn a_web_fetch_rule_names_a_host() {
        let paths = Paths::with_home("/nonexistent/root".into(), "/nonexistent/home".into());
        for bad in [
            "web_fetch(https://x.test)",
            "WebFetch(domain:)",
            "web_fetch(a/b)",
        ] {
            let error = Permissions::new(PermissionMode::Default, &[bad.into()], &[], &paths);
            assert!(
                error
                    .as_ref()
                    .is_err_and(|e| e.to_string().contains("names a host")),
                "{bad}: {:?}",
                error.err()
            );
        }
    }
}
