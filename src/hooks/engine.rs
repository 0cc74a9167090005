//! The hook engine: the loaded hooks indexed by event, with compiled matchers; running an event's
//! matching handlers concurrently and combining what they decided; and the `async` handlers that
//! are started, never awaited, and given a bounded grace at exit before they are killed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinHandle;

use super::claude;
use super::command::run_command;
use super::http::run_http;
use super::input::{HookContext, HookInput, sent_input};
use super::matcher::Matcher;
use super::outcome::{Effect, HookNotice, HookOutcome, NoticeKind, combine};
use super::output::{RunResult, interpret};
use super::transcript::ClaudeTranscript;
use crate::config::hooks::{
    HandlerKind, HookDialect, HookEventName, HookHandler, HookLayers, HooksConfig,
};
use crate::config::{ConfigError, Paths, ProjectFiles};
use crate::http_client::{self, ClientOptions, Target};
use crate::process::ChildEnv;
use crate::program::ProgramChannel;

/// One loaded handler, as `ling hooks list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookListing {
    pub event: HookEventName,
    /// `None` matches everything.
    pub matcher: Option<String>,
    /// `command \`...\`` or `http URL`.
    pub handler: String,
    #[serde(rename = "timeout")]
    pub timeout_secs: f64,
    #[serde(rename = "async")]
    pub is_async: bool,
    #[serde(rename = "failClosed")]
    pub fail_closed: bool,
    pub source: PathBuf,
    /// `claude`: from a Claude Code file, told Claude's tool names.
    pub dialect: HookDialect,
    /// The handler's `if` rule, when it has one.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// Cheap to clone: clones share the hooks and the async handlers in flight.
#[derive(Clone)]
pub struct HookEngine {
    inner: Arc<Inner>,
    /// What command handlers start with.
    child_env: ChildEnv,
    /// Matches `if` rules; without one, a handler with an `if` runs on every call it matches.
    conditions: Option<Arc<dyn ConditionMatcher>>,
    /// Where `callback` handlers are sent (the program driving Ling).
    program: Option<Arc<dyn ProgramChannel>>,
}

/// The HTTP client of `http` handlers could not be built (once for the run).
#[derive(Debug, thiserror::Error)]
#[error("cannot set up HTTP for hooks: {0}")]
struct HttpSetupError(reqwest::Error);

struct Inner {
    by_event: [Vec<Group>; HookEventName::ALL.len()],
    http: OnceLock<Result<reqwest::Client, HttpSetupError>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    background_notices: Mutex<Vec<HookNotice>>,
    /// The Claude-shaped transcript of Claude Code files' hooks, written as far as it is.
    claude_transcript: Mutex<ClaudeTranscript>,
}

struct Group {
    matcher: Matcher,
    matcher_text: Option<String>,
    handlers: Vec<Arc<Handler>>,
    source: PathBuf,
}

struct Handler {
    config: HookHandler,
    description: String,
    dialect: HookDialect,
    source: PathBuf,
}

/// Decides whether a tool call matches a handler's `if` rule (`Bash(git commit*)`). The
/// permission rules' matcher does it (`agent::RuleConditions`); the engine, below them, only
/// asks.
pub trait ConditionMatcher: Send + Sync {
    fn matches(&self, rule: &str, tool: &str, input: &serde_json::Value) -> bool;
}

impl HookEngine {
    /// Loads `~/.ling/hooks.json` and, in a trusted `project`, `.ling/hooks.json`; `layers`
    /// (from `--no-hooks` and `disableAllHooks`) switches either off. Returns warnings about
    /// ignored fields.
    pub fn load(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
    ) -> Result<(Self, Vec<String>), ConfigError> {
        Self::load_with(paths, project, layers, None)
    }

    /// [`HookEngine::load`], then the `hooks` of `--settings` (in Claude Code's format) when
    /// the user's layer is on.
    pub fn load_with(
        paths: &Paths,
        project: &ProjectFiles,
        layers: HookLayers,
        flag: Option<&crate::config::FlagSettings>,
    ) -> Result<(Self, Vec<String>), ConfigError> {
        if layers == HookLayers::NONE {
            return Ok((Self::empty(), Vec::new()));
        }
        Self::from_config(HooksConfig::load_with(paths, project, layers, flag)?)
    }

