//! The model client's HTTP client, built where it costs nothing on the way to the first
//! request. For an `http://` base URL (a local server) it is built at once without TLS roots,
//! which cost nothing then; for `https://` it is built on a thread of its own as soon as the model
//! client is made, so that reading the system's root certificates overlaps the rest of the
//! start-up, and the first request waits only for what is left of it.

use std::time::Instant;

use tokio::sync::watch;

use crate::http_client::{self, ClientOptions};

type Built = Option<Result<reqwest::Client, String>>;

/// A reqwest client, ready or being built.
#[derive(Debug, Clone)]
pub struct LazyHttp {
    built: watch::Receiver<Built>,
}

impl LazyHttp {
    /// Builds a plain-HTTP client at once, or starts building a TLS one in the background.
    pub fn start(options: ClientOptions) -> Self {
        if options.plain_http {
            let built = http_client::build(options).map_err(|e| e.to_string());
            let (_, built) = watch::channel(Some(built));
            return Self { built };
        }
        let (sender, built) = watch::channel(None);
        let spawned = std::thread::Builder::new()
            .name("ling-tls-setup".into())
            .spawn(move || {
                let began = Instant::now();
                let client = http_client::build(options).map_err(|e| e.to_string());
                tracing::debug!("llm: TLS set-up took {} µs", began.elapsed().as_micros());
                // Nobody left to wait for it is no failure.
                let _ = sender.send(Some(client));
            });
        match spawned {
            Ok(_) => Self { built },
            // No thread to be had: build it here and now.
            Err(_) => {
                let built = http_client::build(options).map_err(|e| e.to_string());
                let (_, built) = watch::channel(Some(built));
                Self { built }
            }
        }
    }

    /// The client, once built.
    pub async fn get(&self) -> Result<reqwest::Client, String> {
        let mut built = self.built.clone();
        let began = Instant::now();
        let ready = built.wait_for(Option::is_some).await;
        tracing::debug!(
            "llm: waited {} µs for the HTTP client",
            began.elapsed().as_micros()
        );
        match ready {
            Ok(guard) => guard
                .clone()
                .unwrap_or_else(|| Err("the HTTP client was not built".to_string())),
            Err(_) => Err("the HTTP client could not be built".to_string()),
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
}
