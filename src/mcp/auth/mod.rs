//! OAuth 2.1 for HTTP MCP servers, as the MCP authorization specification (2025-11-25, with the
//! 2026-07-28 additions) has it. The Streamable HTTP transport sends [`OAuth::bearer`] with
//! every request and hands each refused one to [`refused::answer`], the one place that decides
//! what a `401`/`403` leads to: a refreshed token, a login, or (one step-up) a login asking for
//! more scopes, after which the transport sends the request again. A login (`login.rs`) is
//! discovery (`discovery.rs`), a client identity (`registration.rs`), the authorization code flow
//! with PKCE and `resource` (`grant.rs`) and the user's consent through the browser and a
//! loopback listener (`redirect.rs`); the tokens are kept per server URL in
//! `LING_HOME/credentials/` (`store.rs`).
//!
//! Whether a login may happen is the caller's choice ([`Login`]): `ling -p` and servers starting
//! in the background never ask the user; they end with [`AuthError::NeedsLogin`] and the server
//! shows `needs-auth` with the command to run.

mod assertion;
mod challenge;
mod discovery;
mod error;
mod grant;
mod login;
mod redirect;
pub mod refused;
mod registration;
pub mod store;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;

pub use challenge::Challenge;
pub use error::AuthError;
pub use store::{CredentialStore, Credentials};

use discovery::Discovered;
use store::Tokens;

use crate::http_client::{self, ClientOptions, Target};

/// How long a login waits for the browser.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// A token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN_SECS: i64 = 30;

/// The `oauth` object of a server's entry in `mcp.json`: a pre-registered client ID and
/// secret, Ling's Client ID Metadata Document URL, a fixed callback port.
pub use crate::config::mcp::OAuthConfig as OAuthSettings;

/// Whether, and how, this run may ask the user to log in.
#[derive(Clone)]
pub enum Login {
    /// Never: a missing or refused token ends in [`AuthError::NeedsLogin`].
    Never,
    /// Through the user's browser: `show` gets the authorization URL (to print it and open a
    /// browser); the redirect comes to a loopback listener, within `timeout`.
    Browser {
        show: Arc<dyn Fn(&str) + Send + Sync>,
        timeout: Duration,
    },
    /// Headless (the conformance suite's servers approve at once): the authorization URL is
    /// fetched with redirects off and the code read from the redirect's `Location`.
    Headless,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Never => "Never",
            Self::Browser { .. } => "Browser",
            Self::Headless => "Headless",
        })
    }
}

/// The authorization of one HTTP server.
pub struct OAuth {
    server: String,
    url: Url,
    settings: OAuthSettings,
    http: reqwest::Client,
    store: Option<CredentialStore>,
    login: Login,
    timeout: Duration,
    state: tokio::sync::Mutex<State>,
    /// The access token sent now (read by every request without the async lock).
    current: Mutex<Option<String>>,
    needs_login: Mutex<Option<String>>,
}

struct State {
    credentials: Credentials,
    discovered: Option<Discovered>,
}

impl OAuth {
    /// The authorization of server `server` at `url`, with the tokens `store` holds (none
    /// kept without a store). `timeout` bounds each request to the authorization server.
    pub fn new(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        store: Option<CredentialStore>,
        login: Login,
        timeout: Duration,
    ) -> Result<Self, AuthError> {
        let parsed = Url::parse(url).map_err(|e| AuthError::Discovery {
            url: crate::redact::url(url),
            reason: e.to_string(),
        })?;
        let credentials = match &store {
            Some(store) => store.load()?,
            None => Credentials {
                server_url: url.to_string(),
                ..Credentials::default()
            },
        };
        settings
            .client_secret
            .iter()
            .for_each(|s| crate::redact::register(s));
        let http = auth_client(timeout, true)?;
        let current = credentials.tokens.as_ref().map(|t| t.access_token.clone());
        Ok(Self {
            server: server.to_string(),
            url: parsed,
            settings,
            http,
            store,
            login,
            timeout,
            state: tokio::sync::Mutex::new(State {
                credentials,
                discovered: None,
            }),
            current: Mutex::new(current),
            needs_login: Mutex::new(None),
        })
    }

    /// The access token to send, refreshed first when it is about to expire.
    pub async fn bearer(&self) -> Option<String> {
        let expired = {
            let state = self.state.lock().await;
            let tokens = state.credentials.tokens.as_ref()?;
            let soon = chrono::Utc::now().timestamp() + EXPIRY_MARGIN_SECS;
            tokens.refresh_token.is_some() && tokens.expires_at.is_some_and(|at| at <= soon)
        };
        if expired {
            let mut state = self.state.lock().await;
            let _ = self.try_refresh(&mut state, &Challenge::default()).await;
        }
        self.current()
    }

    fn current(&self) -> Option<String> {
        self.current.lock().ok().and_then(|c| c.clone())
    }

    /// Why the server cannot be used without a login, once that is known.
    pub fn needs_login(&self) -> Option<String> {
        self.needs_login.lock().ok().and_then(|n| n.clone())
    }

