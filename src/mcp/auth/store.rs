//! The OAuth credentials of each HTTP server, in `LING_HOME/credentials/` (a 0700 folder of
//! 0600 files, written under a lock and replaced atomically by `config::shared_file`, since
//! several sessions may use one server): one JSON file per server URL, named
//! by a hash of the URL, holding the client registration (keyed by the issuer that issued it:
//! it is never used with another authorization server) and the tokens. Every secret read or
//! written is registered with `redact`, so it is masked wherever Ling prints or logs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::AuthError;
use crate::config::shared_file;

/// The folder under `LING_HOME`.
pub const CREDENTIALS_DIR: &str = "credentials";
/// The largest credentials file read.
const MAX_FILE: usize = 1024 * 1024;

/// A client identity at one authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientRegistration {
    /// The authorization server that issued it.
    pub issuer: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub auth_method: String,
    /// The redirect URI it was registered with (dynamic registration only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

/// The tokens of one login.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// The scopes granted (or asked for), space separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What one server's file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credentials {
    pub server_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

impl Credentials {
    fn register_secrets(&self) {
        if let Some(client) = &self.client {
            client
                .client_secret
                .iter()
                .for_each(|s| crate::redact::register(s));
        }
        if let Some(tokens) = &self.tokens {
            crate::redact::register(&tokens.access_token);
            tokens
                .refresh_token
                .iter()
                .for_each(|s| crate::redact::register(s));
        }
    }
}

/// Where one server's credentials live.
#[derive(Debug, Clone)]
pub struct CredentialStore {
    path: PathBuf,
    server_url: String,
}

impl CredentialStore {
    /// The file of `server_url` under `home` (LING_HOME).
    pub fn new(home: &Path, server_url: &str) -> Self {
        let digest = Sha256::digest(server_url.as_bytes());
        let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
        Self {
            path: home.join(CREDENTIALS_DIR).join(format!("{name}.json")),
            server_url: server_url.to_string(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored credentials; empty ones when there is no file (or it is for another URL).
    pub fn load(&self) -> Result<Credentials, AuthError> {
        match crate::config::bounded_read::read_regular(&self.path, MAX_FILE) {
            Ok(Some(read)) => self.parse(Some(&read.bytes)),
            Ok(None) => self.parse(None),
            Err(e) => Err(self.error(e.to_string())),
        }
    }

    /// Drops the tokens the server refused (`refused`: the access token it was sent), under
    /// the file's lock, only while they are still the file's: another session may have
    /// refreshed them meanwhile, and its tokens are kept. The credentials as they are now.
    pub fn forget_refused(&self, refused: &str) -> Result<Credentials, AuthError> {
        shared_file::update(
            &self.path,
            shared_file::Options::private(),
            |text: Option<String>| {
                let mut now = self.parse(text.as_deref().map(str::as_bytes))?;
                let still_refused = now
                    .tokens
                    .as_ref()
                    .is_some_and(|t| t.access_token == refused);
                if !still_refused {
                    return Ok((shared_file::Change::Keep, now));
                }
                now.tokens = None;
                let bytes =
                    serde_json::to_vec_pretty(&now).map_err(|e| self.error(e.to_string()))?;
                Ok((shared_file::Change::Write(bytes), now))
            },
        )
    }

    fn parse(&self, bytes: Option<&[u8]>) -> Result<Credentials, AuthError> {
        let empty = Credentials {
            server_url: self.server_url.clone(),
            ..Credentials::default()
        };
        let Some(bytes) = bytes else {
            return Ok(empty);
        };
        let stored: Credentials = serde_json::from_slice(bytes).map_err(|e| {
            self.error(format!(
                "{e}; delete the file (or run `ling mcp logout`) to log in again"
            ))
        })?;
        stored.register_secrets();
        if stored.server_url != self.server_url {
            return Ok(empty);
        }
        Ok(stored)
    }

    /// Keeps one login's client and tokens (they belong together, so they replace the file's
    /// whole), under the file's lock, as another process refreshing the same server's tokens
    /// writes it.
    pub fn save(&self, credentials: &Credentials) -> Result<(), AuthError> {
        credentials.register_secrets();
        let text = serde_json::to_vec_pretty(credentials).map_err(|e| self.error(e.to_string()))?;
        shared_file::write(&self.path, shared_file::Options::private(), &text)
            .map_err(|e| self.error(e.to_string()))
    }

    /// Deletes the file; whether there was one.
    pub fn delete(&self) -> Result<bool, AuthError> {
        shared_file::remove(&self.path, shared_file::Options::private())
            .map_err(|e| self.error(e.to_string()))
    }

    fn error(&self, reason: String) -> AuthError {
        AuthError::Store {
            path: self.path.display().to_string(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn saves_owner_only_and_loads_back() {
        let home = tempfile::tempdir().unwrap();
        let store = CredentialStore::new(home.path(), "https://mcp.example.com/mcp");
        assert_eq!(store.load().unwrap().tokens, None);
        let credentials = Credentials {
            server_url: "https://mcp.example.com/mcp".into(),
            client: None,
            tokens: Some(Tokens {
                access_token: "secret-access-token".into(),
                refresh_token: Some("secret-refresh-token".into()),
                expires_at: Some(1),
                scope: None,
            }),
        };
        store.save(&credentials).unwrap();
        assert_eq!(store.load().unwrap(), credentials);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        assert_eq!(mode(&home.path().join(CREDENTIALS_DIR)), 0o700);
        assert!(crate::redact::scrub("x secret-refresh-token y").contains("***"));
        // Another URL has its own file.
        let other = CredentialStore::new(home.path(), "https://mcp.example.com/other");
        assert_ne!(other.path(), store.path());
        assert!(store.delete().unwrap());
        assert!(!store.delete().unwrap());
    }

    #[test]
    fn a_broken_file_says_how_to_recover() {
        let home = tempfile::tempdir().unwrap();
        let store = CredentialStore::new(home.path(), "u");
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "{not json").unwrap();
        let error = store.load().unwrap_err().to_string();
        assert!(error.contains("ling mcp logout"), "{error}");
    }
}
