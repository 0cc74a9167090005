//! When and how long to wait before trying a model request again: exponential backoff with jitter,
//! or longer when the server said so (`retry-after-ms`, then `Retry-After` in seconds or as an
//! HTTP date). A server's wish never shortens the backoff (a `Retry-After: 0` storm still backs
//! off) and never stretches one wait past `max_delay` (`maxRetryDelayMs`), so retries stay
//! bounded. Which failures are retryable at all is decided here for HTTP statuses, and in the
//! client for broken streams (only when nothing was shown yet).

use std::time::Duration;

/// The longest backoff of our own, however many retries came before.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
    /// The cap on one wait, server hint included (`maxRetryDelayMs`).
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first retry): the backoff, or the
    /// server's hint when that is longer, capped at `max_delay`.
    pub fn delay(&self, retry: u32, server_hint: Option<Duration>) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        let backoff = self.base_delay.saturating_mul(factor).min(MAX_BACKOFF);
        // Jitter keeps many clients that failed together from retrying together.
        let backoff = backoff.mul_f64(0.8 + 0.4 * fastrand::f64());
        server_hint
            .map_or(backoff, |hint| hint.max(backoff))
            .min(self.max_delay)
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
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && let Some(ms) = non_negative(ms)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
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

    fn policy_with(base_ms: u64) -> RetryPolicy {
        RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(base_ms),
            max_delay: Duration::from_secs(60),
        }
    }

    /// `ms` is within the jitter of `nominal` milliseconds.
    fn near(ms: Duration, nominal: f64) -> bool {
        let ms = ms.as_secs_f64() * 1000.0;
        ms >= nominal * 0.8 - 1.0 && ms <= nominal * 1.2 + 1.0
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = policy_with(100);
        for (retry, nominal) in [(1, 100.0), (2, 200.0), (3, 400.0), (4, 800.0)] {
            let delay = policy.delay(retry, None);
            assert!(near(delay, nominal), "retry {retry}: {delay:?}");
        }
        assert!(policy.delay(40, None) <= MAX_BACKOFF.mul_f64(1.2));
    }

    #[test]
    fn a_zero_or_short_server_hint_never_shortens_the_backoff() {
        let policy = policy_with(100);
        for (retry, nominal) in [(1, 100.0), (2, 200.0), (3, 400.0)] {
            for hint in [Duration::ZERO, Duration::from_millis(7)] {
                let delay = policy.delay(retry, Some(hint));
                assert!(
                    near(delay, nominal),
                    "retry {retry}, hint {hint:?}: {delay:?}"
                );
            }
        }
    }

    #[test]
    fn a_longer_server_hint_wins_but_is_capped() {
        let policy = RetryPolicy {
            max_delay: Duration::from_secs(20),
            ..policy_with(5)
        };
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(20)
        );
        // The cap bounds the backoff of our own too.
        let tight = RetryPolicy {
            max_delay: Duration::from_millis(50),
            ..policy_with(1000)
        };
        assert_eq!(tight.delay(3, None), Duration::from_millis(50));
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
