//! The model client's HTTP client, built where it costs nothing on the way to the first
//! request. For an `http://` base URL (a local server) it is built at once without TLS roots,
//! which costs nothing then. For `https://` reading the system's root certificates takes a few
//! milliseconds, so it starts on a thread of its own as soon as the model client is made and
//! overlaps the rest of the start-up; the first request waits only for what is left of it, and
//! builds it itself if that thread has not begun yet (a busy machine), rather than wait for it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use crate::http_client::{self, ClientOptions};

type Built = Option<Result<reqwest::Client, SetupError>>;

/// Why the HTTP client cannot be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SetupError {
    /// reqwest could not build it (the system's TLS roots could not be read, say).
    #[error(transparent)]
    Build(Arc<reqwest::Error>),
    #[error("the HTTP client was not built")]
    NotBuilt,
    /// Whoever was building it went away without a client.
    #[error("the HTTP client could not be built")]
    Gone,
}

/// What the builder thread and the first request share: the options until one of them takes
/// them to build, then the client.
#[derive(Debug)]
struct Shared {
    pending: Mutex<Option<ClientOptions>>,
    sender: watch::Sender<Built>,
}

impl Shared {
    /// Builds the client, unless someone else took the options already.
    fn build_once(&self, who: &str) {
        let options = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(options) = options {
            let began = Instant::now();
            let client = http_client::build(options).map_err(|e| SetupError::Build(Arc::new(e)));
            tracing::debug!(
                "llm: TLS set-up took {} µs ({who})",
                began.elapsed().as_micros()
            );
            self.sender.send_replace(Some(client));
        }
    }
}

/// A reqwest client, ready or being built.
#[derive(Debug, Clone)]
pub struct LazyHttp {
    shared: Arc<Shared>,
    built: watch::Receiver<Built>,
}

impl LazyHttp {
    /// Builds a plain-HTTP client at once, or starts building a TLS one in the background.
    pub fn start(options: ClientOptions) -> Self {
        let plain = options.plain_http;
        let (sender, built) = watch::channel(None);
        let shared = Arc::new(Shared {
            pending: Mutex::new(Some(options)),
            sender,
        });
        if plain {
            shared.build_once("at once");
        } else {
            let background = shared.clone();
            // No thread to be had: the first request builds it.
            let _ = std::thread::Builder::new()
                .name("ling-tls-setup".into())
                .spawn(move || background.build_once("in the background"));
        }
        Self { shared, built }
    }

    /// The client, once built.
    pub async fn get(&self) -> Result<reqwest::Client, SetupError> {
        let began = Instant::now();
        if self.built.borrow().is_none() {
            self.shared.build_once("by the first request");
        }
        let mut built = self.built.clone();
        let ready = built.wait_for(Option::is_some).await;
        tracing::debug!(
            "llm: waited {} µs for the HTTP client",
            began.elapsed().as_micros()
        );
        match ready {
            Ok(guard) => guard.clone().unwrap_or(Err(SetupError::NotBuilt)),
            Err(_) => Err(SetupError::Gone),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_client::Target;

    #[tokio::test]
    async fn both_kinds_are_ready_when_asked() {
        for plain in [true, false] {
            let http = LazyHttp::start(ClientOptions::new(Target::Model).plain_http(plain));
            assert!(http.get().await.is_ok(), "plain {plain}");
            // Asked again, it is the same client.
            assert!(http.clone().get().await.is_ok());
        }
    }

    #[tokio::test]
    async fn the_first_request_builds_it_when_the_thread_has_not_begun() {
        let (sender, built) = watch::channel(None);
        let shared = Arc::new(Shared {
            pending: Mutex::new(Some(ClientOptions::new(Target::Model))),
            sender,
        });
        // No thread at all: `get` must not wait forever.
        let http = LazyHttp { shared, built };
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), http.get()).await;
        assert!(matches!(got, Ok(Ok(_))));
    }
}
