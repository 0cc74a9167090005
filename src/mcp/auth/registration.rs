//! The client identity Ling uses at an authorization server, in the specification's order: a
//! pre-registered `oauth.clientId` (and secret) from the server's entry; else a registration
//! stored for the same issuer (credentials are bound to the server that issued them); else a
//! Client ID Metadata Document URL (`oauth.clientMetadataUrl`) when the server supports those;
//! else Dynamic Client Registration (RFC 7591) as a native application. Also which token
//! endpoint auth method to use with it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::discovery::{Discovered, read_limited};
use super::store::ClientRegistration;
use super::{AuthError, OAuthSettings};

pub const NONE: &str = "none";
pub const BASIC: &str = "client_secret_basic";
pub const POST: &str = "client_secret_post";
const MAX_RESPONSE: usize = 64 * 1024;

/// Picks the client identity; may register one (hence `redirect_uri`).
pub async fn client_identity(
    http: &reqwest::Client,
    discovered: &Discovered,
    settings: &OAuthSettings,
    stored: Option<&ClientRegistration>,
    redirect_uri: &str,
    timeout: Duration,
) -> Result<ClientRegistration, AuthError> {
    let issuer = discovered.issuer.clone();
    if let Some(client_id) = &settings.client_id {
        return Ok(ClientRegistration {
            auth_method: auth_method(discovered, settings.client_secret.is_some(), None),
            issuer,
            client_id: client_id.clone(),
            client_secret: settings.client_secret.clone(),
            redirect_uri: None,
        });
    }
    if let Some(stored) = stored.filter(|s| {
        s.issuer == issuer
            && s.redirect_uri
                .as_deref()
                .is_none_or(|registered| registered == redirect_uri)
    }) {
        return Ok(stored.clone());
    }
    if let Some(url) = &settings.client_metadata_url
        && discovered.server.client_id_metadata_document_supported
    {
        return Ok(ClientRegistration {
            issuer,
            client_id: url.clone(),
            client_secret: None,
            auth_method: NONE.into(),
            redirect_uri: None,
        });
    }
    register(http, discovered, redirect_uri, timeout).await
}

/// The auth method for a client: the one it was registered with, else what the token endpoint
/// supports that the client can do (a secret: Basic, then POST; no secret: none).
pub fn auth_method(discovered: &Discovered, has_secret: bool, registered: Option<&str>) -> String {
    if let Some(method) = registered.filter(|m| [NONE, BASIC, POST].contains(m)) {
        return method.to_string();
    }
    if !has_secret {
        return NONE.into();
    }
    [BASIC, POST, NONE]
        .into_iter()
        .find(|m| discovered.supports_auth_method(m))
        .unwrap_or(BASIC)
        .to_string()
}

#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// RFC 7591 dynamic registration.
async fn register(
    http: &reqwest::Client,
    discovered: &Discovered,
    redirect_uri: &str,
    timeout: Duration,
) -> Result<ClientRegistration, AuthError> {
    let issuer = discovered.issuer.clone();
    let fail = |reason: String| AuthError::Registration {
        issuer: issuer.clone(),
        reason,
    };
    let Some(endpoint) = &discovered.server.registration_endpoint else {
        return Err(fail(
            "the server supports neither dynamic client registration nor client ID metadata \
             documents; register Ling with it and put the client ID in the server's entry in \
             mcp.json: \"oauth\": {\"clientId\": \"...\", \"clientSecret\": \"${SECRET}\"}"
                .into(),
        ));
    };
    let method = [NONE, BASIC, POST]
        .into_iter()
        .find(|m| discovered.supports_auth_method(m))
        .unwrap_or(NONE);
    let mut grants = vec!["authorization_code"];
    let refresh = discovered
        .server
        .grant_types_supported
        .as_ref()
        .is_none_or(|g| g.iter().any(|g| g == "refresh_token"));
    if refresh {
        grants.push("refresh_token");
    }
    let body = json!({
        "client_name": "Ling",
        "redirect_uris": [redirect_uri],
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let request = http
        .post(endpoint)
        .header(reqwest::header::ACCEPT, "application/json")
        .json(&body);
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .map_err(|_| fail(format!("no answer within {} ms", timeout.as_millis())))?
        .map_err(|e| fail(crate::redact::redact_urls(&e.to_string())))?;
    let status = response.status();
    let bytes = read_limited(response, MAX_RESPONSE)
        .await
        .ok_or_else(|| fail("the answer is too large".into()))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes);
        return Err(fail(format!("HTTP {status}: {}", text.trim())));
    }
    let registered: Registered = serde_json::from_slice(&bytes)
        .map_err(|e| fail(format!("the answer is not a client registration: {e}")))?;
    if let Some(secret) = &registered.client_secret {
        crate::redact::register(secret);
    }
    let auth_method = auth_method(
        discovered,
        registered.client_secret.is_some(),
        registered.token_endpoint_auth_method.as_deref(),
    );
    Ok(ClientRegistration {
        issuer: issuer.clone(),
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        auth_method,
        redirect_uri: Some(redirect_uri.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::discovery::ServerMetadata;
    use super::*;

    fn discovered(methods: Option<&[&str]>) -> Discovered {
        Discovered {
            resource: "https://r".into(),
            resource_metadata: None,
            issuer: "https://as".into(),
            server: ServerMetadata {
                token_endpoint_auth_methods_supported: methods
                    .map(|m| m.iter().map(|s| s.to_string()).collect()),
                ..ServerMetadata::default()
            },
        }
    }

    #[test]
    fn auth_method_follows_registration_then_support() {
        let both = discovered(Some(&[POST, BASIC]));
        assert_eq!(auth_method(&both, true, None), BASIC);
        assert_eq!(auth_method(&both, true, Some(POST)), POST);
        assert_eq!(auth_method(&discovered(Some(&[POST])), true, None), POST);
        assert_eq!(auth_method(&discovered(Some(&[NONE])), true, None), NONE);
        assert_eq!(auth_method(&discovered(None), true, None), BASIC);
        assert_eq!(auth_method(&both, false, None), NONE);
        assert_eq!(auth_method(&both, true, Some("private_key_jwt")), BASIC);
    }
}
