//! A scripted model server on 127.0.0.1 for the integration tests, speaking the three wire APIs
//! Ling does: OpenAI chat completions (`POST .../chat/completions`), Anthropic Messages
//! (`.../messages`) and OpenAI Responses (`.../responses`). Each model request takes the next
//! `Reply` from a queue (streamed text, fragmented parallel tool calls, reasoning, an HTTP error,
//! an error mid-stream, a cut stream, raw SSE bytes, delays), written once as chat chunks and
//! served in the API the request came in ([`super::mock_wire`] writes Anthropic's and the Responses
//! API's real event sequences), and every request is recorded, so a test can assert both what
//! the user saw and what the model was sent. An empty queue answers 500 "mock: no scripted
//! response left", so a test never hangs. HTTP/1.1 on plain tokio, one request per connection
//! (`Connection: close`).
//!
//! Every request's history is checked as its API checks it (each tool call has its result, no
//! result is orphaned: [`check_tool_calls`]; for Anthropic and Responses also the signatures of
//! thinking and the encrypted reasoning sent back). A request that breaks a rule is answered 400
//! with the reason, as the API would, and recorded: the server panics when it is dropped, so the
//! test that sent it fails even if it expected an error. Anthropic and Responses requests get a
//! usage computed from the prompt cache each API keeps ([`super::mock_wire::Caches`]).
//!
//! A scripted reply that was never asked for fails the test too, when the server is dropped: a
//! test that scripts three answers and gets its assertion after one checked less than it says.
//! A test that leaves replies unasked on purpose says how many: exactly, with
//! [`MockServer::expect_unasked`] (a run cut short, a reply that must never be asked for), or at
//! most, with [`MockServer::allow_unasked`] (a loop that runs until an event, a cancel that races
//! the request).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

pub use super::chat_history::check_tool_calls;
use super::mock_http::{read_request, write_reply};
pub use super::mock_overflow::Overflow;
use super::mock_rules::Caches;
use super::mock_wire::Script;
pub use super::mock_wire::{Api, InputUsage, Reported};

/// One request as the server received it. Header names are lower-case.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body, or `Value::Null` if it was not JSON.
    pub body: Value,
    /// When the request (its head and body) had been read.
    pub at: std::time::Instant,
    /// The wire API of a model request.
    pub api: Option<Api>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `body.messages`, or nothing.
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The names of the tools offered (`tools[].function.name`, or `tools[].name` in the
    /// Anthropic and Responses APIs).
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| {
                t["function"]["name"]
                    .as_str()
                    .or(t["name"].as_str())
                    .map(str::to_string)
            })
            .collect()
    }

    /// The size of what the model is asked to read (its messages, system prompt, input), in
    /// bytes of JSON.
    pub fn conversation_size(&self) -> usize {
        match self.api {
            Some(Api::Anthropic) => {
                self.body["messages"].to_string().len() + self.body["system"].to_string().len()
            }
            Some(Api::Responses) => {
                self.body["input"].to_string().len() + self.body["instructions"].to_string().len()
            }
            _ => self.body["messages"].to_string().len(),
        }
    }
}

#[derive(Debug, Clone)]
enum Body {
    /// Chat-completion chunks sent as `data:` events; `done` ends them with `data: [DONE]`.
    Events { chunks: Vec<Value>, done: bool },
    /// Bytes written as they are, one write per piece.
    Raw(Vec<Vec<u8>>),
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) content_type: &'static str,
    pub(super) headers: Vec<(String, String)>,
    body: Body,
    usage: Option<(u64, u64)>,
    pub(super) delay: Duration,
    pub(super) chunk_delay: Duration,
    /// The message of an HTTP error, written in each API's error shape.
    error: Option<String>,
    /// Held until this many requests of the conversation whose first user message holds the
    /// text were received ([`Reply::after`]).
    gate: Option<(String, usize)>,
}

/// `{"choices":[{"index":0,"delta":...,"finish_reason":...}]}` as OpenAI streams it.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// Splits `text` into `parts` pieces on character boundaries (some may be empty for short text).
fn split(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts).max(1);
    let mut pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
    pieces.resize(parts, String::new());
    pieces
}

