//! The model client's errors. Each `Display` is the whole message the user sees, and says what to
//! change: which variable holds the key, which URL and model were used, which setting raises a
//! timeout. Also reads the server's own message out of an HTTP error body.

use std::time::Duration;

/// Which of the three bounded waits ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    /// Opening the TCP (and TLS) connection.
    Connect,
    /// From sending the request to the response headers and the first chunk of the body.
    FirstByte,
    /// Between two chunks of a response that has started.
    Idle,
}

impl TimeoutKind {
    /// The `settings.json` key that changes this timeout.
    pub fn setting(self) -> &'static str {
        match self {
            Self::Connect => "connectTimeoutMs",
            Self::FirstByte => "firstByteTimeoutMs",
            Self::Idle => "idleTimeoutMs",
        }
    }

    fn waiting_for(self) -> &'static str {
        match self {
            Self::Connect => "connecting to",
            Self::FirstByte => "waiting for the response to start from",
            Self::Idle => "waiting for the next part of the response from",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The first run's guide: what to set, or how to use a local server, as commands.
    #[error(
        "no API key is set for {base_url}, so nothing was sent.\n\n\
         To use it, set your key and start Ling again:\n\
         \x20   export {env}=...\n\n\
         Or point Ling at a local OpenAI-compatible server (no key needed):\n\
         \x20   ling --base-url http://127.0.0.1:8080/v1      # llama.cpp (llama-server --jinja --port 8080)\n\
         \x20   ling --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder      # Ollama\n\
         \x20   export OPENAI_BASE_URL=http://127.0.0.1:8080/v1   # the same, for every run\n\n\
         To keep it, put {{\"baseUrl\": \"http://127.0.0.1:8080/v1\"}} (or {{\"apiKeyEnv\": \"MY_KEY_VAR\"}}) \
         in {settings}. More: ling --help, and README \"Point it at a model\"."
    )]
    MissingApiKey {
        base_url: String,
        env: String,
        /// The user's settings file (under `LING_HOME`).
        settings: String,
    },

    #[error(
        "the base URL {base_url:?} is not a valid URL ({reason}); set it with --base-url, \
         OPENAI_BASE_URL or settings `baseUrl`, e.g. http://127.0.0.1:8080/v1"
    )]
    InvalidBaseUrl { base_url: String, reason: String },

    /// HTTP 401 or 403.
    #[error("{}", auth_message(*.status, .env, *.key_sent, .message))]
    Auth {
        status: u16,
        env: String,
        key_sent: bool,
        message: String,
    },

    #[error(
        "HTTP 404 from {url}: {message}. Check the base URL ({base_url}) and the model \
         ({model}): --base-url, OPENAI_BASE_URL or settings `baseUrl`; --model, LING_MODEL or \
         settings `model`"
    )]
    NotFound {
        url: String,
        base_url: String,
        model: String,
        message: String,
    },

    /// The account's quota or credit is spent: final, never retried.
    #[error(
        "HTTP {status} from {url}: {message}. The account behind this key has no quota or credit \
         left: add credit with the provider, or switch to another model or server (/model in \
         the REPL; --model, --base-url)"
    )]
    Quota {
        status: u16,
        url: String,
        message: String,
    },

    /// HTTP 400 or 422: the request itself was refused, so retrying cannot help.
    #[error("the server rejected the request (HTTP {status}): {message}")]
    BadRequest { status: u16, message: String },

    /// A request with images was refused for them: the model (or server) takes no images.
    #[error(
        "the model {model} refused the image(s) in the conversation (HTTP {status}: {message}); \
         it may not take images at all. Use a model that does (a vision model; with llama.cpp, \
         start the server with the model's --mmproj), or go on without images"
    )]
    ImagesRejected {
        model: String,
        status: u16,
        message: String,
    },

    /// The request did not fit the model's context window (`context_length_exceeded`,
    /// `exceed_context_size_error`, "prompt is too long", a 413, ...); `window` when the server
    /// said how large it is. `status` is 200 when the server said it inside the stream.
    #[error(
        "the conversation is too long for the model's context ({}): {message}",
        where_said(*.status)
    )]
    ContextOverflow {
        status: u16,
        message: String,
        window: Option<u64>,
    },

    /// Any other HTTP error, after the retries ran out (or at once, if it is not retryable).
    #[error("HTTP {status} from {url} after {}: {message}", attempts_text(*.attempts))]
    Status {
        status: u16,
        url: String,
        message: String,
        attempts: u32,
    },

    #[error(
        "could not reach {url}: {detail} (after {}). Is the server running? Point Ling at it with \
         --base-url or OPENAI_BASE_URL",
        attempts_text(*.attempts)
    )]
    Connect {
        url: String,
        detail: String,
        attempts: u32,
    },

    /// The connection broke before the response headers arrived.
    #[error("the connection to {url} failed: {detail} (after {})", attempts_text(*.attempts))]
    Network {
        url: String,
        detail: String,
        attempts: u32,
    },

    #[error(
        "timed out after {} {} {url} (after {}); raise `{}` in .ling/settings.json to wait longer",
        human_duration(*.limit),
        .kind.waiting_for(),
        attempts_text(*.attempts),
        .kind.setting()
    )]
    Timeout {
        kind: TimeoutKind,
        limit: Duration,
        url: String,
        attempts: u32,
    },

    /// The body ended (or broke) before `[DONE]` and before any `finish_reason`.
    #[error("{}", cut_message(.url, *.attempts, *.shown, .detail.as_deref()))]
    StreamCut {
        url: String,
        attempts: u32,
        /// Whether part of the answer had already been shown; then it was not retried.
        shown: bool,
        detail: Option<String>,
    },

    /// An `{"error": {...}}` object sent inside the event stream.
    #[error("the server reported an error in the middle of the response: {message}")]
    Server { message: String },

    /// An event-stream line (or a whole non-streamed answer) over `maxStreamLineBytes`; not
    /// retried, since the retry would download it again.
    #[error(
        "the response from {url} has a line over {limit} bytes, the limit of \
         `maxStreamLineBytes`; Ling stopped reading it and did not retry. Raise \
         `maxStreamLineBytes` in settings if the server really sends such lines"
    )]
    LineTooLong { url: String, limit: usize },

    /// A chunk that is not the JSON the chat-completions API sends.
    #[error("the server sent a response Ling cannot read: {detail}")]
    Protocol { detail: String },

    #[error("could not set up the HTTP client: {0}")]
    Setup(String),

    /// A redirect to another origin, or too many: never retried.
    #[error(transparent)]
    Redirect(#[from] crate::http_client::RedirectError),
}

