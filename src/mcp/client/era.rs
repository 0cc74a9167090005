//! The client's side of the 2026-07-28 revision: the `server/discover` probe that tells a modern
//! server from a legacy one (any error that is not a modern one, or no answer within
//! [`DISCOVER_TIMEOUT`], means legacy; a `-32022` is answered by retrying in a version the server
//! lists), the `_meta` and HTTP headers of each modern request, `input_required` results answered
//! by the same handlers that serve a legacy server's requests and retried with `inputResponses`,
//! tools dropped for an invalid `x-mcp-header`, and the `ttlMs` of the tool list.

use std::time::Duration;

use serde_json::{Map, Value};

use super::{Call, McpClient};
use crate::mcp::error::McpError;
use crate::mcp::modern::{
    self, Discovered, Era, MODERN_PROTOCOL_VERSION, UNSUPPORTED_PROTOCOL_VERSION, is_modern_error,
};
use crate::mcp::types::{SUPPORTED_PROTOCOL_VERSIONS, ServerInfo, ToolDef};

/// How long the probe waits for an answer before taking the server for a legacy one that
/// ignores unknown requests (SDK servers answer `-32601` at once).
pub const DISCOVER_TIMEOUT: Duration = Duration::from_secs(5);
/// How many `input_required` rounds one request may take.
pub(super) const MAX_INPUT_ROUNDS: usize = 8;
/// The requests a server may answer with `input_required`.
const INPUT_METHODS: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

/// What to do with one result.
pub(super) enum Round {
    Complete(Value),
    /// Send the request again with these params (the input responses added).
    Retry(Value),
}

