//! The OAuth exchanges themselves, by the `oauth2` crate over Ling's own reqwest client (so the
//! redirect policy and TLS setup stay Ling's): the authorization URL with PKCE S256, `state`,
//! `scope` and `resource` (RFC 8707); the code exchange; the refresh; the token endpoint auth
//! method (`none`: the client ID in the body, `client_secret_basic`, `client_secret_post`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpRequest,
    HttpResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken,
    RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use reqwest::Url;

use super::AuthError;
use super::discovery::{Discovered, read_limited};
use super::registration::{BASIC, POST};
use super::store::{ClientRegistration, Tokens};

const MAX_TOKEN_RESPONSE: usize = 256 * 1024;

/// A started authorization: where to send the user, and what the answer must match.
pub struct Authorization {
    pub url: Url,
    pub state: String,
    pub verifier: PkceCodeVerifier,
}

/// The client as `oauth2` wants it, before its endpoints are set.
fn base(client: &ClientRegistration) -> BasicClient {
    let mut base = BasicClient::new(ClientId::new(client.client_id.clone()));
    match client.auth_method.as_str() {
        BASIC | POST => {
            if let Some(secret) = &client.client_secret {
                base = base.set_client_secret(ClientSecret::new(secret.clone()));
            }
            let auth_type = if client.auth_method == BASIC {
                AuthType::BasicAuth
            } else {
                AuthType::RequestBody
            };
            base.set_auth_type(auth_type)
        }
        // `none`: a public client, its ID in the body and no secret sent.
        _ => base.set_auth_type(AuthType::RequestBody),
    }
}

/// An endpoint of the authorization server's metadata (or Ling's redirect URI) as a URL. Only
/// `http` and `https` are endpoints: the authorization URL is printed and handed to the browser
/// opener, where a `javascript:`, `file:` or `data:` URL would run or open something else.
fn endpoint<T>(
    url: &str,
    kind: &str,
    make: impl Fn(String) -> Result<T, oauth2::url::ParseError>,
) -> Result<T, AuthError> {
    let refused = |reason: String| AuthError::Discovery {
        url: crate::redact::url(url),
        reason,
    };
    let scheme = reqwest::Url::parse(url)
        .map(|u| u.scheme().to_string())
        .map_err(|e| refused(format!("the {kind} endpoint is not a URL: {e}")))?;
    if scheme != "https" && scheme != "http" {
        return Err(AuthError::Discovery {
            url: format!("{scheme}:..."),
            reason: format!(
                "the {kind} endpoint is a {scheme}: URL, not http(s); the authorization server's \
                 metadata is wrong (or not the server's), so Ling does not log in to it"
            ),
        });
    }
    make(url.to_string()).map_err(|e| refused(format!("the {kind} endpoint is not a URL: {e}")))
}

