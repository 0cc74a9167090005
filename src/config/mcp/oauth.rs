//! The `oauth` object of an HTTP server's entry in `mcp.json`, as written and resolved: how Ling
//! identifies itself to the server's authorization server (a pre-registered client ID and
//! secret, or Ling's Client ID Metadata Document URL) and a fixed port for the login's redirect.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `oauth` object of a server entry. `${VAR}` expands in every string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "OAuth")]
pub struct RawOAuth {
    /// A client ID registered with the authorization server beforehand (then no registration
    /// happens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for servers that gave one; write it as `${VAR}`, not in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// An HTTPS URL of a Client ID Metadata Document describing Ling, used as the client ID by
    /// authorization servers that support those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// A fixed port for the login's redirect listener on 127.0.0.1 (default: a random one), for
    /// a client registered with an exact redirect URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// How Ling gets its tokens: `authorization_code` (the default: a login in the browser),
    /// `client_credentials` (no user: the client ID with its secret or `privateKey`), or
    /// `cross_app_access` (an enterprise identity provider's ID token traded for a grant, see
    /// `idp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["authorization_code", "client_credentials", "cross_app_access"]))]
    pub grant_type: Option<String>,
    /// `client_credentials` with `private_key_jwt`: the PKCS#8 PEM private key that signs the
    /// client assertion; write it as `${VAR}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<String>,
    /// The assertion's algorithm: `ES256` (default) or `RS256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["ES256", "RS256"]))]
    pub signing_algorithm: Option<String>,
    /// `cross_app_access`: the identity provider that trades the user's ID token for an
    /// authorization grant (RFC 8693 token exchange, then an RFC 7523 JWT bearer grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<RawIdp>,
}

/// The identity provider of a `cross_app_access` server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, rename = "Idp")]
pub struct RawIdp {
    /// The identity provider's token endpoint.
    pub token_endpoint: String,
    /// Ling's client ID there.
    pub client_id: String,
    /// The user's ID token from that provider; write it as `${VAR}`.
    pub id_token: String,
}

/// The resolved `oauth` object of a server (variables expanded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub client_metadata_url: Option<String>,
    pub callback_port: Option<u16>,
    pub grant_type: Option<String>,
    pub private_key: Option<String>,
    pub signing_algorithm: Option<String>,
    /// `cross_app_access`: the identity provider's token endpoint, Ling's client ID there and
    /// the user's ID token.
    pub idp: Option<Idp>,
}

/// The resolved `idp` object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Idp {
    pub token_endpoint: String,
    pub client_id: String,
    pub id_token: String,
}

impl OAuthConfig {
    /// `raw` with `expand` applied to every string (the defaults when there is none).
    pub fn resolve(raw: Option<&RawOAuth>, expand: &mut impl FnMut(&str) -> String) -> Self {
        let Some(raw) = raw else {
            return Self::default();
        };
        Self {
            client_id: raw.client_id.as_deref().map(&mut *expand),
            client_secret: raw.client_secret.as_deref().map(&mut *expand),
            client_metadata_url: raw.client_metadata_url.as_deref().map(&mut *expand),
            callback_port: raw.callback_port,
            grant_type: raw.grant_type.clone(),
            private_key: raw.private_key.as_deref().map(&mut *expand),
            signing_algorithm: raw.signing_algorithm.clone(),
            idp: raw.idp.as_ref().map(|idp| Idp {
                token_endpoint: expand(&idp.token_endpoint),
                client_id: expand(&idp.client_id),
                id_token: expand(&idp.id_token),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_is_expanded() {
        let raw: RawOAuth = serde_json::from_str(
            r#"{"clientId": "id-${X}", "clientSecret": "${X}", "callbackPort": 33418,
                "grantType": "cross_app_access",
                "idp": {"tokenEndpoint": "https://idp/${X}", "clientId": "c", "idToken": "${X}"}}"#,
        )
        .unwrap();
        let mut expand = |s: &str| s.replace("${X}", "v");
        let config = OAuthConfig::resolve(Some(&raw), &mut expand);
        assert_eq!(config.client_id.as_deref(), Some("id-v"));
        assert_eq!(config.client_secret.as_deref(), Some("v"));
        assert_eq!(config.callback_port, Some(33418));
        let idp = config.idp.unwrap();
        assert_eq!(
            (idp.token_endpoint.as_str(), idp.id_token.as_str()),
            ("https://idp/v", "v")
        );
        assert_eq!(
            OAuthConfig::resolve(None, &mut expand),
            OAuthConfig::default()
        );
    }
}
