//! Runs an `http` handler: POSTs the input JSON to `url`, with `headers` whose `${VAR}`s are
//! expanded at the time of the call (an unset variable fails this handler, never the others).

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use super::output::RunResult;
use crate::config::expand_vars;
use crate::error_chain::error_chain;
use crate::http_client::redirect_refusal;

/// The most of a response body kept.
const BODY_CAP: usize = 1 << 20;

pub(crate) async fn run_http(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, String)],
    payload: Vec<u8>,
    timeout: Duration,
) -> RunResult {
    let headers = match header_map(headers) {
        Ok(headers) => headers,
        Err(refused) => return RunResult::Failed(refused.to_string()),
    };
    crate::redact::register_url(url);
    let shown = crate::redact::url(url);
    let request = client
        .post(url)
        .headers(headers)
        .header(CONTENT_TYPE, "application/json")
        .body(payload)
        .timeout(timeout);
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(e) if e.is_timeout() => return RunResult::TimedOut(timeout),
        Err(e) => match redirect_refusal(&e) {
            Some(refusal) => return RunResult::Failed(format!("POST {shown}: {refusal}")),
            None => return RunResult::Failed(format!("POST {shown} failed: {}", error_chain(&e))),
        },
    };
    let status = response.status().as_u16();
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = BODY_CAP.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) => break,
            Err(e) if e.is_timeout() => return RunResult::TimedOut(timeout),
            Err(e) => {
                return RunResult::Failed(format!(
                    "reading the response of {shown} failed: {}",
                    error_chain(&e)
                ));
            }
        }
    }
    RunResult::Http {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Why a handler's configured header cannot be sent.
#[derive(Debug, thiserror::Error)]
enum HeaderError {
    /// A `${VAR}` in its value could not be expanded.
    #[error("header {name}: {reason}")]
    Unexpanded {
        name: String,
        reason: crate::config::ExpandError,
    },
    #[error("{0:?} is not a valid header name")]
    BadName(String),
    #[error("the value of header {0} is not a valid header value")]
    BadValue(HeaderName),
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, HeaderError> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let value = expand_vars(value).map_err(|reason| HeaderError::Unexpanded {
            name: name.clone(),
            reason,
        })?;
        crate::redact::register_header(name, &value);
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HeaderError::BadName(name.clone()))?;
        let value =
            HeaderValue::from_str(&value).map_err(|_| HeaderError::BadValue(name.clone()))?;
        map.insert(name, value);
    }
    Ok(map)
}