/// The URL the user opens to authorize Ling.
pub fn authorization(
    client: &ClientRegistration,
    discovered: &Discovered,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<Authorization, AuthError> {
    let auth_url = endpoint(
        &discovered.server.authorization_endpoint,
        "authorization",
        AuthUrl::new,
    )?;
    let redirect = endpoint(redirect_uri, "redirect", RedirectUrl::new)?;
    let oauth = base(client)
        .set_auth_uri(auth_url)
        .set_redirect_uri(redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", discovered.resource.clone());
    for scope in scope.into_iter().flat_map(str::split_whitespace) {
        request = request.add_scope(Scope::new(scope.to_string()));
    }
    let (url, state) = request.url();
    Ok(Authorization {
        url,
        state: state.secret().clone(),
        verifier,
    })
}

/// Redeems an authorization code.
pub async fn exchange_code(
    http: &reqwest::Client,
    client: &ClientRegistration,
    discovered: &Discovered,
    redirect_uri: &str,
    code: String,
    verifier: PkceCodeVerifier,
    timeout: Duration,
) -> Result<Tokens, AuthError> {
    let token_url = endpoint(&discovered.server.token_endpoint, "token", TokenUrl::new)?;
    let redirect = endpoint(redirect_uri, "redirect", RedirectUrl::new)?;
    let oauth = base(client)
        .set_token_uri(token_url)
        .set_redirect_uri(redirect);
    let send = sender(http, timeout);
    let response = oauth
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", discovered.resource.clone())
        .request_async(&send)
        .await;
    tokens(response, &discovered.server.token_endpoint, None)
}

/// Trades a refresh token for new tokens (keeping the refresh token when none comes back).
pub async fn refresh(
    http: &reqwest::Client,
    client: &ClientRegistration,
    discovered: &Discovered,
    refresh_token: &str,
    scope: Option<&str>,
    timeout: Duration,
) -> Result<Tokens, AuthError> {
    let token_url = endpoint(&discovered.server.token_endpoint, "token", TokenUrl::new)?;
    let oauth = base(client).set_token_uri(token_url);
    let send = sender(http, timeout);
    let refresh_token = RefreshToken::new(refresh_token.to_string());
    let response = oauth
        .exchange_refresh_token(&refresh_token)
        .add_extra_param("resource", discovered.resource.clone())
        .request_async(&send)
        .await;
    let mut tokens = tokens(response, &discovered.server.token_endpoint, scope)?;
    if tokens.refresh_token.is_none() {
        tokens.refresh_token = Some(refresh_token.secret().clone());
    }
    Ok(tokens)
}

type TokenResult = Result<BasicTokenResponse, RequestTokenError<SendError, BasicErrorResponse>>;

fn tokens(response: TokenResult, endpoint: &str, asked: Option<&str>) -> Result<Tokens, AuthError> {
    let fail = |reason: String| AuthError::Token {
        endpoint: endpoint.to_string(),
        reason,
    };
    let response = response.map_err(|e| {
        fail(match e {
            RequestTokenError::ServerResponse(error) => {
                let mut text = error.error().to_string();
                if let Some(description) = error.error_description() {
                    text.push_str(": ");
                    text.push_str(description);
                }
                text
            }
            RequestTokenError::Request(e) => e.0,
            RequestTokenError::Parse(e, _) => format!("the answer is not a token response: {e}"),
            RequestTokenError::Other(e) => e,
        })
    })?;
    let access_token = response.access_token().secret().clone();
    crate::redact::register(&access_token);
    let refresh_token = response.refresh_token().map(|t| t.secret().clone());
    if let Some(refresh) = &refresh_token {
        crate::redact::register(refresh);
    }
    let expires_at = response.expires_in().and_then(|d| {
        let secs = i64::try_from(d.as_secs()).ok()?;
        Some(chrono::Utc::now().timestamp().saturating_add(secs))
    });
    let scope = response
        .scopes()
        .map(|s| s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
        .or_else(|| asked.map(str::to_string));
    Ok(Tokens {
        access_token,
        refresh_token,
        expires_at,
        scope,
    })
}

/// An HTTP failure of a token request, masked.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SendError(String);

type SendFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, SendError>> + Send>>;

/// What `oauth2` calls to send a request: Ling's client, bounded by `timeout`.
fn sender(http: &reqwest::Client, timeout: Duration) -> impl Fn(HttpRequest) -> SendFuture {
    let http = http.clone();
    move |request: HttpRequest| {
        let http = http.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let url = parts.uri.to_string();
            let shown = crate::redact::url(&url);
            let request = http
                .request(parts.method, &url)
                .headers(parts.headers)
                .body(body);
            let response = tokio::time::timeout(timeout, request.send())
                .await
                .map_err(|_| {
                    SendError(format!(
                        "{shown} did not answer within {} ms",
                        timeout.as_millis()
                    ))
                })?
                .map_err(|e| SendError(crate::error_chain::error_chain(&e)))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = tokio::time::timeout(timeout, read_limited(response, MAX_TOKEN_RESPONSE))
                .await
                .ok()
                .flatten()
                .ok_or_else(|| {
                    SendError(format!("the answer of {shown} is too large or too slow"))
                })?;
            let mut answer = http::Response::builder().status(status);
            if let Some(map) = answer.headers_mut() {
                *map = headers;
            }
            answer.body(body).map_err(|e| SendError(e.to_string()))
        })
    }
}

/// The client credentials grant (no user): the client authenticates with its secret (Basic or
/// POST) or, given `assertion`, a signed JWT (`private_key_jwt`).
pub async fn client_credentials(
    http: &reqwest::Client,
    client: &ClientRegistration,
    discovered: &Discovered,
    scope: Option<&str>,
    assertion: Option<String>,
    timeout: Duration,
) -> Result<Tokens, AuthError> {
    let token_url = endpoint(&discovered.server.token_endpoint, "token", TokenUrl::new)?;
    let oauth = base(client).set_token_uri(token_url);
    let send = sender(http, timeout);
    let mut request = oauth
        .exchange_client_credentials()
        .add_extra_param("resource", discovered.resource.clone());
    for scope in scope.into_iter().flat_map(str::split_whitespace) {
        request = request.add_scope(Scope::new(scope.to_string()));
    }
    if let Some(assertion) = assertion {
        request = request
            .add_extra_param(
                "client_assertion_type",
                super::assertion::JWT_BEARER_ASSERTION,
            )
            .add_extra_param("client_assertion", assertion);
    }
    let response = request.request_async(&send).await;
    tokens(response, &discovered.server.token_endpoint, scope)
}

/// Cross-app access (SEP-990): the user's ID token is exchanged at the identity provider for an
/// ID-JAG (RFC 8693), which the authorization server takes as a JWT bearer grant (RFC 7523),
/// the client authenticating with its secret.
pub async fn cross_app_access(
    http: &reqwest::Client,
    client: &ClientRegistration,
    discovered: &Discovered,
    idp: &crate::config::mcp::Idp,
    scope: Option<&str>,
    timeout: Duration,
) -> Result<Tokens, AuthError> {
    let mut exchange = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange".to_string(),
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag".to_string(),
        ),
        ("audience", discovered.issuer.clone()),
        ("resource", discovered.resource.clone()),
        ("subject_token", idp.id_token.clone()),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token".to_string(),
        ),
        ("client_id", idp.client_id.clone()),
    ];
    if let Some(scope) = scope {
        exchange.push(("scope", scope.to_string()));
    }
    let exchanged = post_form(http, &idp.token_endpoint, &exchange, None, timeout).await;
    let jag = tokens(exchanged, &idp.token_endpoint, None)?.access_token;
    let bearer = [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_string(),
        ),
        ("assertion", jag),
    ];
    let basic = Some((client.client_id.as_str(), client.client_secret.as_deref()));
    let endpoint = &discovered.server.token_endpoint;
    let response = post_form(http, endpoint, &bearer, basic, timeout).await;
    tokens(response, endpoint, scope)
}

