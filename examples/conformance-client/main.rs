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
use ling::config::mcp::Idp;
use ling::mcp::auth::{Login, OAuth, OAuthSettings};
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
    let auth = OAuth::new(
        "conformance",
        url,
        oauth_settings()?,
        None,
        Login::Headless,
        TIMEOUT,
    )?;
    let connection = http::connect_with_auth(url, &[], TIMEOUT, Some(Arc::new(auth))).await?;
    let client = McpClient::connect(connection, options).await?;
    let outcome = play(scenario, &client).await;
    client.close().await;
    outcome
}

/// The client metadata URL the suite's CIMD scenario expects (its servers accept it as is).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client: the suite's pre-registered credentials when its context has them
/// (`MCP_CONFORMANCE_CONTEXT`; with the grant its scenario names: client credentials with a
/// secret or a signed assertion, cross-app access through the suite's identity provider), and a
/// Client ID Metadata Document URL for servers that take one.
fn oauth_settings() -> anyhow::Result<OAuthSettings> {
    let mut settings = OAuthSettings {
        client_metadata_url: Some(CIMD_URL.into()),
        ..OAuthSettings::default()
    };
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
        let context: serde_json::Value = serde_json::from_str(&context)?;
        let text = |key: &str| {
            context
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        settings.client_id = text("client_id");
        settings.client_secret = text("client_secret");
        match text("name").as_deref() {
            Some("auth/client-credentials-jwt" | "auth/client-credentials-basic") => {
                settings.grant_type = Some("client_credentials".into());
                settings.private_key = text("private_key_pem");
                settings.signing_algorithm = text("signing_algorithm");
            }
            Some("auth/cross-app-access-complete-flow") => {
                settings.grant_type = Some("cross_app_access".into());
                settings.idp = Some(Idp {
                    token_endpoint: text("idp_token_endpoint").unwrap_or_default(),
                    client_id: text("idp_client_id").unwrap_or_default(),
                    id_token: text("idp_id_token").unwrap_or_default(),
                });
            }
            _ => {}
        }
    }
    Ok(settings)
}

async fn play(scenario: &str, client: &McpClient) -> anyhow::Result<()> {
    let tools = client.list_tools().await?;
    let call = match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        auth if auth.starts_with("auth/") => Some(("test-tool", json!({}))),
        _ => None,
    };
    // The focal tool's schema as the client holds it, echoed back: Ling keeps a tool's JSON
    // Schema whole (only the copy sent to the model is normalised).
    let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool");
    let call = match (scenario, focal) {
        ("json-schema-2020-12-preservation", Some(tool)) => Some((
            "json_schema_echo",
            json!({"schema": tool.input_schema.clone()}),
        )),
        _ => call,
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
