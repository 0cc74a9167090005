//! Where the authorization server sends the user back: a listener on `127.0.0.1` (a random
//! port, or `oauth.callbackPort`) that lives for one login only, answers the browser with a
//! short page, and hands back the `code`, `state` and `iss` of the redirect (RFC 9207). Also the
//! headless variant the conformance suite needs: GET the authorization URL with redirects off
//! and read the same parameters from its `Location`.

use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::AuthError;

/// The path of the redirect URI.
const CALLBACK_PATH: &str = "/callback";
/// The most of one request read from the browser.
const MAX_REQUEST: usize = 16 * 1024;
/// How long one browser connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The parameters of the redirect back to Ling.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Callback {
    fn from_url(url: &Url) -> Self {
        let mut callback = Self::default();
        for (name, value) in url.query_pairs() {
            let value = Some(value.into_owned());
            match name.as_ref() {
                "code" => callback.code = value,
                "state" => callback.state = value,
                "iss" => callback.iss = value,
                "error" => callback.error = value,
                "error_description" => callback.error_description = value,
                _ => {}
            }
        }
        callback
    }
}

/// The login's listener.
pub struct Listener {
    listener: TcpListener,
    redirect_uri: String,
}

impl Listener {
    /// Listens on 127.0.0.1 (`port`, or a random one).
    pub async fn bind(port: Option<u16>) -> Result<Self, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| {
                AuthError::Authorization(format!(
                    "cannot listen on 127.0.0.1:{} for the login's redirect: {e}{}",
                    port.unwrap_or(0),
                    if port.is_some() {
                        "; free the port or change the server's oauth.callbackPort"
                    } else {
                        ""
                    }
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Authorization(e.to_string()))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the redirect with `state` (other requests, a favicon, get a 404), at most
    /// `timeout`.
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<Callback, AuthError> {
        let waiting = async {
            loop {
                let Ok((mut stream, _)) = self.listener.accept().await else {
                    continue;
                };
                let read = tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await;
                let Ok(Some(target)) = read else {
                    continue;
                };
                let url = Url::parse("http://127.0.0.1")
                    .and_then(|base| base.join(&target))
                    .ok();
                let callback = url
                    .as_ref()
                    .filter(|u| u.path() == CALLBACK_PATH)
                    .map(Callback::from_url);
                let Some(callback) = callback.filter(|c| c.state.as_deref() == Some(state)) else {
                    let _ = stream
                        .write_all(page(404, "Not the login callback.").as_bytes())
                        .await;
                    continue;
                };
                let text = if callback.error.is_some() {
                    "The authorization failed; see the terminal."
                } else {
                    "Ling is authorized. You can close this window."
                };
                let _ = stream.write_all(page(200, text).as_bytes()).await;
                let _ = stream.shutdown().await;
                return callback;
            }
        };
        tokio::time::timeout(timeout, waiting).await.map_err(|_| {
            AuthError::Authorization(format!(
                "no answer from the browser within {}s; run the login again",
                timeout.as_secs()
            ))
        })
    }
}

/// The request target of one HTTP request's head.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.lines().next()?.split_whitespace();
    (words.next()? == "GET").then_some(())?;
    words.next().map(str::to_string)
}

fn page(status: u16, text: &str) -> String {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let body = format!("<!doctype html><title>Ling</title><p>{text}</p>\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The headless browser: GETs `url` without following redirects and reads the callback's
/// parameters from the `Location` of the redirect.
pub async fn follow_headless(
    http: &reqwest::Client,
    url: &Url,
    timeout: Duration,
) -> Result<Callback, AuthError> {
    let fail = |reason: String| AuthError::Authorization(reason);
    let response = tokio::time::timeout(timeout, http.get(url.clone()).send())
        .await
        .map_err(|_| fail("the authorization endpoint did not answer in time".into()))?
        .map_err(|e| fail(crate::error_chain::error_chain(&e)))?;
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            fail(format!(
                "the authorization endpoint answered HTTP {} without a redirect",
                response.status()
            ))
        })?;
    let target = url
        .join(location)
        .map_err(|e| fail(format!("bad redirect {location:?}: {e}")))?;
    Ok(Callback::from_url(&target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_listener_takes_the_matching_callback_only() {
        let listener = Listener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_string();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port: u16 = uri["http://127.0.0.1:".len()..uri.len() - CALLBACK_PATH.len()]
            .parse()
            .unwrap();
        let browser = tokio::spawn(async move {
            let get = |path: &'static str| async move {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut answer = String::new();
                let _ = s.read_to_string(&mut answer).await;
                answer
            };
            let wrong = get("/callback?code=c0&state=other").await;
            let favicon = get("/favicon.ico").await;
            let right = get("/callback?code=c1&state=s1&iss=https%3A%2F%2Fas").await;
            (wrong, favicon, right)
        });
        let callback = listener.wait("s1", Duration::from_secs(10)).await.unwrap();
        assert_eq!(callback.code.as_deref(), Some("c1"));
        assert_eq!(callback.iss.as_deref(), Some("https://as"));
        let (wrong, favicon, right) = browser.await.unwrap();
        assert!(wrong.starts_with("HTTP/1.1 404") && favicon.starts_with("HTTP/1.1 404"));
        assert!(right.starts_with("HTTP/1.1 200") && right.contains("authorized"));
    }

    #[tokio::test]
    async fn waiting_is_bounded() {
        let listener = Listener::bind(None).await.unwrap();
        let error = listener
            .wait("s", Duration::from_millis(50))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("run the login again"), "{error}");
    }
}