/// A token request `oauth2` has no builder for: the form, optionally HTTP Basic client
/// authentication (RFC 6749 §2.3.1: both parts form-urlencoded), the answer parsed by `oauth2`'s
/// own token response type.
async fn post_form(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, Option<&str>)>,
    timeout: Duration,
) -> TokenResult {
    use base64::Engine;
    let fail = |e: String| RequestTokenError::Request(SendError(e));
    let body = Url::parse_with_params("http://form", form)
        .ok()
        .and_then(|u| u.query().map(str::to_string))
        .unwrap_or_default();
    let mut request = http
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body);
    if let Some((id, secret)) = basic {
        let encode = |s: &str| {
            Url::parse_with_params("http://x", [("v", s)])
                .ok()
                .and_then(|u| u.query().map(|q| q[2..].to_string()))
                .unwrap_or_default()
        };
        let pair = format!("{}:{}", encode(id), encode(secret.unwrap_or_default()));
        let value = base64::engine::general_purpose::STANDARD.encode(pair);
        request = request.header(reqwest::header::AUTHORIZATION, format!("Basic {value}"));
    }
    let shown = crate::redact::url(endpoint);
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .map_err(|_| {
            fail(format!(
                "{shown} did not answer within {} ms",
                timeout.as_millis()
            ))
        })?
        .map_err(|e| fail(crate::error_chain::error_chain(&e)))?;
    let status = response.status();
    let body = read_limited(response, MAX_TOKEN_RESPONSE)
        .await
        .ok_or_else(|| fail(format!("the answer of {shown} is too large")))?;
    if !status.is_success() {
        return match serde_json::from_slice::<BasicErrorResponse>(&body) {
            Ok(error) => Err(RequestTokenError::ServerResponse(error)),
            Err(_) => Err(fail(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body).trim()
            ))),
        };
    }
    serde_json::from_slice::<BasicTokenResponse>(&body)
        .map_err(|e| fail(format!("the answer is not a token response: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_endpoints_are_taken() {
        assert!(
            endpoint(
                "https://as.example/authorize",
                "authorization",
                AuthUrl::new
            )
            .is_ok()
        );
        assert!(
            endpoint(
                "http://127.0.0.1:8/authorize",
                "authorization",
                AuthUrl::new
            )
            .is_ok()
        );
        for bad in [
            "javascript:alert(document.cookie)//https://as.example",
            "file:///etc/passwd",
            "data:text/html,<script>x</script>",
            "JavaScript:alert(1)",
        ] {
            let err = endpoint(bad, "authorization", AuthUrl::new)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("not http(s)"), "{bad}: {err}");
            assert!(!err.contains("alert") && !err.contains("passwd"), "{err}");
        }
    }
}
