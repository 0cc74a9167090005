//! What happens when an MCP server refuses a request with HTTP 401 or 403, in one place. The
//! Streamable HTTP transport hands every non-success response to [`answer`]:
//!
//! - with an OAuth state for the server (no `Authorization` in its configured `headers`), a 401
//!   or 403 goes to [`OAuth::rejected`]: a token another request already replaced is simply
//!   used; a 403 asks once more with the scopes the server names (step-up); a 401 refreshes the
//!   token, else logs in (with the challenge's scope, or the metadata's), if this run may ask
//!   the user, else ends in [`AuthError::NeedsLogin`] and the server shows `needs-auth`. A new
//!   token means the request is sent again, at most [`RETRIES`] times;
//! - otherwise (no OAuth state, the retries used up, another status) the status is the
//!   request's failure, and a 401 reads as [`unauthorized`] says: how to log in or give a token.
//!
//! The optional standalone GET stream and the legacy SSE transport do not log in: a refusal
//! there is a failure like any other status.

use reqwest::StatusCode;
use reqwest::header::WWW_AUTHENTICATE;

use super::{AuthError, Challenge, OAuth};

/// How often one request is sent again after a 401 or 403 got it a new token (a login, then
/// one step-up).
pub const RETRIES: usize = 2;

/// What to do with a response that is not a success.
pub enum Answer {
    /// A new token is in place: send the request again.
    Retry,
    /// OAuth could not get a token; the request fails with this.
    Failed(AuthError),
    /// Not OAuth's to answer: the response's status is the request's failure.
    Unanswered(reqwest::Response),
}

/// The answer to `response`, the server's reply to a request sent with the access token
/// `sent`. `tries` counts the retries of this request so far.
pub async fn answer(
    auth: Option<&OAuth>,
    response: reqwest::Response,
    sent: Option<&str>,
    tries: &mut usize,
) -> Answer {
    let status = response.status();
    let refused = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
    let Some(auth) = auth.filter(|_| refused && *tries < RETRIES) else {
        return Answer::Unanswered(response);
    };
    *tries += 1;
    let challenges: Vec<String> = response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    // The refused exchange is over before a login opens others.
    drop(response);
    match auth.rejected(status.as_u16(), &challenges, sent).await {
        Ok(()) => Answer::Retry,
        Err(e) => Answer::Failed(e),
    }
}

/// A 401 that no OAuth state answered, as the user reads it.
pub fn unauthorized(url: &str) -> String {
    format!(
        "the MCP server at {url} requires authentication (HTTP 401): log in (OAuth) with `ling \
         mcp login NAME`, or give the server a token in its \"headers\" (for example \
         \"Authorization\": \"Bearer ${{TOKEN}}\")"
    )
}

impl OAuth {
    /// The server answered `status` (401 or 403) to a request sent with `sent`. `Ok` means a
    /// new token is in place and the request may be sent again.
    pub async fn rejected(
        &self,
        status: u16,
        www_authenticate: &[String],
        sent: Option<&str>,
    ) -> Result<(), AuthError> {
        let challenge = Challenge::parse(www_authenticate.iter().map(String::as_str));
        let mut state = self.state.lock().await;
        let current = state
            .credentials
            .tokens
            .as_ref()
            .map(|t| t.access_token.clone());
        if sent.is_some() && current.as_deref() != sent {
            // Another request already replaced the token this one was refused with.
            return Ok(());
        }
        if self.adopt_rotated(&mut state, sent.or(current.as_deref()))? {
            // Another session has refreshed (or logged in) since: its tokens are on disk.
            return Ok(());
        }
        if status == 403 {
            return self.step_up(&mut state, &challenge).await;
        }
        if self.try_refresh(&mut state, &challenge).await.is_ok() {
            return Ok(());
        }
        let scope = match challenge.scope.clone() {
            Some(scope) => Some(scope),
            None => self
                .discovered(&mut state, &challenge)
                .await?
                .default_scope(),
        };
        self.authorize(&mut state, &challenge, scope).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::mcp::auth::{Login, OAuthSettings};

    fn response(status: u16, challenge: Option<&str>) -> reqwest::Response {
        let mut builder = http::Response::builder().status(status);
        if let Some(challenge) = challenge {
            builder = builder.header(WWW_AUTHENTICATE, challenge);
        }
        reqwest::Response::from(builder.body("").unwrap())
    }

    fn oauth() -> OAuth {
        let settings = OAuthSettings::default();
        let timeout = Duration::from_secs(1);
        OAuth::new(
            "s",
            "http://127.0.0.1:9/mcp",
            settings,
            None,
            Login::Never,
            timeout,
        )
        .unwrap()
    }

    #[tokio::test]
    async fn only_a_refusal_with_an_oauth_state_and_tries_left_is_answered() {
        let auth = oauth();
        let mut tries = 0;
        let bearer = Some(r#"Bearer scope="files""#);
        // No OAuth state (a configured Authorization header): the status is the failure.
        let unanswered = answer(None, response(401, bearer), None, &mut tries).await;
        assert!(matches!(unanswered, Answer::Unanswered(r) if r.status() == 401));
        let other = answer(Some(&auth), response(500, None), None, &mut tries).await;
        assert!(matches!(other, Answer::Unanswered(r) if r.status() == 500));
        assert_eq!(tries, 0);

        // This run may not ask the user: the 401 ends in a login to run, and counts as a try.
        let refused = answer(Some(&auth), response(401, bearer), None, &mut tries).await;
        let Answer::Failed(AuthError::NeedsLogin(how)) = refused else {
            panic!("expected NeedsLogin");
        };
        assert!(how.contains("ling mcp login s"), "{how}");
        assert_eq!(auth.needs_login().as_deref(), Some(how.as_str()));
        assert_eq!(tries, 1);

        tries = RETRIES;
        let spent = answer(Some(&auth), response(401, bearer), None, &mut tries).await;
        assert!(matches!(spent, Answer::Unanswered(r) if r.status() == 401));
        assert_eq!(tries, RETRIES);
    }

    #[test]
    fn an_unanswered_401_says_how_to_log_in_or_give_a_token() {
        let text = unauthorized("http://h/mcp");
        assert!(
            text.starts_with("the MCP server at http://h/mcp requires authentication (HTTP 401)")
        );
        assert!(
            text.contains("`ling mcp login NAME`") && text.contains("Bearer ${TOKEN}"),
            "{text}"
        );
    }
}
