//! The OTLP exporters' HTTP client: Ling's own reqwest client, its requests run on the run's
//! tokio runtime. The SDK's batch processors export from threads of their own, outside any
//! runtime; handing each request to the runtime and waiting on its handle keeps them off the
//! agent's path whatever the collector does, and bounds each export.

use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// Longest an export may take; a collector slower than this loses that batch.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct RuntimeClient {
    pub http: reqwest::Client,
    pub runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let http = self.http.clone();
        let sent = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let mut out = http.request(parts.method, parts.uri.to_string()).body(body);
            for (name, value) in &parts.headers {
                out = out.header(name, value);
            }
            let response = tokio::time::timeout(EXPORT_TIMEOUT, out.send())
                .await
                .map_err(|_| format!("no answer within {} s", EXPORT_TIMEOUT.as_secs()))?
                .map_err(|e| crate::error_chain::error_chain(&e))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await.map_err(|e| e.to_string())?;
            let mut answer = Response::builder().status(status);
            for (name, value) in &headers {
                answer = answer.header(name, value);
            }
            answer.body(body).map_err(|e| e.to_string())
        });
        let result = sent.await.map_err(|e| e.to_string()).and_then(|r| r);
        match result {
            Ok(response) if response.status().is_success() => Ok(response),
            Ok(response) => {
                super::failed(format!("the collector answered HTTP {}", response.status()));
                Ok(response)
            }
            Err(e) => {
                super::failed(e.clone());
                Err(e.into())
            }
        }
    }
}
