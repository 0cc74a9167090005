//! The errors of an OAuth login. Each says which step failed and what to change; none carries a
//! token or a secret (the server's own error text is masked by `redact` like everything shown).

/// Why a server could not be authorized.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No usable token, and this run may not ask the user (`ling -p`, or a server starting in
    /// the background): the user must log in first.
    #[error("{0}")]
    NeedsLogin(String),
    /// Discovery found nothing usable (no metadata, a wrong issuer, no PKCE).
    #[error("OAuth discovery for {url} failed: {reason}")]
    Discovery { url: String, reason: String },
    /// Client registration failed or is impossible.
    #[error("OAuth client registration at {issuer} failed: {reason}")]
    Registration { issuer: String, reason: String },
    /// The authorization step (the browser, the redirect) failed.
    #[error("OAuth authorization failed: {0}")]
    Authorization(String),
    /// The token endpoint refused or failed.
    #[error("the OAuth token request to {endpoint} failed: {reason}")]
    Token { endpoint: String, reason: String },
    /// The server keeps refusing the token (403 without a scope to step up to, or after the
    /// step-ups allowed).
    #[error("{0}")]
    Forbidden(String),
    /// The credentials file could not be read or written.
    #[error("OAuth credentials file {path}: {reason}")]
    Store { path: String, reason: String },
    /// The credentials file's lock or its replacement failed (the error names the file).
    #[error(transparent)]
    Shared(#[from] crate::config::ConfigError),
}