fn role_chunk() -> Value {
    chunk(json!({"role": "assistant", "content": ""}), None)
}

fn text_chunks(text: &str) -> Vec<Value> {
    split(text, 3)
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| chunk(json!({"content": p}), None))
        .collect()
}

/// Each call's id and name in two halves, then the arguments in three fragments per call,
/// interleaved between calls, as a server streaming parallel calls may do.
fn tool_call_chunks(calls: &[(&str, &str, String)]) -> Vec<Value> {
    let mut chunks = Vec::new();
    for (index, (id, name, _)) in calls.iter().enumerate() {
        let (id, name) = (split(id, 2), split(name, 2));
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id[0], "type": "function",
                                   "function": {"name": name[0]}}]}),
            None,
        ));
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id[1], "function": {"name": name[1]}}]}),
            None,
        ));
    }
    let fragments: Vec<Vec<String>> = calls.iter().map(|(_, _, a)| split(a, 3)).collect();
    for part in 0..3 {
        for (index, pieces) in fragments.iter().enumerate() {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": pieces[part]}}]}),
                None,
            ));
        }
    }
    chunks
}

impl Reply {
    fn events(chunks: Vec<Value>, done: bool) -> Self {
        Self {
            status: 200,
            content_type: "text/event-stream",
            headers: Vec::new(),
            body: Body::Events { chunks, done },
            usage: None,
            delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            error: None,
            gate: None,
        }
    }

    /// A streamed answer, split over several chunks, ending with `stop` and `[DONE]`.
    pub fn text(text: &str) -> Self {
        let mut chunks = vec![role_chunk()];
        chunks.extend(text_chunks(text));
        chunks.push(chunk(json!({}), Some("stop")));
        Self::events(chunks, true)
    }

    /// Reasoning (`reasoning_content`) first, then the answer.
    pub fn reasoning_then_text(reasoning: &str, text: &str) -> Self {
        let mut chunks = vec![role_chunk()];
        chunks.extend(
            split(reasoning, 2)
                .into_iter()
                .map(|r| chunk(json!({"reasoning_content": r}), None)),
        );
        chunks.extend(text_chunks(text));
        chunks.push(chunk(json!({}), Some("stop")));
        Self::events(chunks, true)
    }

    /// Parallel tool calls `(id, name, arguments)`, fragmented; ends with `tool_calls`.
    pub fn tool_calls(calls: Vec<(&str, &str, Value)>) -> Self {
        Self::tool_calls_with_text("", calls)
    }

    /// Tool calls whose arguments are sent verbatim, e.g. malformed JSON.
    pub fn tool_calls_raw(calls: Vec<(&str, &str, &str)>) -> Self {
        let raw = calls.into_iter().map(|(i, n, a)| (i, n, a.to_string()));
        Self::tool_reply("", raw.collect())
    }

    /// Some text ("Let me look.") followed by tool calls, in one response.
    pub fn tool_calls_with_text(text: &str, calls: Vec<(&str, &str, Value)>) -> Self {
        let raw = calls.into_iter().map(|(i, n, a)| (i, n, a.to_string()));
        Self::tool_reply(text, raw.collect())
    }

    fn tool_reply(text: &str, calls: Vec<(&str, &str, String)>) -> Self {
        let mut chunks = vec![role_chunk()];
        chunks.extend(text_chunks(text));
        chunks.extend(tool_call_chunks(&calls));
        chunks.push(chunk(json!({}), Some("tool_calls")));
        Self::events(chunks, true)
    }

    /// Chunks built with [`chunk`], sent as they are, then `[DONE]`.
    pub fn chunks(chunks: Vec<Value>) -> Self {
        Self::events(chunks, true)
    }

    /// Text, then the connection closes: no `finish_reason`, no `[DONE]`.
    pub fn cut_after_text(text: &str) -> Self {
        let mut chunks = vec![role_chunk()];
        chunks.extend(text_chunks(text));
        Self::events(chunks, false)
    }

