//! The one place that builds Ling's HTTP clients (the model client, the MCP Streamable HTTP and
//! legacy SSE transports, http hooks), so that all of them share one redirect policy: a redirect
//! is followed only to the same origin (scheme, host and port), at most [`MAX_REDIRECTS`] times.
//! Anything else stops the request with a [`RedirectError`] naming where the redirect pointed and
//! what to change. A redirect to another origin would carry the API key and the configured
//! headers there: reqwest drops `Authorization` and cookies across hosts, but not headers such as
//! `X-Api-Key`, and not across a scheme change on the same host and port. HTTPS is rustls (ring),
//! trusting the system's root certificates (`rustls-platform-verifier`); a client that only ever
//! speaks plain HTTP ([`ClientOptions::plain_http`]) loads no root store at all, since reading it
//! is most of a one-shot run's start-up.

use std::time::Duration;

use reqwest::Url;

/// Same-origin redirects followed for one request before it fails.
pub const MAX_REDIRECTS: usize = 5;

/// Who the client talks to, which decides what an error tells the user to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The model server (`--base-url`).
    Model,
    /// An MCP server over HTTP (its `url` in `mcp.json`).
    McpServer,
    /// An http hook (its `url` in `hooks.json`).
    Hook,
    /// An MCP server's OAuth authorization server (found by discovery).
    AuthServer,
    /// A page `web_fetch` reads or a search provider (redirects are followed by the fetch
    /// itself, each hop checked again).
    Web,
}

impl Target {
    /// How to point Ling at the address a server redirects to.
    fn fix(self) -> &'static str {
        match self {
            Self::Model => {
                "set the base URL to the address it redirects to (--base-url, OPENAI_BASE_URL or \
                 settings `baseUrl`)"
            }
            Self::McpServer => {
                "set the server's \"url\" in its mcp.json to the address it redirects to"
            }
            Self::Hook => "set the hook's \"url\" in its hooks.json to the address it redirects to",
            Self::AuthServer => {
                "fix the authorization server's metadata (Ling does not follow its redirects to \
                 another origin)"
            }
            Self::Web => "fetch the address it redirects to instead",
        }
    }
}

/// How to build one client.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    pub target: Target,
    pub connect_timeout: Option<Duration>,
    /// Bypass the user's HTTP proxy (a server on loopback is never behind it).
    pub no_proxy: bool,
    /// `false`: no redirect is followed at all (the response is the redirect itself).
    pub follow_redirects: bool,
    /// Only `http://` URLs are asked of this client: no root certificates are read, and an
    /// `https://` URL would fail verification.
    pub plain_http: bool,
}

impl ClientOptions {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            connect_timeout: None,
            no_proxy: false,
            follow_redirects: true,
            plain_http: false,
        }
    }

    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    pub fn no_proxy(mut self, no_proxy: bool) -> Self {
        self.no_proxy = no_proxy;
        self
    }

    pub fn follow_redirects(mut self, follow: bool) -> Self {
        self.follow_redirects = follow;
        self
    }

    /// See [`ClientOptions::plain_http`]: for a client whose every URL is `http://` (redirects
    /// stay on the origin, so the scheme cannot change).
    pub fn plain_http(mut self, plain: bool) -> Self {
        self.plain_http = plain;
        self
    }
}

/// A redirect Ling refused to follow. The URLs in it are masked (no userinfo, no query values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectError {
    #[error(
        "{from} redirected to {to}, which is another origin ({to_origin} instead of \
         {from_origin}); Ling does not follow a redirect to another origin, so the API key and the \
         configured headers never go there. If that is the right server, {}",
        .target.fix()
    )]
    CrossOrigin {
        from: String,
        to: String,
        from_origin: String,
        to_origin: String,
        target: Target,
    },
    #[error(
        "{url} redirected more than {MAX_REDIRECTS} times; {}",
        .target.fix()
    )]
    TooMany { url: String, target: Target },
}

/// Builds a client with Ling's redirect policy.
pub fn build(options: ClientOptions) -> Result<reqwest::Client, reqwest::Error> {
    builder(options).build()
}

/// The builder of [`build`], for a caller that adds to it (`web_fetch`'s DNS check).
pub fn builder(options: ClientOptions) -> reqwest::ClientBuilder {
    // TLS is rustls with ring's cryptography (reqwest's default, aws-lc, would add 2 MB of C to the
    // binary), installed for the process by the first client; later calls find it in place.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let target = options.target;
    let policy = if options.follow_redirects {
        reqwest::redirect::Policy::custom(move |attempt| {
            match decide(attempt.previous(), attempt.url(), target) {
                Ok(()) => attempt.follow(),
                Err(refusal) => attempt.error(refusal),
            }
        })
    } else {
        reqwest::redirect::Policy::none()
    };
    let mut builder = reqwest::Client::builder().redirect(policy);
    if let Some(timeout) = options.connect_timeout {
        builder = builder.connect_timeout(timeout);
    }
    if options.no_proxy {
        builder = builder.no_proxy();
    }
    if options.plain_http {
        builder = builder.tls_certs_only(std::iter::empty());
    }
    builder
}