impl McpClient {
    /// Probes with `server/discover`. `Some` for a modern server (the era is then set), `None`
    /// when the server is a legacy one and the handshake must follow. When the era is already
    /// modern (known from before), a failure is an error, not a fallback.
    pub(super) async fn discover(&self) -> Result<Option<ServerInfo>, McpError> {
        let log = &self.inner.options.log;
        let mut version = MODERN_PROTOCOL_VERSION.to_string();
        for _ in 0..2 {
            self.inner.transport.set_protocol_version(&version);
            let call = Call {
                timeout: Some(self.inner.options.discover_timeout),
                no_cancel_notice: true,
                version: Some(version.clone()),
                ..Call::default()
            };
            match self.request_once("server/discover", None, call).await {
                Ok(result) => {
                    let found = Discovered::from_result(&result);
                    if !found.supported.is_empty() && !found.supported.contains(&version) {
                        log.line(
                            "ling",
                            &format!(
                                "server/discover lists {:?}, not {version}; using initialize",
                                found.supported
                            ),
                        );
                        return Ok(None);
                    }
                    return Ok(Some(self.become_modern(version, found)));
                }
                Err(McpError::Rpc { error, .. }) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
                    let data = error.data.unwrap_or(Value::Null);
                    let supported = modern::strings(&data["supported"]);
                    // Retried once in the modern version it lists (even the one just sent:
                    // the conformance suite rejects the first request whatever it carries).
                    if let Some(modern) = supported.iter().find(|v| *v == MODERN_PROTOCOL_VERSION) {
                        version = modern.clone();
                        continue;
                    }
                    if supported
                        .iter()
                        .any(|v| SUPPORTED_PROTOCOL_VERSIONS.contains(&v.as_str()))
                    {
                        return Ok(None);
                    }
                    let message = format!(
                        "the server speaks MCP protocol versions {supported:?}, none of which \
                         Ling speaks ({MODERN_PROTOCOL_VERSION}, {}); disconnected",
                        SUPPORTED_PROTOCOL_VERSIONS.join(", ")
                    );
                    return Err(self.protocol_error(message));
                }
                // A modern server that refused the probe itself: its answer stands.
                Err(e @ McpError::Rpc { .. }) if is_rpc_modern(&e) => return Err(e),
                Err(e @ (McpError::Closed { .. } | McpError::Cancelled)) => return Err(e),
                // Known to be modern from an earlier connection: no falling back.
                Err(e) if self.modern_version().is_some() => return Err(e),
                Err(e) => {
                    log.line(
                        "ling",
                        &format!("server/discover: {e}; a legacy server, using initialize"),
                    );
                    return Ok(None);
                }
            }
        }
        Err(self.protocol_error(
            "server/discover: the server refused every version it listed".to_string(),
        ))
    }

    fn become_modern(&self, version: String, found: Discovered) -> ServerInfo {
        if let Ok(mut era) = self.inner.era.write() {
            *era = Era::Modern(version.clone());
        }
        self.inner.options.log.line(
            "ling",
            &format!(
                "connected to {} {} (protocol {version}, stateless)",
                found.name, found.version
            ),
        );
        ServerInfo {
            protocol_version: version,
            name: found.name,
            version: found.version,
            title: found.title,
            capabilities: found.capabilities,
            instructions: found.instructions,
        }
    }

    /// True for a `-32022` of a modern server that lists the version Ling is speaking to it.
    pub(super) fn rejects_our_version(&self, error: &McpError) -> bool {
        let (Some(version), McpError::Rpc { error, .. }) = (self.modern_version(), error) else {
            return false;
        };
        let supported = error
            .data
            .as_ref()
            .map(|d| modern::strings(&d["supported"]));
        error.code == UNSUPPORTED_PROTOCOL_VERSION
            && supported.is_some_and(|s| s.contains(&version))
    }

    /// The modern version requests are sent in, once the probe found a modern server.
    pub(super) fn modern_version(&self) -> Option<String> {
        match &*self.inner.era.read().ok()? {
            Era::Modern(version) => Some(version.clone()),
            Era::Legacy => None,
        }
    }

    /// Adds the request `_meta` to `params` and returns the standard HTTP headers.
    pub(super) fn modern_headers(
        &self,
        version: &str,
        method: &str,
        params: &mut Option<Value>,
    ) -> Vec<(String, String)> {
        modern::add_meta(params, &modern::request_meta(version, self.support()));
        if !self.inner.transport.mirrors_headers() {
            return Vec::new();
        }
        let tool = params
            .as_ref()
            .filter(|_| method == "tools/call")
            .and_then(|p| p["name"].as_str());
        let paths = tool
            .and_then(|name| {
                let paths = self.inner.header_paths.read().ok()?;
                paths.get(name).cloned()
            })
            .unwrap_or_default();
        modern::standard_headers(method, params.as_ref(), &paths)
    }

    /// A complete result as it is; an `input_required` one answered, for the retry.
    pub(super) async fn next_round(
        &self,
        method: &str,
        params: Option<&Value>,
        result: Value,
    ) -> Result<Round, McpError> {
        match result.get("resultType").and_then(Value::as_str) {
            None | Some("complete") => Ok(Round::Complete(result)),
            Some("input_required") if INPUT_METHODS.contains(&method) => {
                let responses = self.answer_inputs(&result["inputRequests"]).await;
                let state = result.get("requestState");
                Ok(Round::Retry(modern::retry_params(params, responses, state)))
            }
            Some(other) => Err(self.protocol_error(format!(
                "{method}: the server answered resultType {other:?}, which Ling cannot handle \
                 here"
            ))),
        }
    }

    /// Each input request served as the server's own request would be (roots, sampling,
    /// elicitation, through the same handler). One that fails is left out: the server asks
    /// again or fails the request.
    async fn answer_inputs(&self, requests: &Value) -> Map<String, Value> {
        let mut responses = Map::new();
        let Some(requests) = requests.as_object() else {
            return responses;
        };
        for (key, request) in requests {
            let method = request["method"].as_str().unwrap_or_default();
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            match self.inner.serve(method, params).await {
                Ok(result) => {
                    responses.insert(key.clone(), result);
                }
                Err(error) => self.inner.options.log.line(
                    "ling",
                    &format!(
                        "input request {key} ({method}) not answered: {}",
                        error.message
                    ),
                ),
            }
        }
        responses
    }

    /// False for a tool a modern HTTP server annotated with an invalid `x-mcp-header` (it is
    /// dropped, with a warning in the log); remembers the valid annotations for its calls.
    pub(super) fn keep_tool(&self, tool: &ToolDef) -> bool {
        if self.modern_version().is_none() || !self.inner.transport.mirrors_headers() {
            return true;
        }
        match modern::header_paths(&tool.input_schema) {
            Ok(paths) => {
                if let Ok(mut all) = self.inner.header_paths.write() {
                    all.insert(tool.name.clone(), paths);
                }
                true
            }
            Err(reason) => {
                self.inner.options.log.line(
                    "ling",
                    &format!("dropped the tool {:?}: {reason}", tool.name),
                );
                false
            }
        }
    }

    /// Records the tool list's `ttlMs` (a modern server's list is fresh that long).
    pub(super) fn tools_listed(&self, ttl: Option<u64>) {
        if let Ok(mut stale_at) = self.inner.tools_stale_at.lock() {
            *stale_at = ttl.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
        }
    }

    /// True once when the tool list's `ttlMs` has run out.
    pub(super) fn tools_expired(&self) -> bool {
        let Ok(mut stale_at) = self.inner.tools_stale_at.lock() else {
            return false;
        };
        match *stale_at {
            Some(at) if tokio::time::Instant::now() >= at => {
                *stale_at = None;
                true
            }
            _ => false,
        }
    }
}

fn is_rpc_modern(error: &McpError) -> bool {
    matches!(error, McpError::Rpc { error, .. } if is_modern_error(error.code))
}
