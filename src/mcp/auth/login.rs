//! A login: new tokens for one server. With the user, the authorization code flow with PKCE:
//! discovery, the client's identity, the consent through the browser (or headless), the
//! redirect checked (its error, its `state`, its issuer) and the code redeemed. Without one, the
//! grants a pre-registered client may use alone (`client_credentials`, `cross_app_access`).
//! Whether this run may ask the user is [`Login`]'s.

use super::discovery::Discovered;
use super::{
    AuthError, Challenge, Login, OAuth, State, assertion, auth_client, grant, redirect,
    registration, store,
};

impl OAuth {
    /// A full login with `scope`, if this run may ask the user.
    pub(super) async fn authorize(
        &self,
        state: &mut State,
        challenge: &Challenge,
        scope: Option<String>,
    ) -> Result<(), AuthError> {
        let needs_user = matches!(
            self.settings.grant_type.as_deref(),
            None | Some("authorization_code")
        );
        if needs_user && matches!(self.login, Login::Never) {
            return Err(self.needs_a_login());
        }
        let discovered = self.discovered(state, challenge).await?.clone();
        match self.settings.grant_type.as_deref() {
            None | Some("authorization_code") => {}
            Some(_) => return self.grant_without_user(state, &discovered, scope).await,
        }
        self.require_pkce(&discovered)?;
        let listener = match &self.login {
            Login::Browser { .. } => {
                Some(redirect::Listener::bind(self.settings.callback_port).await?)
            }
            _ => None,
        };
        let redirect_uri = match &listener {
            Some(listener) => listener.redirect_uri().to_string(),
            None => format!(
                "http://127.0.0.1:{}/callback",
                self.settings.callback_port.unwrap_or(8765)
            ),
        };
        let client = registration::client_identity(
            &self.http,
            &discovered,
            &self.settings,
            state.credentials.client.as_ref(),
            &redirect_uri,
            self.timeout,
        )
        .await?;
        let flow = grant::authorization(&client, &discovered, &redirect_uri, scope.as_deref())?;
        let callback = match (&self.login, listener) {
            (Login::Browser { show, timeout }, Some(listener)) => {
                show(flow.url.as_str());
                listener.wait(&flow.state, *timeout).await?
            }
            _ => {
                let http = auth_client(self.timeout, false)?;
                redirect::follow_headless(&http, &flow.url, self.timeout).await?
            }
        };
        let code = authorization_code(callback, &flow.state, &discovered)?;
        let mut tokens = grant::exchange_code(
            &self.http,
            &client,
            &discovered,
            &redirect_uri,
            code,
            flow.verifier,
            self.timeout,
        )
        .await?;
        if tokens.scope.is_none() {
            tokens.scope = scope;
        }
        if let Ok(mut needs) = self.needs_login.lock() {
            *needs = None;
        }
        self.keep(state, Some(client), tokens)
    }

    /// The refusal of a login this run may not ask for; kept to show with the server's status.
    fn needs_a_login(&self) -> AuthError {
        let message = format!(
            "MCP server {:?} needs a login: run `ling mcp login {}` (or `/mcp login {}` in \
             the REPL)",
            self.server, self.server, self.server
        );
        if let Ok(mut needs) = self.needs_login.lock() {
            *needs = Some(message.clone());
        }
        AuthError::NeedsLogin(message)
    }

    /// MCP requires PKCE with S256: an authorization server that does not offer it is refused.
    fn require_pkce(&self, discovered: &Discovered) -> Result<(), AuthError> {
        let pkce = discovered
            .server
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        if pkce {
            return Ok(());
        }
        Err(AuthError::Discovery {
            url: self.shown_url(),
            reason: format!(
                "the authorization server {} does not advertise PKCE S256 \
                 (code_challenge_methods_supported), which MCP requires",
                discovered.issuer
            ),
        })
    }