    /// Compiles the matchers of already-parsed hooks.
    pub fn from_config(config: HooksConfig) -> Result<(Self, Vec<String>), ConfigError> {
        let mut by_event: [Vec<Group>; HookEventName::ALL.len()] = Default::default();
        for group in config.groups {
            let matcher =
                Matcher::parse(group.matcher.as_deref()).map_err(|e| ConfigError::Syntax {
                    path: group.source.clone(),
                    line: group.matcher_at.line,
                    column: group.matcher_at.column,
                    message: format!(
                        "matcher {:?} is not a valid regular expression: {e}",
                        group.matcher.as_deref().unwrap_or_default()
                    ),
                })?;
            let handlers = group
                .handlers
                .into_iter()
                .map(|config| {
                    Arc::new(Handler {
                        description: describe(&config.kind),
                        config,
                        dialect: group.dialect,
                        source: group.source.clone(),
                    })
                })
                .collect();
            by_event[group.event.index()].push(Group {
                matcher,
                matcher_text: group.matcher,
                handlers,
                source: group.source,
            });
        }
        Ok((Self::with_groups(by_event), config.warnings))
    }

    pub fn empty() -> Self {
        Self::with_groups(Default::default())
    }

    fn with_groups(by_event: [Vec<Group>; HookEventName::ALL.len()]) -> Self {
        Self {
            inner: Arc::new(Inner {
                by_event,
                http: OnceLock::new(),
                background: Mutex::new(Vec::new()),
                background_notices: Mutex::new(Vec::new()),
                claude_transcript: Mutex::default(),
            }),
            child_env: ChildEnv::default(),
            conditions: None,
            program: None,
        }
    }

    /// `callback` handlers are asked of `program`.
    pub fn with_program(mut self, program: Arc<dyn ProgramChannel>) -> Self {
        self.program = Some(program);
        self
    }

    /// Handlers' `if` rules are matched by `conditions`.
    pub fn with_conditions(mut self, conditions: Arc<dyn ConditionMatcher>) -> Self {
        self.conditions = Some(conditions);
        self
    }

    /// Every handler's `if` rule with where it is written: (rule, file, line, column), for the
    /// caller to check they parse before anything runs.
    pub fn conditions(&self) -> Vec<(String, PathBuf, usize, usize)> {
        let mut out = Vec::new();
        for group in self.inner.by_event.iter().flatten() {
            for handler in &group.handlers {
                if let Some(rule) = &handler.config.condition {
                    let at = handler.config.condition_at;
                    out.push((rule.clone(), handler.source.clone(), at.line, at.column));
                }
            }
        }
        out
    }

    /// Command handlers start with this environment (by default: without `OPENAI_API_KEY`).
    pub fn with_child_env(mut self, child_env: ChildEnv) -> Self {
        self.child_env = child_env;
        self
    }

    pub fn is_empty(&self) -> bool {
        self.inner.by_event.iter().all(Vec::is_empty)
    }

    /// Whether any handler would run for `event` on `match_value` (the tool name, session source
    /// or trigger; `None` asks whether the event has any hook at all). Allocates nothing, so the
    /// agent can call it before building an input.
    pub fn has_handlers(&self, event: HookEventName, match_value: Option<&str>) -> bool {
        let groups = &self.inner.by_event[event.index()];
        match match_value {
            Some(value) if event.uses_matcher() => groups.iter().any(|g| g.matcher.matches(value)),
            _ => !groups.is_empty(),
        }
    }

    /// Runs the handlers matching `input`: the `async` ones are started and left running; the
    /// others run concurrently and their effects are combined in configuration order.
    pub async fn run(&self, input: &HookInput, ctx: &HookContext) -> HookOutcome {
        let event = input.event();
        let handlers = self.matching(input);
        if handlers.is_empty() {
            return HookOutcome::default();
        }
        let span = crate::telemetry::Span::start("ling.hook", || {
            vec![
                opentelemetry::KeyValue::new("ling.hook.event", event.as_str()),
                opentelemetry::KeyValue::new("ling.hook.handlers", handlers.len() as i64),
            ]
        });
        let outcome = span.run(self.run_handlers(input, ctx, handlers)).await;
        if let Some(decision) = outcome.decision {
            span.set("ling.hook.decision", decision.as_str());
        }
        outcome
    }