/// Whether a redirect to `next` may be followed, after the request went to `previous` (the first
/// is the URL asked for).
pub fn decide(previous: &[Url], next: &Url, target: Target) -> Result<(), RedirectError> {
    let Some(last) = previous.last() else {
        return Ok(());
    };
    if next.origin() != last.origin() {
        return Err(RedirectError::CrossOrigin {
            from: crate::redact::url(last.as_str()),
            to: crate::redact::url(next.as_str()),
            from_origin: origin(last),
            to_origin: origin(next),
            target,
        });
    }
    if previous.len() > MAX_REDIRECTS {
        return Err(RedirectError::TooMany {
            url: crate::redact::url(previous[0].as_str()),
            target,
        });
    }
    Ok(())
}

/// The refused redirect inside a reqwest error, if that is why the request failed.
pub fn redirect_refusal(error: &reqwest::Error) -> Option<&RedirectError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refusal) = current.downcast_ref::<RedirectError>() {
            return Some(refusal);
        }
        source = current.source();
    }
    None
}

/// `scheme://host:port`, the port always written.
fn origin(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn decide_one(from: &str, to: &str) -> Result<(), RedirectError> {
        decide(&[url(from)], &url(to), Target::Model)
    }

    #[test]
    fn same_origin_redirects_are_followed() {
        assert_eq!(
            decide_one("http://127.0.0.1:8080/v1/a", "http://127.0.0.1:8080/v2/b"),
            Ok(())
        );
        // The default port written or not, the host in any case: the same origin.
        assert_eq!(
            decide_one(
                "https://API.example.com/v1",
                "https://api.example.com:443/x"
            ),
            Ok(())
        );
    }

    #[test]
    fn another_port_host_or_scheme_is_refused_with_what_to_change() {
        for to in [
            "http://127.0.0.1:9090/v1/chat/completions",
            "http://127.0.0.2:8080/v1/chat/completions",
            "https://127.0.0.1:8080/v1/chat/completions",
        ] {
            let refusal = decide_one("http://127.0.0.1:8080/v1/chat/completions", to);
            assert!(
                matches!(refusal, Err(RedirectError::CrossOrigin { .. })),
                "{to}: {refusal:?}"
            );
        }
        let text = decide_one(
            "http://127.0.0.1:8080/v1/chat/completions?key=SECRET",
            "http://user:pw@evil.example/steal?key=SECRET",
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert_eq!(
            text,
            "http://127.0.0.1:8080/v1/chat/completions?key=*** redirected to \
             http://***@evil.example/steal?key=***, which is another origin \
             (http://evil.example:80 instead of http://127.0.0.1:8080); Ling does not follow a \
             redirect to another origin, so the API key and the configured headers never go \
             there. If that is the right server, set the base URL to the address it redirects to \
             (--base-url, OPENAI_BASE_URL or settings `baseUrl`)"
        );
    }

    #[test]
    fn each_hop_is_checked_against_the_one_before() {
        let chain = [url("http://a.test/1"), url("http://a.test/2")];
        assert!(decide(&chain, &url("http://b.test/3"), Target::Hook).is_err());
        assert_eq!(
            decide(&chain, &url("http://a.test/3"), Target::Hook),
            Ok(())
        );
    }

    #[test]
    fn redirects_are_bounded() {
        let hops: Vec<Url> = (0..=MAX_REDIRECTS)
            .map(|i| url(&format!("http://a.test/{i}")))
            .collect();
        assert_eq!(
            decide(
                &hops[..MAX_REDIRECTS],
                &url("http://a.test/x"),
                Target::McpServer
            ),
            Ok(())
        );
        let refusal = decide(&hops, &url("http://a.test/x"), Target::McpServer);
        let text = refusal.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            text,
            "http://a.test/0 redirected more than 5 times; set the server's \"url\" in its \
             mcp.json to the address it redirects to"
        );
    }

    #[test]
    fn a_client_builds_with_the_policy() {
        let options = ClientOptions::new(Target::Hook)
            .connect_timeout(Duration::from_secs(1))
            .no_proxy(true);
        assert!(build(options).is_ok());
    }
}