    /// Only the role chunk, then the connection closes: nothing was shown.
    pub fn cut_before_text() -> Self {
        Self::events(vec![role_chunk()], false)
    }

    /// Some text, then an error inside the stream (`kind`: `overloaded_error` for one the
    /// client retries, as Anthropic's and the Responses API's are; anything else for one it
    /// does not). Chat completions sends it as an `{"error":...}` chunk.
    pub fn error_after_text(text: &str, kind: &str, message: &str) -> Self {
        let mut chunks = vec![role_chunk()];
        chunks.extend(text_chunks(text));
        chunks.push(json!({"error": {"message": message, "type": kind}}));
        Self::events(chunks, false)
    }

    /// An event-stream body written verbatim, one write per piece.
    pub fn raw_sse(pieces: Vec<Vec<u8>>) -> Self {
        let mut reply = Self::events(Vec::new(), false);
        reply.body = Body::Raw(pieces);
        reply
    }

    /// An HTTP error with `{"error":{"message":"mock error <status>",...}}`.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            content_type: "application/json",
            ..Self::events(Vec::new(), false)
        }
        .message(&format!("mock error {status}"))
    }

    /// A 200 with this JSON body.
    pub fn json(value: &Value) -> Self {
        Self {
            status: 200,
            content_type: "application/json",
            ..Self::events(Vec::new(), false)
        }
        .raw_body(value.to_string())
    }

    pub(super) fn raw_body(mut self, body: String) -> Self {
        self.body = Body::Raw(vec![body.into_bytes()]);
        self.error = None;
        self
    }

    /// Replaces the error message of a [`Reply::status`].
    pub fn message(mut self, message: &str) -> Self {
        let body = super::mock_wire::error_body(Api::Chat, self.status, message);
        self.body = Body::Raw(vec![body.to_string().into_bytes()]);
        self.error = Some(message.to_string());
        self
    }

    /// Replaces the whole body of a [`Reply::status`] (a server's own error shape).
    pub fn raw_error_body(mut self, body: &str) -> Self {
        self.body = Body::Raw(vec![body.as_bytes().to_vec()]);
        self.error = Some(body.to_string());
        self
    }

    pub fn retry_after(self, seconds: u64) -> Self {
        self.header("Retry-After", &seconds.to_string())
    }

    pub fn retry_after_ms(self, ms: u64) -> Self {
        self.header("retry-after-ms", &ms.to_string())
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// A usage chunk with empty `choices`, sent just before `[DONE]`.
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some((prompt_tokens, completion_tokens));
        self
    }

    /// Wait before sending anything (status line included).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sent only once `count` requests of the conversation whose first user message contains
    /// `needle` were received (at most 30 s): one conversation waits on another's progress,
    /// an event rather than a delay.
    pub fn after(mut self, needle: &str, count: usize) -> Self {
        self.gate = Some((needle.to_string(), count));
        self
    }

    /// Wait between body pieces (the first piece goes at once).
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// The body in the API of the request; Anthropic and Responses streams report `input` as
    /// their usage (unless the reply scripts its own).
    pub(super) fn pieces(&self, api: Api, input: InputUsage) -> Vec<Vec<u8>> {
        if let Some(message) = &self.error {
            let body = super::mock_wire::error_body(api, self.status, message);
            return vec![body.to_string().into_bytes()];
        }
        match (&self.body, api) {
            (Body::Events { chunks, done }, Api::Anthropic | Api::Responses) => {
                let script = Script::read(chunks, *done);
                let (input, output) = match self.usage {
                    Some((prompt, completion)) => (
                        InputUsage {
                            input: prompt,
                            ..InputUsage::default()
                        },
                        Some(completion),
                    ),
                    None => (input, None),
                };
                if api == Api::Anthropic {
                    super::mock_wire::anthropic_events(&script, input, output)
                } else {
                    super::mock_wire::responses_events(&script, input, output)
                }
            }
            (Body::Raw(pieces), _) => pieces.clone(),
            (Body::Events { chunks, done }, Api::Chat) => {
                let mut events: Vec<String> = chunks.iter().map(Value::to_string).collect();
                if let Some((prompt, completion)) = self.usage {
                    let usage = json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk",
                        "choices": [], "usage": {"prompt_tokens": prompt,
                        "completion_tokens": completion, "total_tokens": prompt + completion}});
                    events.push(usage.to_string());
                }
                if *done {
                    events.push("[DONE]".to_string());
                }
                events
                    .into_iter()
                    .map(|e| format!("data: {e}\n\n").into_bytes())
                    .collect()
            }
        }
    }
}