/// The message of an error body: `{"error":{"message"}}`, `{"error":"..."}`, `{"message"}`, or
/// the text itself; shortened to 500 characters whichever it is.
pub(crate) fn server_message(body: &str) -> String {
    const LIMIT: usize = 500;
    let body = body.trim();
    if body.is_empty() {
        return "(the response had no error message)".to_string();
    }
    let message = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(value) => match (
            value.get("error"),
            value.get("message").and_then(|m| m.as_str()),
        ) {
            (Some(error), _) => super::stream::error_text(error),
            (None, Some(message)) => message.to_string(),
            (None, None) => body.to_string(),
        },
        Err(_) => body.to_string(),
    };
    match message.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}...", &message[..end]),
        None => message,
    }
}

/// An HTTP error whose body says no retry can help: the account's quota is spent, the key is
/// wrong, or the model does not exist. Servers send these with statuses that otherwise mean
/// "try again" (OpenAI's spent quota is a 429), so the body's code decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalRefusal {
    Quota,
    Key,
    Model,
}

impl FinalRefusal {
    /// The refusal an error body names by its code or type (OpenAI's `insufficient_quota`,
    /// `invalid_api_key`, `model_not_found`; Anthropic's `not_found_error`, a credit balance
    /// too low; OpenRouter's and others' words for the same).
    pub fn of(body: &str) -> Option<Self> {
        let lower = body.to_ascii_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
        if has(&[
            "insufficient_quota",
            "exceeded your current quota",
            "credit balance is too low",
            "insufficient credits",
            "billing_hard_limit",
        ]) {
            Some(Self::Quota)
        } else if has(&["invalid_api_key", "incorrect api key", "invalid x-api-key"]) {
            Some(Self::Key)
        } else if has(&[
            "model_not_found",
            "does not exist or you do not have access",
        ]) {
            Some(Self::Model)
        } else {
            None
        }
    }
}

/// `HTTP 400`, or where a server that answered 200 said it.
fn where_said(status: u16) -> String {
    if status == 200 {
        "said in the response stream".to_string()
    } else {
        format!("HTTP {status}")
    }
}

fn auth_message(status: u16, env: &str, key_sent: bool, message: &str) -> String {
    if key_sent {
        format!(
            "the server rejected the API key (HTTP {status}: {message}). Check that {env} holds a \
             valid key for this server: `export {env}=...` (settings `apiKeyEnv` can name another \
             variable)"
        )
    } else {
        format!(
            "the server requires an API key (HTTP {status}: {message}) and none is set. Set {env}: \
             `export {env}=...` (settings `apiKeyEnv` can name another variable)"
        )
    }
}

fn cut_message(url: &str, attempts: u32, shown: bool, detail: Option<&str>) -> String {
    let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
    if shown {
        format!(
            "the response from {url} stopped before it finished{detail}; the answer shown so far \
             is incomplete. Try again"
        )
    } else {
        format!(
            "the response from {url} ended before it sent anything{detail} (after {})",
            attempts_text(attempts)
        )
    }
}

fn attempts_text(attempts: u32) -> String {
    if attempts == 1 {
        "1 attempt".to_string()
    } else {
        format!("{attempts} attempts")
    }
}

/// `250ms`, `2s`, `1.5s`: short enough for one line, exact enough to match the setting.
pub(crate) fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_are_found_in_the_usual_shapes() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad model","type":"invalid_request_error"}}"#),
            "bad model"
        );
        assert_eq!(server_message(r#"{"error":"nope"}"#), "nope");
        assert_eq!(server_message(r#"{"message":"m"}"#), "m");
        assert_eq!(server_message("plain text\n"), "plain text");
        assert_eq!(server_message(""), "(the response had no error message)");
        assert_eq!(server_message(&"x".repeat(600)).len(), 503);
        let long = serde_json::json!({"error": {"message": "y".repeat(5000)}}).to_string();
        assert_eq!(server_message(&long).len(), 503);
    }

    #[test]
    fn timeout_names_the_setting_and_the_limit() {
        let e = LlmError::Timeout {
            kind: TimeoutKind::Idle,
            limit: Duration::from_millis(1500),
            url: "http://x/v1/chat/completions".into(),
            attempts: 1,
        };
        assert_eq!(
            e.to_string(),
            "timed out after 1.5s waiting for the next part of the response from \
             http://x/v1/chat/completions (after 1 attempt); raise `idleTimeoutMs` in \
             .ling/settings.json to wait longer"
        );
    }

    #[test]
    fn auth_without_a_key_says_to_set_the_variable() {
        let e = LlmError::Auth {
            status: 401,
            env: "DEEPSEEK_API_KEY".into(),
            key_sent: false,
            message: "missing key".into(),
        };
        let text = e.to_string();
        assert!(text.contains("export DEEPSEEK_API_KEY=..."), "{text}");
        assert!(text.contains("none is set"), "{text}");
    }
}