    /// A 403: asks once more with the scopes the server names added to the granted ones.
    async fn step_up(&self, state: &mut State, challenge: &Challenge) -> Result<(), AuthError> {
        let refused = || {
            AuthError::Forbidden(format!(
                "the MCP server {:?} refused the request (HTTP 403{}){}",
                self.server,
                challenge
                    .error
                    .as_deref()
                    .map(|e| format!(", {e}"))
                    .unwrap_or_default(),
                challenge
                    .scope
                    .as_deref()
                    .map(|s| format!("; it wants scope {s:?}"))
                    .unwrap_or_default(),
            ))
        };
        let Some(wanted) = challenge
            .scope
            .as_deref()
            .filter(|_| challenge.insufficient_scope())
        else {
            return Err(refused());
        };
        let granted = state
            .credentials
            .tokens
            .as_ref()
            .and_then(|t| t.scope.clone())
            .unwrap_or_default();
        let mut scopes: Vec<&str> = granted.split_whitespace().collect();
        let before = scopes.len();
        for scope in wanted.split_whitespace() {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        if scopes.len() == before {
            // The token already has every scope named: asking again would loop.
            return Err(refused());
        }
        let scope = scopes.join(" ");
        self.authorize(state, challenge, Some(scope)).await
    }

    async fn discovered<'a>(
        &self,
        state: &'a mut State,
        challenge: &Challenge,
    ) -> Result<&'a Discovered, AuthError> {
        let stale = state.discovered.is_none() || challenge.resource_metadata.is_some();
        if stale {
            let found = discovery::discover(&self.http, &self.url, challenge, self.timeout).await?;
            state.discovered = Some(found);
        }
        state
            .discovered
            .as_ref()
            .ok_or_else(|| AuthError::Discovery {
                url: self.shown_url(),
                reason: "nothing found".into(),
            })
    }

    /// Uses the refresh token, if there is one; a refused one is dropped.
    async fn try_refresh(&self, state: &mut State, challenge: &Challenge) -> Result<(), AuthError> {
        let (Some(client), Some(tokens)) = (
            state.credentials.client.clone(),
            state.credentials.tokens.clone(),
        ) else {
            return Err(AuthError::NeedsLogin(String::new()));
        };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Err(AuthError::NeedsLogin(String::new()));
        };
        let discovered = self.discovered(state, challenge).await?.clone();
        if client.issuer != discovered.issuer {
            return Err(AuthError::NeedsLogin(String::new()));
        }
        let scope = tokens.scope.as_deref();
        match grant::refresh(
            &self.http,
            &client,
            &discovered,
            &refresh_token,
            scope,
            self.timeout,
        )
        .await
        {
            Ok(tokens) => self.keep(state, Some(client), tokens),
            Err(e) => {
                // Dropped from the file only while they are still its tokens: a session that
                // refreshed meanwhile keeps its own.
                match &self.store {
                    Some(store) => {
                        state.credentials = store.forget_refused(&tokens.access_token)?
                    }
                    None => state.credentials.tokens = None,
                }
                let now = state.credentials.tokens.as_ref();
                self.set_current(now.map(|t| t.access_token.clone()));
                Err(e)
            }
        }
    }

    fn keep(
        &self,
        state: &mut State,
        client: Option<store::ClientRegistration>,
        tokens: Tokens,
    ) -> Result<(), AuthError> {
        self.set_current(Some(tokens.access_token.clone()));
        state.credentials.client = client;
        state.credentials.tokens = Some(tokens);
        self.persist(state)
    }

    /// Takes the credentials file's tokens when they are not the ones `refused` (another
    /// session has refreshed or logged in since this one read them); `true`: the request may be
    /// sent again with them. Without this, a refresh token another session already rotated
    /// would be refused and the login thrown away.
    fn adopt_rotated(&self, state: &mut State, refused: Option<&str>) -> Result<bool, AuthError> {
        let Some(store) = &self.store else {
            return Ok(false);
        };
        let on_disk = store.load()?;
        let Some(tokens) = on_disk.tokens.as_ref() else {
            return Ok(false);
        };
        if Some(tokens.access_token.as_str()) == refused {
            return Ok(false);
        }
        self.set_current(Some(tokens.access_token.clone()));
        state.credentials = on_disk;
        Ok(true)
    }

    fn persist(&self, state: &State) -> Result<(), AuthError> {
        match &self.store {
            Some(store) => store.save(&state.credentials),
            None => Ok(()),
        }
    }

    fn set_current(&self, token: Option<String>) {
        if let Ok(mut current) = self.current.lock() {
            *current = token;
        }
    }

    /// Forgets the tokens (kept: the client registration), so the next 401 logs in anew; on
    /// disk only while they are still the file's.
    pub async fn forget_tokens(&self) -> Result<(), AuthError> {
        let mut state = self.state.lock().await;
        let refused = state.credentials.tokens.take();
        self.set_current(None);
        match (&self.store, refused) {
            (Some(store), Some(refused)) => {
                store.forget_refused(&refused.access_token)?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn shown_url(&self) -> String {
        crate::redact::url(self.url.as_str())
    }
}

/// An HTTP client for the authorization server: Ling's redirect policy, or no redirects at all
/// (the headless login reads the redirect itself).
fn auth_client(timeout: Duration, follow: bool) -> Result<reqwest::Client, AuthError> {
    let options = ClientOptions::new(Target::AuthServer)
        .connect_timeout(timeout)
        .follow_redirects(follow);
    http_client::build(options).map_err(|e| {
        AuthError::Authorization(format!(
            "cannot set up the HTTP client: {}",
            crate::error_chain::error_chain(&e)
        ))
    })
}