/// How many scripted replies may be left when the server is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unasked {
    Exactly(usize),
    AtMost(usize),
}

impl Default for Unasked {
    fn default() -> Self {
        Self::Exactly(0)
    }
}

impl Unasked {
    fn allows(self, left: usize) -> bool {
        match self {
            Self::Exactly(n) => left == n,
            Self::AtMost(n) => left <= n,
        }
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    /// Chat requests whose `messages` JSON is over this many bytes are refused, this way.
    context_limit: Option<(usize, Overflow)>,
    /// The same for summary requests (those that offer no tools) alone.
    summary_limit: Option<(usize, Overflow)>,
    /// Requests that offer no tools are summary requests: answered with this text and the
    /// number of the summary, without taking a scripted reply.
    summary: Option<String>,
    summaries: usize,
    /// How long a summary answer waits before it is sent.
    summary_delay: Duration,
    /// Other routes (`"GET /props"`) and their JSON answers.
    routes: Vec<(String, Value)>,
    /// Replies for the conversations whose first user message holds the text (a sub-agent's
    /// prompt), taken before the main queue; so concurrent conversations stay scripted.
    scripts: Vec<(String, VecDeque<Reply>)>,
    requests: Vec<Recorded>,
    /// Model requests whose history their API would reject, with the reason.
    violations: Vec<String>,
    /// How many scripted replies the test expects to be left unasked when it ends.
    unasked: Unasked,
    /// What Anthropic and OpenAI have in their prompt caches.
    caches: Caches,
    /// The input usage reported for each Anthropic and Responses request, in order.
    reported: Vec<Reported>,
    /// Served when the queue is empty, over and over (benchmarks only: a test scripts each).
    repeat: Option<Reply>,
}

pub struct MockServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    accept: tokio::task::JoinHandle<()>,
    /// Set by `start_blocking`: the server's own runtime.
    runtime: Option<tokio::runtime::Runtime>,
}

