//! A loopback OAuth 2.1 world for the login tests, in one HTTP server on 127.0.0.1: an MCP
//! server at `/mcp` that wants a Bearer token (a 401 with `WWW-Authenticate` naming its
//! Protected Resource Metadata otherwise), that metadata, an authorization server (RFC 8414
//! metadata, dynamic registration, `/authorize` that approves at once by redirecting to the
//! client's `redirect_uri`, `/token` that checks PKCE S256 and `resource` and does refresh).
//! Which tokens are accepted is the test's to change, to make the server refuse one.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::mcphttp::{Recorded, Reply, TestServer};

pub const SCOPE: &str = "mcp:tools";

/// The parameters of each request to one endpoint, in order.
pub type Requests = Vec<Vec<(String, String)>>;

#[derive(Default)]
pub struct AuthState {
    /// Access tokens the MCP server takes.
    pub valid: Vec<String>,
    /// Refresh tokens the token endpoint takes.
    pub refreshable: Vec<String>,
    /// Tokens issued so far (a counter names them `at-N` / `rt-N`).
    pub issued: usize,
    /// The PKCE challenge of the last authorization request.
    challenge: Option<String>,
    /// From now on `tools/call` gets a 401 and no refresh token works (a revoked grant).
    pub refuse_calls: bool,
    /// Every query of `/authorize` and form of `/token`, as pairs.
    pub authorizations: Requests,
    pub token_requests: Requests,
    /// The `authorization_endpoint` the metadata names instead of `BASE/authorize`.
    pub authorization_endpoint: Option<String>,
}

pub struct OAuthWorld {
    pub server: TestServer,
    pub state: Arc<Mutex<AuthState>>,
    _runtime: tokio::runtime::Runtime,
}

impl OAuthWorld {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let state: Arc<Mutex<AuthState>> = Arc::default();
        let shared = Arc::clone(&state);
        let base: Arc<Mutex<String>> = Arc::default();
        let base_for_handler = Arc::clone(&base);
        let server = runtime.block_on(TestServer::start(move |request| {
            let base = base_for_handler.lock().unwrap().clone();
            handle(&base, &shared, request)
        }));
        *base.lock().unwrap() = server.base.clone();
        Self {
            server,
            state,
            _runtime: runtime,
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.server.base)
    }

    /// Stops accepting every token issued so far (as after a restart of the server).
    pub fn revoke_access_tokens(&self) {
        self.state.lock().unwrap().valid.clear();
    }

    pub fn last(&self, list: fn(&AuthState) -> &Requests, key: &str) -> Option<String> {
        let state = self.state.lock().unwrap();
        let pairs = list(&state).last()?.clone();
        pairs.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

fn form(text: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// BASE64URL(SHA256(verifier)), as RFC 7636 computes the S256 challenge.
pub fn s256(verifier: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = Sha256::digest(verifier.as_bytes());
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn handle(base: &str, state: &Mutex<AuthState>, request: &Recorded) -> Reply {
    let (path, query) = request
        .path
        .split_once('?')
        .map_or((request.path.as_str(), ""), |(p, q)| (p, q));
    match (request.method.as_str(), path) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => Reply::json(json!({
            "resource": format!("{base}/mcp"),
            "authorization_servers": [base],
            "scopes_supported": [SCOPE],
        })),
        ("GET", "/.well-known/oauth-authorization-server") => Reply::json(json!({
            "issuer": base,
            "authorization_endpoint": state.lock().unwrap().authorization_endpoint.clone()
                .unwrap_or_else(|| format!("{base}/authorize")),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
        })),
        ("POST", "/register") => Reply::Json {
            status: 201,
            headers: Vec::new(),
            body: json!({"client_id": "ling-test-client", "token_endpoint_auth_method": "none"})
                .to_string(),
        },
        ("GET", "/authorize") => {
            let pairs = form(query);
            let redirect = get(&pairs, "redirect_uri").unwrap_or_default().to_string();
            let client_state = get(&pairs, "state").unwrap_or_default().to_string();
            let mut state = state.lock().unwrap();
            state.challenge = get(&pairs, "code_challenge").map(str::to_string);
            state.authorizations.push(pairs);
            let mut location = reqwest::Url::parse(&redirect).unwrap();
            location
                .query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &client_state)
                .append_pair("iss", base);
            Reply::Json {
                status: 302,
                headers: vec![("Location".into(), location.to_string())],
                body: String::new(),
            }
        }
        ("POST", "/token") => token(state, &request.body),
        ("POST", "/mcp") => mcp(base, state, request),
        ("DELETE", "/mcp") => Reply::Status(405),
        _ => Reply::Status(404),
    }
}

fn token(state: &Mutex<AuthState>, body: &str) -> Reply {
    let pairs = form(body);
    let mut state = state.lock().unwrap();
    state.token_requests.push(pairs.clone());
    let refused = |error: &str| Reply::error(400, &json!({"error": error}).to_string());
    match get(&pairs, "grant_type") {
        Some("authorization_code") => {
            let verifier = get(&pairs, "code_verifier").unwrap_or_default();
            if get(&pairs, "code") != Some("the-code")
                || state.challenge.as_deref() != Some(s256(verifier).as_str())
            {
                return refused("invalid_grant");
            }
        }
        Some("refresh_token") => {
            let offered = get(&pairs, "refresh_token").unwrap_or_default().to_string();
            if state.refuse_calls || !state.refreshable.contains(&offered) {
                return refused("invalid_grant");
            }
            state.refreshable.retain(|t| *t != offered);
        }
        _ => return refused("unsupported_grant_type"),
    }
    state.issued += 1;
    let (access, refresh) = (
        format!("at-{}", state.issued),
        format!("rt-{}", state.issued),
    );
    state.valid.push(access.clone());
    state.refreshable.push(refresh.clone());
    Reply::json(json!({
        "access_token": access, "token_type": "Bearer", "expires_in": 3600,
        "refresh_token": refresh, "scope": SCOPE,
    }))
}

fn mcp(base: &str, state: &Mutex<AuthState>, request: &Recorded) -> Reply {
    let token = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let message = request.json();
    let accepted = {
        let state = state.lock().unwrap();
        let refused = state.refuse_calls && message["method"] == "tools/call";
        !refused && token.is_some_and(|t| state.valid.contains(&t))
    };
    if !accepted {
        let challenge = format!(
            "Bearer error=\"invalid_token\", scope=\"{SCOPE}\", \
             resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        );
        return Reply::Json {
            status: 401,
            headers: vec![("WWW-Authenticate".into(), challenge)],
            body: json!({"error": "invalid_token"}).to_string(),
        };
    }
    let id = message["id"].clone();
    let result: Value = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-test", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says who the token belongs to",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "you are the test user"}]}),
        _ if id.is_null() => return Reply::Status(202),
        _ => json!({}),
    };
    Reply::json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