    /// The grants without a user (`client_credentials`, `cross_app_access`): the token comes
    /// straight from the token endpoint, so this works in `ling -p` too.
    async fn grant_without_user(
        &self,
        state: &mut State,
        discovered: &Discovered,
        scope: Option<String>,
    ) -> Result<(), AuthError> {
        let settings = &self.settings;
        let grant = settings.grant_type.as_deref().unwrap_or_default();
        let Some(client_id) = settings.client_id.clone() else {
            return Err(AuthError::Registration {
                issuer: discovered.issuer.clone(),
                reason: format!(
                    "grantType {grant:?} needs the client registered beforehand: give the \
                     server's entry \"oauth\": {{\"clientId\": ...}}"
                ),
            });
        };
        let has_secret = settings.client_secret.is_some();
        let client = store::ClientRegistration {
            issuer: discovered.issuer.clone(),
            auth_method: registration::auth_method(discovered, has_secret, None),
            client_id,
            client_secret: settings.client_secret.clone(),
            redirect_uri: None,
        };
        let tokens = match grant {
            "client_credentials" => {
                let assertion = match &settings.private_key {
                    Some(pem) => Some(assertion::client_assertion(
                        &client.client_id,
                        &discovered.issuer,
                        pem,
                        settings.signing_algorithm.as_deref(),
                    )?),
                    None => None,
                };
                grant::client_credentials(
                    &self.http,
                    &client,
                    discovered,
                    scope.as_deref(),
                    assertion,
                    self.timeout,
                )
                .await?
            }
            "cross_app_access" => {
                let Some(idp) = &settings.idp else {
                    return Err(AuthError::Registration {
                        issuer: discovered.issuer.clone(),
                        reason: "grantType \"cross_app_access\" needs \"idp\": \
                                 {\"tokenEndpoint\", \"clientId\", \"idToken\"}"
                            .into(),
                    });
                };
                grant::cross_app_access(
                    &self.http,
                    &client,
                    discovered,
                    idp,
                    scope.as_deref(),
                    self.timeout,
                )
                .await?
            }
            other => {
                return Err(AuthError::Registration {
                    issuer: discovered.issuer.clone(),
                    reason: format!(
                        "unknown oauth.grantType {other:?}; use \"authorization_code\", \
                         \"client_credentials\" or \"cross_app_access\""
                    ),
                });
            }
        };
        self.keep(state, Some(client), tokens)
    }
}

/// The code of the login's redirect, once it is checked: no error, the login's own `state`, and
/// the issuer discovered (when the redirect names one).
fn authorization_code(
    callback: redirect::Callback,
    state: &str,
    discovered: &Discovered,
) -> Result<String, AuthError> {
    if let Some(error) = &callback.error {
        return Err(AuthError::Authorization(format!(
            "the authorization server answered {error}{}",
            callback
                .error_description
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )));
    }
    if callback.state.as_deref() != Some(state) {
        return Err(AuthError::Authorization(
            "the redirect's state does not match the login's; start the login again".into(),
        ));
    }
    check_issuer(discovered, callback.iss.as_deref())?;
    callback.code.ok_or_else(|| {
        AuthError::Authorization("the redirect carries no authorization code".into())
    })
}

/// RFC 9207 (required by 2026-07-28): an `iss` in the redirect must be the issuer discovered,
/// and a server that promises one must send it.
fn check_issuer(discovered: &Discovered, iss: Option<&str>) -> Result<(), AuthError> {
    match iss {
        // Compared exactly, as RFC 9207 §2.4 says: no case folding, no trailing-slash or
        // percent-encoding normalisation.
        Some(iss) if iss != discovered.issuer => Err(AuthError::Authorization(format!(
            "the redirect names issuer {iss:?}, not {:?}, the authorization server Ling \
                 asked (a mix-up attack?); the code was not used",
            discovered.issuer
        ))),
        None if discovered
            .server
            .authorization_response_iss_parameter_supported =>
        {
            Err(AuthError::Authorization(
                "the authorization server promises an `iss` in its redirect but sent none; the \
                 code was not used"
                    .into(),
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::auth::discovery::ServerMetadata;

    #[test]
    fn issuer_in_the_redirect_must_match() {
        let mut discovered = Discovered {
            resource: "https://r".into(),
            resource_metadata: None,
            issuer: "https://as.example/t1".into(),
            server: ServerMetadata::default(),
        };
        assert!(check_issuer(&discovered, Some("https://as.example/t1")).is_ok());
        assert!(check_issuer(&discovered, Some("https://as.example/t1/")).is_err());
        assert!(check_issuer(&discovered, None).is_ok());
        let error = check_issuer(&discovered, Some("https://evil.example")).unwrap_err();
        assert!(error.to_string().contains("mix-up"), "{error}");
        discovered
            .server
            .authorization_response_iss_parameter_supported = true;
        assert!(check_issuer(&discovered, None).is_err());
    }
}