impl MockServer {
    /// Starts on the current tokio runtime.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("mock: cannot bind 127.0.0.1");
        Self::serve(listener, replies, &tokio::runtime::Handle::current(), None)
    }

    /// Starts on a runtime of its own, for plain `#[test]`s that run the `ling` binary.
    pub fn start_blocking(replies: Vec<Reply>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("mock: cannot build a runtime");
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("mock: cannot bind 127.0.0.1");
        let handle = runtime.handle().clone();
        Self::serve(listener, replies, &handle, Some(runtime))
    }

    fn serve(
        listener: TcpListener,
        replies: Vec<Reply>,
        handle: &tokio::runtime::Handle,
        runtime: Option<tokio::runtime::Runtime>,
    ) -> Self {
        let addr = listener.local_addr().expect("mock: no local address");
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            ..State::default()
        }));
        let shared = state.clone();
        let accept = handle.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                // Each piece goes out when written, as a streaming server's do.
                let _ = socket.set_nodelay(true);
                tokio::spawn(handle_connection(socket, shared.clone()));
            }
        });
        Self {
            addr,
            state,
            accept,
            runtime,
        }
    }

    /// `http://127.0.0.1:PORT/v1`, to pass as `--base-url` or `OPENAI_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every model request received so far (of any of the three APIs), in order.
    pub fn requests(&self) -> Vec<Recorded> {
        let state = lock(&self.state);
        let model = state.requests.iter().filter(|r| r.api.is_some());
        model.cloned().collect()
    }

    /// The input usage the mock reported for each Anthropic and Responses request, in order:
    /// how much of each prompt its cache served.
    pub fn reported(&self) -> Vec<Reported> {
        lock(&self.state).reported.clone()
    }

    /// Serves `reply` whenever the queue is empty, for benchmarks that run many requests
    /// (examples/bench-api.rs; a test scripts each reply).
    #[allow(dead_code)]
    pub fn repeat(&self, reply: Reply) {
        lock(&self.state).repeat = Some(reply);
    }

    /// Every request received so far, the context-window probes (`/props`, `/models`,
    /// `/api/show`) included.
    pub fn all_requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// Refuses chat requests whose `messages` JSON is over `bytes` bytes, as `style`'s server
    /// refuses a request over its context window (the limit is stated as `bytes`).
    pub fn context_limit(&self, bytes: usize, style: Overflow) {
        lock(&self.state).context_limit = Some((bytes, style));
    }

    /// Refuses summary requests (those without tools) over `bytes` bytes, as
    /// [`MockServer::context_limit`] does.
    pub fn summary_limit(&self, bytes: usize, style: Overflow) {
        lock(&self.state).summary_limit = Some((bytes, style));
    }

    /// Answers every chat request that offers no tools (a summary request) with
    /// `"{text} #N"`, N counting from 1, and a usage of 100 prompt and 10 completion tokens,
    /// without taking a scripted reply.
    pub fn answer_summaries(&self, text: &str) {
        lock(&self.state).summary = Some(text.to_string());
    }

    /// Delays every summary answer (to stop Ling in the middle of a compaction).
    pub fn summary_delay(&self, delay: Duration) {
        lock(&self.state).summary_delay = delay;
    }

    /// Answers `route` (`"GET /props"`, `"POST /api/show"`) with this JSON.
    pub fn route(&self, route: &str, answer: Value) {
        lock(&self.state).routes.push((route.to_string(), answer));
    }

    /// Scripts the conversation whose first user message contains `needle` (a sub-agent's
    /// prompt): its requests take these replies in order, whatever else runs at the same time.
    pub fn script_for(&self, needle: &str, replies: Vec<Reply>) {
        lock(&self.state)
            .scripts
            .push((needle.to_string(), replies.into()));
    }

    /// The chat requests of the conversation whose first user message contains `needle`.
    pub fn requests_for(&self, needle: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| first_user_text(r).contains(needle))
            .collect()
    }

    /// Scripted replies not yet served.
    pub fn remaining(&self) -> usize {
        lock(&self.state).replies.len()
    }

    /// Says that exactly `n` scripted replies are meant to be left unasked (the run is cut
    /// short on purpose, or a reply is there to show it is never asked for); any other number
    /// left when the server is dropped fails the test.
    pub fn expect_unasked(&self, n: usize) {
        lock(&self.state).unasked = Unasked::Exactly(n);
    }

    /// Says that up to `n` scripted replies may be left unasked: for runs whose length the test
    /// does not fix (a loop until compaction happens, a cancel that may beat the request).
    pub fn allow_unasked(&self, n: usize) {
        lock(&self.state).unasked = Unasked::AtMost(n);
    }

    /// Waits (at most 20 s) until no more than `left` scripted replies remain: the requests
    /// that take the others have arrived.
    pub fn wait_until_remaining(&self, left: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while self.remaining() > left {
            assert!(
                std::time::Instant::now() < deadline,
                "the scripted requests did not arrive"
            );
            std::thread::yield_now();
        }
    }

    /// The histories the OpenAI API would have rejected so far, taken: what a test that sends
    /// one on purpose asserts on (any left when the server is dropped fail the test).
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.state).violations)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.accept.abort();
        // `shutdown_background` never blocks, so dropping inside async code cannot panic.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
        if std::thread::panicking() {
            return;
        }
        let violations = self.take_violations();
        if !violations.is_empty() {
            panic!(
                "mock model: Ling sent {} chat request(s) the OpenAI API rejects:\n{}",
                violations.len(),
                violations.join("\n")
            );
        }
        let (left, expected) = {
            let state = lock(&self.state);
            let scripted: usize = state.scripts.iter().map(|(_, r)| r.len()).sum();
            (state.replies.len() + scripted, state.unasked)
        };
        assert!(
            expected.allows(left),
            "mock model: {left} scripted repl{} never asked for (the test allowed {expected:?}): \
             the run ended before the test's script did; script only what the run asks, or say \
             `expect_unasked({left})` where a run is cut short on purpose",
            if left == 1 { "y was" } else { "ies were" }
        );
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The text of a request's first user message ("" without one).
pub fn first_user_text(request: &Recorded) -> String {
    request
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default()
}

