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
}

/// The resolved `oauth` object of a server (variables expanded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub client_metadata_url: Option<String>,
    pub callback_port: Option<u16>,
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
        }
    }
}
