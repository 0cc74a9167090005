//! The client driver for the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//! The runner starts a mock server, appends its URL as the last argument and names the scenario
//! in `MCP_CONFORMANCE_SCENARIO`; this program plays that scenario with Ling's own MCP client
//! ([`McpClient`] over the Streamable HTTP transport) and exits 0 when every step worked.
//! `scripts/conformance.sh` runs it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use async_trait::async_trait;
use ling::mcp::jsonrpc::{ErrorObject, METHOD_NOT_FOUND};
use ling::mcp::transport::http;
use ling::mcp::{
    ClientHandler, ClientOptions, ElicitAnswer, ElicitRequest, HandlerSupport, McpClient,
    SamplingRequest, SamplingResult, ServerLog,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: scenario {scenario:?}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// One scenario: connect (declaring elicitation only where the scenario needs it), list the
/// tools, call the scenario's tool.
async fn run(scenario: &str, url: &str) -> anyhow::Result<()> {
    let mut options = ClientOptions::new("conformance", Arc::new(ServerLog::discard()));
    options.request_timeout = TIMEOUT;
    if scenario == "elicitation-sep1034-client-defaults" {
        options.handler = Some(Arc::new(AcceptDefaults));
    }
    let connection = http::connect(url, &[], TIMEOUT).await?;
    let client = McpClient::connect(connection, options).await?;
    let outcome = play(scenario, &client).await;
    client.close().await;
    outcome
}

async fn play(scenario: &str, client: &McpClient) -> anyhow::Result<()> {
    let tools = client.list_tools().await?;
    let call = match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        _ => None,
    };
    let Some((name, arguments)) = call else {
        return Ok(());
    };
    if !tools.iter().any(|t| t.name == name) {
        bail!("the server does not list tool {name}");
    }
    let result = client
        .call_tool(name, arguments, &CancellationToken::new(), None, TIMEOUT)
        .await?;
    let content = serde_json::to_string(&result.content)?;
    if result.is_error() {
        bail!("tool {name} returned an error: {content}");
    }
    eprintln!("{name}: {content}");
    Ok(())
}

/// Accepts every form elicitation with each property's `default` filled in (SEP-1034).
struct AcceptDefaults;

#[async_trait]
impl ClientHandler for AcceptDefaults {
    fn support(&self) -> HandlerSupport {
        HandlerSupport {
            elicitation: true,
            ..HandlerSupport::default()
        }
    }

    /// Never called: `support` does not declare sampling, so the client refuses it itself.
    async fn create_message(
        &self,
        _server: &str,
        _request: &SamplingRequest,
    ) -> Result<SamplingResult, ErrorObject> {
        Err(ErrorObject {
            code: METHOD_NOT_FOUND,
            message: "sampling is not supported by the conformance driver".into(),
            data: None,
        })
    }

    /// Ling's own default filling, as `ling -p` uses with `"elicitation": "accept-defaults"`.
    async fn elicit(
        &self,
        _server: &str,
        request: &ElicitRequest,
    ) -> Result<ElicitAnswer, ErrorObject> {
        Ok(request.accept_defaults())
    }
}
