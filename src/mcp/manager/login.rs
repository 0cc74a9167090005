//! The manager's side of OAuth: an [`OAuth`] state for each Streamable HTTP server connection
//! (with the server's stored tokens; allowed to ask the user only during [`McpManager::login`]),
//! the login and logout of one server, and whether a server needs a login.

use std::sync::Arc;

use super::{McpManager, Slot};
use crate::config::mcp::TransportConfig;
use crate::mcp::auth::{AuthError, CredentialStore, Login, OAuth};
use crate::mcp::error::McpError;

impl McpManager {
    /// Logs in to one HTTP server with OAuth (`ling mcp login`, `/mcp login`): forgets its
    /// tokens, reconnects with `login` allowed, and keeps the new tokens in
    /// `LING_HOME/credentials/`. Waits until connected or failed.
    pub async fn login(self: &Arc<Self>, server: &str, login: Login) -> Result<(), McpError> {
        let slot = self.slot(server)?;
        let TransportConfig::Http { url, .. } = &slot.config.transport else {
            return Err(McpError::NotConnected {
                server: server.into(),
                reason: format!(
                    "it is a {} server; OAuth login is for Streamable HTTP servers (\"type\": \"http\")",
                    slot.config.transport.kind()
                ),
            });
        };
        let store = CredentialStore::new(&self.options.paths.home, url);
        let mut credentials = store.load().map_err(|e| McpError::NotConnected {
            server: server.into(),
            reason: e.to_string(),
        })?;
        credentials.tokens = None;
        store
            .save(&credentials)
            .map_err(|e| McpError::NotConnected {
                server: server.into(),
                reason: e.to_string(),
            })?;
        if let Ok(mut slot_login) = slot.login.lock() {
            *slot_login = login;
        }
        let outcome = self.reconnect(server).await;
        if let Ok(mut slot_login) = slot.login.lock() {
            *slot_login = Login::Never;
        }
        outcome
    }

    /// Deletes the stored OAuth credentials of one server; whether there were any.
    pub fn logout(&self, server: &str) -> Result<bool, McpError> {
        let slot = self.slot(server)?;
        let (TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. }) =
            &slot.config.transport
        else {
            return Ok(false);
        };
        CredentialStore::new(&self.options.paths.home, url)
            .delete()
            .map_err(|e| McpError::NotConnected {
                server: server.into(),
                reason: e.to_string(),
            })
    }

    /// The OAuth state for a Streamable HTTP server (none when its `headers` already carry an
    /// `Authorization`: the configured token wins).
    pub(super) fn oauth_for(&self, slot: &Slot) -> Result<Option<Arc<OAuth>>, AuthError> {
        let TransportConfig::Http { url, headers } = &slot.config.transport else {
            return Ok(None);
        };
        if headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        {
            return Ok(None);
        }
        let login = slot.login.lock().map(|l| l.clone()).unwrap_or(Login::Never);
        let store = CredentialStore::new(&self.options.paths.home, url);
        let timeout = slot
            .config
            .startup_timeout
            .min(self.options.request_timeout);
        OAuth::new(
            &slot.config.name,
            url,
            slot.config.oauth.clone(),
            Some(store),
            login,
            timeout,
        )
        .map(|auth| Some(Arc::new(auth)))
    }
}

/// The login the server's OAuth state found missing, if any.
pub(super) fn needs_login(slot: &Slot) -> Option<String> {
    slot.auth.lock().ok()?.as_ref()?.needs_login()
}
