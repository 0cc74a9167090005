//! One fetch: GET or HEAD of an http(s) URL, redirects followed by hand so that each hop is
//! checked again. Before each hop the host's addresses are looked up and refused when one is
//! off the public internet and no rule names the host; the client's own DNS resolver refuses
//! the same when it connects, so a name that answered a public address to the check cannot
//! connect to a private one after it (DNS rebinding). A redirect to another host is followed
//! only when the rules allow that host without asking; otherwise the fetch stops there and says
//! where it pointed, so that the model fetches it anew, through the permission check. The body
//! is read up to `maxBytes`, the whole fetch bounded by `timeoutMs`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::WebError;
use super::address::{HostRules, non_public};
use crate::http_client::{self, ClientOptions, Target};

/// Redirect hops one fetch follows.
pub const MAX_REDIRECTS: usize = 10;
const USER_AGENT: &str = concat!("Ling/", env!("CARGO_PKG_VERSION"), " (web_fetch)");
/// Markdown first (some sites serve it), then HTML, then anything.
const ACCEPT: &str = "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5";

/// The bounds of one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    pub max_bytes: u64,
    pub timeout: Duration,
    /// HEAD instead of GET.
    pub head: bool,
}

/// What a fetch brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The URL the answer came from, after the redirects followed.
    pub url: String,
    pub status: u16,
    /// The media type, without its parameters, lower case (`text/html`).
    pub content_type: String,
    /// The `charset=` of the content type, if any.
    pub charset: Option<String>,
    /// A few headers worth reporting for a HEAD: length, last modification, type.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was longer than `maxBytes` and was cut there.
    pub cut: bool,
    /// Where a redirect to another host pointed, which was not followed.
    pub redirect: Option<String>,
}

/// Fetches `url` under `rules`.
pub async fn fetch(
    url: &str,
    rules: &HostRules,
    options: &FetchOptions,
) -> Result<Fetched, WebError> {
    let parsed = parse(url)?;
    match tokio::time::timeout(options.timeout, follow(parsed, rules, options)).await {
        Ok(result) => result,
        Err(_) => Err(WebError::Timeout {
            url: crate::redact::url(url),
            limit: options.timeout,
        }),
    }
}

/// The checks of the first hop that need nothing sent: a URL web_fetch can fetch, and, when
/// its host is an IP address, one on the public internet or named by a rule. The permission
/// check runs them before asking, so nobody approves a fetch bound to be refused. A name is
/// looked up only when the fetch runs: not even a DNS query goes out before the user said yes.
pub fn check_url(url: &str, rules: &HostRules) -> Result<(), WebError> {
    let url = parse(url)?;
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<IpAddr>() {
        Ok(ip) if !rules.names(bare) => public(bare, ip),
        _ => Ok(()),
    }
}

/// An http(s) URL with a host.
fn parse(url: &str) -> Result<Url, WebError> {
    let bad = |reason: &str| WebError::BadUrl {
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let parsed = Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("only http:// and https:// URLs are fetched"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    Ok(parsed)
}

async fn follow(
    mut url: Url,
    rules: &HostRules,
    options: &FetchOptions,
) -> Result<Fetched, WebError> {
    let client = client(rules)?;
    for _ in 0..=MAX_REDIRECTS {
        check_host(&url, rules).await?;
        let request = if options.head {
            client.head(url.clone())
        } else {
            client.get(url.clone())
        };
        let response = request
            .header(reqwest::header::USER_AGENT, USER_AGENT)
            .header(reqwest::header::ACCEPT, ACCEPT)
            .send()
            .await
            .map_err(|e| http_error(&url, &e))?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let next = location
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| WebError::Http {
                    url: crate::redact::url(url.as_str()),
                    detail: format!("a redirect to an address that is not a URL ({location:?})"),
                })?;
            let host = next.host_str().unwrap_or_default().to_string();
            if rules.denies(&host) {
                return Err(WebError::DeniedRedirect {
                    from: crate::redact::url(url.as_str()),
                    to: crate::redact::url(next.as_str()),
                });
            }
            let same_host = next
                .host_str()
                .zip(url.host_str())
                .is_some_and(|(a, b)| a.eq_ignore_ascii_case(b));
            if !matches!(next.scheme(), "http" | "https") || !(same_host || rules.allows(&host)) {
                return Ok(stopped(&url, status.as_u16(), next));
            }
            url = next;
            continue;
        }
        return read(url, response, options).await;
    }
    Err(WebError::TooManyRedirects {
        url: crate::redact::url(url.as_str()),
        limit: MAX_REDIRECTS,
    })
}

