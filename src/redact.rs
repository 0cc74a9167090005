//! Keeps secrets out of everything Ling prints or logs (stderr, the `json` error fields, `ling
//! mcp` output, `LING_HOME/logs/*`). Two kinds are masked. Secrets that sit in a known place are
//! masked by their shape: a URL's userinfo (`user:pw@` becomes `***@`) and its query values
//! (`?key=abc` becomes `?key=***`). Secret values Ling itself holds (the model API key, the
//! values of credential headers, URL passwords and query tokens) are registered when a client is
//! built and replaced wherever they turn up, since a server may quote them back in an error.
//!
//! The registry is process-wide because its readers are: the debug log and stderr are written
//! from everywhere and have no context that could be handed a list.

use std::sync::RwLock;

/// What a hidden value is shown as.
pub const MASK: &str = "***";
/// Shorter values are not registered: they would be masked in every other word.
const MIN_SECRET: usize = 6;

/// Registered secrets, longest first, so a secret that contains another is masked whole.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers `secret`, so that [`scrub`] masks it from now on. Values shorter than six
/// characters are ignored.
pub fn register(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET {
        return;
    }
    let mut secrets = SECRETS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if secrets.iter().any(|known| known == secret) {
        return;
    }
    secrets.push(secret.to_string());
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// Registers the secrets a URL carries: its password (or a username without one, which is how
/// tokens are often given) and the values of query parameters named like credentials
/// (`?key=`, `?access_token=`; not `?api-version=`, which would mask a date everywhere). In a
/// URL every query value is masked anyway, by [`redact_urls`].
pub fn register_url(url: &str) {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return;
    };
    match parsed.password() {
        Some(password) => register(&decode(password)),
        None => register(&decode(parsed.username())),
    }
    for (name, value) in parsed.query_pairs() {
        if is_credential_name(&name) {
            register(&value);
        }
    }
}

/// Registers the value of a header whose name says it carries a credential
/// (see [`is_credential_name`]), and the credential after its scheme (`Bearer x` → `x`).
pub fn register_header(name: &str, value: &str) {
    if !is_credential_name(name) {
        return;
    }
    register(value);
    if let Some((_, credential)) = value.trim().split_once(' ') {
        register(credential);
    }
}

/// Whether a header or query parameter name says it carries a credential: `Cookie`, `pw`,
/// `code`, and any name with `auth`, `key`, `token`, `secret`, `pass`, `session`, `sig` or
/// `credential` in it (`Authorization`, `X-Api-Key`, `access_token`, `password`...).
pub fn is_credential_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "cookie" | "pw" | "code")
        || [
            "auth",
            "key",
            "token",
            "secret",
            "pass",
            "session",
            "sig",
            "credential",
        ]
        .iter()
        .any(|word| name.contains(word))
}

/// `text` with every registered secret replaced by [`MASK`] and every URL masked by
/// [`redact_urls`].
pub fn scrub(text: &str) -> String {
    let secrets = SECRETS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = None::<String>;
    for secret in secrets.iter() {
        let current = out.as_deref().unwrap_or(text);
        if current.contains(secret.as_str()) {
            out = Some(current.replace(secret.as_str(), MASK));
        }
    }
    redact_urls(out.as_deref().unwrap_or(text))
}

/// One URL as it may be shown: without userinfo and query values.
pub fn url(url: &str) -> String {
    redact_urls(url)
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

/// Userinfo is percent-encoded in a parsed URL; the secret is what the user wrote.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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
        assert_eq!(
            url("http://user:pw@127.0.0.1:1/v1/chat/completions?key=SECRET"),
            "http://***@127.0.0.1:1/v1/chat/completions?key=***"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }

    #[test]
    fn registered_secrets_are_masked_wherever_they_appear() {
        register("sk-unit-test-registered-key");
        register("short");
        assert_eq!(
            scrub("the server said: bad key sk-unit-test-registered-key (short)"),
            "the server said: bad key *** (short)"
        );
    }

    #[test]
    fn a_longer_secret_is_masked_whole_before_a_shorter_one_inside_it() {
        register("inner-secret");
        register("outer-inner-secret-value");
        assert_eq!(scrub("x outer-inner-secret-value y"), "x *** y");
    }

    #[test]
    fn url_secrets_are_registered_decoded() {
        register_url(
            "http://someone:p%40ss-word-1@127.0.0.1/x?token=query-token-1&api-version=2024-02-01",
        );
        assert_eq!(
            scrub("echo p@ss-word-1 and query-token-1 but not 2024-02-01"),
            "echo *** and *** but not 2024-02-01"
        );
        register_url("https://ghp_usernametoken1@example.com/repo");
        assert_eq!(scrub("token ghp_usernametoken1"), "token ***");
    }

    #[test]
    fn only_credential_headers_are_registered() {
        for name in [
            "Authorization",
            "X-Api-Key",
            "x-auth-token",
            "Cookie",
            "access_token",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in ["Accept", "X-Client-Name", "api-version", "format"] {
            assert!(!is_credential_name(name), "{name}");
        }
        register_header("Authorization", "Bearer header-token-123");
        register_header("X-Client-Name", "visible-client-name");
        assert_eq!(
            scrub("got header-token-123 from visible-client-name"),
            "got *** from visible-client-name"
        );
    }
}