    async fn run_handlers(
        &self,
        input: &HookInput,
        ctx: &HookContext,
        handlers: Vec<Arc<Handler>>,
    ) -> HookOutcome {
        let event = input.event();
        if handlers.iter().any(|h| h.dialect == HookDialect::Claude) {
            self.sync_claude_transcript(ctx);
        }
        let payload_of =
            |dialect| serde_json::to_vec(&input.to_json(ctx, dialect)).unwrap_or_default();
        let mut payloads: [Option<Vec<u8>>; 2] = [None, None];
        for handler in &handlers {
            let slot = &mut payloads[handler.dialect as usize];
            if slot.is_none() {
                *slot = Some(payload_of(handler.dialect));
            }
        }
        let payload = |handler: &Handler| {
            payloads[handler.dialect as usize]
                .as_deref()
                .unwrap_or_default()
        };
        let (background, foreground): (Vec<_>, Vec<_>) =
            handlers.into_iter().partition(|h| h.config.is_async);
        for handler in background {
            let bytes = payload(&handler).to_vec();
            self.start_background(handler, event, bytes, ctx.clone());
        }
        let mut effects = futures::future::join_all(
            foreground
                .iter()
                .map(|handler| self.run_one(handler, event, payload(handler), ctx)),
        )
        .await;
        if let HookInput::PreToolUse {
            tool_name,
            tool_input,
            ..
        } = input
        {
            // An `updatedInput` may use Claude's field names; the tool gets Ling's. Each is
            // compared with what its own handler was sent (a Claude file's: an absolute path).
            for (effect, handler) in effects.iter_mut().zip(&foreground) {
                if let Some(update) = effect.updated_input.take() {
                    let sent = sent_input(tool_name, tool_input, ctx, handler.dialect);
                    effect.updated_input = Some(claude::to_ling_update(tool_name, &sent, update));
                }
            }
        }
        combine(input.tool_input(), effects)
    }

    /// Runs the matching handlers of `input` in the background, as `async` ones run: for events
    /// that decide nothing and must not keep the user waiting (Notification). Their failures are
    /// reported with [`HookEngine::take_async_notices`].
    pub fn notify(&self, input: &HookInput, ctx: &HookContext) {
        let handlers = self.matching(input);
        if handlers.iter().any(|h| h.dialect == HookDialect::Claude) {
            self.sync_claude_transcript(ctx);
        }
        for handler in handlers {
            let bytes =
                serde_json::to_vec(&input.to_json(ctx, handler.dialect)).unwrap_or_default();
            self.start_background(handler, input.event(), bytes, ctx.clone());
        }
    }

    /// Brings the Claude-shaped transcript up to date before a Claude Code file's hook reads it.
    fn sync_claude_transcript(&self, ctx: &HookContext) {
        if let Err(e) = lock(&self.inner.claude_transcript).sync(&ctx.transcript_path) {
            tracing::warn!(
                "hooks: cannot write the Claude-shaped transcript beside {}: {e}",
                ctx.transcript_path.display()
            );
        }
    }

    /// Every loaded handler, by event, in configuration order.
    pub fn list(&self) -> Vec<HookListing> {
        let mut list = Vec::new();
        for (event, groups) in HookEventName::ALL.iter().zip(&self.inner.by_event) {
            for group in groups {
                for handler in &group.handlers {
                    list.push(HookListing {
                        event: *event,
                        matcher: group.matcher_text.clone(),
                        handler: handler.description.clone(),
                        timeout_secs: handler.config.timeout.as_secs_f64(),
                        is_async: handler.config.is_async,
                        fail_closed: handler.config.fail_closed,
                        source: group.source.clone(),
                        dialect: handler.dialect,
                        condition: handler.config.condition.clone(),
                    });
                }
            }
        }
        list
    }

    /// Errors and timeouts of `async` handlers that ended since the last call, for the agent
    /// to show (an async handler cannot report through the outcome of the run that started it).
    pub fn take_async_notices(&self) -> Vec<HookNotice> {
        std::mem::take(&mut *lock(&self.inner.background_notices))
    }

