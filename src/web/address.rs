//! Which hosts a fetch may reach. An address that is not on the public internet (loopback,
//! private ranges, link-local and the cloud metadata address in it, carrier-grade NAT, unique
//! local IPv6, an IPv4 address hidden in an IPv6 one...) is refused unless a rule names the
//! host: a page must not be able to point Ling at a service only this machine can see. The
//! address is checked after DNS, for every hop of a redirect ([`super::fetch()`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The permission rules on web hosts, as the fetch sees them (worked out from the rules in
/// force by `permissions`): which hosts may be fetched without asking, which never, and which
/// a rule names. A pattern is a host (`example.com`) or every host under a domain
/// (`*.example.com`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostRules {
    /// Every host may be fetched without asking (a bare `web_fetch` allow rule, bypass mode).
    pub allow_all: bool,
    /// `web_fetch(domain:...)` allow rules.
    pub allow: Vec<String>,
    /// Every fetch is denied (a bare `web_fetch` deny rule).
    pub deny_all: bool,
    /// `web_fetch(domain:...)` deny rules.
    pub deny: Vec<String>,
}

impl HostRules {
    /// Whether a deny rule matches `host`.
    pub fn denies(&self, host: &str) -> bool {
        self.deny_all || self.deny.iter().any(|p| host_matches(p, host))
    }

    /// Whether `host` may be fetched without asking: an allow rule matches and no deny rule.
    pub fn allows(&self, host: &str) -> bool {
        !self.denies(host) && (self.allow_all || self.allow.iter().any(|p| host_matches(p, host)))
    }

    /// Whether an allow rule names `host` itself (or a domain it is in): only then may it be
    /// an address off the public internet.
    pub fn names(&self, host: &str) -> bool {
        !self.denies(host) && self.allow.iter().any(|p| host_matches(p, host))
    }
}

/// Whether the rule pattern `pattern` (`example.com`, `*.example.com`) matches `host`, without
/// case; `*.example.com` matches `a.example.com` and `example.com` itself.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim().trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match pattern.strip_prefix("*.") {
        Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
        None => host == pattern.trim_start_matches('[').trim_end_matches(']'),
    }
}

/// Whether `ip` is an address of the public internet; `None` with what it is otherwise.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() || a == 0 => "an unspecified address",
        (169, 254, _) => "a link-local address (where cloud metadata services answer)",
        _ if ip.is_private() => "a private address",
        (100, 64..=127, _) => "a carrier-grade NAT address (where some metadata services answer)",
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a reserved address",
        (198, 18..=19, _) => "a benchmarking address",
        _ if ip.is_broadcast() || ip.is_multicast() || a >= 240 => {
            "a multicast or reserved address"
        }
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    let last_four = || Ipv4Addr::from(ip.octets()[12..16].try_into().unwrap_or([0; 4]));
    // An IPv4 address inside an IPv6 one: mapped, compatible, NAT64 (64:ff9b::/96) or 6to4.
    let compatible =
        segments[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified();
    let embedded = if let Some(v4) = ip.to_ipv4_mapped() {
        Some(v4)
    } else if compatible || segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        Some(last_four())
    } else if segments[0] == 0x2002 {
        Some(Ipv4Addr::from(
            ip.octets()[2..6].try_into().unwrap_or([0; 4]),
        ))
    } else {
        None
    };
    if let Some(v4) = embedded {
        return non_public_v4(v4);
    }
    Some(match segments[0] {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() => "an unspecified address",
        s if s & 0xfe00 == 0xfc00 => "a unique local address (where some metadata services answer)",
        s if s & 0xffc0 == 0xfe80 || s & 0xffc0 == 0xfec0 => "a link-local address",
        s if s & 0xff00 == 0xff00 => "a multicast address",
        0x2001 if segments[1] == 0x0db8 => "a documentation address",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_public_addresses_pass() {
        for private in [
            "127.0.0.1",
            "127.8.9.10",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
        ] {
            assert!(non_public(ip(private)).is_some(), "{private} passed");
        }
        for public in [
            "93.184.215.14",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(non_public(ip(public)), None, "{public} refused");
        }
    }

    #[test]
    fn host_rules_match_hosts_and_domains() {
        let rules = HostRules {
            allow: vec!["docs.rs".into(), "*.example.com".into(), "localhost".into()],
            deny: vec!["evil.example.com".into()],
            ..HostRules::default()
        };
        assert!(rules.allows("docs.rs") && rules.allows("DOCS.RS."));
        assert!(!rules.allows("api.docs.rs"));
        assert!(rules.allows("a.example.com") && rules.allows("example.com"));
        assert!(!rules.allows("notexample.com"));
        assert!(!rules.allows("evil.example.com") && rules.denies("evil.example.com"));
        assert!(rules.names("localhost") && !rules.names("127.0.0.1"));
        let everything = HostRules {
            allow_all: true,
            ..HostRules::default()
        };
        assert!(everything.allows("anything.test") && !everything.names("127.0.0.1"));
        assert!(host_matches("::1", "[::1]"));
    }
}