async fn handle_connection(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let api = request.api;
    // A model route with a query is not one the mock serves (its 404 quotes the query).
    let is_chat = api.is_some() && !request.path.contains('?');
    let route = format!("{} {}", request.method, request.path);
    let mut input = InputUsage::default();
    let reply = {
        let mut state = lock(&state);
        let number = state.requests.len() + 1;
        let rejected = match api {
            Some(Api::Chat) => check_tool_calls(&request.messages()).err(),
            Some(Api::Anthropic) => super::mock_rules::check_anthropic(&request.body).err(),
            Some(Api::Responses) => super::mock_rules::check_responses(&request.body).err(),
            None => None,
        }
        .or_else(|| api.and_then(|api| super::mock_images::check_images(api, &request.body).err()));
        let size = request.conversation_size();
        let summary_request = request.body.get("tools").is_none();
        let first_user = first_user_text(&request);
        if rejected.is_none() {
            let counted = match api {
                Some(Api::Anthropic) => Some(state.caches.anthropic(&request.body)),
                Some(Api::Responses) => Some(state.caches.responses(&request.body)),
                _ => None,
            };
            if let (Some(counted), Some(api)) = (counted, api) {
                input = counted;
                state.reported.push(Reported { api, input });
            }
        }
        state.requests.push(request);
        let scripted = state
            .scripts
            .iter_mut()
            .find(|(needle, replies)| first_user.contains(needle.as_str()) && !replies.is_empty())
            .and_then(|(_, replies)| replies.pop_front());
        let route_answer = state
            .routes
            .iter()
            .find(|(r, _)| *r == route)
            .map(|(_, answer)| answer.clone());
        if let Some(reason) = rejected {
            state.violations.push(format!("request {number}: {reason}"));
            Some(Reply::status(400).message(&format!("mock: invalid history: {reason}")))
        } else if let Some(answer) = route_answer {
            Some(Reply::json(&answer))
        } else if let Some((limit, style)) = state
            .context_limit
            .filter(|(l, _)| is_chat && size > *l)
            .or(state
                .summary_limit
                .filter(|(l, _)| is_chat && summary_request && size > *l))
        {
            Some(style.reply(size, limit))
        } else if is_chat && summary_request && state.summary.is_some() {
            state.summaries += 1;
            let text = format!(
                "{} #{}",
                state.summary.clone().unwrap_or_default(),
                state.summaries
            );
            Some(Reply::text(&text).usage(100, 10).delay(state.summary_delay))
        } else if is_chat && scripted.is_some() {
            scripted
        } else if is_chat {
            state.replies.pop_front().or_else(|| state.repeat.clone())
        } else {
            Some(Reply::status(404).message(&format!("mock: no route for {route}")))
        }
    };
    let reply =
        reply.unwrap_or_else(|| Reply::status(500).message("mock: no scripted response left"));
    if let Some((needle, count)) = &reply.gate {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let seen = lock(&state)
                .requests
                .iter()
                .filter(|r| first_user_text(r).contains(needle.as_str()))
                .count();
            if seen >= *count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    // A client that went away (a timeout, a dropped future) is not the mock's failure.
    let _ = write_reply(&mut socket, &reply, api.unwrap_or(Api::Chat), input).await;
}
