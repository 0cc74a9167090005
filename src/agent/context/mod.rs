//! How full the model's context is, and what the agent does about it. The count is the
//! server's reported `prompt_tokens` for the last request plus an estimate ([`estimate`]) of
//! what was added since; the window comes from settings `contextWindow`, else the server
//! (probed once in the background, see `crate::llm`), else the table of well-known models,
//! else [`DEFAULT_CONTEXT_WINDOW`]. `rebuild` holds the pure steps of compaction and elision;
//! the agent's side (hooks, the summary request, the transcript) is `agent/compact.rs`.

pub mod estimate;
pub mod rebuild;

use std::collections::HashSet;

use tokio::task::JoinHandle;

use crate::config::DEFAULT_CONTEXT_WINDOW;
use crate::llm::{LlmClient, Message, ToolSpec, known_window};

/// What decides the context budget, from settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOptions {
    /// `contextWindow`, when the settings say it.
    pub window: Option<u64>,
    /// `autoCompact`.
    pub auto_compact: bool,
    /// `autoCompactPercent`.
    pub percent: u8,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            window: None,
            auto_compact: true,
            percent: crate::config::DEFAULT_AUTO_COMPACT_PERCENT,
        }
    }
}

/// Where the window size came from, as `/context` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    Settings,
    Server,
    /// A "context too long" answer stated it.
    ServerError,
    KnownModel,
    Default,
}

impl WindowSource {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Settings => "settings contextWindow",
            Self::Server => "reported by the server",
            Self::ServerError => "stated by the server's overflow error",
            Self::KnownModel => "table of well-known models",
            Self::Default => "assumed default; set contextWindow in settings",
        }
    }
}

/// How full the context is, by part, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextUsage {
    pub window: u64,
    pub source: WindowSource,
    /// All of it: the server's count plus the estimate of what was added since.
    pub used: u64,
    pub system: u64,
    pub tools: u64,
    pub messages: u64,
    /// Whether `used` starts from a count the server reported.
    pub reported: bool,
}

impl ContextUsage {
    /// `used` in percent of the window, rounded down.
    pub fn percent(&self) -> u64 {
        percent_of(self.used, self.window)
    }
}

/// `used` tokens in percent of a `window`, rounded down (at most 999).
pub fn percent_of(used: u64, window: u64) -> u64 {
    (used.saturating_mul(100) / window.max(1)).min(999)
}

/// The server's count of one request: what it said, and what was sent then.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    prompt_tokens: u64,
    /// The history's length when the request was sent.
    history_len: usize,
    /// The estimate of the system prompt and tools then, so a change to them is accounted.
    fixed_estimate: u64,
}

/// The agent's context bookkeeping.
pub struct ContextState {
    pub options: ContextOptions,
    window: Option<(u64, WindowSource)>,
    probe: Option<JoinHandle<Option<u64>>>,
    /// The probe goes over the internet (Anthropic's Models API): a request does not wait
    /// for it when the table of well-known models has the model.
    probe_remote: bool,
    anchor: Option<Anchor>,
    /// Tool results sent as a short note instead of their output (never in the transcript).
    pub elided: HashSet<String>,
}

impl ContextState {
    pub fn new(options: ContextOptions) -> Self {
        Self {
            window: options.window.map(|w| (w, WindowSource::Settings)),
            options,
            probe: None,
            probe_remote: false,
            anchor: None,
            elided: HashSet::new(),
        }
    }

    /// Asks the server for its window in the background (when the settings do not say it); the
    /// answer is awaited, bounded, the first time the window is needed.
    pub fn start_probe(&mut self, llm: &LlmClient) {
        if self.window.is_none() && self.probe.is_none() {
            self.probe_remote = llm.probe_is_remote();
            let llm = llm.clone();
            self.probe = Some(tokio::spawn(
                async move { llm.probe_context_window().await },
            ));
        }
    }

    /// The window and where it came from.
    pub async fn window(&mut self, model: &str) -> (u64, WindowSource) {
        if let Some(window) = self.window {
            return window;
        }
        if self.probe_remote
            && self.probe.as_ref().is_some_and(|p| !p.is_finished())
            && let Some(window) = known_window(model)
        {
            // Asked again next time, when the answer may be in.
            return (window, WindowSource::KnownModel);
        }
        if let Some(probe) = self.probe.take() {
            // The probe bounds each of its requests; this bounds the whole of it too.
            let limit = crate::llm::PROBE_TIMEOUT * 2;
            if let Ok(Ok(Some(window))) = tokio::time::timeout(limit, probe).await {
                self.window = Some((window, WindowSource::Server));
                return (window, WindowSource::Server);
            }
        }
        let window = match known_window(model) {
            Some(window) => (window, WindowSource::KnownModel),
            None => (DEFAULT_CONTEXT_WINDOW, WindowSource::Default),
        };
        self.window = Some(window);
        window
    }