    /// At exit: waits at most `grace` for the `async` handlers still running, then kills them
    /// (with everything they started).
    pub async fn wait_async(&self, grace: Duration) {
        let tasks = std::mem::take(&mut *lock(&self.inner.background));
        let deadline = tokio::time::Instant::now() + grace;
        for mut task in tasks {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                // Dropping the task's future kills the handler's process group.
                task.abort();
                let _ = task.await;
            }
        }
    }

    /// The handlers matching `input` in configuration order: their group's matcher matches,
    /// and on a tool event their `if` rule matches the call. One listed under several matching
    /// groups runs once.
    fn matching(&self, input: &HookInput) -> Vec<Arc<Handler>> {
        let (event, match_value) = (input.event(), input.match_value());
        let call = input.tool_call();
        let mut found: Vec<Arc<Handler>> = Vec::new();
        for group in &self.inner.by_event[event.index()] {
            let applies = match match_value {
                Some(value) if event.uses_matcher() => group.matcher.matches(value),
                _ => true,
            };
            if !applies {
                continue;
            }
            for handler in &group.handlers {
                let condition_holds = match (&handler.config.condition, call, &self.conditions) {
                    (Some(rule), Some((tool, tool_input)), Some(conditions)) => {
                        conditions.matches(rule, tool, tool_input)
                    }
                    _ => true,
                };
                if condition_holds && !found.iter().any(|f| f.config == handler.config) {
                    found.push(Arc::clone(handler));
                }
            }
        }
        found
    }

    async fn run_one(
        &self,
        handler: &Handler,
        event: HookEventName,
        payload: &[u8],
        ctx: &HookContext,
    ) -> Effect {
        let timeout = handler.config.timeout;
        let result = match &handler.config.kind {
            HandlerKind::Command { command } => {
                let code = handler.config.code.as_deref();
                run_command(command, payload, ctx, timeout, &self.child_env, code).await
            }
            HandlerKind::Http { url, headers } => match self.http_client() {
                Ok(client) => run_http(client, url, headers, payload.to_vec(), timeout).await,
                Err(setup) => RunResult::Failed(setup.to_string()),
            },
            HandlerKind::Callback { id } => {
                super::callback::run_callback(self.program.as_deref(), id, payload, timeout).await
            }
        };
        interpret(
            event,
            &handler.description,
            handler.config.fail_closed,
            result,
        )
    }

    fn http_client(&self) -> Result<&reqwest::Client, &HttpSetupError> {
        self.inner
            .http
            .get_or_init(|| {
                let options = ClientOptions::new(Target::Hook);
                http_client::build(options).map_err(HttpSetupError)
            })
            .as_ref()
    }

    fn start_background(
        &self,
        handler: Arc<Handler>,
        event: HookEventName,
        payload: Vec<u8>,
        ctx: HookContext,
    ) {
        let engine = self.clone();
        let task = tokio::spawn(async move {
            let effect = engine.run_one(&handler, event, &payload, &ctx).await;
            engine.record_background(&handler, event, effect);
        });
        let mut tasks = lock(&self.inner.background);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    /// Keeps an async handler's failures; a decision it tried to make is reported as ignored.
    fn record_background(&self, handler: &Handler, event: HookEventName, effect: Effect) {
        let mut notices: Vec<HookNotice> = effect
            .notices
            .into_iter()
            .filter(|n| matches!(n.kind, NoticeKind::Error | NoticeKind::Timeout))
            .collect();
        if effect.decision.is_some()
            || effect.stop.is_some()
            || effect.updated_input.is_some()
            || effect.updated_output.is_some()
        {
            notices.push(HookNotice {
                event,
                handler: handler.description.clone(),
                kind: NoticeKind::Ignored,
                message: "an async hook cannot decide anything; its decision was ignored".into(),
            });
        }
        lock(&self.inner.background_notices).extend(notices);
    }
}

impl std::fmt::Debug for HookEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookEngine")
            .field("handlers", &self.list().len())
            .finish()
    }
}

/// A poisoned lock only means another thread panicked while pushing; the list is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn describe(kind: &HandlerKind) -> String {
    match kind {
        HandlerKind::Command { command } => {
            let one_line = command.split_whitespace().collect::<Vec<_>>().join(" ");
            match one_line.char_indices().nth(80) {
                Some((at, _)) => format!("command `{}…`", &one_line[..at]),
                None => format!("command `{one_line}`"),
            }
        }
        HandlerKind::Http { url, .. } => format!("http {}", crate::redact::url(url)),
        HandlerKind::Callback { id } => format!("the program's callback {id}"),
    }
}
