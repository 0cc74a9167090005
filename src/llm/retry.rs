//! When and how long to wait before trying a model request again: exponential backoff with jitter,
//! unless the server said how long (`retry-after-ms`, then `Retry-After` in seconds or as an HTTP
//! date). Which failures are retryable at all is decided here for HTTP statuses, and in the client
//! for broken streams (only when nothing was shown yet).

use std::time::Duration;

use rand::Rng;

/// The longest backoff of our own, however many retries came before.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server asking for more than this is not worth blocking the terminal for.
const MAX_SERVER_DELAY: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first retry). A server hint wins.
    pub fn delay(&self, retry: u32, server_hint: Option<Duration>) -> Duration {
        if let Some(hint) = server_hint {
            return hint.min(MAX_SERVER_DELAY);
        }
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        let backoff = self.base_delay.saturating_mul(factor).min(MAX_BACKOFF);
        // Jitter keeps many clients that failed together from retrying together.
        backoff.mul_f64(rand::thread_rng().gen_range(0.8..1.2))
    }
}

/// 408 timeout, 409 conflict (OpenAI's "try again"), 429 rate limit, and any server error.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// The server's wish from `retry-after-ms` (milliseconds, OpenAI) or `Retry-After` (seconds, or
/// an HTTP date taken relative to `now`).
pub fn server_delay(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let non_negative = |v: f64| (v.is_finite() && v >= 0.0).then_some(v);
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        if let Some(ms) = non_negative(ms) {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = retry_after?.trim();
    if let Some(secs) = value.parse::<f64>().ok().and_then(non_negative) {
        return Some(Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
        };
        for (retry, nominal) in [(1, 100.0), (2, 200.0), (3, 400.0), (4, 800.0)] {
            let ms = policy.delay(retry, None).as_secs_f64() * 1000.0;
            assert!(
                ms >= nominal * 0.8 - 1.0 && ms <= nominal * 1.2 + 1.0,
                "retry {retry}: {ms}ms"
            );
        }
        assert!(policy.delay(40, None) <= MAX_BACKOFF.mul_f64(1.2));
    }

    #[test]
    fn server_hint_wins_but_is_capped() {
        let policy = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_secs(5),
        };
        assert_eq!(
            policy.delay(3, Some(Duration::from_millis(7))),
            Duration::from_millis(7)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3600))),
            MAX_SERVER_DELAY
        );
    }

    #[test]
    fn retry_after_headers() {
        let now = chrono::Utc::now();
        assert_eq!(
            server_delay(Some("250"), Some("9"), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            server_delay(None, Some("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            server_delay(None, Some("0.5"), now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(server_delay(Some("-1"), Some("x"), now), None);
        assert_eq!(server_delay(None, None, now), None);
        let later = (now + chrono::Duration::seconds(30)).to_rfc2822();
        let wait = server_delay(None, Some(&later), now).unwrap_or_default();
        assert!(
            wait > Duration::from_secs(28) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        let past = (now - chrono::Duration::seconds(30)).to_rfc2822();
        assert_eq!(server_delay(None, Some(&past), now), Some(Duration::ZERO));
    }

    #[test]
    fn retryable_statuses() {
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }
}