/// A redirect to another host the rules do not allow: not followed, reported.
fn stopped(url: &Url, status: u16, next: Url) -> Fetched {
    Fetched {
        url: url.to_string(),
        status,
        content_type: String::new(),
        charset: None,
        headers: Vec::new(),
        body: Vec::new(),
        cut: false,
        redirect: Some(next.to_string()),
    }
}

/// The answer's head and its body up to the limit.
async fn read(
    url: Url,
    response: reqwest::Response,
    options: &FetchOptions,
) -> Result<Fetched, WebError> {
    let status = response.status().as_u16();
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(&name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let raw_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
    let mut parts = raw_type.split(';');
    let content_type = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| k.eq_ignore_ascii_case("charset"))
        .map(|(_, v)| v.trim_matches('"').to_ascii_lowercase());
    let headers: Vec<(String, String)> = [
        reqwest::header::CONTENT_TYPE,
        reqwest::header::CONTENT_LENGTH,
        reqwest::header::LAST_MODIFIED,
        reqwest::header::ETAG,
    ]
    .into_iter()
    .filter_map(|name| Some((name.to_string(), header(name)?)))
    .collect();
    let mut body = Vec::new();
    let mut cut = false;
    let mut stream = response.bytes_stream();
    while let Some(piece) = stream.next().await {
        let piece = piece.map_err(|e| http_error(&url, &e))?;
        let room = usize::try_from(options.max_bytes)
            .unwrap_or(usize::MAX)
            .saturating_sub(body.len());
        if piece.len() > room {
            body.extend_from_slice(&piece[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&piece);
    }
    Ok(Fetched {
        url: url.to_string(),
        status,
        content_type,
        charset,
        headers,
        body,
        cut,
        redirect: None,
    })
}

fn http_error(url: &Url, error: &reqwest::Error) -> WebError {
    // The resolver's refusal is deep in the chain: say it as it is.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refusal) = current.downcast_ref::<WebError>() {
            return refusal.clone();
        }
        source = current.source();
    }
    WebError::Http {
        url: crate::redact::url(url.as_str()),
        detail: crate::error_chain::error_chain(error),
    }
}

/// Checks the hop's host before the request: an IP address as it is, a name by its addresses.
/// (The resolver checks names again when it connects; a proxy, if one is used, resolves the
/// name itself, and then this check is what there is.)
async fn check_host(url: &Url, rules: &HostRules) -> Result<(), WebError> {
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if rules.names(bare) {
        return Ok(());
    }
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return public(bare, ip);
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs = lookup(bare, port).await?;
    addrs.iter().try_for_each(|addr| public(bare, addr.ip()))
}

fn public(host: &str, ip: IpAddr) -> Result<(), WebError> {
    match non_public(ip) {
        Some(what) => Err(WebError::NotPublic {
            host: host.to_string(),
            addr: ip.to_string(),
            what,
        }),
        None => Ok(()),
    }
}

async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, WebError> {
    let found = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| WebError::Resolve {
            host: host.to_string(),
            detail: e.to_string(),
        })?;
    Ok(found.collect())
}

/// The client of one fetch: no redirect followed by itself, its resolver checking addresses.
fn client(rules: &HostRules) -> Result<reqwest::Client, WebError> {
    let options = ClientOptions::new(Target::Web)
        .follow_redirects(false)
        .connect_timeout(Duration::from_secs(10));
    let resolver = CheckedResolver {
        rules: rules.clone(),
        proxies: proxy_hosts(),
    };
    http_client::builder(options)
        .dns_resolver(Arc::new(resolver))
        .build()
        .map_err(|e| WebError::Http {
            url: String::new(),
            detail: format!("cannot set up the HTTP client: {e}"),
        })
}

/// Resolves names for the client, refusing one whose addresses are off the public internet
/// unless a rule names it. The user's proxy is reached whatever its address.
struct CheckedResolver {
    rules: HostRules,
    proxies: Vec<String>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let free = self.rules.names(&host) || self.proxies.contains(&host);
        Box::pin(async move {
            let addrs = lookup(&host, 0).await?;
            if !free {
                for addr in &addrs {
                    public(&host, addr.ip())?;
                }
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The hosts of the proxy variables reqwest reads.
fn proxy_hosts() -> Vec<String> {
    [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ]
    .iter()
    .filter_map(|name| std::env::var(name).ok())
    .filter_map(|value| {
        let value = if value.contains("://") {
            value
        } else {
            format!("http://{value}")
        };
        Url::parse(&value).ok()?.host_str().map(str::to_string)
    })
    .collect()
}
