//! Finding the authorization server of an MCP server, in the order the MCP authorization
//! specification (2025-11-25) gives: the Protected Resource Metadata (RFC 9728) from the
//! challenge's `resource_metadata`, else the path-based well-known URL, else the root one; then
//! the authorization server's metadata (RFC 8414, OpenID Connect Discovery) at the well-known
//! URLs for its issuer, in priority order, with the issuer checked against the one asked for.
//! A server with no resource metadata at all is a 2025-03-26 server: its own origin is the
//! authorization server, and without metadata the default endpoints (`/authorize`, `/token`,
//! `/register`) are used.

use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;
use serde_json::Value;

use super::AuthError;
use super::challenge::Challenge;

/// The most of one metadata document read.
const MAX_METADATA: usize = 256 * 1024;

/// RFC 9728 §2, the fields Ling uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ResourceMetadata {
    #[serde(default)]
    pub resource: Option<String>,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 §2, the fields Ling uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ServerMetadata {
    #[serde(default)]
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the server sends `iss` with the authorization response.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// Everything discovery found for one MCP server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter (RFC 8707): the server's canonical URI.
    pub resource: String,
    pub resource_metadata: Option<ResourceMetadata>,
    /// The authorization server's issuer identifier.
    pub issuer: String,
    pub server: ServerMetadata,
}

impl Discovered {
    /// The scopes to ask for when the challenge names none: the resource's `scopes_supported`.
    pub fn default_scope(&self) -> Option<String> {
        let scopes = self.resource_metadata.as_ref()?.scopes_supported.as_ref()?;
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }

    /// Whether the token endpoint takes `method` (RFC 8414: `client_secret_basic` when the
    /// server lists none).
    pub fn supports_auth_method(&self, method: &str) -> bool {
        match &self.server.token_endpoint_auth_methods_supported {
            Some(methods) => methods.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// Runs discovery for the MCP server at `server_url`.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &Url,
    challenge: &Challenge,
    timeout: Duration,
) -> Result<Discovered, AuthError> {
    let fail = |reason: String| AuthError::Discovery {
        url: crate::redact::url(server_url.as_str()),
        reason,
    };
    let resource_metadata = resource_metadata(http, server_url, challenge, timeout).await;
    let canonical = canonical_uri(server_url);
    let Some(metadata) = resource_metadata else {
        // 2025-03-26: the MCP server's origin is its own authorization server.
        let origin = origin_url(server_url);
        let server = match server_metadata(http, &origin, timeout).await {
            Some((_, metadata)) => metadata,
            None => fallback_endpoints(&origin),
        };
        return Ok(Discovered {
            resource: canonical,
            resource_metadata: None,
            issuer: origin,
            server,
        });
    };
    if let Some(resource) = &metadata.resource
        && !resource_allowed(server_url, resource)
    {
        return Err(fail(format!(
            "the protected resource metadata names resource {resource:?}, which is not this \
             server's URL; the server's metadata is wrong (or not the server's), so Ling does \
             not log in to it"
        )));
    }
    let Some(issuer) = metadata.authorization_servers.first().cloned() else {
        return Err(fail(
            "its protected resource metadata names no authorization server".into(),
        ));
    };
    let (_, server) = server_metadata(http, &issuer, timeout)
        .await
        .ok_or_else(|| {
            fail(format!(
                "no authorization server metadata found for issuer {issuer} (tried the OAuth and \
                 OpenID Connect well-known URLs)"
            ))
        })?;
    if !same_issuer(&server.issuer, &issuer) {
        return Err(fail(format!(
            "the authorization server metadata says issuer {:?}, but it was fetched for {issuer:?} \
             (RFC 8414 §3.3); Ling does not use a server whose metadata names another issuer",
            server.issuer
        )));
    }
    Ok(Discovered {
        resource: metadata.resource.clone().unwrap_or(canonical),
        resource_metadata: Some(metadata),
        issuer,
        server,
    })
}

/// The resource metadata: the challenge's URL, else the path-based and root well-known URLs.
async fn resource_metadata(
    http: &reqwest::Client,
    server_url: &Url,
    challenge: &Challenge,
    timeout: Duration,
) -> Option<ResourceMetadata> {
    let mut candidates = Vec::new();
    if let Some(url) = challenge
        .resource_metadata
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
    {
        candidates.push(url);
    }
    let path = server_url.path().trim_end_matches('/');
    let well_known = "/.well-known/oauth-protected-resource";
    if !path.is_empty() {
        candidates.extend(join(server_url, &format!("{well_known}{path}")));
    }
    candidates.extend(join(server_url, well_known));
    for url in candidates {
        if let Some(value) = fetch_json(http, &url, timeout).await
            && let Ok(metadata) = serde_json::from_value::<ResourceMetadata>(value)
        {
            return Some(metadata);
        }
    }
    None
}

/// The authorization server metadata of `issuer`, from the first well-known URL that has it.
async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
    timeout: Duration,
) -> Option<(Url, ServerMetadata)> {
    for url in metadata_urls(issuer) {
        if let Some(value) = fetch_json(http, &url, timeout).await
            && let Ok(metadata) = serde_json::from_value::<ServerMetadata>(value)
        {
            return Some((url, metadata));
        }
    }
    None
}

/// The well-known URLs of an issuer, in the specification's priority order.
pub fn metadata_urls(issuer: &str) -> Vec<Url> {
    let Ok(base) = Url::parse(issuer) else {
        return Vec::new();
    };
    let path = base.path().trim_end_matches('/');
    let urls = if path.is_empty() {
        vec![
            "/.well-known/oauth-authorization-server".to_string(),
            "/.well-known/openid-configuration".to_string(),
        ]
    } else {
        vec![
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("/.well-known/openid-configuration{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ]
    };
    urls.iter().filter_map(|p| join(&base, p)).collect()
}

/// The 2025-03-26 default endpoints at the server's origin.
fn fallback_endpoints(origin: &str) -> ServerMetadata {
    let at = |path: &str| format!("{}{path}", origin.trim_end_matches('/'));
    ServerMetadata {
        issuer: origin.to_string(),
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: Some(at("/register")),
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        ..ServerMetadata::default()
    }
}

/// GETs a JSON document; `None` for anything but a 2xx JSON object.
async fn fetch_json(http: &reqwest::Client, url: &Url, timeout: Duration) -> Option<Value> {
    let request = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .header("mcp-protocol-version", "2025-11-25");
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .ok()?
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = tokio::time::timeout(timeout, read_limited(response, MAX_METADATA))
        .await
        .ok()??;
    let value: Value = serde_json::from_slice(&body).ok()?;
    value.is_object().then_some(value)
}

/// The body, or `None` past `limit` bytes.
pub(super) async fn read_limited(mut response: reqwest::Response, limit: usize) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() > limit {
            return None;
        }
    }
    Some(body)
}

fn join(base: &Url, path: &str) -> Option<Url> {
    let mut url = base.clone();
    url.set_path(path);
    url.set_query(None);
    url.set_fragment(None);
    Some(url)
}

/// `scheme://host[:port]`.
fn origin_url(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The server URL as an RFC 8707 resource: no fragment, no trailing slash on an empty path.
pub fn canonical_uri(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text
    }
}

/// Whether the metadata's `resource` covers the server's URL: the same origin, and a path that
/// is the server's or one of its parents.
pub fn resource_allowed(server_url: &Url, resource: &str) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server_url.origin() {
        return false;
    }
    let wanted = resource.path().trim_end_matches('/');
    let path = server_url.path().trim_end_matches('/');
    path == wanted || path.starts_with(&format!("{wanted}/"))
}

fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> Url {
        Url::parse(u).unwrap()
    }

    #[test]
    fn metadata_urls_follow_the_spec_order() {
        let paths = |issuer: &str| -> Vec<String> {
            metadata_urls(issuer)
                .iter()
                .map(|u| u.path().to_string())
                .collect()
        };
        assert_eq!(
            paths("https://auth.example.com/tenant1"),
            [
                "/.well-known/oauth-authorization-server/tenant1",
                "/.well-known/openid-configuration/tenant1",
                "/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            paths("https://auth.example.com/"),
            [
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration"
            ]
        );
        assert!(metadata_urls("not a url").is_empty());
    }

    #[test]
    fn resource_must_cover_the_server_url() {
        let server = url("https://mcp.example.com/public/mcp");
        assert!(resource_allowed(
            &server,
            "https://mcp.example.com/public/mcp"
        ));
        assert!(resource_allowed(&server, "https://mcp.example.com/"));
        assert!(resource_allowed(&server, "https://mcp.example.com/public"));
        assert!(!resource_allowed(&server, "https://mcp.example.com/pub"));
        assert!(!resource_allowed(
            &server,
            "https://evil.example.com/public/mcp"
        ));
        assert!(!resource_allowed(&server, "not a url"));
    }

    #[test]
    fn canonical_uri_drops_fragment_and_root_slash() {
        assert_eq!(
            canonical_uri(&url("https://h.example/mcp#x")),
            "https://h.example/mcp"
        );
        assert_eq!(
            canonical_uri(&url("https://h.example/")),
            "https://h.example"
        );
        assert_eq!(
            canonical_uri(&url("http://127.0.0.1:9/mcp")),
            "http://127.0.0.1:9/mcp"
        );
    }
}