    /// The model changed (`/model`): its window may differ, unless the settings fix it.
    pub fn model_changed(&mut self) {
        if self.options.window.is_none() {
            self.window = None;
        }
        self.anchor = None;
    }

    /// The server refused a request: the window is at most `window` (what it stated, or less
    /// than it refused). Believed unless the settings say otherwise, and only ever smaller.
    pub fn learn_window(&mut self, window: u64) {
        let smaller = self.window.is_none_or(|(current, _)| window < current);
        if self.options.window.is_none() && window > 0 && smaller {
            self.window = Some((window, WindowSource::ServerError));
        }
    }

    /// What was sent no longer matches the history (compaction, elision, /clear, resume).
    pub fn forget_count(&mut self) {
        self.anchor = None;
    }

    /// The server counted `prompt_tokens` for a request sent with `history_len` messages.
    pub fn counted(&mut self, prompt_tokens: u64, history_len: usize, fixed_estimate: u64) {
        self.anchor = (prompt_tokens > 0).then_some(Anchor {
            prompt_tokens,
            history_len,
            fixed_estimate,
        });
    }

    /// How full the context would be with this system prompt, tools and history sent.
    pub async fn usage(
        &mut self,
        model: &str,
        system: &str,
        tools: &[ToolSpec],
        history: &[Message],
    ) -> ContextUsage {
        let (window, source) = self.window(model).await;
        let system = estimate::text(system) + 4;
        let tools = estimate::tools(tools);
        let sent = rebuild::with_elisions(history, &self.elided);
        let estimated_messages = estimate::messages(&sent);
        let (used, reported) = match self.anchor {
            Some(anchor) if anchor.history_len <= sent.len() => {
                let added = estimate::messages(&sent[anchor.history_len..]);
                let fixed = (system + tools) as i64 - anchor.fixed_estimate as i64;
                let used = (anchor.prompt_tokens as i64 + fixed).max(0) as u64 + added;
                (used, true)
            }
            _ => (system + tools + estimated_messages, false),
        };
        ContextUsage {
            window,
            source,
            used,
            system,
            tools,
            messages: used.saturating_sub(system + tools),
            reported,
        }
    }

    /// The tokens at which auto-compaction starts.
    pub fn threshold(&self, window: u64) -> u64 {
        window * u64::from(self.options.percent) / 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(window: Option<u64>) -> ContextState {
        ContextState::new(ContextOptions {
            window,
            ..ContextOptions::default()
        })
    }

    #[tokio::test]
    async fn the_count_is_the_server_s_plus_an_estimate_of_what_came_after() {
        let mut context = state(Some(10_000));
        let history = vec![
            Message::user("hello"),
            Message::user("a newer message with some words in it"),
        ];
        let estimated = context.usage("m", "system", &[], &history).await;
        assert!(!estimated.reported);
        assert_eq!(estimated.window, 10_000);
        assert_eq!(estimated.source, WindowSource::Settings);
        assert_eq!(
            estimated.used,
            estimate::text("system") + 4 + estimate::messages(&history)
        );
        // The server counted 1000 tokens for the first message (and this system prompt).
        context.counted(1000, 1, estimate::text("system") + 4);
        let counted = context.usage("m", "system", &[], &history).await;
        assert!(counted.reported);
        assert_eq!(counted.used, 1000 + estimate::message(&history[1]));
        // A longer system prompt since then is added on top.
        let longer = context
            .usage("m", "system prompt now longer", &[], &history)
            .await;
        assert!(longer.used > counted.used);
        context.forget_count();
        assert!(!context.usage("m", "system", &[], &history).await.reported);
        assert_eq!(context.threshold(10_000), 8_500);
    }

    #[tokio::test]
    async fn the_window_comes_from_settings_the_table_or_the_default_and_only_shrinks() {
        assert_eq!(
            state(None).window("gpt-4o").await,
            (128_000, WindowSource::KnownModel)
        );
        assert_eq!(
            state(None).window("local").await,
            (DEFAULT_CONTEXT_WINDOW, WindowSource::Default)
        );
        let mut learned = state(None);
        learned.learn_window(4096);
        assert_eq!(
            learned.window("gpt-4o").await,
            (4096, WindowSource::ServerError)
        );
        learned.learn_window(8192);
        assert_eq!(learned.window("gpt-4o").await.0, 4096, "only ever smaller");
        let mut fixed = state(Some(50_000));
        fixed.learn_window(4096);
        assert_eq!(fixed.window("x").await, (50_000, WindowSource::Settings));
    }
}
