//! The client driver for the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//! The runner starts a mock server, appends its URL as the last argument and names the scenario
//! in `MCP_CONFORMANCE_SCENARIO`; this program plays that scenario with Ling's Streamable HTTP
//! transport and exits 0 when every step worked. `scripts/conformance.sh` runs it.

mod mini_client;

use std::process::ExitCode;
use std::sync::Arc;

use ling::agent::elicitation::accept_defaults;
use mini_client::{Handler, MiniClient};
use serde_json::{Value, json};

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

/// One scenario: which tool to call, and how the client answers the server's requests.
async fn run(scenario: &str, url: &str) -> anyhow::Result<()> {
    let (capabilities, handler): (Value, Handler) = match scenario {
        "elicitation-sep1034-client-defaults" => {
            (json!({"elicitation": {}}), Arc::new(elicit_defaults))
        }
        _ => (
            json!({}),
            Arc::new(|method: &str, _| Err(mini_client::method_not_found(method))),
        ),
    };
    let client = MiniClient::connect(url, capabilities, handler).await?;
    let outcome = play(scenario, &client).await;
    client.close().await;
    outcome
}

async fn play(scenario: &str, client: &MiniClient) -> anyhow::Result<()> {
    let tools = client.list_tools().await?;
    let call = match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        _ => None,
    };
    if let Some((name, arguments)) = call {
        if !tools.iter().any(|t| t["name"] == name) {
            anyhow::bail!("the server does not list tool {name}");
        }
        let result = client.call_tool(name, arguments).await?;
        eprintln!("{name}: {}", result["content"]);
    }
    Ok(())
}

/// Answers a form elicitation as `ling -p` does with `"elicitation": "accept-defaults"`: accept
/// with every property's `default` filled in (SEP-1034).
fn elicit_defaults(method: &str, params: Option<Value>) -> Result<Value, (i64, String)> {
    if method != "elicitation/create" {
        return Err(mini_client::method_not_found(method));
    }
    Ok(accept_defaults(&params.unwrap_or_default()).to_result())
}
